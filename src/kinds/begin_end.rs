//! `begin`/`BEGIN` and `end`/`END`: run once by the runtime with BPF_PROG_TEST_RUN before the
//! other probes are armed and after they are disarmed. No attach point beyond the name.

use super::{AttachKind, Context, Facts, KindInfo, PidFilter, ProbeKind, Runner, Space};
use crate::asm::isa::ProgType;

const RUN_ONCE: KindInfo = KindInfo {
    kind: ProbeKind::Begin,
    name: "begin",
    aliases: &["BEGIN"],
    usage: "no arguments, e.g. `begin`",
    prog: ProgType::RawTracepoint,
    attach: None,
    multi_attach: None,
    space: Space::Kernel,
    runner: Runner::TestRun,
    armed: false,
    template: AttachKind::Runtime(ProbeKind::Begin),
    clones_per_target: false,
    context: Context::NONE,
    pid_filter: PidFilter::Never,
    facts: Facts {
        type_name: Some("special"),
        whole_run: true,
        ..Facts::NONE
    },
};

pub(super) const BEGIN: KindInfo = RUN_ONCE;

pub(super) const END: KindInfo = KindInfo {
    kind: ProbeKind::End,
    template: AttachKind::Runtime(ProbeKind::End),
    name: "end",
    aliases: &["END"],
    ..RUN_ONCE
};
