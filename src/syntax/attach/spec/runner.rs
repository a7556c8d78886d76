//! `self:signal:SIGUSR1` (bpftrace's one trigger and signal), `test:NAME`, `bench:NAME`.

use super::{count_error, nonempty, usage, AttachError, AttachSpec, Hooks, Part, ProbeKind, Span};

/// The parser of `self` attach points.
pub(super) const SELF: Hooks = Hooks {
    kinds: &[ProbeKind::SelfEvent],
    spec: self_spec,
};

/// The parser of `test` and `bench` attach points.
pub(super) const TEST: Hooks = Hooks {
    kinds: &[ProbeKind::Test, ProbeKind::Bench],
    spec: named_spec,
};
pub(super) const BENCH: Hooks = TEST;

pub(super) fn self_spec(
    kind: ProbeKind,
    parts: &[Part],
    span: Span,
) -> Result<AttachSpec, AttachError> {
    let n = parts.len();
    let bad = |expected: &str| count_error(kind, expected, parts, span);
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
            help: Some(format!("expected {}", usage(SELF.kinds[0]))),
        });
    }
    if name != "SIGUSR1" {
        return Err(AttachError {
            span: parts[2].span,
            message: format!("{name} is not a supported signal"),
            help: Some(format!("expected {}", usage(SELF.kinds[0]))),
        });
    }
    Ok(AttachSpec::Named { kind, name })
}

pub(super) fn named_spec(
    kind: ProbeKind,
    parts: &[Part],
    span: Span,
) -> Result<AttachSpec, AttachError> {
    let n = parts.len();
    let bad = |expected: &str| count_error(kind, expected, parts, span);
    if n != 2 {
        return Err(bad("1"));
    }
    Ok(AttachSpec::Named {
        kind: String::new(),
        name: nonempty(&parts[1], "name")?,
    })
}
