//! `begin`/`end`: no arguments (a lone `*` is accepted, as bpftrace does).

use super::{count_error, AttachError, AttachSpec, Hooks, Part, ProbeKind, Span};

/// The parser of `begin`, `end` attach points.
pub(super) const BEGIN: Hooks = Hooks {
    kinds: &[ProbeKind::Begin, ProbeKind::End],
    spec,
};
pub(super) const END: Hooks = BEGIN;

pub(super) fn spec(kind: ProbeKind, parts: &[Part], span: Span) -> Result<AttachSpec, AttachError> {
    let n = parts.len();
    let bad = |expected: &str| count_error(kind, expected, parts, span);
    Ok(if n == 1 || (n == 2 && parts[1].text == "*") {
        AttachSpec::None
    } else {
        return Err(bad("0"));
    })
}
