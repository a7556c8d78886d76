//! Splitting an attach point's text into its typed [`AttachSpec`], kind by kind.
//!
//! Input: the raw text and its offset in the source. Output: [`AttachPoint`]s or an
//! [`AttachError`] carrying the span of the offending part.
//! Invariant: pure text processing; nothing here looks at the system.

use super::{glob_match, has_wildcard, AttachNum, AttachPoint, AttachSpec, ProbeKind, TimeUnit};
use crate::diag::Span;

/// An attach point that does not fit its kind: a message and where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct AttachError {
    pub span: Span,
    pub message: String,
    pub help: Option<String>,
}

struct Part {
    text: String,
    span: Span,
}

/// Splits at unquoted `:`, removing quotes (and backslash escapes inside them).
fn split_parts(raw: &str, base: usize) -> Result<Vec<Part>, AttachError> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut start = 0;
    let mut in_quotes = false;
    let mut chars = raw.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            ':' if !in_quotes => {
                parts.push(Part {
                    text: std::mem::take(&mut cur),
                    span: Span::new(base + start, base + i),
                });
                start = i + 1;
            }
            '"' => in_quotes = !in_quotes,
            '$' if !in_quotes => {
                // `$N` (N ≥ 1) is a positional parameter, expanded later; anything else is a
                // mistake unless quoted.
                let digits: String = raw[i + 1..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                if digits.is_empty() || digits.starts_with('0') {
                    let bad = raw[i..].chars().take(2).collect::<String>();
                    return Err(AttachError {
                        span: Span::new(base + i, base + i + bad.len()),
                        message: format!("invalid positional parameter '{bad}' in attach point"),
                        help: Some(format!(
                            "positional parameters are $1, $2, …; quote the part if '$' is meant literally, e.g. \"{bad}\""
                        )),
                    });
                }
                cur.push(c);
            }
            '\\' if in_quotes => {
                if let Some((_, n)) = chars.next() {
                    cur.push(n);
                }
            }
            _ => cur.push(c),
        }
    }
    if in_quotes {
        return Err(AttachError {
            span: Span::new(base, base + raw.len()),
            message: "unterminated quote in attach point".into(),
            help: None,
        });
    }
    parts.push(Part {
        text: cur,
        span: Span::new(base + start, base + raw.len()),
    });
    Ok(parts)
}

fn count_error(kind: ProbeKind, expected: &str, parts: &[Part], span: Span) -> AttachError {
    AttachError {
        span,
        message: format!(
            "{} probe type requires {} arguments, found {}",
            kind.name(),
            expected,
            parts.len() - 1
        ),
        help: Some(format!("expected {}", usage(kind))),
    }
}

/// The accepted forms of each kind, for hints.
pub fn usage(kind: ProbeKind) -> &'static str {
    kind.info().usage
}

/// A number as bpftrace's attach-point parser reads it: decimal, `0x`, `0b`, leading-zero octal,
/// `_` separators, `NeM` scientific, and duration suffixes (scaled to nanoseconds).
pub fn parse_attach_uint(text: &str) -> Result<u64, String> {
    let cleaned: String = text.chars().filter(|&c| c != '_').collect();
    match crate::syntax::parser::literal::parse_int_text(&cleaned) {
        Ok(lit) => Ok(lit.value),
        Err(e) => Err(e.to_string()),
    }
}

fn num(part: &Part, what: &str) -> Result<AttachNum, AttachError> {
    if let Some(n) = part.text.strip_prefix('$') {
        if let Ok(n) = n.parse::<u32>() {
            if n > 0 {
                return Ok(AttachNum::Param(n));
            }
        }
    }
    parse_attach_uint(&part.text)
        .map(AttachNum::Lit)
        .map_err(|e| AttachError {
            span: part.span,
            message: format!("invalid {what} '{}': {e}", part.text),
            help: None,
        })
}

/// `func+offset` → (func, offset).
fn split_offset(
    part: &Part,
    allow: bool,
    kind: ProbeKind,
) -> Result<(String, Option<u64>), AttachError> {
    let Some((func, off)) = part.text.split_once('+') else {
        return Ok((part.text.clone(), None));
    };
    let err = |message: String| AttachError {
        span: part.span,
        message,
        help: None,
    };
    if !allow {
        return Err(err(format!("{} probes do not take an offset", kind.name())));
    }
    if off.contains('+') {
        return Err(err("an attach point takes at most one offset".into()));
    }
    let off = parse_attach_uint(off).map_err(|e| err(format!("invalid offset '{off}': {e}")))?;
    Ok((func.to_string(), Some(off)))
}

/// A bare number in a function position is an address.
fn func_or_address(func: String) -> (String, Option<u64>) {
    if func.starts_with(|c: char| c.is_ascii_digit()) {
        if let Ok(a) = parse_attach_uint(&func) {
            return (String::new(), Some(a));
        }
    }
    (func, None)
}

/// Probe kinds a wildcard provider (`t*point:…`) can expand to, as in bpftrace: kernel kinds,
/// or user-space kinds when the next part is a path.
const KERNEL_KINDS: &[ProbeKind] = &[
    ProbeKind::Kprobe,
    ProbeKind::Tracepoint,
    ProbeKind::Software,
    ProbeKind::Hardware,
    ProbeKind::Fentry,
    ProbeKind::Iter,
    ProbeKind::RawTracepoint,
];
const USER_KINDS: &[ProbeKind] = &[ProbeKind::Uprobe, ProbeKind::Usdt];

/// Parses one attach point's raw text, which starts at byte `start` of the source. A wildcard
/// probe type expands to every kind it matches whose form fits the rest of the text.
pub fn parse_attach_point(raw: &str, start: usize) -> Result<Vec<AttachPoint>, AttachError> {
    let span = Span::new(start, start + raw.len());
    let mut parts = split_parts(raw, start)?;
    let mut label = None;
    if let Some(eq) = parts[0].text.find('=') {
        if eq + 1 < parts[0].text.len() {
            label = Some(parts[0].text[..eq].to_string());
            let rest = parts[0].text[eq + 1..].to_string();
            parts[0].span.start += eq as u32 + 1;
            parts[0].text = rest;
        }
    }
    let provider = parts[0].text.clone();
    let pspan = parts[0].span;
    if provider.is_empty() {
        return Err(AttachError {
            span,
            message: "expected a probe type before ':'".into(),
            help: None,
        });
    }
    if provider.contains(['*', '?']) {
        let user = parts.len() >= 2 && parts[1].text.contains('/');
        let kinds = if user { USER_KINDS } else { KERNEL_KINDS };
        let out: Vec<AttachPoint> = kinds
            .iter()
            .filter(|k| glob_match(&provider, k.name()))
            .filter_map(|&kind| {
                let spec = spec_for(kind, &parts, span).ok()?;
                Some(AttachPoint {
                    span,
                    raw: raw.to_string(),
                    label: label.clone(),
                    provider: provider.clone(),
                    kind,
                    spec,
                })
            })
            .collect();
        if out.is_empty() {
            return Err(AttachError {
                span: pspan,
                message: format!("no probe type matches '{provider}'"),
                help: None,
            });
        }
        return Ok(out);
    }
    let kind = ProbeKind::from_name(&provider).ok_or_else(|| AttachError {
        span: pspan,
        message: format!("unknown probe type '{provider}'"),
        help: crate::diag::nearest(&provider, ProbeKind::all_spellings())
            .map(|n| format!("did you mean '{n}'?")),
    })?;
    let spec = spec_for(kind, &parts, span)?;
    Ok(vec![AttachPoint {
        span,
        raw: raw.to_string(),
        label,
        provider,
        kind,
        spec,
    }])
}

fn nonempty(p: &Part, what: &str) -> Result<String, AttachError> {
    if p.text.is_empty() {
        Err(AttachError {
            span: p.span,
            message: format!("empty {what} in attach point"),
            help: None,
        })
    } else {
        Ok(p.text.clone())
    }
}

fn spec_for(kind: ProbeKind, parts: &[Part], span: Span) -> Result<AttachSpec, AttachError> {
    use ProbeKind::*;
    let n = parts.len();
    let bad = |expected: &str| count_error(kind, expected, parts, span);
    Ok(match kind {
        Begin | End => {
            if n == 1 || (n == 2 && parts[1].text == "*") {
                AttachSpec::None
            } else {
                return Err(bad("0"));
            }
        }
        SelfEvent => {
            if n != 3 {
                return Err(bad("2"));
            }
            // bpftrace's one trigger and its one signal (it runs the probes on SIGUSR1).
            let kind = nonempty(&parts[1], "event kind")?;
            let name = nonempty(&parts[2], "event name")?;
            if kind != "signal" {
                return Err(AttachError {
                    span: parts[1].span,
                    message: format!("{kind} is not a supported trigger"),
                    help: Some(format!("expected {}", usage(SelfEvent))),
                });
            }
            if name != "SIGUSR1" {
                return Err(AttachError {
                    span: parts[2].span,
                    message: format!("{name} is not a supported signal"),
                    help: Some(format!("expected {}", usage(SelfEvent))),
                });
            }
            AttachSpec::Named { kind, name }
        }
        Test | Bench => {
            if n != 2 {
                return Err(bad("1"));
            }
            AttachSpec::Named {
                kind: String::new(),
                name: nonempty(&parts[1], "name")?,
            }
        }
        Kprobe | Kretprobe => {
            if n != 2 && n != 3 {
                return Err(bad("1 or 2"));
            }
            let module = (n == 3).then(|| parts[1].text.clone());
            let fpart = &parts[n - 1];
            nonempty(fpart, "function")?;
            let (func, offset) = split_offset(fpart, kind == Kprobe, kind)?;
            let (func, address) = if offset.is_none() {
                func_or_address(func)
            } else {
                (func, None)
            };
            AttachSpec::Kprobe {
                module,
                func,
                offset,
                address,
            }
        }
        Uprobe | Uretprobe if parts.len() >= 2 && parts[1].text.contains('@') => {
            source_location_spec(kind, parts, span)?
        }
        Uprobe | Uretprobe => {
            if n != 3 && n != 4 {
                return Err(bad("2 or 3"));
            }
            let target = nonempty(&parts[1], "binary path")?;
            let lang = (n == 4).then(|| parts[2].text.clone());
            // bpftrace knows one language qualifier: `cpp` (demangled C++ names).
            if let Some(l) = lang.as_deref().filter(|l| *l != "cpp") {
                return Err(AttachError {
                    span: parts[2].span,
                    message: format!("unsupported language type: {l}"),
                    help: Some("the only language qualifier is `cpp`".into()),
                });
            }
            let fpart = &parts[n - 1];
            nonempty(fpart, "function")?;
            let (func, offset) = split_offset(fpart, kind == Uprobe, kind)?;
            let (func, address) = if offset.is_none() {
                func_or_address(func)
            } else {
                (func, None)
            };
            if address.is_some() && has_wildcard(&target) {
                return Err(AttachError {
                    span: fpart.span,
                    message: "an absolute address cannot be used with a wildcard binary".into(),
                    help: None,
                });
            }
            AttachSpec::Uprobe {
                target,
                lang,
                func,
                offset,
                address,
            }
        }
        // An empty binary path names the objects of the `-p` process (checked in expansion).
        Usdt => match n {
            3 => AttachSpec::Usdt {
                target: parts[1].text.clone(),
                provider: None,
                name: nonempty(&parts[2], "probe name")?,
            },
            4 => AttachSpec::Usdt {
                target: parts[1].text.clone(),
                provider: Some(parts[2].text.clone()),
                name: nonempty(&parts[3], "probe name")?,
            },
            _ => return Err(bad("2 or 3")),
        },
        Tracepoint => match n {
            2 if has_wildcard(&parts[1].text) => AttachSpec::Tracepoint {
                category: "*".into(),
                name: parts[1].text.clone(),
            },
            3 => AttachSpec::Tracepoint {
                category: nonempty(&parts[1], "tracepoint category")?,
                name: nonempty(&parts[2], "tracepoint name")?,
            },
            _ => return Err(bad("2")),
        },
        RawTracepoint => match n {
            2 => AttachSpec::RawTracepoint {
                module: None,
                name: nonempty(&parts[1], "tracepoint name")?,
            },
            3 => AttachSpec::RawTracepoint {
                module: Some(parts[1].text.clone()),
                name: nonempty(&parts[2], "tracepoint name")?,
            },
            _ => return Err(bad("1 or 2")),
        },
        Fentry | Fexit => fentry_spec(kind, parts, span)?,
        Profile | Interval => timer_spec(kind, parts, span)?,
        Software | Hardware => {
            if n != 2 && n != 3 {
                return Err(bad("1 or 2"));
            }
            let count = if n == 3 && !parts[2].text.is_empty() && parts[2].text != "*" {
                Some(num(&parts[2], "count")?)
            } else {
                None
            };
            AttachSpec::PerfEvent {
                event: nonempty(&parts[1], "event name")?,
                count,
            }
        }
        Watchpoint | AsyncWatchpoint => {
            if n != 4 {
                return Err(bad("3"));
            }
            let mode = parts[3].text.clone();
            if mode.is_empty() || !mode.chars().all(|c| matches!(c, 'r' | 'w' | 'x')) {
                return Err(AttachError {
                    span: parts[3].span,
                    message: format!("invalid watchpoint mode '{mode}'"),
                    help: Some("use a combination of r, w and x, e.g. `rw`".into()),
                });
            }
            AttachSpec::Watchpoint {
                address: num(&parts[1], "address")?,
                len: num(&parts[2], "length")?,
                mode,
            }
        }
        Iter => {
            if n != 2 && n != 3 {
                return Err(bad("1 or 2"));
            }
            let name = nonempty(&parts[1], "iterator name")?;
            if has_wildcard(&name) {
                return Err(AttachError {
                    span: parts[1].span,
                    message: "iter probes do not support wildcards".into(),
                    help: None,
                });
            }
            AttachSpec::Iter {
                name,
                pin: (n == 3).then(|| parts[2].text.clone()),
            }
        }
    })
}

fn source_location_spec(
    kind: ProbeKind,
    parts: &[Part],
    span: Span,
) -> Result<AttachSpec, AttachError> {
    let err = |span: Span, message: &str| AttachError {
        span,
        message: message.to_string(),
        help: Some("expected `uprobe:binary@file:line[:column]`".into()),
    };
    if kind != ProbeKind::Uprobe {
        return Err(err(span, "only uprobe takes a source location"));
    }
    let (target, file) = parts[1].text.split_once('@').unwrap_or_default();
    if target.is_empty() || file.is_empty() || !(3..=4).contains(&parts.len()) {
        return Err(err(span, "invalid source location"));
    }
    if has_wildcard(target) {
        return Err(err(
            parts[1].span,
            "a source location cannot use a wildcard binary",
        ));
    }
    let line = parse_attach_uint(&parts[2].text)
        .map_err(|e| err(parts[2].span, &format!("invalid line number: {e}")))?;
    let column = match parts.get(3) {
        Some(p) => Some(
            parse_attach_uint(&p.text)
                .map_err(|e| err(p.span, &format!("invalid column number: {e}")))?,
        ),
        None => None,
    };
    Ok(AttachSpec::UprobeSourceLine {
        target: target.to_string(),
        file: file.to_string(),
        line,
        column,
    })
}

fn fentry_spec(kind: ProbeKind, parts: &[Part], span: Span) -> Result<AttachSpec, AttachError> {
    let n = parts.len();
    if !(2..=4).contains(&n) {
        return Err(count_error(kind, "1 or 2", parts, span));
    }
    if parts[1].text == "bpf" {
        return match n {
            3 => Ok(AttachSpec::Fentry {
                module: Some("bpf".into()),
                func: nonempty(&parts[2], "program name")?,
                prog_id: None,
            }),
            4 => {
                let prog_id = if parts[2].text == "*" {
                    None
                } else {
                    Some(parse_attach_uint(&parts[2].text).map_err(|_| AttachError {
                        span: parts[2].span,
                        message: "bpf program id must be a number or '*'".into(),
                        help: None,
                    })?)
                };
                Ok(AttachSpec::Fentry {
                    module: Some("bpf".into()),
                    func: nonempty(&parts[3], "program name")?,
                    prog_id,
                })
            }
            _ => Err(AttachError {
                span,
                message: "the 'bpf' form of this probe requires a program name".into(),
                help: Some("`fentry:bpf:[prog_id:]prog_name`".into()),
            }),
        };
    }
    match n {
        2 => Ok(AttachSpec::Fentry {
            module: None,
            func: nonempty(&parts[1], "function")?,
            prog_id: None,
        }),
        3 => Ok(AttachSpec::Fentry {
            module: Some(nonempty(&parts[1], "module")?),
            func: nonempty(&parts[2], "function")?,
            prog_id: None,
        }),
        _ => Err(AttachError {
            span,
            message: "only the 'bpf' form of this probe takes 3 arguments".into(),
            help: None,
        }),
    }
}

fn timer_spec(kind: ProbeKind, parts: &[Part], span: Span) -> Result<AttachSpec, AttachError> {
    match parts.len() {
        2 => {
            let value = num(&parts[1], &format!("rate of {} probe", kind.name()))?;
            if let AttachNum::Lit(ns) = value {
                if ns < 1000 {
                    return Err(AttachError {
                        span: parts[1].span,
                        message: format!(
                            "invalid rate of {} probe: minimum is 1000 (1us), found {ns} nanoseconds",
                            kind.name()
                        ),
                        help: Some("write a unit, e.g. `1s`, `100ms`, or `s:1`".into()),
                    });
                }
            }
            Ok(AttachSpec::Timer {
                unit: TimeUnit::Ns,
                value,
            })
        }
        3 => {
            let unit = TimeUnit::from_name(&parts[1].text).ok_or_else(|| AttachError {
                span: parts[1].span,
                message: format!(
                    "invalid time unit '{}' for {} probe",
                    parts[1].text,
                    kind.name()
                ),
                help: crate::diag::nearest(&parts[1].text, ["hz", "s", "ms", "us", "ns"])
                    .map(|n| format!("did you mean '{n}'?"))
                    .or_else(|| Some("use one of hz, s, ms, us, ns".into())),
            })?;
            let value = num(&parts[2], &format!("rate of {} probe", kind.name()))?;
            if value == AttachNum::Lit(0) {
                return Err(AttachError {
                    span: parts[2].span,
                    message: format!("{} probe rate must not be 0", kind.name()),
                    help: None,
                });
            }
            Ok(AttachSpec::Timer { unit, value })
        }
        _ => Err(count_error(kind, "1 or 2", parts, span)),
    }
}
