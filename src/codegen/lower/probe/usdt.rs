//! `usdt:`: one attach plan per probe site (each site's arguments live in different
//! registers), its arguments as the checker parsed them from the site's `.note.stapsdt` note.

use super::{ArgsSource, Hooks, Input, LowerError, RunKind};
use crate::sema::expand::TargetKind;
use crate::sema::AttachTargets;
use crate::syntax::ast::ProbeKind;

pub(super) const USDT: Hooks = Hooks {
    kinds: &[ProbeKind::Usdt],
    plan,
    args: |at, _| Ok(args(at)),
    sites: usdt_sites,
    ..Hooks::PLAIN
};

fn plan(i: &Input<'_>) -> Result<Option<RunKind>, LowerError> {
    let Some(TargetKind::Usdt { path, note }) = i.at.targets.first().map(|t| &t.kind) else {
        return Ok(None);
    };
    Ok(Some(RunKind::Usdt {
        binary: path.clone(),
        note: note.clone(),
    }))
}

/// The site's arguments, as the checker read them from its note.
fn args(at: &AttachTargets) -> ArgsSource {
    ArgsSource::Usdt(match at.targets.first().map(|t| &t.kind) {
        Some(TargetKind::Usdt { .. }) => at
            .slots
            .first()
            .map(|s| s.usdt_args.clone())
            .unwrap_or_default(),
        _ => Vec::new(),
    })
}

/// A usdt attach point split by probe site (target): one attach point per site.
fn usdt_sites(at: &AttachTargets) -> Vec<std::borrow::Cow<'_, AttachTargets>> {
    if at.targets.len() < 2 {
        return vec![std::borrow::Cow::Borrowed(at)];
    }
    // The sites of one probe next to each other: `Attached N probes` counts probes.
    let mut sites: Vec<usize> = (0..at.targets.len()).collect();
    sites.sort_by(|&a, &b| at.targets[a].name.cmp(&at.targets[b].name));
    sites
        .into_iter()
        .map(|i| {
            let mut one = at.clone();
            one.targets = vec![at.targets[i].clone()];
            one.slots = at.slots.get(i).cloned().into_iter().collect();
            std::borrow::Cow::Owned(one)
        })
        .collect()
}
