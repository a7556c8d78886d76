//! `interval:unit:value`, `interval:value` (nanoseconds, duration suffixes), and profile.

use super::{
    count_error, num, AttachError, AttachNum, AttachSpec, Hooks, Part, ProbeKind, Span, TimeUnit,
};

/// The parser of `profile`, `interval` attach points.
pub(super) const PROFILE: Hooks = Hooks {
    kinds: &[ProbeKind::Profile, ProbeKind::Interval],
    spec,
};
pub(super) const INTERVAL: Hooks = PROFILE;

pub(super) fn spec(kind: ProbeKind, parts: &[Part], span: Span) -> Result<AttachSpec, AttachError> {
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
