//! Map functions that read a whole map or test a key: `len(@m)` and `has_key(@m, key)`.
//!
//! `len(@m)` is the number of elements (keys; a per-CPU aggregation map's key counts once),
//! the count `bpf_for_each_map_elem` (kernel 5.13+) returns after walking the map with a
//! callback that does nothing. `has_key(@m, k)` is a lookup: 1 when `k` is present. A key of
//! several parts is given as a tuple (`has_key(@m, (1, "a"))`), as in bpftrace.

use super::store::{load_val, spill, store_val};
use super::{int_ty, Lower, LowerError, Val};
use crate::asm::isa::{AluOp, Helper, JmpOp, Size};
use crate::builtins::FuncId;
use crate::codegen::emit::maps::Key;
use crate::codegen::emit::{IntTy, Value};
use crate::codegen::{Arg, Builder, VReg};
use crate::plan::agg::AggKind;
use crate::plan::layout::{tuple_offsets, FieldType};
use crate::sema::{MapInfo, Type};
use crate::syntax::ast::{Expr, ExprKind};

/// `len`/`has_key` of a map; `None` for other calls (and `len` of a non-map).
pub(crate) fn lower_call(
    lw: &mut Lower<'_>,
    e: &Expr,
    f: FuncId,
    args: &[Expr],
) -> Option<Result<Val, LowerError>> {
    if f == FuncId::Len {
        let t = lw.type_of(args.first()?.id);
        if matches!(t, Type::KStack { .. } | Type::UStack { .. }) {
            return Some(super::builtins::stack_len(lw, e, &t));
        }
    }
    let ExprKind::Map { name: m, keys } = &args.first()?.kind else {
        return None;
    };
    if !keys.is_empty() {
        return None;
    }
    let map_name = super::inline::map_alias(lw, &m.name);
    let info = lw.cp.map(&map_name)?.1.clone();
    Some(match f {
        FuncId::Len => Ok(len(lw, e, &map_name)),
        _ => match args.get(1) {
            Some(k) => has_key(lw, &map_name, &info, k),
            None => Err(LowerError::unsupported("has_key without a key", e.span)),
        },
    })
}

fn len(lw: &mut Lower<'_>, e: &Expr, map_name: &str) -> Val {
    let (mut cb, _) = Builder::subprog(0);
    cb.set_span(lw.b.span());
    cb.exit(0);
    lw.subprogs.push(cb);
    let func = lw.subprogs.len() - 1;
    let dummy = lw.b.slot(8, 8);
    lw.b.store(crate::asm::isa::Size::Dw, dummy, 0, 0);
    let map = lw.b.map(map_name);
    let n = lw.b.call(
        Helper::ForEachMapElem,
        &[
            Arg::Map(map),
            Arg::Func(func),
            Arg::Slot(dummy, 0),
            Arg::Imm(0),
        ],
    );
    let it = int_ty(&lw.type_of(e.id)).unwrap_or(IntTy::I64);
    Val::Int(Value::Reg(n), it)
}

fn has_key(
    lw: &mut Lower<'_>,
    map_name: &str,
    info: &MapInfo,
    k: &Expr,
) -> Result<Val, LowerError> {
    let key = super::calls::build_key(lw, info, &[k])?.place;
    let map = lw.b.map(map_name);
    if let Some(n) = bucket_count(info, "has_key()", k.span)? {
        // Each bucket is its own element: the key is present when any bucket is.
        let found = walk_buckets(lw, info, key, n, true, |b| {
            let p = crate::codegen::emit::maps::lookup(b, map, key);
            (p, JmpOp::Jeq)
        });
        return Ok(Val::Int(found, IntTy::U8));
    }
    Ok(Val::Int(
        crate::codegen::emit::maps::exists(&mut lw.b, map, key),
        IntTy::U8,
    ))
}

/// The most buckets `has_key`/`delete` walk for one user key (a loop in BPF, each step a map
/// operation): every histogram fits; a longer time series is refused.
const MAX_BUCKET_WALK: usize = 4096;

/// For maps whose every bucket is its own element (histograms, time series): how many buckets
/// one user key can have; `None` for other maps.
pub(crate) fn bucket_count(
    info: &MapInfo,
    what: &str,
    span: crate::diag::Span,
) -> Result<Option<usize>, LowerError> {
    let n = match info.agg {
        Some(AggKind::Hist(h)) => h.bucket_count(),
        Some(AggKind::TSeries(t)) => t.num_intervals as usize,
        _ => return Ok(None),
    };
    if n > MAX_BUCKET_WALK {
        return Err(LowerError::unsupported(
            format!(
                "{what} on a map of {n} buckets per key (at most {MAX_BUCKET_WALK} are walked in BPF)"
            ),
            span,
        ));
    }
    Ok(Some(n))
}

/// Where the bucket index sits in such a map's key.
fn bucket_offset(info: &MapInfo) -> i32 {
    let fields = super::maps::stored_key_fields(info);
    tuple_offsets(&fields).last().copied().unwrap_or(0) as i32
}

/// `delete(@m, k)` on a map of buckets: deletes every bucket of `key`; 1 when any was there.
pub(crate) fn delete_buckets(
    lw: &mut Lower<'_>,
    info: &MapInfo,
    map: usize,
    key: crate::codegen::emit::Place,
    n: usize,
) -> Value {
    walk_buckets(lw, info, key, n, false, |b| {
        let k = key.arg(b);
        let r = b.call(Helper::MapDeleteElem, &[Arg::Map(map), k]);
        (r, JmpOp::Jne)
    })
}

/// A BPF loop over the `n` buckets of user key `key`: writes each bucket index into the key,
/// runs `step` (which returns its result and the jump that means "not there"), and yields 1
/// when any bucket was there. `stop_at_first` ends the walk at the first bucket found
/// (`has_key`); otherwise every bucket is visited (`delete`).
fn walk_buckets(
    lw: &mut Lower<'_>,
    info: &MapInfo,
    key: crate::codegen::emit::Place,
    n: usize,
    stop_at_first: bool,
    step: impl FnOnce(&mut Builder) -> (VReg, JmpOp),
) -> Value {
    let at = bucket_offset(info);
    let b = &mut lw.b;
    let found = b.constant(0);
    let bucket = b.constant(0);
    let head = b.label();
    let done = b.label();
    b.bind(head);
    b.jmp64(JmpOp::Jge, bucket, n as i32, done);
    b.store(Size::Dw, key.mem(), key.off + at, bucket);
    let (r, missing) = step(b);
    b.alu(true, AluOp::Add, bucket, 1);
    b.jmp64(missing, r, 0, head);
    b.mov(found, 1);
    if !stop_at_first {
        b.ja(head);
    }
    b.bind(done);
    Value::Reg(found)
}

/// Writes the first `parts` fields of `key` from `k`, an expression of a tuple type (a key
/// of several parts given as one value): each element is converted to its key field's
/// layout (integers widened to 8 bytes, strings to the key's size), as the flat form
/// `@m[a, b]` writes them.
pub(crate) fn store_tuple_key(
    lw: &mut Lower<'_>,
    key: &Key,
    parts: usize,
    k: &Expr,
) -> Result<(), LowerError> {
    let kt = lw.type_of(k.id);
    let (Type::Tuple(ts), Some(FieldType::Tuple(fs))) = (&kt, kt.field_type()) else {
        return Err(LowerError::unsupported(
            format!("a map key of type {kt} for a key of {parts} parts"),
            k.span,
        ));
    };
    let src_offs = tuple_offsets(&fs);
    let v = super::expr::lower_expr(lw, k)?;
    let p = spill(lw, v, &kt);
    for (i, t) in ts.iter().enumerate().take(parts.min(key.fields.len())) {
        let ev = load_val(lw, p.at(src_offs[i] as i32), t);
        let f = key.fields[i].clone();
        store_val(lw, key.field(i), &f, ev, t);
    }
    Ok(())
}
