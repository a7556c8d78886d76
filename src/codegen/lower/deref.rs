//! Memory behind pointers: `p->field`, `s.field` of a struct value, `*p`. Struct values are
//! kept by address (the checker's convention, see `sema::types`): a member that is itself a
//! struct is its address plus the member's offset; any other member is read with
//! `bpf_probe_read_kernel`/`_user` (by the pointer's address space) into the stack.
//!
//! Offsets come from the checker, which read them from BTF (`find_member`, through anonymous
//! members; `CheckedProgram::env`), or from the script's own C definitions.

use super::{int_ty, Lower, LowerError, Val};
use crate::asm::isa::JmpOp;
use crate::codegen::emit::{IntTy, Place, Value};
use crate::sema::types::{AddrSpace, CTypeRef, Pointee, StructType};
use crate::sema::Type;
use crate::syntax::ast::{Expr, ExprKind};

/// The struct a member access goes through, and the address space it lives in.
fn struct_of(t: &Type) -> Option<(StructType, AddrSpace)> {
    match t {
        Type::CStruct(s) => Some((s.clone(), AddrSpace::Kernel)),
        Type::Pointer {
            pointee: Pointee::Type(p),
            space,
        } => match p.as_ref() {
            Type::CStruct(s) => Some((s.clone(), *space)),
            _ => None,
        },
        _ => None,
    }
}

fn member_offset(lw: &Lower<'_>, s: &StructType, name: &str) -> Option<u32> {
    match &s.ty {
        CTypeRef::Btf { module, id } => {
            let m = lw.cp.env.member(module.as_deref(), *id, name)?;
            Some(m.bit_offset / 8)
        }
        CTypeRef::Script { index } => lw
            .cp
            .script_types
            .defs
            .get(*index)?
            .members
            .iter()
            .find(|m| m.name == name)
            .map(|m| m.offset),
    }
}

/// `inner.field` / `inner->field` where `inner` is a struct value or a pointer to one.
pub(crate) fn member(
    lw: &mut Lower<'_>,
    e: &Expr,
    inner: &Expr,
    field: &str,
) -> Result<Option<Val>, LowerError> {
    let inner_t = lw.type_of(inner.id);
    let Some((s, space)) = struct_of(&inner_t) else {
        return Ok(None);
    };
    // A struct value kept by address lives where the access that produced it read from
    // (`args.r->at.x`: user memory in a uprobe).
    let space = match inner_t {
        Type::CStruct(_) => super::store::value_space(lw, inner),
        _ => space,
    };
    if matches!(inner_t, Type::CStruct(_)) {
        // A struct value copied into memory (a variable, a map value, a tuple element) has
        // its members there.
        let base = super::expr::lower_expr(lw, inner)?;
        let off = member_offset(lw, &s, field).ok_or_else(|| {
            LowerError::unsupported(
                format!("the layout of `{}` member `{field}`", s.name),
                e.span,
            )
        })?;
        let t = lw.type_of(e.id);
        if let Some((bit, bits)) = bitfield(lw, &s, field) {
            return match base {
                Val::Mem(p) => bitfield_in_place(lw, e, p, bit, bits, &t),
                b => read_bitfield(lw, e, b.value(), bit, bits, &t, space),
            }
            .map(Some);
        }
        return match base {
            Val::Mem(p) => Ok(Some(super::store::load_val(lw, p.at(off as i32), &t))),
            b => {
                let addr = crate::codegen::emit::arith::binop(
                    &mut lw.b,
                    crate::codegen::emit::arith::BinOp::Add,
                    b.value(),
                    Value::Imm(off as i64),
                    IntTy::U64,
                );
                read_at(lw, e, addr, &t, space).map(Some)
            }
        };
    }
    let t = lw.type_of(e.id);
    if let Some((bit, bits)) = bitfield(lw, &s, field) {
        let base = super::expr::lower_expr(lw, inner)?.value();
        return read_bitfield(lw, e, base, bit, bits, &t, space).map(Some);
    }
    let addr = member_addr(lw, e, inner, field)?;
    read_at(lw, e, addr, &t, space).map(Some)
}

/// A bitfield member's bit offset and width (`None` for an ordinary member): from BTF, or
/// from the layout of the script's own definition (`struct Foo { unsigned int a:4, b:8; }`).
fn bitfield(lw: &Lower<'_>, s: &StructType, name: &str) -> Option<(u32, u32)> {
    let (module, id) = match &s.ty {
        CTypeRef::Btf { module, id } => (module, id),
        CTypeRef::Script { index } => {
            let layout = lw.cp.script_types.defs.get(*index)?.layout.as_ref()?;
            let f = layout.fields.iter().find(|f| f.name == name)?;
            let (shift, width) = f.bits?;
            return Some((f.offset as u32 * 8 + u32::from(shift), u32::from(width)));
        }
    };
    let m = lw.cp.env.member(module.as_deref(), *id, name)?;
    (m.bitfield_size > 0).then_some((m.bit_offset, m.bitfield_size))
}

/// The zeroed 8-byte slot a bitfield `bits` wide at bit `bit` is gathered in, with the bit
/// shift within its first byte and how many bytes hold it.
fn bitfield_slot(
    lw: &mut Lower<'_>,
    e: &Expr,
    bit: u32,
    bits: u32,
) -> Result<(Place, u32, u32), LowerError> {
    let shift = bit % 8;
    if shift + bits > 64 {
        return Err(LowerError::unsupported(
            "a bitfield wider than 56 bits",
            e.span,
        ));
    }
    let len = (shift + bits).div_ceil(8).clamp(1, 8);
    let p = lw.place(8, e.span)?;
    crate::codegen::emit::mem::zero(&mut lw.b, p, 8);
    Ok((p, shift, len))
}

/// Bitfield `bits` wide at bit `bit` of the struct at `base`: the bytes holding it are read
/// into a zeroed 8-byte slot, shifted down and masked (sign-extended for a signed type).
fn read_bitfield(
    lw: &mut Lower<'_>,
    e: &Expr,
    base: Value,
    bit: u32,
    bits: u32,
    t: &Type,
    space: AddrSpace,
) -> Result<Val, LowerError> {
    use crate::codegen::emit::arith::{binop, BinOp};
    let (p, shift, len) = bitfield_slot(lw, e, bit, bits)?;
    let addr = binop(
        &mut lw.b,
        BinOp::Add,
        base,
        Value::Imm((bit / 8) as i64),
        IntTy::U64,
    );
    let ret =
        crate::codegen::emit::builtins::read_mem(&mut lw.b, space == AddrSpace::User, p, len, addr);
    lw.check_helper(ret, read_helper(space == AddrSpace::User), e.span)?;
    Ok(extract_bits(lw, p, shift, bits, t))
}

/// A bitfield of a struct value held in memory at `base` (a variable, a map value): its bytes
/// are copied one at a time (they need not be aligned for a wider load) into a zeroed 8-byte
/// slot, then shifted and masked as [`read_bitfield`] does.
fn bitfield_in_place(
    lw: &mut Lower<'_>,
    e: &Expr,
    base: Place,
    bit: u32,
    bits: u32,
    t: &Type,
) -> Result<Val, LowerError> {
    let (p, shift, len) = bitfield_slot(lw, e, bit, bits)?;
    let src = base.at((bit / 8) as i32);
    for i in 0..len as i32 {
        let r = lw.b.vreg();
        lw.b.load(crate::asm::isa::Size::B, r, src.mem(), src.off + i);
        lw.b.store(crate::asm::isa::Size::B, p.mem(), p.off + i, r);
    }
    Ok(extract_bits(lw, p, shift, bits, t))
}

/// The `bits`-wide field `shift` bits into the 8 little-endian bytes at `p`, sign-extended
/// when `t` is signed.
fn extract_bits(lw: &mut Lower<'_>, p: Place, shift: u32, bits: u32, t: &Type) -> Val {
    use crate::codegen::emit::arith::{binop, BinOp};
    let raw = super::store::load_slot_int(lw, p, IntTy::U64);
    let it = super::int_ty(t).unwrap_or(IntTy::U64);
    // Move the field to the top bits, then down: the shift back is arithmetic when signed.
    let up = binop(
        &mut lw.b,
        BinOp::Shl,
        raw,
        Value::Imm(64 - (shift + bits) as i64),
        IntTy::U64,
    );
    let down_ty = IntTy::new(64, it.signed);
    let v = binop(
        &mut lw.b,
        BinOp::Shr,
        up,
        Value::Imm(64 - bits as i64),
        down_ty,
    );
    Val::Int(v, it)
}

/// The address of member `field` of `inner` (a struct value, kept by address, or a pointer to
/// one): the base plus the member's offset, nothing read. `p->f` reads there; `&p->f` is it.
pub(crate) fn member_addr(
    lw: &mut Lower<'_>,
    e: &Expr,
    inner: &Expr,
    field: &str,
) -> Result<Value, LowerError> {
    let inner_t = lw.type_of(inner.id);
    let Some((s, _)) = struct_of(&inner_t) else {
        return Err(LowerError::unsupported(
            format!("the address of member `{field}` of a {inner_t}"),
            e.span,
        ));
    };
    let Some(off) = member_offset(lw, &s, field) else {
        return Err(LowerError::unsupported(
            format!("the layout of `{}` member `{field}`", s.name),
            e.span,
        ));
    };
    let base = super::expr::lower_expr(lw, inner)?.value();
    Ok(crate::codegen::emit::arith::binop(
        &mut lw.b,
        crate::codegen::emit::arith::BinOp::Add,
        base,
        Value::Imm(off as i64),
        IntTy::U64,
    ))
}

/// `*p`.
pub(crate) fn deref(lw: &mut Lower<'_>, e: &Expr, inner: &Expr) -> Result<Val, LowerError> {
    let inner_t = lw.type_of(inner.id);
    // A pointer's type says where it points; an integer is read as `str()` would read it
    // (a `kptr()`/`uptr()` mark, else the probe's kind).
    let space = match inner_t {
        Type::Pointer { space, .. } => space,
        _ if super::calls::reads_user_expr(lw, inner) => AddrSpace::User,
        _ => AddrSpace::Kernel,
    };
    let addr = super::expr::lower_expr(lw, inner)?.value();
    let t = lw.type_of(e.id);
    read_at(lw, e, addr, &t, space)
}

/// The value of type `t` at `addr` in `space`.
fn read_at(
    lw: &mut Lower<'_>,
    e: &Expr,
    addr: Value,
    t: &Type,
    space: AddrSpace,
) -> Result<Val, LowerError> {
    let user = space == AddrSpace::User;
    if by_address(t) {
        return Ok(Val::Int(addr, IntTy::U64));
    }
    let size = match t.size() {
        0 => 8,
        n => n as u32,
    };
    let p = lw.place(size.next_multiple_of(8), e.span)?;
    crate::codegen::emit::mem::zero(&mut lw.b, p, size.next_multiple_of(8));
    // A char array in memory (`char comm[16]`, also `__u8 u6_addr8[16]`, which is typed as a
    // string) is read whole, as bpftrace does: a string read would stop at the first NUL and
    // lose the bytes after it, which ntop() and indexing need (a v4-mapped IPv6 address
    // starts with ten zero bytes). Printing still stops at the NUL; stored as a string
    // (a key, a value, a variable) it loses the bytes after the NUL (`mark_raw`).
    let ret = crate::codegen::emit::builtins::read_mem(&mut lw.b, user, p, size, addr);
    lw.check_helper(ret, read_helper(user), e.span)?;
    lw.mark_raw(p, size);
    Ok(super::store::load_val(lw, p, t))
}

/// The helper a read through a pointer calls.
pub(crate) fn read_helper(user: bool) -> crate::asm::isa::Helper {
    if user {
        crate::asm::isa::Helper::ProbeReadUser
    } else {
        crate::asm::isa::Helper::ProbeReadKernel
    }
}

/// The longest array value a variable index reads (one compare and load per element).
const MAX_SWITCHED_INDEX: usize = 1024;

/// `a[i]` with a variable `i` on an array value of `len` integer elements in memory: one
/// compare per element picks the load, so every access the verifier sees has a constant
/// offset; an index outside the array reads 0.
fn switched_index(
    lw: &mut Lower<'_>,
    place: Place,
    i: Value,
    len: usize,
    size: u32,
    t: &Type,
    it: IntTy,
) -> Val {
    let idx = match i {
        Value::Reg(r) => r,
        v => v.fresh(&mut lw.b),
    };
    let out = lw.b.constant(0);
    let done = lw.b.label();
    for k in 0..len {
        let next = lw.b.label();
        lw.b.jmp64(JmpOp::Jne, idx, k as i32, next);
        let v = super::store::load_val(lw, place.at(k as i32 * size as i32), t).value();
        match v {
            Value::Reg(r) => lw.b.mov(out, r),
            Value::Imm(c) => lw.b.mov_const(out, c),
        }
        lw.b.ja(done);
        lw.b.bind(next);
    }
    lw.b.bind(done);
    Val::Int(Value::Reg(out), it)
}

/// Struct values, and arrays of them, are kept by address (read member by member).
pub(crate) fn by_address(t: &Type) -> bool {
    match t {
        Type::CStruct(_) => true,
        Type::Array { elem, .. } => matches!(elem.as_ref(), Type::CStruct(_)),
        _ => false,
    }
}

/// The step of pointer arithmetic on `t`: its pointee's size (1 for `void *` and non-pointers),
/// so `p + 1` is the next element, as in C and bpftrace.
pub(crate) fn stride(t: &Type) -> i64 {
    match t {
        Type::Pointer {
            pointee: Pointee::Type(p),
            ..
        } => elem_size(p) as i64,
        _ => 1,
    }
}

fn elem_size(t: &Type) -> u32 {
    match t {
        Type::CStruct(s) => s.size,
        t => t.size().max(1) as u32,
    }
}

/// `base[index]` on an array value (in memory, or by address for arrays of structs) or on a
/// pointer (element `index` of what it points to).
pub(crate) fn index(
    lw: &mut Lower<'_>,
    e: &Expr,
    base: &Expr,
    idx: &Expr,
) -> Result<Val, LowerError> {
    let bt = lw.type_of(base.id);
    let t = lw.type_of(e.id);
    let (elem, space, len) = match &bt {
        Type::Array { elem, len } => ((**elem).clone(), AddrSpace::Kernel, Some(*len)),
        Type::Str { size } => (Type::U8, AddrSpace::Kernel, Some(*size)),
        Type::Pointer {
            pointee: Pointee::Type(p),
            space,
        } => ((**p).clone(), *space, None),
        _ => return Err(LowerError::unsupported(format!("indexing a {bt}"), e.span)),
    };
    let size = elem_size(&elem);
    // A flexible array member (`int y[0]`) reached through a pointer: its elements are read
    // where they are, past the struct's declared end.
    if let (
        Type::Array { len: 0, .. },
        ExprKind::Field {
            expr: inner, field, ..
        },
    ) = (&bt, &base.kind)
    {
        if let Type::Pointer { space, .. } = lw.type_of(inner.id) {
            let at = member_addr(lw, base, inner, &field.name)?;
            let i = super::expr::lower_expr(lw, idx)?.value();
            let addr = element_addr(lw, at, i, size);
            return read_at(lw, e, addr, &t, space);
        }
    }
    let b = super::expr::lower_expr(lw, base)?;
    let i = super::expr::lower_expr(lw, idx)?.value();
    // A run-time index past a sized array's end: bpftrace's warning (the read goes on).
    if let (Type::Array { len: n @ 1.., .. }, None) = (&bt, i.imm()) {
        let r = i.reg(&mut lw.b);
        let ok = lw.b.label();
        lw.b.jmp64(JmpOp::Jle, r, (*n - 1).min(i32::MAX as usize) as i32, ok);
        super::calls::runtime_warning(
            lw,
            e.span,
            "Array access out of bounds. This can lead to unexpected results.",
        )?;
        lw.b.bind(ok);
    }
    match b {
        Val::Mem(place) => {
            if let (None, Some(len), Some(it)) = (i.imm(), len, int_ty(&t)) {
                if len <= MAX_SWITCHED_INDEX {
                    return Ok(switched_index(lw, place, i, len, size, &t, it));
                }
            }
            let (Some(k), Some(len)) = (i.imm(), len) else {
                return Err(LowerError::unsupported(
                    "a variable index into an array value",
                    idx.span,
                ));
            };
            if k < 0 || k as usize >= len {
                return Err(LowerError::unsupported(
                    format!("index {k} outside the array of {len}"),
                    idx.span,
                ));
            }
            Ok(super::store::load_val(
                lw,
                place.at(k as i32 * size as i32),
                &t,
            ))
        }
        v => {
            let addr = element_addr(lw, v.value(), i, size);
            read_at(lw, e, addr, &t, space)
        }
    }
}

/// The address of element `i` of `size` bytes in an array at `base`: `base + i * size`.
fn element_addr(lw: &mut Lower<'_>, base: Value, i: Value, size: u32) -> Value {
    use crate::codegen::emit::arith::{binop, BinOp};
    let off = binop(
        &mut lw.b,
        BinOp::Mul,
        i,
        Value::Imm(i64::from(size)),
        IntTy::U64,
    );
    binop(&mut lw.b, BinOp::Add, base, off, IntTy::U64)
}
