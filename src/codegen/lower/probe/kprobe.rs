//! `kprobe:`/`kretprobe:`: the expanded kernel functions, attached by the loader (one
//! kprobe_multi link or one perf event per function).

use super::{regs, Hooks, Input, LowerError, RunKind};
use crate::sema::expand::TargetKind;
use crate::syntax::ast::ProbeKind;

pub(super) const KPROBE: Hooks = Hooks {
    kinds: &[ProbeKind::Kprobe, ProbeKind::Kretprobe],
    plan,
    args: regs,
    ..Hooks::PLAIN
};
pub(super) const KRETPROBE: Hooks = KPROBE;

fn plan(i: &Input<'_>) -> Result<Option<RunKind>, LowerError> {
    Ok(Some(RunKind::Kprobe {
        funcs: i
            .at
            .targets
            .iter()
            .filter_map(|t| match &t.kind {
                TargetKind::KernelFunc { func, .. } => Some(func.clone()),
                _ => None,
            })
            .collect(),
        retprobe: i.at.kind == ProbeKind::Kretprobe,
    }))
}
