//! Declarative runtime test cases, in the format of bpftrace's `tests/runtime/` files.
//!
//! Input: the text of a case file (a "suite"; its name is the file's stem). Output: the cases
//! it holds, checked for required fields, or a [`CaseError`] naming the line at fault.
//!
//! Format: cases are separated by blank lines; a line starting with `#` is a comment; each
//! other line is `DIRECTIVE value`. A line starting with whitespace continues the previous
//! `PROG`, `EXPECT`, `EXPECT_REGEX` or `EXPECT_EXACT` (multi-line programs and consecutive
//! expected lines).
//! Directives, as bpftrace defines them unless noted:
//! `NAME` (required), `RUN` (a shell command) xor `PROG` (a script run as `strobe -e PROG`),
//! `EXPECT` / `EXPECT_NONE` (a whole output line, ignoring surrounding whitespace),
//! `EXPECT_REGEX` / `EXPECT_REGEX_NONE` (a regex searched in the output, `^`/`$` per line),
//! `EXPECT_EXACT` (strobe's own: the command's whole stdout, byte for byte; see below),
//! `TIMEOUT` (seconds, default 5), `BEFORE` (background workloads started first, repeatable;
//! the command waits until a plain `BEFORE` program is running),
//! `{{BEFORE_PID}}` in `RUN` and `PROG` is the pid of the shell running the first `BEFORE`,
//! or of its program with `BEFORE exec PROGRAM`, so a script can trace its own workload
//! (`pid == {{BEFORE_PID}}`, `curtask->real_parent->tgid == {{BEFORE_PID}}` for a loop's
//! children) rather than every process of some name;
//! `AFTER` (a workload started once strobe prints [`NOTIFY_ATTACHED`]; strobe's own
//! `{{STROBE_PID}}` there is the command's pid, strobe's in a `PROG` case), `SETUP` / `CLEANUP`,
//! `REQUIRES` (shell command; the case is skipped unless it succeeds, repeatable), `ENV`
//! (`NAME=VALUE …`), `WILL_FAIL` (the command must exit non-zero), `RETURN_CODE`,
//! `MIN_KERNEL` / `MAX_KERNEL`, and strobe's own `KERNELS` ([`KernelFilter`]: which kernel
//! versions the case's expectations are written for; others skip it) and `ORACLE_DIFFERS`
//! (strobe's own, `ORACLE_DIFFERS reason`: bpftrace 0.17, the oracle installed on the build
//! hosts, prints something else for this case, for that reason; the runner ignores it, the
//! oracle comparison in tests/cli skips the case).
//!
//! `EXPECT_EXACT` is bpftrace's `EXPECT_FILE` made strict and kept inline: where `EXPECT_FILE`
//! compares the whole output with a file's after trimming blank lines at both ends, an
//! `EXPECT_EXACT` block is the command's complete stdout, blank lines and trailing spaces
//! included (stderr, e.g. `Attached 1 probe`, is not part of it). Each line of the block is
//! written after a `|`: the first on the directive's line, the others on continuation lines
//! (indentation, then `|`), and every line stands for one line of output ending in a newline.
//! A blank output line is a bare `|`, so the block never contains a blank line (which would
//! end the case); a bare `EXPECT_EXACT` expects no stdout at all. Like bpftrace's exact
//! checks, it is the case's only expectation:
//!
//! ```text
//! NAME count_at_exit
//! PROG BEGIN { @x = count(); exit(); }
//! EXPECT_EXACT |
//!              |
//!              |@x: 1
//! ```
//!
//! Invariant: every returned case has a name, exactly one action, and at least one
//! expectation or an explicit `RETURN_CODE`.

use std::path::Path;
use std::time::Duration;

use super::kernels::{KernelFilter, KernelFilterError};

/// The line strobe prints once its probes are attached, when the environment variable of the
/// same name is set; the runner starts `AFTER` workloads when it sees it.
pub use strobe::runtime::driver::NOTIFY_ATTACHED;

/// bpftrace's default case timeout.
pub const DEFAULT_TIMEOUT: Duration = Duration::from_secs(5);

const DIRECTIVES: &[&str] = &[
    "NAME",
    "RUN",
    "PROG",
    "EXPECT",
    "EXPECT_NONE",
    "EXPECT_REGEX",
    "EXPECT_REGEX_NONE",
    "EXPECT_EXACT",
    "TIMEOUT",
    "BEFORE",
    "AFTER",
    "SETUP",
    "CLEANUP",
    "REQUIRES",
    "ENV",
    "WILL_FAIL",
    "RETURN_CODE",
    "MIN_KERNEL",
    "MAX_KERNEL",
    "KERNELS",
    "ORACLE_DIFFERS",
];

/// What a case runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Action {
    /// A shell command; `{{STROBE}}` (or bpftrace's `{{BPFTRACE}}`) names the strobe binary.
    Run(String),
    /// A strobe script, run as `strobe -e SCRIPT`.
    Prog(String),
}

/// One check on a case's combined stdout and stderr.
#[derive(Debug, Clone)]
pub enum Expect {
    /// These consecutive lines appear (each compared with surrounding whitespace trimmed).
    Lines(Vec<String>),
    /// No line equals this one.
    NoLine(String),
    /// The regex matches somewhere (multi-line mode: `^` and `$` match at line ends).
    Regex(regex_lite::Regex),
    /// The regex matches nowhere.
    NoRegex(regex_lite::Regex),
    /// The command's stdout is exactly this text (stderr apart; see the module doc).
    Exact(String),
}

impl Expect {
    /// Whether `output` satisfies this check.
    pub fn holds(&self, output: &str) -> bool {
        let lines: Vec<&str> = output.lines().map(str::trim).collect();
        match self {
            Expect::Lines(want) => {
                lines.len() >= want.len()
                    && lines
                        .windows(want.len())
                        .any(|w| w.iter().zip(want).all(|(have, want)| *have == want.trim()))
            }
            Expect::NoLine(never) => !lines.iter().any(|l| *l == never.trim()),
            Expect::Regex(re) => re.is_match(output),
            Expect::NoRegex(re) => !re.is_match(output),
            Expect::Exact(text) => output == text,
        }
    }

    /// The check as a case file spells it, for failure reports.
    pub fn describe(&self) -> String {
        let strip = |re: &regex_lite::Regex| re.as_str().trim_start_matches("(?m)").to_string();
        match self {
            Expect::Lines(l) => format!("EXPECT {}", l.join("\\n")),
            Expect::NoLine(l) => format!("EXPECT_NONE {l}"),
            Expect::Regex(re) => format!("EXPECT_REGEX {}", strip(re)),
            Expect::NoRegex(re) => format!("EXPECT_REGEX_NONE {}", strip(re)),
            Expect::Exact(text) => {
                format!("EXPECT_EXACT ({} lines of stdout)", text.lines().count())
            }
        }
    }

    /// Whether this check reads stdout alone ([`Expect::Exact`]) rather than the merged output.
    pub fn wants_stdout(&self) -> bool {
        matches!(self, Expect::Exact(_))
    }
}

/// One test case.
#[derive(Debug, Clone)]
pub struct Case {
    /// The file's stem; `suite.name` identifies the case.
    pub suite: String,
    pub name: String,
    /// 1-based line of the case's first directive.
    pub line: usize,
    pub action: Action,
    pub expects: Vec<Expect>,
    pub timeout: Duration,
    pub befores: Vec<String>,
    pub after: Option<String>,
    pub setup: Option<String>,
    pub cleanup: Option<String>,
    pub requires: Vec<String>,
    pub env: Vec<(String, String)>,
    pub will_fail: bool,
    pub return_code: i32,
    pub kernels: Option<KernelFilter>,
    /// Why bpftrace 0.17 prints otherwise (`ORACLE_DIFFERS`); `None` when it should agree.
    pub oracle_differs: Option<String>,
}

impl Case {
    pub fn id(&self) -> String {
        format!("{}.{}", self.suite, self.name)
    }

    /// The expected stdout, when the case checks it exactly (`EXPECT_EXACT`).
    pub fn exact_stdout(&self) -> Option<&str> {
        self.expects.iter().find_map(|e| match e {
            Expect::Exact(text) => Some(text.as_str()),
            _ => None,
        })
    }
}

/// A case file that cannot be used, with the line at fault.
#[derive(Debug, thiserror::Error)]
#[error("{suite}:{line}: {kind}")]
pub struct CaseError {
    pub suite: String,
    pub line: usize,
    pub kind: CaseErrorKind,
}

#[derive(Debug, thiserror::Error)]
pub enum CaseErrorKind {
    #[error("cannot read the case file: {0}")]
    Io(#[from] std::io::Error),
    #[error("unknown directive `{name}`{}", suggestion.as_ref().map(|s| format!(" (did you mean `{s}`?)")).unwrap_or_default())]
    UnknownDirective {
        name: String,
        suggestion: Option<String>,
    },
    #[error(
        "a line starting with whitespace continues only PROG, EXPECT, EXPECT_REGEX or EXPECT_EXACT"
    )]
    StrayContinuation,
    #[error("each line of an EXPECT_EXACT block starts with `|` (after the indentation)")]
    ExactLineWithoutBar,
    #[error(
        "case `{name}` has EXPECT_EXACT and other expectations; EXPECT_EXACT must be the only one"
    )]
    ExactWithOtherExpects { name: String },
    #[error("the case has no NAME")]
    MissingName,
    #[error("case `{name}` has neither RUN nor PROG")]
    MissingAction { name: String },
    #[error("case `{name}` has both RUN and PROG")]
    BothActions { name: String },
    #[error("case `{name}` checks nothing: add an EXPECT (or a variant) or RETURN_CODE")]
    NothingExpected { name: String },
    #[error("case `{name}` has WILL_FAIL and RETURN_CODE; use one")]
    WillFailWithReturnCode { name: String },
    #[error("case `{name}` appears twice in this file")]
    DuplicateName { name: String },
    #[error("`{directive}` needs a value")]
    MissingValue { directive: String },
    #[error("bad {directive} value `{value}`: expected {expected}")]
    BadValue {
        directive: String,
        value: String,
        expected: &'static str,
    },
    #[error("bad regex `{pattern}`: {message}")]
    BadRegex { pattern: String, message: String },
    #[error("bad KERNELS value: {0}")]
    BadKernels(#[from] KernelFilterError),
}

/// Reads and parses one case file; the suite is the file's stem.
pub fn parse_file(path: &Path) -> Result<Vec<Case>, CaseError> {
    let suite = path
        .file_stem()
        .map(|s| s.to_string_lossy().into_owned())
        .unwrap_or_default();
    let text = std::fs::read_to_string(path).map_err(|e| CaseError {
        suite: suite.clone(),
        line: 0,
        kind: CaseErrorKind::Io(e),
    })?;
    parse_str(&suite, &text)
}

/// Parses the text of a case file belonging to `suite`.
pub fn parse_str(suite: &str, text: &str) -> Result<Vec<Case>, CaseError> {
    let err = |line: usize, kind: CaseErrorKind| CaseError {
        suite: suite.to_string(),
        line,
        kind,
    };
    let mut cases: Vec<Case> = Vec::new();
    let mut block: Vec<(usize, &str)> = Vec::new();
    let lines = text.lines().enumerate().map(|(i, l)| (i + 1, l));
    for (no, line) in lines.chain(std::iter::once((0, ""))) {
        if line.starts_with('#') {
            continue;
        }
        if !line.trim().is_empty() {
            block.push((no, line));
            continue;
        }
        if block.is_empty() {
            continue;
        }
        let start = block[0].0;
        let case = parse_block(suite, &block)?;
        if cases.iter().any(|c| c.name == case.name) {
            return Err(err(start, CaseErrorKind::DuplicateName { name: case.name }));
        }
        cases.push(case);
        block.clear();
    }
    Ok(cases)
}

/// A directive with its continuation lines joined by `\n`.
struct Directive<'a> {
    line: usize,
    name: &'a str,
    value: String,
}

fn split_directives<'a>(
    block: &[(usize, &'a str)],
) -> Result<Vec<Directive<'a>>, (usize, CaseErrorKind)> {
    let mut out: Vec<Directive<'a>> = Vec::new();
    for &(no, line) in block {
        if line.starts_with(char::is_whitespace) {
            let Some(prev) = out.last_mut() else {
                return Err((no, CaseErrorKind::StrayContinuation));
            };
            if !matches!(
                prev.name,
                "PROG" | "EXPECT" | "EXPECT_REGEX" | "EXPECT_EXACT"
            ) {
                return Err((no, CaseErrorKind::StrayContinuation));
            }
            if prev.name == "EXPECT_EXACT" {
                // Everything after the `|` is the line, trailing spaces included.
                let text = exact_line(line.trim_start())
                    .ok_or((no, CaseErrorKind::ExactLineWithoutBar))?;
                prev.value.push_str(text);
                prev.value.push('\n');
                continue;
            }
            // bpftrace aligns continuations under the first value's column; drop that much
            // indentation, keeping any deeper indentation the author wrote.
            let indent = prev.name.len() + 1;
            let cut = line
                .char_indices()
                .take_while(|&(i, c)| i < indent && c.is_whitespace())
                .count();
            prev.value.push('\n');
            prev.value.push_str(&line[cut..]);
            continue;
        }
        let (name, value) = match line.split_once(char::is_whitespace) {
            Some((n, v)) => (n, v.trim()),
            None => (line, ""),
        };
        let value = if name == "EXPECT_EXACT" {
            // The raw text after the directive: an exact line keeps its trailing spaces.
            let raw = line[name.len()..].trim_start();
            match raw {
                "" => String::new(),
                _ => format!(
                    "{}\n",
                    exact_line(raw).ok_or((no, CaseErrorKind::ExactLineWithoutBar))?
                ),
            }
        } else {
            value.to_string()
        };
        out.push(Directive {
            line: no,
            name,
            value,
        });
    }
    Ok(out)
}

/// The text of one `EXPECT_EXACT` line: what follows its leading `|`.
fn exact_line(line: &str) -> Option<&str> {
    line.strip_prefix('|')
}

fn parse_block(suite: &str, block: &[(usize, &str)]) -> Result<Case, CaseError> {
    let start = block[0].0;
    let err = |line: usize, kind: CaseErrorKind| CaseError {
        suite: suite.to_string(),
        line,
        kind,
    };
    let directives = split_directives(block).map_err(|(l, k)| err(l, k))?;
    let mut case = Case {
        suite: suite.to_string(),
        name: String::new(),
        line: start,
        action: Action::Run(String::new()),
        expects: Vec::new(),
        timeout: DEFAULT_TIMEOUT,
        befores: Vec::new(),
        after: None,
        setup: None,
        cleanup: None,
        requires: Vec::new(),
        env: Vec::new(),
        will_fail: false,
        return_code: 0,
        kernels: None,
        oracle_differs: None,
    };
    let (mut run, mut prog, mut return_code) = (None, None, None);
    let mut kernel_terms: Vec<String> = Vec::new();
    for d in directives {
        let at = |kind| err(d.line, kind);
        let needs_value = !matches!(d.name, "WILL_FAIL" | "EXPECT_EXACT");
        if needs_value && d.value.is_empty() && DIRECTIVES.contains(&d.name) {
            return Err(at(CaseErrorKind::MissingValue {
                directive: d.name.to_string(),
            }));
        }
        let bad = |expected| CaseErrorKind::BadValue {
            directive: d.name.to_string(),
            value: d.value.clone(),
            expected,
        };
        match d.name {
            "NAME" => case.name = d.value,
            "RUN" => run = Some(d.value),
            "PROG" => prog = Some(d.value),
            "EXPECT" => case
                .expects
                .push(Expect::Lines(d.value.lines().map(str::to_string).collect())),
            "EXPECT_NONE" => case.expects.push(Expect::NoLine(d.value)),
            "EXPECT_EXACT" => case.expects.push(Expect::Exact(d.value)),
            "EXPECT_REGEX" => case
                .expects
                .push(Expect::Regex(regex(&d.value).map_err(at)?)),
            "EXPECT_REGEX_NONE" => case
                .expects
                .push(Expect::NoRegex(regex(&d.value).map_err(at)?)),
            "TIMEOUT" => {
                let secs: f64 = d.value.parse().map_err(|_| at(bad("seconds")))?;
                if !(secs.is_finite() && secs > 0.0) {
                    return Err(at(bad("a positive number of seconds")));
                }
                case.timeout = Duration::from_secs_f64(secs);
            }
            "BEFORE" => case.befores.push(d.value),
            "AFTER" => case.after = Some(d.value),
            "SETUP" => case.setup = Some(d.value),
            "CLEANUP" => case.cleanup = Some(d.value),
            "REQUIRES" => case.requires.push(d.value),
            "ENV" => {
                for pair in d.value.split_whitespace() {
                    let (k, v) = pair
                        .split_once('=')
                        .filter(|(k, _)| !k.is_empty())
                        .ok_or_else(|| at(bad("NAME=VALUE pairs")))?;
                    case.env.push((k.to_string(), v.to_string()));
                }
            }
            "WILL_FAIL" => case.will_fail = true,
            "RETURN_CODE" => {
                return_code = Some(
                    d.value
                        .parse::<i32>()
                        .map_err(|_| at(bad("an exit code")))?,
                )
            }
            "MIN_KERNEL" => kernel_terms.push(format!(">= {}", d.value)),
            "MAX_KERNEL" => kernel_terms.push(format!("<= {}", d.value)),
            "KERNELS" => kernel_terms.push(d.value),
            "ORACLE_DIFFERS" => case.oracle_differs = Some(d.value),
            other => {
                let suggestion = strobe::diag::nearest(other, DIRECTIVES.iter().copied());
                return Err(at(CaseErrorKind::UnknownDirective {
                    name: other.to_string(),
                    suggestion: suggestion.map(str::to_string),
                }));
            }
        }
    }
    if case.name.is_empty() {
        return Err(err(start, CaseErrorKind::MissingName));
    }
    let name = case.name.clone();
    case.action = match (run, prog) {
        (Some(r), None) => Action::Run(r),
        (None, Some(p)) => Action::Prog(p),
        (None, None) => return Err(err(start, CaseErrorKind::MissingAction { name })),
        (Some(_), Some(_)) => return Err(err(start, CaseErrorKind::BothActions { name })),
    };
    if case.expects.is_empty() && return_code.is_none() {
        return Err(err(start, CaseErrorKind::NothingExpected { name }));
    }
    if case.exact_stdout().is_some() && case.expects.len() > 1 {
        return Err(err(start, CaseErrorKind::ExactWithOtherExpects { name }));
    }
    if case.will_fail && return_code.is_some() {
        return Err(err(start, CaseErrorKind::WillFailWithReturnCode { name }));
    }
    case.return_code = return_code.unwrap_or(0);
    if !kernel_terms.is_empty() {
        let filter = KernelFilter::parse(&kernel_terms.join(" "))
            .map_err(|e| err(start, CaseErrorKind::BadKernels(e)))?;
        case.kernels = Some(filter);
    }
    Ok(case)
}

fn regex(pattern: &str) -> Result<regex_lite::Regex, CaseErrorKind> {
    regex_lite::Regex::new(&format!("(?m){pattern}")).map_err(|e| CaseErrorKind::BadRegex {
        pattern: pattern.to_string(),
        message: e.to_string(),
    })
}

#[cfg(test)]
mod tests;
