//! `uprobe:`/`u:` and `uretprobe:`/`ur:`: functions of a binary (by symbol, address, offset or
//! source line), one program for all targets on an uprobe_multi link where the kernel has
//! them, else one perf event per site.

use super::{AttachKind, Context, Facts, KindInfo, Listed, PidFilter, ProbeKind, Runner, Space};
use crate::asm::isa::{AttachType, ProgType};

pub(super) const UPROBE: KindInfo = KindInfo {
    kind: ProbeKind::Uprobe,
    name: "uprobe",
    aliases: &["u"],
    usage: "`uprobe:binary[:lang]:function[+offset]`",
    prog: ProgType::Kprobe,
    attach: None,
    multi_attach: Some(AttachType::TraceUprobeMulti),
    space: Space::User,
    runner: Runner::Loader,
    armed: true,
    template: AttachKind::Uprobe { retprobe: false },
    clones_per_target: false,
    context: Context {
        args: true,
        argn: true,
        retval: false,
        func: true,
    },
    pid_filter: PidFilter::Never,
    facts: Facts {
        regs: true,
        func_symbol: true,
        args_on_use: true,
        signal: true,
        listed: Some(Listed {
            space: Space::User,
            rank: 0,
        }),
        newest_first: true,
        ..Facts::NONE
    },
};

pub(super) const URETPROBE: KindInfo = KindInfo {
    kind: ProbeKind::Uretprobe,
    name: "uretprobe",
    aliases: &["ur"],
    usage: "`uretprobe:binary[:lang]:function`",
    template: AttachKind::Uprobe { retprobe: true },
    context: Context {
        args: false,
        argn: false,
        retval: true,
        func: true,
    },
    facts: Facts {
        retprobe: true,
        regs: true,
        func_symbol: true,
        args_on_use: true,
        signal: true,
        newest_first: true,
        ..Facts::NONE
    },
    ..UPROBE
};
