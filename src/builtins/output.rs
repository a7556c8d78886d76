//! Output and control: `printf`, `print`, `errorf`/`warnf`/`debugf`, `system`, `cat`, `time`,
//! `join`, `exit`, `signal`, `override`.

use super::{func, Builtin, CallCtx, FuncId, Probes, RuleError};
use crate::kinds::KindSet;
use crate::sema::types::Type;

fn none(_: &CallCtx<'_>) -> Result<Type, RuleError> {
    Ok(Type::None)
}

/// `debugf` becomes one `bpf_trace_printk`, which takes at most three arguments (bpftrace
/// 0.17's limit and message).
fn debugf(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    if c.args.len() > 4 {
        return Err(RuleError::call(
            "debugf: Cannot use more than 3 conversion specifiers",
        ));
    }
    Ok(Type::None)
}

fn exit(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    if !c.arg_types.is_empty() {
        c.want_int(0, false)?;
    }
    Ok(Type::None)
}

fn time(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    if !c.args.is_empty() {
        c.str_arg(0, "the format")?;
    }
    Ok(Type::None)
}

fn join(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    if !c.arg_types[0].is_pointer() && !c.arg_types[0].is_integer() {
        return Err(RuleError::arg(
            0,
            format!(
                "join() expects a pointer to an array of strings, got {}",
                c.arg_types[0]
            ),
        ));
    }
    if c.args.len() > 1 {
        c.str_arg(1, "the separator")?;
    }
    Ok(Type::None)
}

/// Signal names `signal()` takes (bpftrace 0.17's table; `SIG` is optional, any case), and
/// their numbers on Linux.
pub const SIGNALS: &[(&str, i64)] = &[
    ("SIGABRT", 6),
    ("SIGALRM", 14),
    ("SIGBUS", 7),
    ("SIGCHLD", 17),
    ("SIGCONT", 18),
    ("SIGFPE", 8),
    ("SIGHUP", 1),
    ("SIGILL", 4),
    ("SIGINT", 2),
    ("SIGKILL", 9),
    ("SIGPIPE", 13),
    ("SIGPOLL", 29),
    ("SIGQUIT", 3),
    ("SIGSEGV", 11),
    ("SIGSTOP", 19),
    ("SIGSYS", 31),
    ("SIGTERM", 15),
    ("SIGTRAP", 5),
    ("SIGTSTP", 20),
    ("SIGTTIN", 21),
    ("SIGTTOU", 22),
    ("SIGURG", 23),
    ("SIGUSR1", 10),
    ("SIGUSR2", 12),
    ("SIGVTALRM", 26),
    ("SIGWINCH", 28),
    ("SIGXCPU", 24),
    ("SIGXFSZ", 25),
];

/// The number of signal `name` (`"KILL"`, `"sigkill"`, `"SIGKILL"`).
pub fn signal_number(name: &str) -> Option<i64> {
    let up = name.to_ascii_uppercase();
    let full = if up.starts_with("SIG") {
        up
    } else {
        format!("SIG{up}")
    };
    SIGNALS.iter().find(|(n, _)| *n == full).map(|(_, v)| *v)
}

fn signal(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    let t = &c.arg_types[0];
    if t.is_string() {
        let Some(name) = (c.const_str)(c.args[0].id) else {
            return Err(RuleError::call(
                "signal only accepts string literals or integers",
            ));
        };
        let name = String::from_utf8_lossy(&name).into_owned();
        if signal_number(&name).is_none() {
            return Err(RuleError::call(format!("{name} is not a valid signal")));
        }
    } else if t.is_integer() {
        if let Some(n) = (c.const_int)(c.args[0].id) {
            if !(1..=64).contains(&n) {
                return Err(RuleError::call(format!(
                    "{n} is not a valid signal, allowed range: [1,64]"
                )));
            }
        }
    } else {
        return Err(RuleError::call(
            "signal only accepts string literals or integers",
        ));
    }
    Ok(Type::None)
}

/// `write_user(dst, src, len)` (`bool`: the write succeeded): `dst` a user address, `src` a
/// string or an array value, `len` an integer.
/// `unwatch(addr)`: the runtime disables every `watchpoint:ADDR` probe on `addr` (an address
/// no probe watches is ignored, as in bpftrace); no value.
fn unwatch(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    c.want_int(0, true)?;
    Ok(Type::None)
}

/// `skboutput(path, skb, len, offset)`: refused with what it would need.
fn skboutput(_: &CallCtx<'_>) -> Result<Type, RuleError> {
    Err(RuleError::call(
        "skboutput() is not supported by strobe: bpf_skb_output copies packet data into a \
         perf event array (BPF_MAP_TYPE_PERF_EVENT_ARRAY) whose records the runtime would \
         write to a pcap file, and strobe has neither that output channel nor a pcap writer \
         (it also needs a tracing program: fentry, fexit or a BTF raw tracepoint); capture \
         with tcpdump, or print the sk_buff's fields",
    ))
}

fn write_user(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    c.want_int(0, true)?;
    let t = &c.arg_types[1];
    // bpf_probe_write_user reads its source from the program's own memory.
    if !(t.is_string() || matches!(t, Type::Array { .. })) {
        return Err(RuleError::arg(
            1,
            format!(
                "write_user() writes a string or an array value (memory of the program), got {t}"
            ),
        ));
    }
    c.want_int(2, false)?;
    Ok(Type::Bool)
}

fn override_(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    c.want_int(0, false)?;
    Ok(Type::None)
}

fn print(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    for i in 1..c.args.len() {
        c.want_int(i, false)?;
    }
    Ok(Type::None)
}

const fn fmt(b: Builtin) -> Builtin {
    Builtin { format: true, ..b }
}

const fn unsafe_(b: Builtin) -> Builtin {
    Builtin {
        needs_unsafe: true,
        ..b
    }
}

pub const BUILTINS: &[Builtin] = &[
    fmt(func(
        FuncId::Printf,
        "printf",
        1,
        64,
        none,
        "formatted output",
    )),
    fmt(func(
        FuncId::Errorf,
        "errorf",
        1,
        64,
        none,
        "formatted error message",
    )),
    fmt(func(
        FuncId::Warnf,
        "warnf",
        1,
        64,
        none,
        "formatted warning",
    )),
    fmt(func(
        FuncId::Debugf,
        "debugf",
        1,
        64,
        debugf,
        "formatted output to the trace pipe",
    )),
    fmt(func(
        FuncId::Cat,
        "cat",
        1,
        64,
        none,
        "print a file's contents",
    )),
    unsafe_(fmt(func(
        FuncId::System,
        "system",
        1,
        64,
        none,
        "run a shell command",
    ))),
    Builtin {
        takes_map: true,
        ..func(
            FuncId::Print,
            "print",
            1,
            3,
            print,
            "print a value or a map",
        )
    },
    func(FuncId::Exit, "exit", 0, 1, exit, "stop tracing"),
    func(FuncId::Time, "time", 0, 1, time, "print the current time"),
    func(
        FuncId::Join,
        "join",
        1,
        2,
        join,
        "print an array of strings",
    ),
    Builtin {
        probes: Probes::Only(KindSet::Signal),
        ..unsafe_(func(
            FuncId::Signal,
            "signal",
            1,
            1,
            signal,
            "send a signal to the current task",
        ))
    },
    Builtin {
        probes: Probes::Only(KindSet::Signal),
        ..unsafe_(func(
            FuncId::SignalThread,
            "signal_thread",
            1,
            1,
            signal,
            "send a signal to the current thread",
        ))
    },
    unsafe_(func(
        FuncId::WriteUser,
        "write_user",
        3,
        3,
        write_user,
        "write bytes to the current task's user memory",
    )),
    func(
        FuncId::Unwatch,
        "unwatch",
        1,
        1,
        unwatch,
        "remove the watchpoints on an address (async)",
    ),
    Builtin {
        // bpf_skb_output is a tracing-program helper.
        probes: Probes::Only(KindSet::SkbOutput),
        ..func(
            FuncId::Skboutput,
            "skboutput",
            4,
            4,
            skboutput,
            "write an sk_buff's data to a pcap file (not implemented: refused)",
        )
    },
    Builtin {
        probes: Probes::Only(KindSet::KernelEntryRegs),
        ..unsafe_(func(
            FuncId::Override,
            "override",
            1,
            1,
            override_,
            "override the return value",
        ))
    },
];
