//! `begin`/`end`: no arguments (a lone `*` is accepted, as bpftrace does).

use super::{count_error, AttachError, AttachSpec, Part, ProbeKind, Span};

pub(super) fn spec(kind: ProbeKind, parts: &[Part], span: Span) -> Result<AttachSpec, AttachError> {
    let n = parts.len();
    let bad = |expected: &str| count_error(kind, expected, parts, span);
    Ok(if n == 1 || (n == 2 && parts[1].text == "*") {
        AttachSpec::None
    } else {
        return Err(bad("0"));
    })
}
