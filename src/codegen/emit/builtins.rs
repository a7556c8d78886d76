//! Builtins whose lowering is self-contained (one helper call or a context load), and kernel
//! memory reads through pointers (`a->b->c`).
//!
//! Each returns a normalized value of the builtin's bpftrace type: pid/tid/uid/gid are u32
//! (upper/lower halves of the helper's u64), cpu u32, nsecs/elapsed/jiffies/cgroup u64, rand
//! u32, curtask a pointer (u64). `func`/`probe` are one relocated immediate (the target's index
//! into a userspace string table). fentry/fexit arguments and return values are loads from
//! the context at a per-target relocated offset.

use super::arith::normalize;
use super::mem::{load_int, load_int_at};
use super::{IntTy, Place, Value};
use crate::asm::isa::{AluOp, Helper, Size};
use crate::codegen::builder::{Arg, Builder, VReg};
use crate::template::RelocKind;

fn call0(b: &mut Builder, h: Helper) -> VReg {
    b.call(h, &[])
}

/// `get_current_pid_tgid()` in a fresh register: a copy of the value the program's prelude
/// already fetched when there is one (a register move instead of a helper call).
fn pid_tgid(b: &mut Builder) -> VReg {
    match b.pid_tgid {
        Some(saved) => {
            let r = b.vreg();
            b.mov(r, saved);
            r
        }
        None => call0(b, Helper::GetCurrentPidTgid),
    }
}

/// `pid`: the thread group id (upper half of `get_current_pid_tgid`, or `task->tgid` when
/// the prelude holds the task).
pub fn pid(b: &mut Builder) -> Value {
    if let Some((task, f)) = b.task {
        return Value::Reg(load_int_at(b, task, f.tgid.into(), IntTy::U32));
    }
    let r = pid_tgid(b);
    b.alu(true, AluOp::Rsh, r, 32);
    Value::Reg(r)
}

/// `tid`: the thread id (lower half, or `task->pid` when the prelude holds the task).
pub fn tid(b: &mut Builder) -> Value {
    if let Some((task, f)) = b.task {
        return Value::Reg(load_int_at(b, task, f.pid.into(), IntTy::U32));
    }
    let r = pid_tgid(b);
    b.mov32(r, r);
    Value::Reg(r)
}

/// `pid`/`tid` as seen from the PID namespace `(dev, ino)` (bpftrace's `curr_ns` when it
/// runs in a namespace of its own): `get_ns_current_pid_tgid` fills a `struct bpf_pidns_info`
/// (`u32 pid` — the thread id — then `u32 tgid`), zeroed first so a failed call reads 0.
pub fn ns_pid_tid(b: &mut Builder, ns: (u64, u64), tid: bool) -> Value {
    let slot = b.slot(8, 8);
    let p = Place::new(slot, 0);
    super::mem::zero(b, p, 8);
    b.call(
        Helper::GetNsCurrentPidTgid,
        &[
            Arg::Imm(ns.0 as i64),
            Arg::Imm(ns.1 as i64),
            Arg::Slot(slot, 0),
            Arg::Imm(8),
        ],
    );
    load_int(b, Place::new(slot, if tid { 0 } else { 4 }), IntTy::U32)
}

/// `uid` (lower half of `get_current_uid_gid`).
pub fn uid(b: &mut Builder) -> Value {
    let r = call0(b, Helper::GetCurrentUidGid);
    b.mov32(r, r);
    Value::Reg(r)
}

/// `gid` (upper half).
pub fn gid(b: &mut Builder) -> Value {
    let r = call0(b, Helper::GetCurrentUidGid);
    b.alu(true, AluOp::Rsh, r, 32);
    Value::Reg(r)
}

/// `cpu`.
pub fn cpu(b: &mut Builder) -> Value {
    Value::Reg(call0(b, Helper::GetSmpProcessorId))
}

/// `numaid`: the NUMA node of the CPU the probe runs on.
pub fn numaid(b: &mut Builder) -> Value {
    Value::Reg(call0(b, Helper::GetNumaNodeId))
}

/// `nsecs` (monotonic clock).
pub fn nsecs(b: &mut Builder) -> Value {
    Value::Reg(call0(b, Helper::KtimeGetNs))
}

/// `nsecs(boot)`.
pub fn boot_ns(b: &mut Builder) -> Value {
    Value::Reg(call0(b, Helper::KtimeGetBootNs))
}

/// `nsecs(tai)`: the kernel's CLOCK_TAI (`bpf_ktime_get_tai_ns`, kernel 6.1+).
pub fn tai_ns(b: &mut Builder) -> Value {
    Value::Reg(call0(b, Helper::KtimeGetTaiNs))
}

/// `elapsed`: nanoseconds since the run started; the start time is the per-run constant
/// `start_const` (an index from `Builder::konst`), patched into an `ld_imm64` at load time.
pub fn elapsed(b: &mut Builder, start_const: usize) -> Value {
    let now = call0(b, Helper::KtimeGetNs);
    let start = b.vreg();
    b.ld_imm64_reloc(start, RelocKind::Const { id: start_const });
    b.alu(true, AluOp::Sub, now, start);
    Value::Reg(now)
}

/// `jiffies`.
pub fn jiffies(b: &mut Builder) -> Value {
    Value::Reg(call0(b, Helper::Jiffies64))
}

/// `rand` (u32).
pub fn rand(b: &mut Builder) -> Value {
    Value::Reg(call0(b, Helper::GetPrandomU32))
}

/// `curtask`: the current `task_struct` address.
pub fn curtask(b: &mut Builder) -> Value {
    Value::Reg(call0(b, Helper::GetCurrentTask))
}

/// `cgroup`: the current cgroup v2 id.
pub fn cgroup(b: &mut Builder) -> Value {
    Value::Reg(call0(b, Helper::GetCurrentCgroupId))
}

/// `comm`: the current task's name into 16 bytes at `dst`, through the
/// `bpf_get_current_comm` helper (any kernel; [`comm_from_task`] is the cheaper read).
pub fn comm(b: &mut Builder, dst: Place) {
    comm_from_task(b, dst, None);
}

/// `comm` into 16 bytes at `dst`. With `task_comm` (the byte offset of `task_struct.comm`, from
/// [`crate::sema::Environment::task_fields`]), two 8-byte loads of `current->comm`
/// through the trusted pointer `bpf_get_current_task_btf()` returns, which the verifier turns
/// into plain loads: the same 16 bytes the `bpf_get_current_comm` helper copies (the kernel
/// keeps `comm` NUL-terminated and zero-padded: `__set_task_comm` writes it with
/// `strscpy_pad`) at a fifth of the helper's cost. Without it, the helper.
pub fn comm_from_task(b: &mut Builder, dst: Place, task_comm: Option<i16>) {
    // The stores' width: the verifier refuses misaligned stack accesses, and other memory
    // (a map value, a ring buffer record) is 8-byte aligned only at offsets that say so.
    let align = match dst.base {
        super::Base::Slot(s) => b.slot_align(s),
        super::Base::Ptr(_) => 8,
    };
    let width = [8u32, 4]
        .into_iter()
        .find(|w| align >= *w && dst.off % *w as i32 == 0);
    if let (Some(off), Some(width)) = (task_comm, width) {
        let task = match b.task {
            Some((t, _)) => t,
            None => call0(b, Helper::GetCurrentTaskBtf),
        };
        for half in [0, 8] {
            let w = b.vreg();
            b.load(Size::Dw, w, task, i32::from(off) + half);
            if width == 8 {
                b.store(Size::Dw, dst.mem(), dst.off + half, w);
            } else {
                b.store(Size::W, dst.mem(), dst.off + half, w);
                b.alu(true, AluOp::Rsh, w, 32);
                b.store(Size::W, dst.mem(), dst.off + half + 4, w);
            }
        }
        return;
    }
    let d = dst.arg(b);
    b.call_void(Helper::GetCurrentComm, &[d, Arg::Imm(16)]);
}

/// `func` / `probe`: the target's index in the probe's target table.
pub fn target_index(b: &mut Builder) -> Value {
    let r = b.vreg();
    b.mov_reloc(r, RelocKind::TargetIndex);
    Value::Reg(r)
}

/// `args.name` of fentry/fexit: the parameter's 8-byte slot at a per-target offset, as `ty`.
pub fn arg_slot(b: &mut Builder, param: &str, ty: IntTy) -> Value {
    let p = b.param(param);
    let r = b.vreg();
    let ctx = b.ctx();
    b.load_reloc(Size::Dw, r, ctx, RelocKind::ArgSlot { param: p });
    normalize(b, r, ty);
    Value::Reg(r)
}

/// `retval` of fexit.
pub fn ret_slot(b: &mut Builder, ty: IntTy) -> Value {
    let r = b.vreg();
    let ctx = b.ctx();
    b.load_reloc(Size::Dw, r, ctx, RelocKind::RetSlot);
    normalize(b, r, ty);
    Value::Reg(r)
}

/// `args[i]` of a raw tracepoint (and `argN` of contexts that are arrays of u64), as `ty`.
pub fn ctx_u64(b: &mut Builder, i: u32, ty: IntTy) -> Value {
    let r = b.vreg();
    let ctx = b.ctx();
    b.load(Size::Dw, r, ctx, 8 * i as i32);
    normalize(b, r, ty);
    Value::Reg(r)
}

/// Reads `size` bytes of kernel (or user) memory at `src` into `dst`; returns the helper's
/// result (0 or a negative errno; on error the destination is zeroed by the kernel).
pub fn read_mem(b: &mut Builder, user: bool, dst: Place, size: u32, src: Value) -> VReg {
    let h = if user {
        Helper::ProbeReadUser
    } else {
        Helper::ProbeReadKernel
    };
    let s = match src {
        Value::Imm(v) => Arg::Imm(v),
        Value::Reg(r) => Arg::Reg(r),
    };
    let d = dst.arg(b);
    b.call(h, &[d, Arg::Imm(size as i64), s])
}

/// `base->f1->f2…`: follows pointers at byte offsets `path[..n-1]` from `base` and reads an
/// integer of type `ty` at the last offset, each step through `probe_read`.
pub fn deref(b: &mut Builder, user: bool, base: Value, path: &[i32], ty: IntTy) -> Value {
    let Some((&last, hops)) = path.split_last() else {
        return base;
    };
    let slot = b.slot(8, 8);
    let place = Place::new(slot, 0);
    let mut p = base;
    for &off in hops {
        let addr = super::arith::binop(
            b,
            super::arith::BinOp::Add,
            p,
            Value::Imm(off as i64),
            IntTy::U64,
        );
        read_mem(b, user, place, 8, addr);
        let r = b.vreg();
        b.load(Size::Dw, r, slot, 0);
        p = Value::Reg(r);
    }
    let addr = super::arith::binop(
        b,
        super::arith::BinOp::Add,
        p,
        Value::Imm(last as i64),
        IntTy::U64,
    );
    read_mem(b, user, place, ty.bytes(), addr);
    load_int(b, place, ty)
}
