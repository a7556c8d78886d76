//! `rawtracepoint:`: one clone per expanded name, and `args`/`argN` as the argument names the
//! checker read from BTF's `btf_trace_<name>`.

use super::{ArgsSource, Hooks, Input, LowerError, RunKind};
use crate::sema::expand::TargetKind;
use crate::sema::AttachTargets;
use crate::syntax::ast::ProbeKind;

pub(super) const RAWTRACEPOINT: Hooks = Hooks {
    kinds: &[ProbeKind::RawTracepoint],
    plan,
    args: |at, _| Ok(args(at)),
    ..Hooks::PLAIN
};

fn plan(i: &Input<'_>) -> Result<Option<RunKind>, LowerError> {
    let targets: Vec<String> =
        i.at.targets
            .iter()
            .filter_map(|t| match &t.kind {
                TargetKind::RawTracepoint { name, .. } => Some(name.clone()),
                _ => None,
            })
            .collect();
    if targets.is_empty() {
        return Ok(None);
    }
    Ok(Some(RunKind::RawTracepoint { targets }))
}

fn args(at: &AttachTargets) -> ArgsSource {
    ArgsSource::RawTracepoint(
        at.slots
            .first()
            .map(|s| s.args.iter().map(|(n, _)| n.clone()).collect())
            .unwrap_or_default(),
    )
}
