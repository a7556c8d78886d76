//! Builtin values: bare names such as `pid`, `comm`, `nsecs`, `curtask`, and the probe-context
//! ones (`args`, `argN`, `sargN`, `retval`, `func`, `probe`) whose types come from the probe's
//! [`crate::sema::context::ProbeContext`].

use super::{value, Builtin, CallCtx, Probes, RuleError, ValueId};
use crate::kinds::KindSet;
use crate::sema::types::{Type, DEFAULT_STACK_LIMIT};

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
fn bool_(_: &CallCtx<'_>) -> Result<Type, RuleError> {
    Ok(Type::Bool)
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

const fn only(b: Builtin, kinds: KindSet) -> Builtin {
    Builtin {
        probes: Probes::Only(kinds),
        ..b
    }
}

pub const BUILTINS: &[Builtin] = &[
    value(
        ValueId::Pid,
        "pid",
        u32_,
        "process id (tgid) of the current task",
    ),
    value(ValueId::Tid, "tid", u32_, "thread id of the current task"),
    value(ValueId::Uid, "uid", u32_, "user id"),
    value(ValueId::Gid, "gid", u32_, "group id"),
    value(ValueId::Cpu, "cpu", u32_, "the CPU the probe fires on"),
    value(ValueId::Ncpus, "ncpus", u64_, "number of CPUs"),
    value(ValueId::Numaid, "numaid", u32_, "NUMA node id"),
    value(
        ValueId::Nsecs,
        "nsecs",
        u64_,
        "monotonic time in nanoseconds",
    ),
    value(
        ValueId::Elapsed,
        "elapsed",
        u64_,
        "nanoseconds since strobe started",
    ),
    value(ValueId::Jiffies, "jiffies", u64_, "kernel jiffies"),
    value(ValueId::Rand, "rand", u32_, "a random number"),
    value(
        ValueId::Cgroup,
        "cgroup",
        u64_,
        "cgroup v2 id of the current task",
    ),
    value(ValueId::Cpid, "cpid", u32_, "pid of the -c child"),
    value(
        ValueId::Comm,
        "comm",
        comm,
        "name of the current task (16 bytes)",
    ),
    value(ValueId::Kstack, "kstack", kstack, "kernel stack"),
    value(ValueId::Ustack, "ustack", ustack, "user stack"),
    value(
        ValueId::Curtask,
        "curtask",
        curtask,
        "the current task_struct",
    ),
    value(
        ValueId::Ppid,
        "ppid",
        u32_,
        "pid of the current task's parent (real_parent)",
    ),
    value(
        ValueId::Pcomm,
        "pcomm",
        comm,
        "name of the current task's parent (real_parent)",
    ),
    value(
        ValueId::LeaderTid,
        "leader_tid",
        u32_,
        "thread id of the current task's thread-group leader",
    ),
    value(
        ValueId::LeaderComm,
        "leader_comm",
        comm,
        "name of the current task's thread-group leader",
    ),
    value(
        ValueId::Username,
        "username",
        username,
        "the current user's name",
    ),
    value(ValueId::Probe, "probe", probe, "the probe's full name"),
    value(
        ValueId::Usermode,
        "usermode",
        u8_,
        "1 when the probe fired in user mode",
    ),
    // Folded to constants by the checker (`sema::config_read`).
    value(
        ValueId::Probetype,
        "probetype",
        comm,
        "the probe's type name (`special` for begin/end)",
    ),
    value(
        ValueId::Config,
        "config",
        u64_,
        "the run's configuration, read by field: config.max_strlen",
    ),
    only(
        value(
            ValueId::Ctx,
            "ctx",
            ctx,
            "the program's context: the iterator's, or perf event data",
        ),
        KindSet::Ctx,
    ),
    only(
        value(
            ValueId::Retval,
            "retval",
            retval,
            "the return value of the traced function",
        ),
        KindSet::Retval,
    ),
    only(
        value(ValueId::Args, "args", args, "the probe's typed arguments"),
        KindSet::Args,
    ),
    only(
        value(
            ValueId::ArgN,
            "argN",
            u64_,
            "argument N (register or stack slot)",
        ),
        KindSet::ArgN,
    ),
    only(
        value(ValueId::SargN, "sargN", sarg, "stack argument N"),
        KindSet::EntryRegs,
    ),
    only(
        value(ValueId::Func, "func", func, "the traced function's name"),
        KindSet::Func,
    ),
    // Folded by the checker from the uprobe's binary (`sema::uaddr`); bpftrace's
    // `__builtin_elf_is_exe` and `__builtin_elf_ino`, behind its stdlib's elf_is_exe/elf_info.
    value(
        ValueId::ElfIsExe,
        "elf_is_exe",
        bool_,
        "whether the uprobe's binary is an executable (ET_EXEC), not a PIE or library",
    ),
    value(
        ValueId::ElfIno,
        "elf_ino",
        u64_,
        "inode number of the uprobe's binary",
    ),
];
