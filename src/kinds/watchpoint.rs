//! `watchpoint:`/`w:` and `asyncwatchpoint:`/`aw:`: hardware breakpoint perf events
//! (`address:length:mode`) the runtime opens in the `-p` process, else on every CPU.

use super::{AttachKind, Context, Facts, KindInfo, PidFilter, ProbeKind, Runner, Space};
use crate::asm::isa::ProgType;

pub(super) const WATCHPOINT: KindInfo = KindInfo {
    kind: ProbeKind::Watchpoint,
    name: "watchpoint",
    aliases: &["w"],
    usage: "`watchpoint:address:length:mode`",
    prog: ProgType::PerfEvent,
    attach: None,
    multi_attach: None,
    space: Space::Kernel,
    runner: Runner::Runtime,
    armed: true,
    template: AttachKind::Runtime(ProbeKind::Watchpoint),
    clones_per_target: false,
    context: Context::NONE,
    pid_filter: PidFilter::Never,
    facts: Facts {
        regs: true,
        ctx: true,
        counted_once: true,
        ..Facts::NONE
    },
};

pub(super) const ASYNCWATCHPOINT: KindInfo = KindInfo {
    kind: ProbeKind::AsyncWatchpoint,
    template: AttachKind::Runtime(ProbeKind::AsyncWatchpoint),
    name: "asyncwatchpoint",
    aliases: &["aw"],
    facts: Facts {
        regs: true,
        ctx: true,
        counted_once: true,
        type_name: Some("watchpoint"),
        ..Facts::NONE
    },
    ..WATCHPOINT
};
