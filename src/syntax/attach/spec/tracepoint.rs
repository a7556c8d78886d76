//! `tracepoint:category:name` (or one wildcard part for both).

use super::{
    count_error, has_wildcard, nonempty, AttachError, AttachSpec, Hooks, Part, ProbeKind, Span,
};

/// The parser of `tracepoint` attach points.
pub(super) const TRACEPOINT: Hooks = Hooks {
    kinds: &[ProbeKind::Tracepoint],
    spec,
};

pub(super) fn spec(kind: ProbeKind, parts: &[Part], span: Span) -> Result<AttachSpec, AttachError> {
    let n = parts.len();
    let bad = |expected: &str| count_error(kind, expected, parts, span);
    Ok(match n {
        2 if has_wildcard(&parts[1].text) => AttachSpec::Tracepoint {
            category: "*".into(),
            name: parts[1].text.clone(),
        },
        3 => AttachSpec::Tracepoint {
            category: nonempty(&parts[1], "tracepoint category")?,
            name: nonempty(&parts[2], "tracepoint name")?,
        },
        _ => return Err(bad("2")),
    })
}
