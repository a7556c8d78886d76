//! `watchpoint:`/`asyncwatchpoint:`: the hardware breakpoint's address, length and type.

use super::{mismatch, Hooks, Input, LowerError, RunKind};
use crate::syntax::ast::ProbeKind;
use crate::syntax::attach::AttachSpec;

pub(super) const WATCHPOINT: Hooks = Hooks {
    kinds: &[ProbeKind::Watchpoint, ProbeKind::AsyncWatchpoint],
    plan,
    ..Hooks::PLAIN
};
pub(super) const ASYNCWATCHPOINT: Hooks = WATCHPOINT;

fn plan(i: &Input<'_>) -> Result<Option<RunKind>, LowerError> {
    let AttachSpec::Watchpoint { address, len, mode } = i.spec else {
        return mismatch(i);
    };
    Ok(Some(RunKind::Watchpoint {
        address: i.num(*address)?,
        len: i.num(*len)?,
        // HW_BREAKPOINT_R = 1, _W = 2, _X = 4 (include/uapi/linux/hw_breakpoint.h).
        bp_type: mode.chars().fold(0, |t, c| {
            t | match c {
                'r' => 1,
                'w' => 2,
                _ => 4,
            }
        }),
    }))
}
