//! Writing a lowered value into memory laid out as a [`FieldType`] (record arguments, map
//! keys, map values, variables), converting between layouts the checker allows to meet:
//! integers of any width, strings of different buffer sizes (copied up to the smaller size,
//! always NUL-terminated, the tail zeroed so keys hash alike), tuples element by element.

use super::deref::by_address;
use super::{int_ty, Lower, Val};
use crate::asm::isa::Size;
use crate::codegen::emit::mem::{load_int, store_int, zero};
use crate::codegen::emit::{IntTy, Place, Value};
use crate::plan::layout::{tuple_offsets, FieldType};
use crate::sema::types::AddrSpace;
use crate::sema::Type;
use crate::syntax::ast::{Expr, ExprKind, UnaryOp};

/// Copies `len` bytes from `src` to `dst` with the widest loads/stores their offsets allow.
pub(crate) fn copy(lw: &mut Lower<'_>, dst: Place, src: Place, len: u32) {
    if crate::codegen::emit::mem::copy_bulk(&mut lw.b, dst, src, len) {
        return;
    }
    let mut i = 0u32;
    while i < len {
        let left = len - i;
        let (sz, n) = if left >= 8 && (src.off + i as i32) % 8 == 0 && (dst.off + i as i32) % 8 == 0
        {
            (Size::Dw, 8)
        } else if left >= 4 && (src.off + i as i32) % 4 == 0 && (dst.off + i as i32) % 4 == 0 {
            (Size::W, 4)
        } else {
            (Size::B, 1)
        };
        let r = lw.b.vreg();
        lw.b.load(sz, r, src.mem(), src.off + i as i32);
        lw.b.store(sz, dst.mem(), dst.off + i as i32, r);
        i += n;
    }
}

/// Stores `v` (of checker type `ty`) at `dst` laid out as `f`.
pub(crate) fn store_val(lw: &mut Lower<'_>, dst: Place, f: &FieldType, v: Val, ty: &Type) {
    match (f, v) {
        // A struct value kept by address whose source expression is not known here (see
        // [`store_expr`]): read where the probe's plain addresses point.
        (FieldType::Struct(_) | FieldType::Array { .. }, Val::Int(addr, _)) if by_address(ty) => {
            let user = super::calls::reads_user(lw, &Type::None);
            read_struct(lw, dst, f.size() as u32, addr, user);
        }
        (_, Val::Int(value, _)) => {
            let bytes = f.size().clamp(1, 8) as u32;
            store_int(&mut lw.b, dst, value, bytes);
        }
        (FieldType::Str { size }, Val::Mem(src)) => {
            let src_size = ty.size().max(1) as u32;
            let dst_size = *size as u32;
            let n = src_size.min(dst_size);
            copy(lw, dst, src, n);
            if dst_size > n {
                zero(&mut lw.b, dst.at(n as i32), dst_size - n);
            } else if src_size > dst_size {
                // A longer string is cut and ends in a NUL. One of the same size is copied
                // as it is: only a char array can fill its buffer without a NUL (`char s[5]`
                // holding "hello" prints whole, as in bpftrace).
                lw.b.store(Size::B, dst.mem(), dst.off + dst_size as i32 - 1, 0);
            }
            if lw.is_raw(src) {
                // A char array read whole: its bytes after the NUL are not the string's.
                crate::codegen::emit::strings::zero_after_nul(&mut lw.b, dst, n);
            }
        }
        (FieldType::Tuple(fs), Val::Mem(src)) => {
            let src_types: Vec<Type> = match ty {
                Type::Tuple(ts) => ts.clone(),
                Type::Record(fs) => fs.iter().map(|(_, t)| t.clone()).collect(),
                _ => Vec::new(),
            };
            store_fields(lw, dst, fs, src, &src_types);
        }
        (FieldType::Record(fs), Val::Mem(src)) => {
            let src_types: Vec<Type> = match ty {
                Type::Record(fs) => fs.iter().map(|(_, t)| t.clone()).collect(),
                Type::Tuple(ts) => ts.clone(),
                _ => Vec::new(),
            };
            let fts: Vec<FieldType> = fs.iter().map(|(_, f)| f.clone()).collect();
            match ty {
                // The same names in another order (`$a = (x=1, y=2); $a = (y=3, x=4)`): each
                // field goes to the slot of its name.
                Type::Record(sfs) if sfs.iter().zip(fs).any(|((a, _), (b, _))| a != b) => {
                    let order: Vec<usize> = fs
                        .iter()
                        .map(|(n, _)| sfs.iter().position(|(m, _)| m == n).unwrap_or(usize::MAX))
                        .collect();
                    store_fields_in(lw, dst, &fts, src, &src_types, &order);
                }
                _ => store_fields(lw, dst, &fts, src, &src_types),
            }
        }
        (f, Val::Mem(src)) => {
            let n = (f.size() as u32).min(ty.size().max(1) as u32);
            copy(lw, dst, src, n);
            if (f.size() as u32) > n {
                zero(&mut lw.b, dst.at(n as i32), f.size() as u32 - n);
            }
        }
        (f, Val::None) => zero(&mut lw.b, dst, f.size() as u32),
    }
}

fn store_fields(lw: &mut Lower<'_>, dst: Place, fs: &[FieldType], src: Place, src_types: &[Type]) {
    let order: Vec<usize> = (0..fs.len()).collect();
    store_fields_in(lw, dst, fs, src, src_types, &order);
}

/// Stores source field `order[i]` into destination field `i` for every `i`.
fn store_fields_in(
    lw: &mut Lower<'_>,
    dst: Place,
    fs: &[FieldType],
    src: Place,
    src_types: &[Type],
    order: &[usize],
) {
    let dst_off = tuple_offsets(fs);
    let src_fts: Vec<FieldType> = src_types
        .iter()
        .map(|t| {
            t.field_type().unwrap_or(FieldType::Int {
                bytes: 8,
                signed: false,
            })
        })
        .collect();
    let src_off = tuple_offsets(&src_fts);
    // Padding must be defined (keys hash bytewise; helpers read whole records).
    zero(&mut lw.b, dst, FieldType::Tuple(fs.to_vec()).size() as u32);
    for (i, f) in fs.iter().enumerate() {
        let j = order.get(i).copied().unwrap_or(usize::MAX);
        let (Some(st), Some(&so)) = (src_types.get(j), src_off.get(j)) else {
            continue;
        };
        let sp = src.at(so as i32);
        let v = match int_ty(st) {
            Some(it) => Val::Int(load_int(&mut lw.b, sp, it), it),
            None => Val::Mem(sp),
        };
        store_val(lw, dst.at(dst_off[i] as i32), f, v, st);
    }
}

/// Copies the `size` bytes of a struct value at `addr` to `dst` (zeroed when unreadable).
fn read_struct(
    lw: &mut Lower<'_>,
    dst: Place,
    size: u32,
    addr: crate::codegen::emit::Value,
    user: bool,
) {
    zero(&mut lw.b, dst, size);
    crate::codegen::emit::builtins::read_mem(&mut lw.b, user, dst, size, addr);
}

/// Which address space the struct value `e` (kept by address) lives in: that of the pointer
/// it was reached through (`*p`, `p->inner`, `p[i]`, `(*p).inner`); an address of unknown
/// origin (a variable holding a large struct's address) is where the probe's plain
/// addresses point.
pub(crate) fn value_space(lw: &Lower<'_>, e: &Expr) -> AddrSpace {
    let through = match &e.kind {
        ExprKind::Unary {
            op: UnaryOp::Deref,
            expr: p,
        } => Some(p),
        ExprKind::Field { expr: inner, .. } | ExprKind::Index { expr: inner, .. } => {
            if by_address(&lw.type_of(inner.id)) {
                return value_space(lw, inner);
            }
            Some(inner)
        }
        _ => None,
    };
    let user = match through {
        Some(p) => match (lw.cp.addr_spaces.get(&p.id), lw.type_of(p.id)) {
            (Some(s), _) => *s == AddrSpace::User,
            (
                None,
                Type::Pointer {
                    space: AddrSpace::User,
                    ..
                },
            ) => true,
            // A pointer made from a plain integer (`(struct foo *)arg0`) points where the
            // probe's plain addresses do; one from BTF (`curtask->fs`) says where it points.
            (None, Type::Pointer { .. }) => {
                from_integer(lw, p) && super::calls::reads_user(lw, &Type::None)
            }
            (None, _) => super::calls::reads_user_expr(lw, p),
        },
        None => super::calls::reads_user(lw, &Type::None),
    };
    if user {
        AddrSpace::User
    } else {
        AddrSpace::Kernel
    }
}

/// Whether pointer `p` was made from an integer (a cast of one, pointer arithmetic on such a
/// pointer, or a variable/map whose origin is not known here).
fn from_integer(lw: &Lower<'_>, p: &Expr) -> bool {
    match &p.kind {
        ExprKind::Cast { expr, .. } => !lw.type_of(expr.id).is_pointer() || from_integer(lw, expr),
        ExprKind::Binary { lhs, .. } => from_integer(lw, lhs),
        ExprKind::Var(_) | ExprKind::Map { .. } => true,
        _ => false,
    }
}

/// Lowers `e` for storing: a struct value kept by address (see [`by_address`]) is copied
/// from memory onto the stack (or the scratch buffer) first, so it can be stored anywhere.
pub(crate) fn lower_stored(lw: &mut Lower<'_>, e: &Expr) -> Result<Val, super::LowerError> {
    let v = super::expr::lower_expr(lw, e)?;
    let t = lw.type_of(e.id);
    match (v, t.field_type()) {
        (Val::Int(addr, _), Some(f)) if by_address(&t) => {
            let size = f.size() as u32;
            let p = lw.place(size.max(1).next_multiple_of(8), e.span)?;
            let user = value_space(lw, e) == AddrSpace::User;
            read_struct(lw, p, size, addr, user);
            Ok(Val::Mem(p))
        }
        (v, _) => Ok(v),
    }
}

/// Lowers `e` and stores it at `dst` laid out as `f`; a struct value kept by address is
/// read from memory straight into `dst`.
pub(crate) fn store_expr(
    lw: &mut Lower<'_>,
    dst: Place,
    f: &FieldType,
    e: &Expr,
) -> Result<(), super::LowerError> {
    let t = lw.type_of(e.id);
    let v = super::expr::lower_expr(lw, e)?;
    match (v, f) {
        (Val::Int(addr, _), FieldType::Struct(_) | FieldType::Array { .. }) if by_address(&t) => {
            let user = value_space(lw, e) == AddrSpace::User;
            read_struct(lw, dst, f.size() as u32, addr, user);
        }
        (v, f) => store_val(lw, dst, f, v, &t),
    }
    Ok(())
}

/// A value of type `ty` materialized on the stack (for tuples built from parts, strings).
pub(crate) fn spill(lw: &mut Lower<'_>, v: Val, ty: &Type) -> Place {
    match v {
        Val::Mem(p) => p,
        _ => {
            let f = ty.field_type().unwrap_or(FieldType::Int {
                bytes: 8,
                signed: false,
            });
            let slot = lw.b.slot((f.size() as u32).max(1), 8);
            let p = Place::new(slot, 0);
            store_val(lw, p, &f, v, ty);
            p
        }
    }
}

/// Loads the value of type `ty` at `p` (an integer into a register; anything else stays in
/// memory).
pub(crate) fn load_val(lw: &mut Lower<'_>, p: Place, ty: &Type) -> Val {
    match int_ty(ty) {
        Some(it) => Val::Int(load_int(&mut lw.b, p, it), it),
        None => Val::Mem(p),
    }
}

/// An 8-byte integer slot's value as `it` (stored widened, loaded back normalized).
pub(crate) fn load_slot_int(lw: &mut Lower<'_>, p: Place, it: IntTy) -> Value {
    let v = load_int(&mut lw.b, p, IntTy::new(64, it.signed));
    crate::codegen::emit::arith::cast(&mut lw.b, v, IntTy::new(64, it.signed), it)
}

/// Whether [`write_direct`] writes `e` into a field of type `f` (and so fills it whole).
pub(crate) fn writes_direct(lw: &Lower<'_>, e: &crate::syntax::ast::Expr, f: &FieldType) -> bool {
    use crate::syntax::ast::ExprKind;
    match (&e.kind, f) {
        (ExprKind::Ident(_), FieldType::Str { size: 16 }) => {
            lw.cp.builtin_of(e.id) == Some(crate::builtins::ValueId::Comm.into())
        }
        (ExprKind::Call { args, .. }, FieldType::Str { size }) => {
            lw.cp.builtin_of(e.id) == Some(crate::builtins::FuncId::Str.into())
                && args.len() == 1
                && !lw.cp.str_consts.contains_key(&e.id)
                && lw.type_of(e.id) == (Type::Str { size: *size })
                && int_ty(&lw.type_of(args[0].id)).is_some()
        }
        _ => false,
    }
}

/// Writes `e` straight into `dst` when it has a producer that writes memory itself (`comm`
/// into a 16-byte string field, `str(p)` into a string field of its size), saving the copy
/// through a temporary. Returns whether it did; the field is then fully written.
pub(crate) fn write_direct(
    lw: &mut Lower<'_>,
    e: &crate::syntax::ast::Expr,
    dst: Place,
    f: &FieldType,
) -> Result<bool, super::LowerError> {
    use crate::syntax::ast::ExprKind;
    let outer = lw.b.span();
    lw.b.set_span(e.span);
    let direct = writes_direct(lw, e, f);
    let done = match (&e.kind, f) {
        (ExprKind::Ident(_), FieldType::Str { size: 16 }) if direct => {
            let off = lw.cp.env.task_fields.map(|f| f.comm);
            crate::codegen::emit::builtins::comm_from_task(&mut lw.b, dst, off);
            true
        }
        (ExprKind::Call { args, .. }, FieldType::Str { size }) if direct => {
            let user = super::calls::reads_user_expr(lw, &args[0]);
            let v = super::expr::lower_expr(lw, &args[0])?.value();
            zero(&mut lw.b, dst, *size as u32);
            super::calls::read_str_typed(lw, user, dst, *size as u32, v, e.span)?;
            true
        }
        _ => false,
    };
    lw.b.set_span(outer);
    Ok(done)
}
