//! The parent of a task: `ppid`/`ppid()`/`ppid(task)` and `pcomm`/`pcomm()`/`pcomm(task)`;
//! its thread-group leader: `leader_tid` and `leader_comm` (same forms, over `group_leader`).
//!
//! bpftrace defines them as stdlib macros over `task.real_parent.pid` and
//! `task.real_parent.comm` (the task defaults to `curtask`); `real_parent` is the process that
//! forked this one (or the reaper it was handed to), not `parent` (a ptracer). `pid` there is
//! the kernel's per-thread id of the parent thread, as bpftrace reads it. Offsets come from the
//! kernel's BTF; each pointer hop is a `bpf_probe_read_kernel`, so a bad task reads as 0 / "".

use super::expr::lower_expr;
use super::{Lower, LowerError, Val};
use crate::codegen::emit::builtins as bi;
use crate::codegen::emit::{IntTy, Place, Value};
use crate::syntax::ast::Expr;

/// Byte offsets of `task_struct.<link>` and of `member` (`pid` or `comm`).
fn offsets(lw: &Lower<'_>, link: &str, member: &str, e: &Expr) -> Result<(i32, i32), LowerError> {
    let missing = |what: &str| {
        LowerError::unsupported(
            format!("{what}: needs the kernel's BTF for `struct task_struct`"),
            e.span,
        )
    };
    let btf = lw.kernel.btf(None).map_err(|_| missing("ppid/pcomm"))?;
    let id = btf
        .find_struct("task_struct")
        .ok_or_else(|| missing("ppid/pcomm"))?;
    let off = |name: &str| -> Result<i32, LowerError> {
        match btf.find_member(id, name) {
            Ok(Some(m)) => Ok((m.bit_offset / 8) as i32),
            _ => Err(missing(&format!("task_struct member `{name}`"))),
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
