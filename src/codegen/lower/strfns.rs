//! The string functions of current bpftrace's stdlib that need code of their own:
//! `strstr(h, n)` (the index of `n` in `h`, or -1), `str_concat(a, b)` (a new string of
//! `builtins::STR_CONCAT_SIZE` bytes) and `strcap(s)` of a char pointer (its string's
//! length, read; a string's or array's capacity is the checker's constant).
//!
//! Input: the checked call and its arguments. Output: the value; the search and the copy
//! are `emit::strings`'s.

use super::expr::lower_expr;
use super::{Lower, LowerError, Val};
use crate::codegen::emit::{IntTy, Value};
use crate::sema::Type;
use crate::syntax::ast::Expr;

/// The two string arguments spilled to memory, with their buffer sizes.
fn two_strings(
    lw: &mut Lower<'_>,
    args: &[Expr],
) -> Result<
    (
        crate::codegen::emit::Place,
        u32,
        crate::codegen::emit::Place,
        u32,
    ),
    LowerError,
> {
    let (at, bt) = (lw.type_of(args[0].id), lw.type_of(args[1].id));
    let a = lower_expr(lw, &args[0])?;
    let a = super::store::spill(lw, a, &at);
    let b = lower_expr(lw, &args[1])?;
    let b = super::store::spill(lw, b, &bt);
    Ok((a, at.size() as u32, b, bt.size() as u32))
}

/// `strstr(haystack, needle)`.
pub(crate) fn strstr(lw: &mut Lower<'_>, e: &Expr, args: &[Expr]) -> Result<Val, LowerError> {
    let (h, hs, n, ns) = two_strings(lw, args)?;
    let ws = crate::codegen::emit::strings::contains_work_size(hs, ns);
    let work = lw.scratch(ws, e.span)?;
    let v = crate::codegen::emit::strings::strstr(&mut lw.b, h, hs, n, ns, work);
    Ok(Val::Int(v, IntTy::I64))
}

/// `str_concat(a, b)`: the result is the first half of a scratch area twice its size.
pub(crate) fn str_concat(lw: &mut Lower<'_>, e: &Expr, args: &[Expr]) -> Result<Val, LowerError> {
    let size = crate::builtins::STR_CONCAT_SIZE as u32;
    let (a, asize, c, csize) = two_strings(lw, args)?;
    let work = lw.scratch(
        crate::codegen::emit::strings::concat_work_size(size),
        e.span,
    )?;
    crate::codegen::emit::strings::concat(&mut lw.b, work, size, a, asize, c, csize);
    Ok(Val::Mem(work))
}

/// `strcap(s)`: a string's or char array's capacity from its type; a char pointer's string
/// length up to `max_strlen` characters (bpftrace's `strlen` of a pointer), read from user
/// or kernel memory as `str()` would.
pub(crate) fn strcap(lw: &mut Lower<'_>, e: &Expr, args: &[Expr]) -> Result<Val, LowerError> {
    let t = lw.type_of(args[0].id);
    if let Some(n) = crate::sema::strcap_const(&t) {
        return Ok(Val::Int(Value::Imm(n), IntTy::I64));
    }
    if !matches!(t, Type::Pointer { .. }) {
        return Err(LowerError::unsupported(
            format!("strcap() of a value of type {t}"),
            e.span,
        ));
    }
    let user = super::calls::reads_user_expr(lw, &args[0]);
    let ptr = lower_expr(lw, &args[0])?.value();
    let limit = lw.max_strlen as u32;
    // One byte more than the limit, so a string of `limit` characters or more reads as
    // `limit`, as strnlen(ptr, limit) counts.
    let buf = lw.scratch(limit + 1, e.span)?;
    let n = crate::codegen::emit::strings::read_str(&mut lw.b, user, buf, limit + 1, ptr);
    let b = &mut lw.b;
    let out = b.vreg();
    b.mov(out, n);
    let positive = b.label();
    b.jmp64(crate::asm::isa::JmpOp::Jsgt, out, 0, positive);
    b.mov(out, 1);
    b.bind(positive);
    b.alu(true, crate::asm::isa::AluOp::Sub, out, 1);
    Ok(Val::Int(Value::Reg(out), IntTy::I64))
}
