//! `-p PID` / `-c CMD` for kernel probes: a prelude that leaves the program unless the
//! current process (tgid) is the traced one. Kernel probes fire in every process — a BPF
//! program on a tracepoint, kprobe or fentry runs whatever the perf event's task filter says —
//! so, as current bpftrace does, the check is in the program. (bpftrace 0.17 has no such
//! filter: its `-p` limits only uprobes and USDT probes; strobe's uprobes, USDT probes and
//! watchpoints are limited by their perf events instead, and `interval`, which runs on one
//! CPU's timer whatever process is there, is left alone.)
//!
//! The same prelude leaves out strobe's own process from tracepoint and raw tracepoint probes
//! that send records to strobe: otherwise the tracer's own output writes feed a probe like
//! `tracepoint:raw_syscalls:sys_enter { printf(…) }` without end. (bpftrace leaves itself out
//! nowhere; a probe that only updates maps counts strobe's few syscalls as bpftrace counts its
//! own, and spares every event the helper call; see `lower::probe`.)
//!
//! Neither pid is known when compiling (the `-c` command starts later, and a dry run or
//! `-d asm` has no run), so they live in a one-entry array map (`strobe_pid`, role
//! [`MapRole::PidFilter`]): `u32` traced tgid at 0 (0 for any), `u32` strobe's own tgid at 4,
//! filled by the runtime before arming.

use crate::asm::isa::MapType;
use crate::asm::isa::{AluOp, Helper, JmpOp, Size};
use crate::codegen::{Builder, Label};
use crate::plan::{MapRole, MapSpec};
use crate::sema::TaskFields;
use crate::syntax::ast::ProbeKind;

pub(crate) const PID_MAP: &str = "strobe_pid";

/// The map holding the traced process's pid.
pub(crate) fn map() -> MapSpec {
    MapSpec {
        name: PID_MAP.into(),
        map_type: MapType::Array,
        key_size: 4,
        value_size: 8,
        max_entries: 1,
        role: MapRole::PidFilter,
    }
}

/// Whether probes of `kind` get the filter (with `-p`/`-c`): the kind table's
/// [`crate::kinds::KindInfo::pid_filter`].
pub(crate) fn applies(kind: ProbeKind) -> bool {
    kind.info().pid_filter != crate::kinds::PidFilter::Never
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

/// `if (tgid == own) goto exit;` and, with `filter` (`-p`/`-c`),
/// `if (want != 0 && tgid != want) goto exit;`, where `tgid = bpf_get_current_pid_tgid() >> 32`,
/// or, with `task` (the kernel lets programs read `task_struct` there), `current->tgid` through
/// `bpf_get_current_task_btf()`, whose pointer the body's `pid`, `tid` and `comm` then read
/// too: one helper call for all of them.
pub(crate) fn emit(b: &mut Builder, exit: Label, filter: bool, task: Option<TaskFields>) {
    let map = b.map(PID_MAP);
    let c = current(b, task);
    let tgid = current_tgid(b, c);
    let p = b.vreg();
    b.ld_map_value(p, map, 0);
    let own = b.vreg();
    b.load(Size::W, own, p, 4);
    b.jmp64(JmpOp::Jeq, tgid, own, exit);
    if filter {
        let want = b.vreg();
        b.load(Size::W, want, p, 0);
        let go = b.label();
        b.jmp64(JmpOp::Jeq, want, 0, go);
        b.jmp64(JmpOp::Jne, tgid, want, exit);
        b.bind(go);
    }
}

/// What [`current`] fetched.
pub(crate) enum Current {
    Task(crate::codegen::VReg, TaskFields),
    PidTgid(crate::codegen::VReg),
}

/// One helper call for the current task (`bpf_get_current_task_btf()` with `task`, else
/// `bpf_get_current_pid_tgid()`), kept for the body, which it dominates (see `Builder::task`,
/// `Builder::pid_tgid`).
pub(crate) fn current(b: &mut Builder, task: Option<TaskFields>) -> Current {
    match task {
        Some(f) => {
            let t = b.call(Helper::GetCurrentTaskBtf, &[]);
            b.task = Some((t, f));
            Current::Task(t, f)
        }
        None => {
            let raw = b.call(Helper::GetCurrentPidTgid, &[]);
            b.pid_tgid = Some(raw);
            Current::PidTgid(raw)
        }
    }
}

/// The current tgid from what [`current`] fetched.
fn current_tgid(b: &mut Builder, c: Current) -> crate::codegen::VReg {
    let tgid = b.vreg();
    match c {
        Current::Task(t, f) => b.load(Size::W, tgid, t, f.tgid.into()),
        Current::PidTgid(raw) => {
            b.mov(tgid, raw);
            b.alu(true, AluOp::Rsh, tgid, 32);
        }
    }
    tgid
}
