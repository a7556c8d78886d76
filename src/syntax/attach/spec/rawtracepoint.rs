//! `rawtracepoint[:module]:name`.

use super::{count_error, nonempty, AttachError, AttachSpec, Hooks, Part, ProbeKind, Span};

/// The parser of `rawtracepoint` attach points.
pub(super) const RAWTRACEPOINT: Hooks = Hooks {
    kinds: &[ProbeKind::RawTracepoint],
    spec,
};

pub(super) fn spec(kind: ProbeKind, parts: &[Part], span: Span) -> Result<AttachSpec, AttachError> {
    let n = parts.len();
    let bad = |expected: &str| count_error(kind, expected, parts, span);
    Ok(match n {
        2 => AttachSpec::RawTracepoint {
            module: None,
            name: nonempty(&parts[1], "tracepoint name")?,
        },
        3 => AttachSpec::RawTracepoint {
            module: Some(parts[1].text.clone()),
            name: nonempty(&parts[2], "tracepoint name")?,
        },
        _ => return Err(bad("1 or 2")),
    })
}
