//! `watchpoint:`/`w:` and `asyncwatchpoint:`/`aw:`: hardware breakpoint perf events
//! (`address:length:mode`) the runtime opens in the `-p` process, else on every CPU.

use super::{AttachKind, Context, KindInfo, PidFilter, ProbeKind, Runner, Space};
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
};

pub(super) const ASYNCWATCHPOINT: KindInfo = KindInfo {
    kind: ProbeKind::AsyncWatchpoint,
    template: AttachKind::Runtime(ProbeKind::AsyncWatchpoint),
    name: "asyncwatchpoint",
    aliases: &["aw"],
    ..WATCHPOINT
};
