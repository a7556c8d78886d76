//! `begin`/`end`: their attach plans, which the runtime runs itself. Their programs read no
//! context (`args` is none).

use super::{mismatch, Hooks, Input, LowerError, RunKind};
use crate::syntax::ast::ProbeKind;

pub(super) const BEGIN: Hooks = Hooks {
    kinds: &[ProbeKind::Begin, ProbeKind::End],
    plan,
    ..Hooks::PLAIN
};
pub(super) const END: Hooks = BEGIN;

fn plan(i: &Input<'_>) -> Result<Option<RunKind>, LowerError> {
    Ok(Some(match i.at.kind {
        ProbeKind::Begin => RunKind::Begin,
        ProbeKind::End => RunKind::End,
        _ => return mismatch(i),
    }))
}

/// A BEGIN program that only records the start time for `elapsed` (scripts without BEGIN).
pub(crate) fn start_only_begin(index: usize) -> Result<crate::plan::ProbeSpec, LowerError> {
    let mut b = crate::codegen::Builder::new();
    super::super::elapsed::record_start(&mut b);
    b.exit(0);
    let opts = crate::codegen::FinishOptions {
        name: super::prog_name(0, index),
        attach: crate::template::AttachKind::Runtime(ProbeKind::Begin),
        arming_guard: false,
    };
    let c = crate::codegen::finish(b, &opts).map_err(|source| LowerError::Codegen {
        probe: "BEGIN".into(),
        span: crate::diag::Span { start: 0, end: 0 },
        source,
    })?;
    Ok(crate::plan::ProbeSpec {
        name: "BEGIN".into(),
        id: ProbeKind::Begin,
        kind: RunKind::Begin,
        template: c.template,
        multi_template: None,
    })
}
