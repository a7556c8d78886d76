//! `software:`/`hardware:`: the perf event names strobe knows, listed without expansion.

use super::Hooks;
use crate::kernel::info::KernelInfo;
use crate::syntax::ast::ProbeKind;
use crate::syntax::attach::glob_match;

pub(super) const SOFTWARE: Hooks = Hooks {
    kinds: &[ProbeKind::Software, ProbeKind::Hardware],
    own: Some(list),
    ..super::PLAIN
};
pub(super) const HARDWARE: Hooks = SOFTWARE;

const SOFTWARE_EVENTS: &[&str] = &[
    "alignment-faults",
    "bpf-output",
    "context-switches",
    "cpu-clock",
    "cpu-migrations",
    "dummy",
    "emulation-faults",
    "major-faults",
    "minor-faults",
    "page-faults",
    "task-clock",
];

const HARDWARE_EVENTS: &[&str] = &[
    "backend-stalls",
    "branch-instructions",
    "branch-misses",
    "bus-cycles",
    "cache-misses",
    "cache-references",
    "cpu-cycles",
    "frontend-stalls",
    "instructions",
    "ref-cycles",
];

fn list(
    kind: ProbeKind,
    rest: &str,
    _verbose: bool,
    _k: &dyn KernelInfo,
    out: &mut Vec<String>,
    _problems: &mut Vec<String>,
) {
    let names = if kind == ProbeKind::Software {
        SOFTWARE_EVENTS
    } else {
        HARDWARE_EVENTS
    };
    let name_pat = rest.split(':').next().unwrap_or("*");
    out.extend(
        names
            .iter()
            .filter(|n| glob_match(name_pat, n))
            .map(|n| format!("{}:{n}:", kind.name())),
    );
}
