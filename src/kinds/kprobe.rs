//! `kprobe:`/`k:` and `kretprobe:`/`kr:`: kernel functions (or an address) through kprobes,
//! one program for all targets on a kprobe_multi link where the kernel has them, else one
//! perf event per function.

use super::{AttachKind, Context, Facts, KindInfo, Listed, PidFilter, ProbeKind, Runner, Space};
use crate::asm::isa::{AttachType, ProgType};

pub(super) const KPROBE: KindInfo = KindInfo {
    kind: ProbeKind::Kprobe,
    name: "kprobe",
    aliases: &["k"],
    usage: "`kprobe:[module:]function[+offset]`",
    prog: ProgType::Kprobe,
    attach: None,
    multi_attach: Some(AttachType::TraceKprobeMulti),
    space: Space::Kernel,
    runner: Runner::Loader,
    armed: true,
    template: AttachKind::Kprobe { retprobe: false },
    clones_per_target: false,
    context: Context {
        args: false,
        argn: true,
        retval: false,
        func: true,
    },
    pid_filter: PidFilter::WithPid,
    facts: Facts {
        regs: true,
        func_symbol: true,
        signal: true,
        listed: Some(Listed {
            space: Space::Kernel,
            rank: 0,
        }),
        newest_first: true,
        ..Facts::NONE
    },
};

pub(super) const KRETPROBE: KindInfo = KindInfo {
    kind: ProbeKind::Kretprobe,
    name: "kretprobe",
    aliases: &["kr"],
    usage: "`kretprobe:[module:]function`",
    template: AttachKind::Kprobe { retprobe: true },
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
        signal: true,
        ..Facts::NONE
    },
    ..KPROBE
};
