//! `usdt:binary[:provider]:name`; an empty binary path names the objects of the `-p` process
//! (checked in expansion).

use super::{count_error, nonempty, AttachError, AttachSpec, Hooks, Part, ProbeKind, Span};

/// The parser of `usdt` attach points.
pub(super) const USDT: Hooks = Hooks {
    kinds: &[ProbeKind::Usdt],
    spec,
};

pub(super) fn spec(kind: ProbeKind, parts: &[Part], span: Span) -> Result<AttachSpec, AttachError> {
    let n = parts.len();
    let bad = |expected: &str| count_error(kind, expected, parts, span);
    // An empty binary path names the objects of the `-p` process (checked in expansion).
    Ok(match n {
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
    })
}
