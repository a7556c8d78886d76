//! `software:`/`hardware:`: the perf event by bpftrace's names and aliases, and its sample
//! period.

use super::{mismatch, Hooks, Input, LowerError, RunKind};
use crate::plan::Sampling;
use crate::syntax::ast::ProbeKind;
use crate::syntax::attach::AttachSpec;

pub(super) const SOFTWARE: Hooks = Hooks {
    kinds: &[ProbeKind::Software, ProbeKind::Hardware],
    plan,
    ..Hooks::PLAIN
};
pub(super) const HARDWARE: Hooks = SOFTWARE;

fn plan(i: &Input<'_>) -> Result<Option<RunKind>, LowerError> {
    let AttachSpec::PerfEvent { event, count } = i.spec else {
        return mismatch(i);
    };
    let hw = i.at.kind == ProbeKind::Hardware;
    let Some((config, default)) = perf_event(hw, event) else {
        return i.unsupported(&format!("the perf event `{event}`"));
    };
    let n = match count {
        Some(c) => i.num(*c)?,
        None => default,
    };
    let sampling = Sampling::Period(n.max(1));
    Ok(Some(if hw {
        RunKind::Hardware { config, sampling }
    } else {
        RunKind::Software { config, sampling }
    }))
}

/// A software (`perf_sw_ids`) or hardware (`perf_hw_id`) event by bpftrace's names and
/// aliases, with bpftrace's default sample period (include/uapi/linux/perf_event.h).
fn perf_event(hw: bool, name: &str) -> Option<(u64, u64)> {
    let sw: &[(&[&str], u64, u64)] = &[
        (&["cpu-clock", "cpu"], 0, 1_000_000),
        (&["task-clock"], 1, 1_000_000),
        (&["page-faults", "faults"], 2, 100),
        (&["context-switches", "cs"], 3, 1_000),
        (&["cpu-migrations"], 4, 1),
        (&["minor-faults"], 5, 100),
        (&["major-faults"], 6, 1),
        (&["alignment-faults"], 7, 1),
        (&["emulation-faults"], 8, 1),
        (&["dummy"], 9, 1),
        (&["bpf-output"], 10, 1),
    ];
    let hwt: &[(&[&str], u64, u64)] = &[
        (&["cpu-cycles", "cycles"], 0, 1_000_000),
        (&["instructions"], 1, 1_000_000),
        (&["cache-references"], 2, 1_000_000),
        (&["cache-misses"], 3, 1_000_000),
        (&["branch-instructions", "branches"], 4, 100_000),
        (&["branch-misses"], 5, 100_000),
        (&["bus-cycles"], 6, 100_000),
        (&["frontend-stalls"], 7, 1_000_000),
        (&["backend-stalls"], 8, 1_000_000),
        (&["ref-cycles"], 9, 1_000_000),
    ];
    let table = if hw { hwt } else { sw };
    table
        .iter()
        .find(|(names, _, _)| names.contains(&name))
        .map(|(_, c, d)| (*c, *d))
}
