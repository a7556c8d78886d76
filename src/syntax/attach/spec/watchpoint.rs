//! `watchpoint:address:length:mode` (mode of r, w, x).

use super::{count_error, num, AttachError, AttachSpec, Hooks, Part, ProbeKind, Span};

/// The parser of `watchpoint`, `asyncwatchpoint` attach points.
pub(super) const WATCHPOINT: Hooks = Hooks {
    kinds: &[ProbeKind::Watchpoint, ProbeKind::AsyncWatchpoint],
    spec,
};
pub(super) const ASYNCWATCHPOINT: Hooks = WATCHPOINT;

pub(super) fn spec(kind: ProbeKind, parts: &[Part], span: Span) -> Result<AttachSpec, AttachError> {
    let n = parts.len();
    let bad = |expected: &str| count_error(kind, expected, parts, span);
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
    Ok(AttachSpec::Watchpoint {
        address: num(&parts[1], "address")?,
        len: num(&parts[2], "length")?,
        mode,
    })
}
