//! `interval:` and `profile:`: the clock perf event's period (or frequency) from the attach
//! point's unit and value.

use super::{mismatch, Hooks, Input, LowerError, RunKind};
use crate::plan::Sampling;
use crate::syntax::ast::ProbeKind;
use crate::syntax::attach::{AttachSpec, TimeUnit};

pub(super) const PROFILE: Hooks = Hooks {
    kinds: &[ProbeKind::Profile, ProbeKind::Interval],
    plan,
    ..Hooks::PLAIN
};
pub(super) const INTERVAL: Hooks = PROFILE;

fn plan(i: &Input<'_>) -> Result<Option<RunKind>, LowerError> {
    let AttachSpec::Timer { unit, value } = i.spec else {
        return mismatch(i);
    };
    let v = i.num(*value)?;
    Ok(Some(if i.at.kind == ProbeKind::Interval {
        RunKind::Interval {
            period_ns: period_ns(*unit, v).max(1),
        }
    } else {
        RunKind::Profile {
            sampling: match unit {
                TimeUnit::Hz => Sampling::Frequency(v.max(1)),
                u => Sampling::Period(period_ns(*u, v).max(1)),
            },
        }
    }))
}

fn period_ns(unit: TimeUnit, v: u64) -> u64 {
    match unit {
        TimeUnit::S => v.saturating_mul(1_000_000_000),
        TimeUnit::Ms => v.saturating_mul(1_000_000),
        TimeUnit::Us => v.saturating_mul(1_000),
        TimeUnit::Ns => v,
        TimeUnit::Hz => 1_000_000_000 / v.max(1),
    }
}
