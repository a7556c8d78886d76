//! `interval:`/`i:` (one CPU, every period) and `profile:`/`p:` (every online CPU): clock perf
//! events the runtime opens (`unit:value` or a value with a duration suffix).

use super::{AttachKind, Context, Facts, KindInfo, PidFilter, ProbeKind, Runner, Space};
use crate::asm::isa::ProgType;

pub(super) const PROFILE: KindInfo = KindInfo {
    kind: ProbeKind::Profile,
    name: "profile",
    aliases: &["p"],
    usage: "`interval:s:1`, `interval:1s` or `profile:hz:99`",
    prog: ProgType::PerfEvent,
    attach: None,
    multi_attach: None,
    space: Space::Kernel,
    runner: Runner::Runtime,
    armed: true,
    template: AttachKind::Runtime(ProbeKind::Profile),
    clones_per_target: false,
    context: Context::NONE,
    pid_filter: PidFilter::WithPid,
    facts: Facts {
        regs: true,
        ctx: true,
        signal: true,
        counted_once: true,
        ..Facts::NONE
    },
};

pub(super) const INTERVAL: KindInfo = KindInfo {
    kind: ProbeKind::Interval,
    template: AttachKind::Runtime(ProbeKind::Interval),
    name: "interval",
    aliases: &["i"],
    pid_filter: PidFilter::Never,
    facts: Facts {
        regs: true,
        ctx: true,
        ..Facts::NONE
    },
    ..PROFILE
};
