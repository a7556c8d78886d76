//! `software:`/`s:` and `hardware:`/`h:`: sampling perf events (`event[:count]`) on every
//! online CPU, opened by the runtime.

use super::{AttachKind, Context, Facts, KindInfo, Listed, PidFilter, ProbeKind, Runner, Space};
use crate::asm::isa::ProgType;

pub(super) const SOFTWARE: KindInfo = KindInfo {
    kind: ProbeKind::Software,
    name: "software",
    aliases: &["s"],
    usage: "`software:event[:count]`",
    prog: ProgType::PerfEvent,
    attach: None,
    multi_attach: None,
    space: Space::Kernel,
    runner: Runner::Runtime,
    armed: true,
    template: AttachKind::Runtime(ProbeKind::Software),
    clones_per_target: false,
    context: Context::NONE,
    pid_filter: PidFilter::WithPid,
    facts: Facts {
        regs: true,
        ctx: true,
        listed: Some(Listed {
            space: Space::Kernel,
            rank: 3,
        }),
        counted_once: true,
        ..Facts::NONE
    },
};

pub(super) const HARDWARE: KindInfo = KindInfo {
    kind: ProbeKind::Hardware,
    template: AttachKind::Runtime(ProbeKind::Hardware),
    name: "hardware",
    aliases: &["h"],
    facts: Facts {
        regs: true,
        ctx: true,
        listed: Some(Listed {
            space: Space::Kernel,
            rank: 4,
        }),
        counted_once: true,
        ..Facts::NONE
    },
    ..SOFTWARE
};
