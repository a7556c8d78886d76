//! Builtin values: bare names such as `pid`, `comm`, `nsecs`, `curtask`, and the probe-context
//! ones (`args`, `argN`, `sargN`, `retval`, `func`, `probe`) whose types come from the probe's
//! [`crate::sema::context::ProbeContext`].

use super::{value, Builtin, CallCtx, Probes, RuleError};
use crate::sema::context::{ARGN_KINDS, ARGS_KINDS, FUNC_KINDS, RETVAL_KINDS};
use crate::sema::types::{Type, DEFAULT_STACK_LIMIT};
use crate::syntax::ast::ProbeKind;

fn u32_(_: &CallCtx<'_>) -> Result<Type, RuleError> {
    Ok(Type::U32)
}
fn u64_(_: &CallCtx<'_>) -> Result<Type, RuleError> {
    Ok(Type::U64)
}
fn u8_(_: &CallCtx<'_>) -> Result<Type, RuleError> {
    Ok(Type::U8)
}
fn ctx(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    Ok(c.context.iter_ctx.clone().unwrap_or(Type::U64))
}
fn comm(_: &CallCtx<'_>) -> Result<Type, RuleError> {
    Ok(Type::Str { size: 16 })
}
fn kstack(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    Ok(Type::KStack {
        mode: c.stack_mode,
        limit: DEFAULT_STACK_LIMIT,
    })
}
fn ustack(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    Ok(Type::UStack {
        mode: c.stack_mode,
        limit: DEFAULT_STACK_LIMIT,
    })
}
fn curtask(_: &CallCtx<'_>) -> Result<Type, RuleError> {
    // Typed as `struct task_struct *` by the checker when BTF has it.
    Ok(Type::U64)
}
fn username(_: &CallCtx<'_>) -> Result<Type, RuleError> {
    Ok(Type::Username)
}
fn probe(_: &CallCtx<'_>) -> Result<Type, RuleError> {
    Ok(Type::Probe)
}
fn retval(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    Ok(c.context.retval())
}
fn args(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    Ok(c.context.args_record())
}
fn func(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    Ok(c.context.func_type())
}
fn sarg(_: &CallCtx<'_>) -> Result<Type, RuleError> {
    Ok(Type::I64)
}

/// Probe kinds with `ctx`: iterators (typed from BTF), and the perf-event kinds, where it is
/// the address of the kernel's perf event data (an integer, read through a cast as bpftrace
/// reads it: `((struct x *)ctx).x`).
const CTX_KINDS: &[ProbeKind] = &[
    ProbeKind::Iter,
    ProbeKind::Interval,
    ProbeKind::Profile,
    ProbeKind::Software,
    ProbeKind::Hardware,
    ProbeKind::Watchpoint,
    ProbeKind::AsyncWatchpoint,
];

const fn only(b: Builtin, kinds: &'static [ProbeKind]) -> Builtin {
    Builtin {
        probes: Probes::Only(kinds),
        ..b
    }
}

pub const BUILTINS: &[Builtin] = &[
    value("pid", u32_, "process id (tgid) of the current task"),
    value("tid", u32_, "thread id of the current task"),
    value("uid", u32_, "user id"),
    value("gid", u32_, "group id"),
    value("cpu", u32_, "the CPU the probe fires on"),
    value("ncpus", u64_, "number of CPUs"),
    value("numaid", u32_, "NUMA node id"),
    value("nsecs", u64_, "monotonic time in nanoseconds"),
    value("elapsed", u64_, "nanoseconds since strobe started"),
    value("jiffies", u64_, "kernel jiffies"),
    value("rand", u32_, "a random number"),
    value("cgroup", u64_, "cgroup v2 id of the current task"),
    value("cpid", u32_, "pid of the -c child"),
    value("comm", comm, "name of the current task (16 bytes)"),
    value("kstack", kstack, "kernel stack"),
    value("ustack", ustack, "user stack"),
    value("curtask", curtask, "the current task_struct"),
    value(
        "ppid",
        u32_,
        "pid of the current task's parent (real_parent)",
    ),
    value(
        "pcomm",
        comm,
        "name of the current task's parent (real_parent)",
    ),
    value(
        "leader_tid",
        u32_,
        "thread id of the current task's thread-group leader",
    ),
    value(
        "leader_comm",
        comm,
        "name of the current task's thread-group leader",
    ),
    value("username", username, "the current user's name"),
    value("probe", probe, "the probe's full name"),
    value("usermode", u8_, "1 when the probe fired in user mode"),
    // Folded to constants by the checker (`sema::config_read`).
    value(
        "probetype",
        comm,
        "the probe's type name (`special` for begin/end)",
    ),
    value(
        "config",
        u64_,
        "the run's configuration, read by field: config.max_strlen",
    ),
    only(
        value(
            "ctx",
            ctx,
            "the program's context: the iterator's, or perf event data",
        ),
        CTX_KINDS,
    ),
    only(
        value("retval", retval, "the return value of the traced function"),
        RETVAL_KINDS,
    ),
    only(
        value("args", args, "the probe's typed arguments"),
        ARGS_KINDS,
    ),
    only(
        value("argN", u64_, "argument N (register or stack slot)"),
        ARGN_KINDS,
    ),
    only(
        value("sargN", sarg, "stack argument N"),
        &[ProbeKind::Kprobe, ProbeKind::Uprobe],
    ),
    only(
        value("func", func, "the traced function's name"),
        FUNC_KINDS,
    ),
];
