//! Output and control: `printf`, `print`, `errorf`/`warnf`/`debugf`, `system`, `cat`, `time`,
//! `join`, `exit`, `signal`, `override`.

use super::{func, Builtin, CallCtx, Probes, RuleError};
use crate::sema::types::Type;
use crate::syntax::ast::ProbeKind;

fn none(_: &CallCtx<'_>) -> Result<Type, RuleError> {
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

fn signal(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    let t = &c.arg_types[0];
    if !t.is_integer() && !t.is_string() {
        return Err(RuleError::arg(
            0,
            format!("signal() expects a signal number or name, got {t}"),
        ));
    }
    Ok(Type::None)
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
    fmt(func("printf", 1, 64, none, "formatted output")),
    fmt(func("errorf", 1, 64, none, "formatted error message")),
    fmt(func("warnf", 1, 64, none, "formatted warning")),
    fmt(func(
        "debugf",
        1,
        64,
        none,
        "formatted output to the trace pipe",
    )),
    fmt(func("cat", 1, 64, none, "print a file's contents")),
    unsafe_(fmt(func("system", 1, 64, none, "run a shell command"))),
    Builtin {
        takes_map: true,
        ..func("print", 1, 3, print, "print a value or a map")
    },
    func("exit", 0, 1, exit, "stop tracing"),
    func("time", 0, 1, time, "print the current time"),
    func("join", 1, 2, join, "print an array of strings"),
    unsafe_(func(
        "signal",
        1,
        1,
        signal,
        "send a signal to the current task",
    )),
    Builtin {
        probes: Probes::Only(&[ProbeKind::Kprobe]),
        ..unsafe_(func(
            "override",
            1,
            1,
            override_,
            "override the return value",
        ))
    },
];
