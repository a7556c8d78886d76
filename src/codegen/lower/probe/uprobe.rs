//! `uprobe:`/`uretprobe:`: one attach plan per binary; the runtime resolves the function
//! glob itself.

use std::path::PathBuf;

use super::{regs, Hooks, Input, LowerError, RunKind};
use crate::sema::expand::TargetKind;
use crate::sema::AttachTargets;
use crate::syntax::ast::ProbeKind;
use crate::syntax::attach::AttachSpec;

pub(super) const UPROBE: Hooks = Hooks {
    kinds: &[ProbeKind::Uprobe, ProbeKind::Uretprobe],
    plan,
    args: regs,
    sites: user_binaries,
    ..Hooks::PLAIN
};
pub(super) const URETPROBE: Hooks = UPROBE;

fn plan(i: &Input<'_>) -> Result<Option<RunKind>, LowerError> {
    let (at, spec) = (i.at, i.spec);
    let Some(TargetKind::User {
        path,
        func,
        address: target_address,
        ..
    }) = at.targets.first().map(|t| &t.kind)
    else {
        return Ok(None);
    };
    // One spec per binary; the runtime resolves the function glob itself.
    let func = match spec {
        AttachSpec::Uprobe { func: f, .. } if !f.is_empty() => f.clone(),
        _ => func.clone(),
    };
    let cpp = matches!(spec, AttachSpec::Uprobe { lang: Some(l), .. } if l == "cpp");
    let (offset, address) = match spec {
        AttachSpec::Uprobe {
            offset, address, ..
        } => (offset.unwrap_or(0), *address),
        // A source line is the address its DWARF line table gave.
        AttachSpec::UprobeSourceLine { .. } => (0, *target_address),
        _ => (0, None),
    };
    Ok(Some(RunKind::Uprobe {
        binary: PathBuf::from(path),
        func,
        retprobe: at.kind == ProbeKind::Uretprobe,
        offset,
        address,
        cpp,
    }))
}

/// A uprobe attach point split by binary (`uprobe:*:f` with `-p`, `uprobe:./bin*:f`): one
/// spec per file, in the order the files were found, each attaching its own functions.
fn user_binaries(at: &AttachTargets) -> Vec<std::borrow::Cow<'_, AttachTargets>> {
    let path = |t: &crate::sema::expand::Target| match &t.kind {
        TargetKind::User { path, .. } => Some(path.clone()),
        _ => None,
    };
    let mut seen = std::collections::HashSet::new();
    let paths: Vec<PathBuf> = at
        .targets
        .iter()
        .filter_map(path)
        .filter(|p| seen.insert(p.clone()))
        .collect();
    if paths.len() < 2 {
        return vec![std::borrow::Cow::Borrowed(at)];
    }
    paths
        .into_iter()
        .map(|p| {
            let mut one = at.clone();
            let keep: Vec<bool> = at
                .targets
                .iter()
                .map(|t| path(t).as_ref() == Some(&p))
                .collect();
            one.targets.retain(|t| path(t).as_ref() == Some(&p));
            let mut k = keep.iter();
            one.slots.retain(|_| k.next().copied().unwrap_or(false));
            std::borrow::Cow::Owned(one)
        })
        .collect()
}
