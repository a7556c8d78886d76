//! `-p PID` / `-c CMD` for kernel probes: a prelude that leaves the program unless the
//! current process (tgid) is the traced one. Kernel probes fire in every process — a BPF
//! program on a tracepoint, kprobe or fentry runs whatever the perf event's task filter says —
//! so, as current bpftrace does, the check is in the program. (bpftrace 0.17 has no such
//! filter: its `-p` limits only uprobes and USDT probes; strobe's uprobes, USDT probes and
//! watchpoints are limited by their perf events instead, and `interval`, which runs on one
//! CPU's timer whatever process is there, is left alone.)
//!
//! The pid is not known when compiling with `-c` (the command starts later), so it lives in
//! a one-entry array map (`strobe_pid`, role [`MapRole::PidFilter`]) that the runtime fills
//! before arming; 0 means no filter.

use crate::asm::isa::{AluOp, Helper, JmpOp, Size};
use crate::codegen::{Builder, Label};
use crate::runtime::plan::{MapRole, MapSpec};
use crate::syntax::ast::ProbeKind;
use crate::sys::MapType;

pub(crate) const PID_MAP: &str = "strobe_pid";

/// The map holding the traced process's pid.
pub(crate) fn map() -> MapSpec {
    MapSpec {
        name: PID_MAP.into(),
        map_type: MapType::Array,
        key_size: 4,
        value_size: 4,
        max_entries: 1,
        role: MapRole::PidFilter,
    }
}

/// Whether probes of `kind` get the filter.
pub(crate) fn applies(kind: ProbeKind) -> bool {
    matches!(
        kind,
        ProbeKind::Tracepoint
            | ProbeKind::RawTracepoint
            | ProbeKind::Kprobe
            | ProbeKind::Kretprobe
            | ProbeKind::Fentry
            | ProbeKind::Fexit
            | ProbeKind::Profile
            | ProbeKind::Software
            | ProbeKind::Hardware
    )
}

/// The traced process's pid from the map (`cpid` with `-c`; 0 when unset).
pub(crate) fn load_pid(b: &mut Builder) -> crate::codegen::VReg {
    let map = b.map(PID_MAP);
    let p = b.vreg();
    b.ld_map_value(p, map, 0);
    let want = b.vreg();
    b.load(Size::W, want, p, 0);
    want
}

/// `if (want != 0 && bpf_get_current_pid_tgid() >> 32 != want) goto exit;`
pub(crate) fn emit(b: &mut Builder, exit: Label) {
    let want = load_pid(b);
    let go = b.label();
    b.jmp64(JmpOp::Jeq, want, 0, go);
    let tgid = b.call(Helper::GetCurrentPidTgid, &[]);
    b.alu(true, AluOp::Rsh, tgid, 32);
    b.jmp64(JmpOp::Jne, tgid, want, exit);
    b.bind(go);
}
