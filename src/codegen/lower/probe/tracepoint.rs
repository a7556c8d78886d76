//! `tracepoint:`: the expanded tracepoints to open, and `args` as the fields of the first
//! target's format (which the checker read from tracefs).

use super::{ArgsSource, Hooks, Input, LowerError, RunKind};
use crate::sema::expand::TargetKind;
use crate::sema::AttachTargets;
use crate::syntax::ast::ProbeKind;

pub(super) const TRACEPOINT: Hooks = Hooks {
    kinds: &[ProbeKind::Tracepoint],
    plan,
    args,
    ..Hooks::PLAIN
};

fn plan(i: &Input<'_>) -> Result<Option<RunKind>, LowerError> {
    let targets: Vec<(String, String)> =
        i.at.targets
            .iter()
            .filter_map(|t| match &t.kind {
                TargetKind::Tracepoint { category, name } => Some((category.clone(), name.clone())),
                _ => None,
            })
            .collect();
    if targets.is_empty() {
        return Ok(None);
    }
    Ok(Some(RunKind::Tracepoint { targets }))
}

fn args(at: &AttachTargets, span: crate::diag::Span) -> Result<ArgsSource, LowerError> {
    Ok(
        match (at.slots.first(), at.targets.first().map(|t| &t.kind)) {
            (Some(slots), Some(TargetKind::Tracepoint { category, name })) => {
                if let Some(e) = &slots.unreadable {
                    return Err(LowerError::Kernel {
                        what: format!("tracepoint {category}:{name}: {e}"),
                        span,
                    });
                }
                ArgsSource::Tracepoint(slots.fields.clone())
            }
            _ => ArgsSource::Tracepoint(Vec::new()),
        },
    )
}
