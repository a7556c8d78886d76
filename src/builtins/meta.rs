//! Compile-time predicates and assertions of bpftrace's standard library: the type predicates
//! (`is_str`, `is_ptr`, `is_array`, `is_integer`, `is_unsigned_integer`, `is_literal`),
//! `kfunc_exist`/`kfunc_allowed`, `static_assert`, `assert_str`, `fail`, and the run-time
//! `assert`. The checker folds the predicates to constants (`sema::meta`); `assert` is the
//! only one with code.

use super::{func, Builtin, CallCtx, FuncId, RuleError};
use crate::sema::types::{Pointee, Type};

/// A type predicate: any argument, a `bool` the checker folds.
fn predicate(_: &CallCtx<'_>) -> Result<Type, RuleError> {
    Ok(Type::Bool)
}

/// `kfunc_exist("name")` / `kfunc_allowed("name")`: the name must be a string literal.
fn kfunc(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    if (c.const_str)(c.args[0].id).is_none() || !c.arg_types[0].is_string() {
        // bpftrace's words.
        return Err(RuleError::call(format!(
            "{}() accepts a string literal only",
            c.name
        )));
    }
    Ok(Type::Bool)
}

/// A condition: an integer, a bool or a pointer.
fn condition(c: &CallCtx<'_>) -> Result<(), RuleError> {
    let t = &c.arg_types[0];
    if t.is_integer() || t.is_pointer() {
        Ok(())
    } else {
        Err(RuleError::arg(
            0,
            format!("{}() expects a boolean condition, got {t}", c.name),
        ))
    }
}

/// `assert(cond, msg)`: at run time, when `cond` is false, the error `assert failed: MSG` and
/// exit code 1.
fn assert(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    condition(c)?;
    Ok(Type::None)
}

/// `static_assert(cond, msg)`: `cond` must be known when compiling; false fails the build
/// (the checker reports `msg`).
fn static_assert(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    condition(c)?;
    c.str_arg(1, "the message")?;
    Ok(Type::None)
}

/// Whether `t` is `int8`/`uint8` (bpftrace's char-like type).
fn char_like(t: &Type) -> bool {
    t.is_integer() && t.size() == 1 && !matches!(t, Type::Bool)
}

/// `assert_str(v)`: `v` must be string-like (a string, an array of chars, a pointer to
/// chars), with bpftrace's messages.
fn assert_str(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    let msg = match &c.arg_types[0] {
        t if t.is_string() => return Ok(Type::None),
        Type::Array { elem, .. } if char_like(elem) => return Ok(Type::None),
        Type::Array { .. } => "string-like arrays must contain a char-like type",
        Type::Pointer {
            pointee: Pointee::Type(p),
            ..
        } if char_like(p) => return Ok(Type::None),
        Type::Pointer { .. } => "string-like pointers must point to a char-like type",
        _ => "string-like values must be either strings, arrays or pointers",
    };
    Err(RuleError::call(msg))
}

/// `fail(fmt, args…)`: the checker reports the formatted message when it reaches the call.
fn fail(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    c.str_arg(0, "the format")?;
    Ok(Type::None)
}

pub const BUILTINS: &[Builtin] = &[
    func(
        FuncId::IsStr,
        "is_str",
        1,
        1,
        predicate,
        "whether an expression is a string",
    ),
    func(
        FuncId::IsPtr,
        "is_ptr",
        1,
        1,
        predicate,
        "whether an expression is a pointer",
    ),
    func(
        FuncId::IsArray,
        "is_array",
        1,
        1,
        predicate,
        "whether an expression is an array",
    ),
    func(
        FuncId::IsInteger,
        "is_integer",
        1,
        1,
        predicate,
        "whether an expression is an integer",
    ),
    func(
        FuncId::IsUnsignedInteger,
        "is_unsigned_integer",
        1,
        1,
        predicate,
        "whether an expression is an unsigned integer",
    ),
    func(
        FuncId::IsLiteral,
        "is_literal",
        1,
        1,
        predicate,
        "whether an expression is a literal",
    ),
    func(
        FuncId::KfuncExist,
        "kfunc_exist",
        1,
        1,
        kfunc,
        "whether the kernel's BTF has a kfunc",
    ),
    func(
        FuncId::KfuncAllowed,
        "kfunc_allowed",
        1,
        1,
        kfunc,
        "whether this probe's programs may call a kfunc",
    ),
    func(
        FuncId::Assert,
        "assert",
        2,
        2,
        assert,
        "exit with an error when a condition is false",
    ),
    func(
        FuncId::StaticAssert,
        "static_assert",
        2,
        2,
        static_assert,
        "fail compiling when a constant condition is false",
    ),
    func(
        FuncId::AssertStr,
        "assert_str",
        1,
        1,
        assert_str,
        "fail compiling unless a value is string-like",
    ),
    func(
        FuncId::Fail,
        "fail",
        1,
        64,
        fail,
        "fail compiling with a formatted message",
    ),
];
