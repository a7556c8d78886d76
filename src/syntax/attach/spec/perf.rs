//! `software:event[:count]`, `hardware:event[:count]`.

use super::{count_error, nonempty, num, AttachError, AttachSpec, Hooks, Part, ProbeKind, Span};

/// The parser of `software`, `hardware` attach points.
pub(super) const SOFTWARE: Hooks = Hooks {
    kinds: &[ProbeKind::Software, ProbeKind::Hardware],
    spec,
};
pub(super) const HARDWARE: Hooks = SOFTWARE;

pub(super) fn spec(kind: ProbeKind, parts: &[Part], span: Span) -> Result<AttachSpec, AttachError> {
    let n = parts.len();
    let bad = |expected: &str| count_error(kind, expected, parts, span);
    if n != 2 && n != 3 {
        return Err(bad("1 or 2"));
    }
    let count = if n == 3 && !parts[2].text.is_empty() && parts[2].text != "*" {
        Some(num(&parts[2], "count")?)
    } else {
        None
    };
    Ok(AttachSpec::PerfEvent {
        event: nonempty(&parts[1], "event name")?,
        count,
    })
}
