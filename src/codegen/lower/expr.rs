//! Expressions: literals, variables, map reads, arithmetic (bpftrace semantics through
//! `emit::arith`), comparisons (integers, and strings by content), short-circuit `&&`/`||`,
//! ternaries and `if` expressions, casts, tuples, tuple indexing, `args.field`, builtin values
//! ([`super::builtins`]) and calls ([`super::calls`]).
//!
//! Signedness (bpftrace 0.17): a comparison, division or modulo is signed only when both
//! operands are signed; the result is held as the checker's type of the whole expression.

use super::store::{spill, store_val};
use super::{int_ty, Lower, LowerError, Val};
use crate::builtins::{BuiltinId, ValueId};
use crate::codegen::emit::arith::{self, BinOp, CmpOp};
use crate::codegen::emit::control::jump_if_false;
use crate::codegen::emit::mem::write_str;
use crate::codegen::emit::{IntTy, Place, Value};
use crate::diag::Span;
use crate::plan::layout::{tuple_offsets, FieldType};
use crate::sema::Type;
use crate::syntax::ast::{BinaryOp, Expr, ExprKind, UnaryOp};

fn ity(t: &Type) -> IntTy {
    int_ty(t).unwrap_or(IntTy::I64)
}

/// Lowers `e` to its value; its instructions carry `e`'s span (for the source map).
pub(crate) fn lower_expr(lw: &mut Lower<'_>, e: &Expr) -> Result<Val, LowerError> {
    let outer = lw.b.span();
    lw.b.set_span(e.span);
    let r = lower_expr_here(lw, e);
    lw.b.set_span(outer);
    r
}

fn lower_expr_here(lw: &mut Lower<'_>, e: &Expr) -> Result<Val, LowerError> {
    let t = lw.type_of(e.id);
    if let ExprKind::Ident(name) = &e.kind {
        if let Some(v) = super::inline::lower_ident(lw, e, name) {
            return v;
        }
    }
    let stale = super::inline::const_is_stale(lw, e);
    if let Some(&c) = lw.cp.consts.get(&e.id).filter(|_| !stale) {
        if let Some(it) = int_ty(&t) {
            return Ok(Val::Int(Value::Imm(it.normalize(c)), it));
        }
    }
    if let Some(s) = lw.cp.str_consts.get(&e.id).filter(|_| !stale).cloned() {
        return Ok(Val::Mem(string_literal(lw, &s, &t)));
    }
    match &e.kind {
        ExprKind::Int(lit) => {
            let it = ity(&t);
            Ok(Val::Int(Value::Imm(it.normalize(lit.value as i64)), it))
        }
        ExprKind::Bool(v) => Ok(Val::Int(Value::Imm(*v as i64), IntTy::U8)),
        ExprKind::Str(s) => Ok(Val::Mem(string_literal(lw, s, &t))),
        ExprKind::Var(name) => {
            let slot = super::stmt::var_slot_of(lw, e.id, name);
            match slot {
                Some(s) => Ok(super::stmt::read_var(lw, s)),
                None => Ok(Val::Int(Value::Imm(0), ity(&t))),
            }
        }
        ExprKind::Map { name, keys } => super::calls::read_map(lw, e, &name.name, keys),
        ExprKind::Ident(name) => match lw.cp.builtin_of(e.id) {
            Some(BuiltinId::Value(v)) => super::builtins::lower_value(lw, e, v, name),
            _ => Err(LowerError::unsupported(
                format!("the builtin `{name}`"),
                e.span,
            )),
        },
        ExprKind::Call { name, args } => super::calls::lower_call(lw, e, &name.name, args),
        ExprKind::Unary { op, expr } => lower_unary(lw, e, *op, expr, &t),
        ExprKind::Binary { op, lhs, rhs } => lower_binary(lw, *op, lhs, rhs, &t, e.span),
        ExprKind::Ternary {
            cond,
            then,
            otherwise,
        } => {
            let c = lower_expr(lw, cond)?;
            let then = then.as_deref().unwrap_or(cond);
            let (then_t, other_t) = (lw.type_of(then.id), lw.type_of(otherwise.id));
            branch_value(
                lw,
                c.value(),
                &t,
                (|lw: &mut Lower<'_>| lower_expr(lw, then), then_t),
                (|lw: &mut Lower<'_>| lower_expr(lw, otherwise), other_t),
            )
        }
        // `if comptime (c)`: the checker decided `c` (its constant) and checked only the
        // branch taken, which alone is lowered.
        ExprKind::If {
            cond,
            then,
            otherwise,
        } if matches!(cond.kind, ExprKind::Comptime(_)) => match lw.cp.consts.get(&cond.id) {
            Some(&c) if c != 0 => super::stmt::lower_block(lw, then),
            Some(_) => match otherwise {
                Some(o) => lower_expr(lw, o),
                None => Ok(Val::None),
            },
            None => Err(LowerError::unsupported(
                "an `if comptime` whose condition is not known when compiling",
                cond.span,
            )),
        },
        // `if` with a value (bpftrace: both branches' last expressions, of one type): the
        // taken branch's value, as the ternary operator computes it.
        ExprKind::If {
            cond,
            then,
            otherwise: Some(otherwise),
        } if !matches!(t, Type::None) && then.tail.is_some() => {
            let c = lower_expr(lw, cond)?.value();
            let then_t = then.tail.as_ref().map_or(Type::None, |e| lw.type_of(e.id));
            let other_t = lw.type_of(otherwise.id);
            branch_value(
                lw,
                c,
                &t,
                (
                    |lw: &mut Lower<'_>| super::stmt::lower_block(lw, then),
                    then_t,
                ),
                (|lw: &mut Lower<'_>| lower_expr(lw, otherwise), other_t),
            )
        }
        ExprKind::If {
            cond,
            then,
            otherwise,
        } => {
            let c = lower_expr(lw, cond)?.value();
            let else_l = lw.b.label();
            let end = lw.b.label();
            crate::codegen::emit::control::branch_if(&mut lw.b, c, false, else_l);
            super::stmt::lower_block(lw, then)?;
            lw.b.ja(end);
            lw.b.bind(else_l);
            if let Some(o) = otherwise {
                lower_expr(lw, o)?;
            }
            lw.b.bind(end);
            Ok(Val::None)
        }
        ExprKind::Block(b) => super::stmt::lower_block(lw, b),
        ExprKind::Cast { expr, .. } => {
            let from_t = lw.type_of(expr.id);
            let v = lower_expr(lw, expr)?;
            match (v, int_ty(&t)) {
                (Val::Int(v, from), Some(to)) => {
                    let from = int_ty(&from_t).unwrap_or(from);
                    Ok(Val::Int(arith::cast(&mut lw.b, v, from, to), to))
                }
                // `(uint8[8])x`: the integer's bytes as an array value.
                (Val::Int(v, from), None) if matches!(t, Type::Array { .. }) => {
                    let slot = lw.b.slot(8, 8);
                    let p = Place::new(slot, 0);
                    crate::codegen::emit::mem::store_int(&mut lw.b, p, v, from.bytes().max(8));
                    Ok(Val::Mem(p))
                }
                (v, _) => Ok(v),
            }
        }
        ExprKind::Tuple(items) => {
            let items: Vec<&Expr> = items.iter().collect();
            lower_tuple(lw, &items, &t, e)
        }
        ExprKind::Record(fs) => {
            let items: Vec<&Expr> = fs.iter().map(|(_, x)| x).collect();
            lower_tuple(lw, &items, &t, e)
        }
        ExprKind::TupleIndex { expr, index } => {
            let inner_t = lw.type_of(expr.id);
            let v = lower_expr(lw, expr)?;
            let p = spill(lw, v, &inner_t);
            element(lw, p, &inner_t, *index as usize)
        }
        ExprKind::Field { expr, field, .. } => {
            let inner_t = lw.type_of(expr.id);
            if matches!(expr.kind, ExprKind::Ident(_))
                && lw.cp.builtin_of(expr.id) == Some(ValueId::Args.into())
            {
                return super::builtins::lower_arg(lw, e, &field.name, &t);
            }
            if let Some(v) = super::deref::member(lw, e, expr, &field.name)? {
                return Ok(v);
            }
            if let Type::Record(fs) = &inner_t {
                if let Some(i) = fs.iter().position(|(n, _)| n == &field.name) {
                    let v = lower_expr(lw, expr)?;
                    let p = spill(lw, v, &inner_t);
                    return element(lw, p, &inner_t, i);
                }
            }
            Err(LowerError::unsupported(
                format!("reading field `{}` of a {inner_t}", field.name),
                e.span,
            ))
        }
        ExprKind::Index { expr, index } => {
            let inner_t = lw.type_of(expr.id);
            if let (Type::Tuple(_), Some(&i)) = (&inner_t, lw.cp.consts.get(&index.id)) {
                let v = lower_expr(lw, expr)?;
                let p = spill(lw, v, &inner_t);
                return element(lw, p, &inner_t, i as usize);
            }
            super::deref::index(lw, e, expr, index)
        }
        ExprKind::Positional(_) | ExprKind::PositionalCount => Ok(Val::Int(Value::Imm(0), ity(&t))),
        _ => Err(LowerError::unsupported("this expression", e.span)),
    }
}

/// A string literal in a stack buffer of its type's size.
pub(crate) fn string_literal(lw: &mut Lower<'_>, s: &[u8], t: &Type) -> Place {
    let size = match t {
        Type::Str { size } => *size as u32,
        _ => s.len() as u32 + 1,
    }
    .max(s.len() as u32 + 1);
    let span = lw.b.span();
    let p = lw
        .place(size, span)
        .unwrap_or_else(|_| Place::new(lw.b.slot(size, 8), 0));
    write_str(&mut lw.b, p, s, size);
    p
}

fn lower_tuple(lw: &mut Lower<'_>, items: &[&Expr], t: &Type, e: &Expr) -> Result<Val, LowerError> {
    let fs = match t.field_type() {
        Some(FieldType::Tuple(fs)) => fs,
        Some(FieldType::Record(fs)) => fs.into_iter().map(|(_, f)| f).collect(),
        _ => return Err(LowerError::unsupported("a tuple of this type", e.span)),
    };
    let offs = tuple_offsets(&fs);
    let size = FieldType::Tuple(fs.clone()).size() as u32;
    let p = lw.place(size, e.span)?;
    crate::codegen::emit::mem::zero(&mut lw.b, p, size);
    for (i, item) in items.iter().enumerate() {
        super::store::store_expr(lw, p.at(offs[i] as i32), &fs[i], item)?;
    }
    Ok(Val::Mem(p))
}

/// Element `i` of the tuple (or record) of type `t` at `p`.
fn element(lw: &mut Lower<'_>, p: Place, t: &Type, i: usize) -> Result<Val, LowerError> {
    let types: Vec<Type> = match t {
        Type::Tuple(ts) => ts.clone(),
        Type::Record(fs) => fs.iter().map(|(_, t)| t.clone()).collect(),
        _ => Vec::new(),
    };
    let fts: Vec<FieldType> = types
        .iter()
        .map(|t| {
            t.field_type().unwrap_or(FieldType::Int {
                bytes: 8,
                signed: false,
            })
        })
        .collect();
    let offs = tuple_offsets(&fts);
    let (Some(et), Some(&off)) = (types.get(i), offs.get(i)) else {
        return Ok(Val::None);
    };
    Ok(super::store::load_val(lw, p.at(off as i32), et))
}

/// `cond ? a : b` for any value type.
/// The value of `cond ? then : otherwise` (or of an `if` expression) of type `t`: each branch
/// a closure that lowers it, with the branch's own type.
fn branch_value<A, B>(
    lw: &mut Lower<'_>,
    cond: Value,
    t: &Type,
    (then, tt): (A, Type),
    (otherwise, ot): (B, Type),
) -> Result<Val, LowerError>
where
    A: FnOnce(&mut Lower<'_>) -> Result<Val, LowerError>,
    B: FnOnce(&mut Lower<'_>) -> Result<Val, LowerError>,
{
    let else_l = lw.b.label();
    let end = lw.b.label();
    match int_ty(t) {
        Some(it) => {
            let out = lw.b.vreg();
            jump_if_false(&mut lw.b, cond, else_l);
            let a = then(lw)?.value();
            let a = cast_to(lw, a, &tt, it);
            let s = a.src(&mut lw.b);
            lw.b.mov(out, s);
            lw.b.ja(end);
            lw.b.bind(else_l);
            let c = otherwise(lw)?.value();
            let c = cast_to(lw, c, &ot, it);
            let s = c.src(&mut lw.b);
            lw.b.mov(out, s);
            lw.b.bind(end);
            Ok(Val::Int(Value::Reg(out), it))
        }
        None => {
            let f = t.field_type().unwrap_or(FieldType::Int {
                bytes: 8,
                signed: false,
            });
            let slot = lw.b.slot((f.size() as u32).max(1), 8);
            let p = Place::new(slot, 0);
            jump_if_false(&mut lw.b, cond, else_l);
            let a = then(lw)?;
            store_val(lw, p, &f, a, &tt);
            lw.b.ja(end);
            lw.b.bind(else_l);
            let c = otherwise(lw)?;
            store_val(lw, p, &f, c, &ot);
            lw.b.bind(end);
            Ok(Val::Mem(p))
        }
    }
}

fn cast_to(lw: &mut Lower<'_>, v: Value, from: &Type, to: IntTy) -> Value {
    match int_ty(from) {
        Some(f) if f != to => arith::cast(&mut lw.b, v, f, to),
        _ => v,
    }
}

fn lower_unary(
    lw: &mut Lower<'_>,
    e: &Expr,
    op: UnaryOp,
    inner: &Expr,
    t: &Type,
) -> Result<Val, LowerError> {
    let it = ity(t);
    match op {
        UnaryOp::Neg => {
            let v = lower_expr(lw, inner)?.value();
            Ok(Val::Int(arith::neg(&mut lw.b, v, it), it))
        }
        UnaryOp::BitNot => {
            let v = lower_expr(lw, inner)?.value();
            Ok(Val::Int(arith::bit_not(&mut lw.b, v, it), it))
        }
        UnaryOp::Not => {
            let v = lower_expr(lw, inner)?.value();
            Ok(Val::Int(arith::logical_not(&mut lw.b, v), IntTy::U8))
        }
        UnaryOp::PreInc | UnaryOp::PreDec | UnaryOp::PostInc | UnaryOp::PostDec => {
            super::calls::increment(lw, e, op, inner)
        }
        UnaryOp::Deref => super::deref::deref(lw, e, inner),
        UnaryOp::AddrOf => super::funcs::address_of(lw, e, inner),
    }
}

fn cmp_op(op: BinaryOp) -> Option<CmpOp> {
    Some(match op {
        BinaryOp::Eq => CmpOp::Eq,
        BinaryOp::Ne => CmpOp::Ne,
        BinaryOp::Lt => CmpOp::Lt,
        BinaryOp::Le => CmpOp::Le,
        BinaryOp::Gt => CmpOp::Gt,
        BinaryOp::Ge => CmpOp::Ge,
        _ => return None,
    })
}

fn bin_op(op: BinaryOp) -> Option<BinOp> {
    Some(match op {
        BinaryOp::Add => BinOp::Add,
        BinaryOp::Sub => BinOp::Sub,
        BinaryOp::Mul => BinOp::Mul,
        BinaryOp::Div => BinOp::Div,
        BinaryOp::Mod => BinOp::Mod,
        BinaryOp::Shl => BinOp::Shl,
        BinaryOp::Shr => BinOp::Shr,
        BinaryOp::BitAnd => BinOp::And,
        BinaryOp::BitOr => BinOp::Or,
        BinaryOp::BitXor => BinOp::Xor,
        _ => return None,
    })
}

/// `l op r` on values already lowered (compound assignments use it too); `span` is where a
/// division or modulo by zero found at run time is reported.
#[allow(clippy::too_many_arguments)]
pub(crate) fn arith(
    lw: &mut Lower<'_>,
    op: BinaryOp,
    l: Val,
    lt: &Type,
    r: Val,
    rt: &Type,
    t: &Type,
    span: Span,
) -> Result<Val, LowerError> {
    if let Some(c) = cmp_op(op) {
        if let (Val::Mem(a), Val::Mem(b), Type::Buf { capacity: ca }, Type::Buf { capacity: cb }) =
            (l, r, lt, rt)
        {
            let eq = crate::codegen::emit::strings::buf_eq(&mut lw.b, a, *ca as u32, b, *cb as u32);
            let v = if c == CmpOp::Ne {
                arith::logical_not(&mut lw.b, eq)
            } else {
                eq
            };
            return Ok(Val::Int(v, IntTy::U8));
        }
        if let (Val::Mem(a), Val::Mem(b), Type::Array { .. }) = (l, r, lt) {
            let n = lt.size().min(rt.size()) as u32;
            let eq = crate::codegen::emit::strings::bytes_eq(&mut lw.b, a, b, n);
            let v = if c == CmpOp::Ne {
                arith::logical_not(&mut lw.b, eq)
            } else {
                eq
            };
            return Ok(Val::Int(v, IntTy::U8));
        }
        if let (Val::Mem(a), Val::Mem(b)) = (l, r) {
            let (sa, sb) = (lt.size().max(1) as u32, rt.size().max(1) as u32);
            let eq = crate::codegen::emit::strings::str_eq(&mut lw.b, a, sa, b, sb);
            let v = if c == CmpOp::Ne {
                arith::logical_not(&mut lw.b, eq)
            } else {
                eq
            };
            return Ok(Val::Int(v, IntTy::U8));
        }
        let signed = lt.is_signed() && rt.is_signed();
        let v = arith::compare(&mut lw.b, c, l.value(), r.value(), signed);
        return Ok(Val::Int(v, IntTy::U8));
    }
    let Some(bop) = bin_op(op) else {
        return Ok(Val::Int(Value::Imm(0), IntTy::I64));
    };
    let mut it = ity(t);
    if matches!(bop, BinOp::Div | BinOp::Mod | BinOp::Shr) {
        it.signed = lt.is_signed() && rt.is_signed();
    }
    let (mut lv, mut rv) = (l.value(), r.value());
    // Pointer ± integer steps by elements.
    if matches!(bop, BinOp::Add | BinOp::Sub) && lt.is_pointer() != rt.is_pointer() {
        let (s, scale_right) = if lt.is_pointer() {
            (super::deref::stride(lt), true)
        } else {
            (super::deref::stride(rt), false)
        };
        if s != 1 {
            let n = if scale_right { &mut rv } else { &mut lv };
            *n = arith::binop(&mut lw.b, BinOp::Mul, *n, Value::Imm(s), IntTy::I64);
        }
    }
    if matches!(bop, BinOp::Div | BinOp::Mod) && rv.imm().is_none() {
        return checked_divmod(lw, bop, lv, rv, it, ity(t), span);
    }
    let v = arith::binop(&mut lw.b, bop, lv, rv, it);
    Ok(Val::Int(v, ity(t)))
}

/// `l / r` or `l % r` with a divisor known only at run time: as in current bpftrace, a zero
/// divisor makes the result 1 and reports a warning at `span` (the event goes on).
fn checked_divmod(
    lw: &mut Lower<'_>,
    bop: BinOp,
    lv: Value,
    rv: Value,
    it: IntTy,
    result: IntTy,
    span: Span,
) -> Result<Val, LowerError> {
    let out = lw.b.vreg();
    let (zero, done) = (lw.b.label(), lw.b.label());
    let r = rv.reg(&mut lw.b);
    lw.b.jmp64(crate::asm::isa::JmpOp::Jeq, r, 0, zero);
    let v = arith::binop(&mut lw.b, bop, lv, Value::Reg(r), it);
    let src = v.src(&mut lw.b);
    lw.b.mov(out, src);
    lw.b.ja(done);
    lw.b.bind(zero);
    lw.b.mov(out, 1);
    super::calls::runtime_warning(lw, span, DIVIDE_BY_ZERO)?;
    lw.b.bind(done);
    Ok(Val::Int(Value::Reg(out), result))
}

/// bpftrace's run-time warning for a zero divisor.
const DIVIDE_BY_ZERO: &str =
    "Divide or modulo by 0 detected. This can lead to unexpected results. 1 is being used as the result.";

fn lower_binary(
    lw: &mut Lower<'_>,
    op: BinaryOp,
    lhs: &Expr,
    rhs: &Expr,
    t: &Type,
    span: Span,
) -> Result<Val, LowerError> {
    if matches!(op, BinaryOp::And | BinaryOp::Or) {
        let is_and = op == BinaryOp::And;
        let out = lw.b.constant(!is_and as i64);
        let done = lw.b.label();
        let l = lower_expr(lw, lhs)?.value();
        crate::codegen::emit::control::branch_if(&mut lw.b, l, !is_and, done);
        let r = lower_expr(lw, rhs)?.value();
        crate::codegen::emit::control::branch_if(&mut lw.b, r, !is_and, done);
        lw.b.mov(out, is_and as i32);
        lw.b.bind(done);
        return Ok(Val::Int(Value::Reg(out), IntTy::U8));
    }
    let lt = lw.type_of(lhs.id);
    let rt = lw.type_of(rhs.id);
    if let Some(v) = literal_str_compare(lw, op, (lhs, &lt), (rhs, &rt))? {
        return Ok(v);
    }
    let l = lower_expr(lw, lhs)?;
    let r = lower_expr(lw, rhs)?;
    arith(lw, op, l, &lt, r, &rt, t, span)
}

/// `s == "lit"` / `s != "lit"` (either side) for a string `s`: compared against immediates
/// (`strings::str_eq_literal`) instead of a copy of the literal on the stack and a byte loop.
fn literal_str_compare(
    lw: &mut Lower<'_>,
    op: BinaryOp,
    (lhs, lt): (&Expr, &Type),
    (rhs, rt): (&Expr, &Type),
) -> Result<Option<Val>, LowerError> {
    if !matches!(op, BinaryOp::Eq | BinaryOp::Ne) {
        return Ok(None);
    }
    let (other, ot, lit, litt) = match (&lhs.kind, &rhs.kind) {
        (ExprKind::Str(_), ExprKind::Str(_)) => return Ok(None),
        (_, ExprKind::Str(s)) => (lhs, lt, s, rt),
        (ExprKind::Str(s), _) => (rhs, rt, s, lt),
        _ => return Ok(None),
    };
    let (Type::Str { .. }, Type::Str { .. }) = (ot, litt) else {
        return Ok(None);
    };
    let Val::Mem(a) = lower_expr(lw, other)? else {
        return Err(LowerError::unsupported(
            "a string compared that is not in memory",
            other.span,
        ));
    };
    let (sa, sl) = (ot.size() as u32, litt.size() as u32);
    let eq = crate::codegen::emit::strings::str_eq_literal(&mut lw.b, a, sa, lit, sl);
    let v = if op == BinaryOp::Ne {
        arith::logical_not(&mut lw.b, eq)
    } else {
        eq
    };
    Ok(Some(Val::Int(v, IntTy::U8)))
}
