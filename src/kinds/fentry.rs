//! `fentry:`/`f:`/`kfunc:` and `fexit:`/`fr:`/`kretfunc:`: kernel (or BPF program) functions
//! through BPF trampolines. The kernel binds the target at load time, so each target gets
//! its own loaded clone (or, for wildcards using `probe`, a kprobe_multi program).

use super::{AttachKind, Context, Facts, KindInfo, Listed, PidFilter, ProbeKind, Runner, Space};
use crate::asm::isa::{AttachType, ProgType};

pub(super) const FENTRY: KindInfo = KindInfo {
    kind: ProbeKind::Fentry,
    name: "fentry",
    aliases: &["f", "kfunc"],
    usage: "`fentry[:module]:function`",
    prog: ProgType::Tracing,
    attach: Some(AttachType::TraceFentry),
    multi_attach: None,
    space: Space::Kernel,
    runner: Runner::Loader,
    armed: true,
    template: AttachKind::Fentry,
    clones_per_target: true,
    context: Context {
        args: true,
        argn: false,
        retval: false,
        func: true,
    },
    pid_filter: PidFilter::WithPid,
    facts: Facts {
        func_symbol: true,
        btf_func: true,
        args_on_use: true,
        signal: true,
        skb_output: true,
        listed: Some(Listed {
            space: Space::Kernel,
            rank: 5,
        }),
        newest_first: true,
        ..Facts::NONE
    },
};

pub(super) const FEXIT: KindInfo = KindInfo {
    kind: ProbeKind::Fexit,
    name: "fexit",
    aliases: &["fr", "kretfunc"],
    attach: Some(AttachType::TraceFexit),
    template: AttachKind::Fexit,
    context: Context {
        args: true,
        argn: false,
        retval: true,
        func: true,
    },
    facts: Facts {
        retprobe: true,
        func_symbol: true,
        btf_func: true,
        args_on_use: true,
        signal: true,
        skb_output: true,
        newest_first: true,
        ..Facts::NONE
    },
    ..FENTRY
};
