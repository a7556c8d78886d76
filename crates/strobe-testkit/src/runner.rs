//! Runs one declarative [`Case`] against a strobe binary and judges it, the way bpftrace's
//! runtime test engine does.
//!
//! Input: a case, the directory its file lives in (commands run there, so a case can use files
//! beside it) and [`RunOptions`]. Output: a [`CaseReport`] — pass, fail (with the details a
//! reader needs: command, how it ended, the failed checks, its output and its workloads'
//! output) or skip (with the reason).
//!
//! Order: `KERNELS` filter, `REQUIRES`, `SETUP`, `BEFORE` workloads, the command (`AFTER` starts
//! when it prints [`NOTIFY_ATTACHED`]), checks, then workloads stopped and `CLEANUP`. A command
//! still running at its timeout is stopped and judged on its output alone, like bpftrace.
//! Every process a case starts is stopped before `run_case` returns.

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::{Duration, Instant};

use super::cases::{Action, Case, Expect, NOTIFY_ATTACHED};
use super::kernels::KernelVersion;
use super::process::{describe_status, run_to_end, Captured, Ended, Streams};

/// At most this many output lines are kept in a failure report (the last ones).
const MAX_REPORTED_LINES: usize = 200;

/// How cases are run.
#[derive(Debug, Clone)]
pub struct RunOptions {
    /// The strobe binary substituted for `{{STROBE}}` and run for `PROG`.
    pub strobe: PathBuf,
    /// The kernel `KERNELS` filters are checked against; `None` skips filtered cases.
    pub kernel: Option<KernelVersion>,
    /// Multiplies every timeout (slow machines, e.g. a VM under TCG emulation).
    pub timeout_scale: f64,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Verdict {
    Pass,
    /// Why, in one line; [`CaseReport::details`] has the rest.
    Fail(String),
    Skip(String),
}

/// The result of one case.
#[derive(Debug, Clone)]
pub struct CaseReport {
    pub id: String,
    pub verdict: Verdict,
    pub elapsed: Duration,
    /// Lines explaining a failure: the command, its end, failed checks and output.
    pub details: Vec<String>,
}

/// Runs `case` (whose file is in `dir`) and judges it.
pub fn run_case(case: &Case, dir: &Path, opts: &RunOptions) -> CaseReport {
    let start = Instant::now();
    let mut details = Vec::new();
    let verdict = judge(case, dir, opts, &mut details);
    if !matches!(verdict, Verdict::Fail(_)) {
        details.clear();
    }
    CaseReport {
        id: case.id(),
        verdict,
        elapsed: start.elapsed(),
        details,
    }
}

fn judge(case: &Case, dir: &Path, opts: &RunOptions, details: &mut Vec<String>) -> Verdict {
    if let Some(filter) = &case.kernels {
        match &opts.kernel {
            Some(k) if filter.matches(k) => {}
            Some(k) => return Verdict::Skip(format!("kernel {k} is not in `{}`", filter.text())),
            None => return Verdict::Skip("kernel version unknown".to_string()),
        }
    }
    let timeout = case.timeout.mul_f64(opts.timeout_scale.max(0.01));
    let shell = |cmd: &str, before_pid: Option<u32>| {
        let mut c = Command::new("/bin/sh");
        c.arg("-c")
            .arg(expand(cmd, &opts.strobe, before_pid))
            .current_dir(dir)
            .env("STROBE", &opts.strobe);
        c
    };
    for req in &case.requires {
        match run_to_end(shell(req, None), timeout) {
            Ok((Ended::Exited(s), _)) if s.success() => {}
            Ok(_) => return Verdict::Skip(format!("unmet condition: {req}")),
            Err(e) => return Verdict::Fail(format!("cannot run REQUIRES `{req}`: {e}")),
        }
    }
    if let Some(setup) = &case.setup {
        if let Some(why) = run_step("SETUP", setup, shell(setup, None), timeout, details) {
            return Verdict::Fail(why);
        }
    }

    let mut befores = Vec::new();
    for b in &case.befores {
        match Captured::spawn(shell(b, None), None) {
            Ok(c) => befores.push((b.as_str(), c)),
            Err(e) => {
                stop_all("BEFORE", befores, details);
                return Verdict::Fail(format!("cannot start BEFORE `{b}`: {e}"));
            }
        }
    }
    // Like bpftrace, let each workload get going before the command runs: wait until its
    // program shows up in its process group.
    let deadline = Instant::now() + timeout;
    let mut not_started = None;
    for (text, proc) in befores.iter_mut() {
        if let Some(name) = program_name(text) {
            if !proc.wait_for_comm(&name, deadline) {
                not_started = Some(format!(
                    "BEFORE `{text}` did not start a `{name}` process (it exited or timed out)"
                ));
                break;
            }
        }
    }
    if let Some(why) = not_started {
        stop_all("BEFORE", befores, details);
        return Verdict::Fail(why);
    }
    let before_pid = befores.first().map(|(_, c)| c.pid());

    let (mut cmd, shown) = match &case.action {
        Action::Run(run) => (
            shell(run, before_pid),
            expand(run, &opts.strobe, before_pid),
        ),
        Action::Prog(prog) => {
            // Like bpftrace, a script may name its workload: `pid == {{BEFORE_PID}}`.
            let prog = match before_pid {
                Some(pid) => prog.replace("{{BEFORE_PID}}", &pid.to_string()),
                None => prog.clone(),
            };
            let mut c = Command::new(&opts.strobe);
            c.arg("-e").arg(&prog).current_dir(dir);
            let shown = format!("{} -e '{}'", opts.strobe.display(), prog);
            (c, shown)
        }
    };
    // Only a case with an `AFTER` workload needs the marker; elsewhere it would be one more
    // line in output that RUN commands post-process.
    if case.after.is_some() {
        cmd.env(NOTIFY_ATTACHED, "1");
    }
    cmd.envs(case.env.iter().map(|(k, v)| (k, v)));
    details.push(format!("command: {shown}"));

    // `EXPECT_EXACT` reads stdout alone, so stderr gets a pipe of its own.
    let streams = if case.expects.iter().any(|e| e.wants_stdout()) {
        Streams::Split
    } else {
        Streams::Merged
    };
    let mut main = match Captured::spawn_with(cmd, Some(NOTIFY_ATTACHED), streams) {
        Ok(c) => c,
        Err(e) => {
            stop_all("BEFORE", befores, details);
            return Verdict::Fail(format!("cannot start the command: {e}"));
        }
    };
    let mut after: Option<Captured> = None;
    let mut after_error = None;
    let ended = main.wait_until(Instant::now() + timeout, |m| {
        if after.is_none() && after_error.is_none() && m.saw_marker() {
            if let Some(a) = &case.after {
                // The command's pid: strobe's own for a PROG case (for `kill -USR1`).
                let a = a.replace("{{STROBE_PID}}", &m.pid().to_string());
                match Captured::spawn(shell(&a, before_pid), None) {
                    Ok(c) => after = Some(c),
                    Err(e) => after_error = Some(format!("cannot start AFTER `{a}`: {e}")),
                }
            }
        }
    });
    let stopped = main.stop_all();
    let output = stopped.output;
    if let Some(a) = after {
        stop_all(
            "AFTER",
            vec![(case.after.as_deref().unwrap_or(""), a)],
            details,
        );
    }
    stop_all("BEFORE", befores, details);

    let mut problems = Vec::new();
    if let Some(e) = after_error {
        problems.push(e);
    }
    match ended {
        Ended::TimedOut => details.push(format!(
            "ended: timed out after {:.1} s",
            timeout.as_secs_f64()
        )),
        Ended::Exited(status) => {
            details.push(format!("ended: {}", describe_status(status)));
            let code = status.code();
            if case.will_fail && status.success() {
                problems.push("exited cleanly but WILL_FAIL expects a failure".to_string());
            } else if !case.will_fail && code != Some(case.return_code) {
                problems.push(format!(
                    "{} (expected exit code {})",
                    describe_status(status),
                    case.return_code
                ));
            }
        }
    }
    for e in &case.expects {
        if !e.holds(&output) {
            problems.push(format!("not satisfied: {}", e.describe()));
            if let Expect::Exact(want) = e {
                details.push(first_difference(want, &output));
            }
        }
    }
    if matches!(ended, Ended::TimedOut) && !problems.is_empty() {
        problems.insert(0, format!("timed out after {:.1} s", timeout.as_secs_f64()));
    }
    if let Some(cleanup) = &case.cleanup {
        if let Some(why) = run_step("CLEANUP", cleanup, shell(cleanup, None), timeout, details) {
            problems.push(why);
        }
    }
    details.extend(problems.iter().map(|p| format!("failed: {p}")));
    match &stopped.stderr {
        Some(stderr) => {
            push_output(details, "stdout", &output);
            push_output(details, "stderr", stderr);
        }
        None => push_output(details, "output", &output),
    }
    if problems.is_empty() {
        Verdict::Pass
    } else {
        Verdict::Fail(problems.join("; "))
    }
}

/// Where `got` first departs from `want`, for an `EXPECT_EXACT` failure: the 1-based line and
/// both versions of it, escaped so that blank lines and trailing spaces show.
fn first_difference(want: &str, got: &str) -> String {
    let (want_lines, got_lines): (Vec<&str>, Vec<&str>) = (
        want.split_inclusive('\n').collect(),
        got.split_inclusive('\n').collect(),
    );
    let at = want_lines
        .iter()
        .zip(&got_lines)
        .take_while(|(w, g)| w == g)
        .count();
    let show = |l: Option<&&str>| l.map_or("(end of output)".to_string(), |l| format!("{l:?}"));
    format!(
        "first difference at stdout line {}: expected {}, got {}",
        at + 1,
        show(want_lines.get(at)),
        show(got_lines.get(at))
    )
}

/// Runs a SETUP or CLEANUP step; `Some(why)` when it failed.
fn run_step(
    label: &str,
    text: &str,
    cmd: Command,
    timeout: Duration,
    details: &mut Vec<String>,
) -> Option<String> {
    match run_to_end(cmd, timeout) {
        Ok((Ended::Exited(s), _)) if s.success() => None,
        Ok((ended, out)) => {
            push_output(details, &format!("{label} output"), &out);
            Some(match ended {
                Ended::Exited(s) => format!("{label} `{text}` failed: {}", describe_status(s)),
                Ended::TimedOut => format!("{label} `{text}` timed out"),
            })
        }
        Err(e) => Some(format!("cannot run {label} `{text}`: {e}")),
    }
}

fn stop_all(label: &str, procs: Vec<(&str, Captured)>, details: &mut Vec<String>) {
    for (text, p) in procs {
        let (_, out) = p.stop();
        push_output(details, &format!("{label} `{text}` output"), &out);
    }
}

fn push_output(details: &mut Vec<String>, label: &str, output: &str) {
    let lines: Vec<&str> = output.lines().collect();
    if lines.is_empty() {
        details.push(format!("{label}: (none)"));
        return;
    }
    details.push(format!("{label}:"));
    let skip = lines.len().saturating_sub(MAX_REPORTED_LINES);
    if skip > 0 {
        details.push(format!("  | … {skip} earlier lines omitted"));
    }
    details.extend(lines[skip..].iter().map(|l| format!("  | {l}")));
}

/// The command name (as in /proc/PID/comm) of the program a workload command starts, when it
/// is a plain command naming an executable: `exec ./prog arg` → `prog`. `None` for shell
/// constructs (loops, pipelines, builtins), which are not waited for.
fn program_name(cmd: &str) -> Option<String> {
    let word = cmd
        .split_whitespace()
        // Skip `exec` and leading `NAME=value` assignments.
        .find(|w| *w != "exec" && (w.starts_with('/') || !w.contains('=')))?;
    if word.contains(|c: char| ";|&<>()$`\"'{}*?[]".contains(c)) {
        return None;
    }
    let exists = if word.contains('/') {
        Path::new(word).is_file()
    } else {
        let path = std::env::var_os("PATH").unwrap_or_default();
        std::env::split_paths(&path).any(|d| d.join(word).is_file())
    };
    if !exists || (!word.contains('/') && SHELL_WORDS.contains(&word)) {
        return None;
    }
    let base = word.rsplit('/').next().unwrap_or(word);
    Some(base.chars().take(15).collect())
}

/// Words a shell runs itself even when a same-named program exists in PATH.
const SHELL_WORDS: &[&str] = &[
    "echo", "printf", "test", "[", "true", "false", "kill", "pwd",
];

/// Substitutes the runtime variables of a command: `{{STROBE}}` (and bpftrace's spelling
/// `{{BPFTRACE}}`, so its cases can be reused) and `{{BEFORE_PID}}`, the pid of the shell
/// running the first `BEFORE` (write `BEFORE exec prog` to make it the program's own pid).
pub fn expand(cmd: &str, strobe: &Path, before_pid: Option<u32>) -> String {
    let path = shell_quote(&strobe.to_string_lossy());
    let mut out = cmd
        .replace("{{STROBE}}", &path)
        .replace("{{BPFTRACE}}", &path);
    if let Some(pid) = before_pid {
        out = out.replace("{{BEFORE_PID}}", &pid.to_string());
    }
    out
}

fn shell_quote(s: &str) -> String {
    let plain = !s.is_empty()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || b"/._-+:,@".contains(&b));
    if plain {
        s.to_string()
    } else {
        format!("'{}'", s.replace('\'', "'\\''"))
    }
}

#[cfg(test)]
mod tests;
