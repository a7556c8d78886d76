//! The parent of a task: `ppid`/`ppid()`/`ppid(task)` and `pcomm`/`pcomm()`/`pcomm(task)`;
//! its thread-group leader: `leader_tid` and `leader_comm` (same forms, over `group_leader`).
//!
//! bpftrace defines them as stdlib macros over `task.real_parent.pid` and
//! `task.real_parent.comm` (the task defaults to `curtask`); `real_parent` is the process that
//! forked this one (or the reaper it was handed to), not `parent` (a ptracer). `pid` there is
//! the kernel's per-thread id of the parent thread, as bpftrace reads it. Offsets come from the
//! kernel's BTF, read by the checker (`CheckedProgram::env`); each pointer hop is a `bpf_probe_read_kernel`, so a bad task reads as 0 / "".
//!
//! `comm(PID)`: the name of process PID, through the `bpf_task_from_pid` kfunc (a reference
//! the program must give back with `bpf_task_release` on every path). The kernel allows the
//! kfunc only in some program types (a trial load decides, as bpftrace's `kfunc_allowed`).

use super::expr::lower_expr;
use super::{Lower, LowerError, Val};
use crate::codegen::builder::Arg;
use crate::codegen::emit::builtins as bi;
use crate::codegen::emit::{IntTy, Place, Value};
use crate::sema::environment::Kfunc;
use crate::syntax::ast::Expr;

/// Byte offsets of `task_struct.<link>` and of `member` (`pid` or `comm`).
fn offsets(lw: &Lower<'_>, link: &str, member: &str, e: &Expr) -> Result<(i32, i32), LowerError> {
    let missing = |what: &str| {
        LowerError::unsupported(
            format!("{what}: needs the kernel's BTF for `struct task_struct`"),
            e.span,
        )
    };
    let task = lw
        .cp
        .env
        .task_struct
        .as_ref()
        .ok_or_else(|| missing("ppid/pcomm"))?;
    let off = |name: &str| -> Result<i32, LowerError> {
        match task.get(name) {
            Some(&off) => Ok(off),
            None => Err(missing(&format!("task_struct member `{name}`"))),
        }
    };
    Ok((off(link)?, off(member)?))
}

/// The task `parent` reads: `ppid`/`pcomm` read the real parent, `leader_tid`/`leader_comm`
/// the thread-group leader.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Relative {
    RealParent,
    GroupLeader,
}

/// What `parent` reads of that task: its `pid` (`ppid`, `leader_tid`) or its `comm`.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(crate) enum Member {
    Pid,
    Comm,
}

/// The `ppid`/`pcomm`/`leader_tid`/`leader_comm` builtins (which and what), of `task` or of
/// the current task.
pub(crate) fn parent(
    lw: &mut Lower<'_>,
    e: &Expr,
    (which, what): (Relative, Member),
    task: Option<&Expr>,
) -> Result<Val, LowerError> {
    let member = match what {
        Member::Pid => "pid",
        Member::Comm => "comm",
    };
    let link = match which {
        Relative::GroupLeader => "group_leader",
        Relative::RealParent => "real_parent",
    };
    let (parent_off, member_off) = offsets(lw, link, member, e)?;
    let task = match task {
        Some(t) => lower_expr(lw, t)?.value(),
        None => bi::curtask(&mut lw.b),
    };
    if member == "pid" {
        let v = bi::deref(
            &mut lw.b,
            false,
            task,
            &[parent_off, member_off],
            IntTy::U32,
        );
        return Ok(Val::Int(v, IntTy::U32));
    }
    // comm: read the parent pointer, then the 16 bytes of its name.
    let parent = bi::deref(&mut lw.b, false, task, &[parent_off], IntTy::U64);
    let addr = crate::codegen::emit::arith::binop(
        &mut lw.b,
        crate::codegen::emit::arith::BinOp::Add,
        parent,
        Value::Imm(member_off as i64),
        IntTy::U64,
    );
    let slot = lw.b.slot(16, 8);
    let p = Place::new(slot, 0);
    bi::read_mem(&mut lw.b, false, p, 16, addr);
    Ok(Val::Mem(p))
}

/// `comm(pid)`: as bpftrace's stdlib macro, the task's 16-byte name; a pid with no task
/// warns `No such process (pid=N)` at run time and reads `N/A`.
pub(crate) fn comm_of_pid(lw: &mut Lower<'_>, e: &Expr, pid: &Expr) -> Result<Val, LowerError> {
    let prog = lw.probe_kind.prog_type();
    let kfunc = |name: &str| -> Result<u32, LowerError> {
        let fact = lw.cp.env.kfuncs.get(&(name.to_string(), prog)).copied();
        match fact {
            Some(Kfunc::Allowed(id)) => Ok(id),
            // bpftrace's words, then the kernel's rule.
            Some(Kfunc::Refused(_)) => Err(LowerError::Kernel {
                what: format!(
                    "Syntax comm(PID) is not supported in this probe type yet. Type: {} (this \
                     kernel does not allow the {name} kfunc in {} programs)",
                    lw.probe_kind.name(),
                    prog.name(),
                ),
                span: e.span,
            }),
            Some(Kfunc::Missing) | None => Err(LowerError::Kernel {
                what: format!("comm(PID) needs the {name} kfunc, which this kernel does not have"),
                span: e.span,
            }),
        }
    };
    let from_pid = kfunc("bpf_task_from_pid")?;
    let release = kfunc("bpf_task_release")?;
    let (comm_off, _) = offsets(lw, "comm", "pid", e)?;
    let pid_ty = lw.type_of(pid.id);
    let pid_val = lower_expr(lw, pid)?;
    let pid_v = pid_val.value();
    let arg = match pid_v {
        Value::Imm(v) => Arg::Imm(v as i32 as i64),
        Value::Reg(r) => Arg::Reg(r),
    };
    let slot = lw.b.slot(16, 8);
    let place = Place::new(slot, 0);
    let task = lw.b.call_kfunc(from_pid, &[arg]);
    let missing = lw.b.label();
    let done = lw.b.label();
    lw.b.jmp64(crate::asm::isa::JmpOp::Jeq, task, 0, missing);
    let addr = crate::codegen::emit::arith::binop(
        &mut lw.b,
        crate::codegen::emit::arith::BinOp::Add,
        Value::Reg(task),
        Value::Imm(comm_off as i64),
        IntTy::U64,
    );
    bi::read_mem(&mut lw.b, false, place, 16, addr);
    lw.b.call_kfunc(release, &[Arg::Reg(task)]);
    lw.b.ja(done);
    lw.b.bind(missing);
    super::calls::runtime_warning_args(
        lw,
        e.span,
        "No such process (pid=%d)",
        &[(
            pid_val,
            pid_ty,
            crate::plan::layout::FieldType::Int {
                bytes: 8,
                signed: true,
            },
        )],
    )?;
    let na = i32::from_le_bytes(*b"N/A\0");
    lw.b.store(crate::asm::isa::Size::Dw, slot, 0, na);
    lw.b.store(crate::asm::isa::Size::Dw, slot, 8, 0);
    lw.b.bind(done);
    Ok(Val::Mem(place))
}
