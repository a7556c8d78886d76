//! Kinds the runtime runs itself with BPF_PROG_TEST_RUN: `self:signal:SIGUSR1` (each time
//! strobe receives the signal, as a raw tracepoint program), `test:NAME` and `bench:NAME`
//! (`--test`/`--bench` modes, loaded as XDP programs as bpftrace does: the raw tracepoint
//! runner takes no repeat count).

use super::{AttachKind, Context, Facts, KindInfo, PidFilter, ProbeKind, Runner, Space};
use crate::asm::isa::ProgType;

pub(super) const SELF: KindInfo = KindInfo {
    kind: ProbeKind::SelfEvent,
    name: "self",
    aliases: &[],
    usage: "`self:signal:SIGUSR1`",
    prog: ProgType::RawTracepoint,
    attach: None,
    multi_attach: None,
    space: Space::Kernel,
    runner: Runner::TestRun,
    armed: true,
    template: AttachKind::Runtime(ProbeKind::SelfEvent),
    clones_per_target: false,
    context: Context::NONE,
    pid_filter: PidFilter::Never,
    facts: Facts {
        type_name: Some("special"),
        ..Facts::NONE
    },
};

pub(super) const TEST: KindInfo = KindInfo {
    kind: ProbeKind::Test,
    template: AttachKind::Runtime(ProbeKind::Test),
    name: "test",
    usage: "a name, e.g. `test:name`",
    prog: ProgType::Xdp,
    armed: false,
    facts: Facts {
        verdict: true,
        ..Facts::NONE
    },
    ..SELF
};

pub(super) const BENCH: KindInfo = KindInfo {
    kind: ProbeKind::Bench,
    template: AttachKind::Runtime(ProbeKind::Bench),
    name: "bench",
    facts: Facts {
        type_name: Some("benchmark"),
        verdict: true,
        ..Facts::NONE
    },
    ..TEST
};
