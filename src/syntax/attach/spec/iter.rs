//! `iter:name[:pin]` (no wildcards).

use super::{
    count_error, has_wildcard, nonempty, AttachError, AttachSpec, Hooks, Part, ProbeKind, Span,
};

/// The parser of `iter` attach points.
pub(super) const ITER: Hooks = Hooks {
    kinds: &[ProbeKind::Iter],
    spec,
};

pub(super) fn spec(kind: ProbeKind, parts: &[Part], span: Span) -> Result<AttachSpec, AttachError> {
    let n = parts.len();
    let bad = |expected: &str| count_error(kind, expected, parts, span);
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
    Ok(AttachSpec::Iter {
        name,
        pin: (n == 3).then(|| parts[2].text.clone()),
    })
}
