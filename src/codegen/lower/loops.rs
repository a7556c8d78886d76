//! `for` loops, as bpftrace has them (0.21+):
//! - `for ($kv : @map) { … }`: `bpf_for_each_map_elem` (kernel 5.13+) calls the body as a
//!   callback ([`super::callback`]) once per element; `$kv.0` is the key (a tuple for several
//!   keys), `$kv.1` the value. For aggregation maps (per-CPU) the value is merged over every
//!   CPU as when printed (count and sum added, min and max the best), read with
//!   `bpf_map_lookup_percpu_elem` (kernel 5.19+), as bpftrace does for count and sum;
//!   bpftrace refuses `avg`/`stats`/`hist`/`lhist` maps, and so does strobe.
//! - `for ($i : start..end) { … }`: `$i` runs from `start` up to `end` exclusive (nothing when
//!   `end <= start`); both bounds are evaluated once, before the loop. `bpf_loop` (kernel
//!   5.17+) calls the body with the iteration index; more than 2^23 iterations run none
//!   (the kernel's limit, `-E2BIG`).
//!
//! Kernels without these helpers refuse the program at load time; the loader reports the
//! helper and the kernel version it needs at the loop's line.

use super::callback::{self, Entry};
use super::store::{load_val, store_val};
use super::{Lower, LowerError, Val};
use crate::asm::isa::{AluOp, Helper, JmpOp, Size};
use crate::codegen::emit::{IntTy, Place, Value};
use crate::codegen::{Arg, Builder, VReg};
use crate::diag::Span;
use crate::plan::agg::AggKind;
use crate::plan::layout::{tuple_offsets, FieldType};
use crate::sema::Type;
use crate::syntax::ast::{Block, Expr, ForIter, Ident};

/// CPUs a per-CPU value is merged over at most (`bpf_map_lookup_percpu_elem` returns NULL
/// past the last possible CPU, which ends the walk earlier; `NR_CPUS` is at most 8192).
const MAX_CPUS: i64 = 8192;

/// `bpf_loop`'s limit on iterations (`BPF_MAX_LOOPS`, kernel/bpf/bpf_iter.c).
const MAX_LOOPS: i32 = 1 << 23;

pub(crate) fn lower_for(
    lw: &mut Lower<'_>,
    var: &Ident,
    iter: &ForIter,
    body: &Block,
    span: Span,
) -> Result<(), LowerError> {
    match iter {
        ForIter::Map(m) => for_map(lw, var, &m.name, m.span, body, span),
        ForIter::Range { start, end } => for_range(lw, var, start, end, body, span),
    }
}

fn for_map(
    lw: &mut Lower<'_>,
    var: &Ident,
    map_name: &str,
    map_span: Span,
    body: &Block,
    span: Span,
) -> Result<(), LowerError> {
    let name = super::inline::map_alias(lw, map_name);
    let Some((_, info)) = lw.cp.map(&name) else {
        return Err(LowerError::unsupported(
            format!("the map {map_name} (not checked)"),
            map_span,
        ));
    };
    let info = info.clone();
    let per_cpu = match info.agg {
        None => false,
        Some(
            AggKind::Count
            | AggKind::Sum { .. }
            | AggKind::Min { .. }
            | AggKind::Max { .. }
            | AggKind::Avg { .. },
        ) => true,
        Some(a) => {
            return Err(LowerError::Kernel {
                what: format!(
                    "cannot iterate over the {} map {map_name}: only maps of plain values, \
                     count(), sum(), min(), max() and avg() can be looped over",
                    agg_name(a)
                ),
                span: map_span,
            })
        }
    };
    lw.scopes.push();
    let slot = lw.scopes.declare(&var.name);
    // The checker's `hoist_floor`: the body's variables stay in the loop.
    let floor = std::mem::replace(&mut lw.scopes.floor, lw.scopes.stack.len() - 1);
    let kv_t = lw.var_type(slot);
    let stored = super::maps::stored_key_fields(&info);
    let stored_offs = tuple_offsets(&stored);
    let cb = callback::build(
        lw,
        4,
        3,
        0,
        Some(slot),
        body,
        |_, _, _| Ok(()),
        |lw, entry: &Entry| {
            let Some(kv) = super::stmt::var_place(lw, slot) else {
                return Ok(());
            };
            let (key_t, val_t) = match &kv_t {
                Type::Tuple(ts) if ts.len() == 2 => (ts[0].clone(), ts[1].clone()),
                _ => return Ok(()),
            };
            let kv_f = super::maps::slot_field(&kv_t);
            let kv_offs = match &kv_f {
                FieldType::Tuple(fs) => tuple_offsets(fs),
                _ => vec![0, 0],
            };
            let keyp = entry.params[1];
            let key_at = kv.at(kv_offs[0] as i32);
            // Key: one field, or a tuple of several; stored integers are widened to 8 bytes
            // (little-endian: a narrower load of the same address reads the same value).
            let key_parts: Vec<Type> = match (&key_t, info.keys.len()) {
                (Type::Tuple(ts), n) if n > 1 => ts.clone(),
                (t, 1) => vec![t.clone()],
                _ => Vec::new(),
            };
            let part_offs = match key_t.field_type() {
                Some(FieldType::Tuple(fs)) if key_parts.len() > 1 => tuple_offsets(&fs),
                _ => vec![0],
            };
            for (i, kt) in key_parts.iter().enumerate() {
                let src = Place::ptr(keyp, stored_offs.get(i).copied().unwrap_or(0) as i32);
                let v = load_val(lw, src, kt);
                let f = kt.field_type().unwrap_or(FieldType::Int {
                    bytes: 8,
                    signed: true,
                });
                store_val(lw, key_at.at(part_offs[i] as i32), &f, v, kt);
            }
            let val_at = kv.at(kv_offs[1] as i32);
            let vf = val_t.field_type().unwrap_or(FieldType::Int {
                bytes: 8,
                signed: true,
            });
            let v = if per_cpu {
                let agg = info.agg.unwrap_or(AggKind::Count);
                Val::Int(reduce_cpus(lw, &name, keyp, agg), IntTy::I64)
            } else {
                load_val(lw, Place::ptr(entry.params[2], 0), &val_t)
            };
            store_val(lw, val_at, &vf, v, &val_t);
            Ok(())
        },
    );
    lw.scopes.floor = floor;
    lw.scopes.pop();
    let cb = cb?;
    lw.b.set_span(span);
    let map = lw.b.map(&name);
    lw.b.call_void(
        Helper::ForEachMapElem,
        &[
            Arg::Map(map),
            Arg::Func(cb.func),
            Arg::Slot(cb.ctx, 0),
            Arg::Imm(0),
        ],
    );
    callback::after_call(lw, &cb);
    Ok(())
}

/// The value of aggregation `agg` under `key` (a pointer to it) merged over every CPU, as
/// userspace merges it: count and sum add the 8-byte slots; min and max take the best slot a
/// CPU has set (value, then a set flag), 0 when none has; avg adds the totals and the counts
/// of every CPU and divides (0 for no value, as `x / 0` is in BPF). A `bpf_loop` over CPU numbers does it (the verifier
/// checks its callback once, where an unrolled walk of every CPU would cost it a path per
/// CPU); `bpf_map_lookup_percpu_elem` returns NULL past the last CPU, which stops the walk.
pub(crate) fn reduce_cpus(lw: &mut Lower<'_>, map_name: &str, key: VReg, agg: AggKind) -> Value {
    // Context: the key pointer, the accumulator, whether a min/max slot was seen (for avg:
    // the count of values).
    const KEY: i32 = 0;
    const ACC: i32 = 8;
    const HAVE: i32 = 16;
    let (mut cb, params) = Builder::subprog(2);
    cb.set_span(lw.b.span());
    let (idx, ctx) = (params[0], params[1]);
    let k = cb.vreg();
    cb.load(Size::Dw, k, ctx, KEY);
    let map = cb.map(map_name);
    let p = cb.call(
        Helper::MapLookupPercpuElem,
        &[Arg::Map(map), Arg::Reg(k), Arg::Reg(idx)],
    );
    let more = cb.label();
    cb.jmp64(JmpOp::Jne, p, 0, more);
    cb.exit(1);
    cb.bind(more);
    let v = cb.vreg();
    cb.load(Size::Dw, v, p, 0);
    let acc = cb.vreg();
    let keep = match agg {
        AggKind::Min { signed } => Some(if signed { JmpOp::Jsge } else { JmpOp::Jge }),
        AggKind::Max { signed } => Some(if signed { JmpOp::Jsle } else { JmpOp::Jle }),
        _ => None,
    };
    match keep {
        None if matches!(agg, AggKind::Avg { .. }) => {
            cb.load(Size::Dw, acc, ctx, ACC);
            cb.alu(true, AluOp::Add, acc, v);
            cb.store(Size::Dw, ctx, ACC, acc);
            let n = cb.vreg();
            cb.load(Size::Dw, n, p, 8);
            let count = cb.vreg();
            cb.load(Size::Dw, count, ctx, HAVE);
            cb.alu(true, AluOp::Add, count, n);
            cb.store(Size::Dw, ctx, HAVE, count);
        }
        None => {
            cb.load(Size::Dw, acc, ctx, ACC);
            cb.alu(true, AluOp::Add, acc, v);
            cb.store(Size::Dw, ctx, ACC, acc);
        }
        Some(keep) => {
            let done = cb.label();
            let take = cb.label();
            let set = cb.vreg();
            cb.load(Size::Dw, set, p, 8);
            cb.jmp64(JmpOp::Jeq, set, 0, done);
            let have = cb.vreg();
            cb.load(Size::Dw, have, ctx, HAVE);
            cb.jmp64(JmpOp::Jeq, have, 0, take);
            cb.load(Size::Dw, acc, ctx, ACC);
            cb.jmp64(keep, v, acc, done);
            cb.bind(take);
            cb.store(Size::Dw, ctx, ACC, v);
            cb.store(Size::Dw, ctx, HAVE, 1);
            cb.bind(done);
        }
    }
    cb.exit(0);
    lw.subprogs.push(cb);
    let func = lw.subprogs.len() - 1;
    let b = &mut lw.b;
    let slot = b.slot(24, 8);
    b.store(Size::Dw, slot, KEY, key);
    b.store(Size::Dw, slot, ACC, 0);
    b.store(Size::Dw, slot, HAVE, 0);
    b.call_void(
        Helper::Loop,
        &[
            Arg::Imm(MAX_CPUS),
            Arg::Func(func),
            Arg::Slot(slot, 0),
            Arg::Imm(0),
        ],
    );
    let out = b.vreg();
    b.load(Size::Dw, out, slot, ACC);
    let out = match agg {
        AggKind::Avg { signed } => {
            let n = b.vreg();
            b.load(Size::Dw, n, slot, HAVE);
            crate::codegen::emit::arith::binop(
                b,
                crate::codegen::emit::arith::BinOp::Div,
                Value::Reg(out),
                Value::Reg(n),
                IntTy::new(64, signed),
            )
        }
        _ => Value::Reg(out),
    };
    b.keep_alive(slot);
    out
}

fn agg_name(a: AggKind) -> &'static str {
    match a {
        AggKind::Count => "count()",
        AggKind::Sum { .. } => "sum()",
        AggKind::Min { .. } => "min()",
        AggKind::Max { .. } => "max()",
        AggKind::Avg { .. } => "avg()",
        AggKind::Stats { .. } => "stats()",
        AggKind::Hist(_) => "histogram",
        AggKind::TSeries(_) => "tseries()",
    }
}

fn for_range(
    lw: &mut Lower<'_>,
    var: &Ident,
    start: &Expr,
    end: &Expr,
    body: &Block,
    span: Span,
) -> Result<(), LowerError> {
    let s_t = lw.type_of(start.id);
    let e_t = lw.type_of(end.id);
    let s = int64(lw, start, &s_t)?;
    let e = int64(lw, end, &e_t)?;
    // Iterations: end - start when positive, else 0.
    let n = crate::codegen::emit::arith::binop(
        &mut lw.b,
        crate::codegen::emit::arith::BinOp::Sub,
        e,
        s,
        IntTy::I64,
    );
    // No iteration: no call. Besides saving it, this keeps the verifier from seeing a
    // `bpf_loop` that it knows calls nothing next to a callback reference, which 6.x kernels
    // refuse ("No program to jit").
    let n = n.fresh(&mut lw.b);
    let skip = lw.b.label();
    lw.b.jmp64(JmpOp::Jsle, n, 0, skip);
    // Past the kernel's limit: a count it refuses (E2BIG, nothing runs) instead of a
    // truncated one.
    let fits = lw.b.label();
    lw.b.jmp64(JmpOp::Jle, n, MAX_LOOPS, fits);
    lw.b.mov(n, MAX_LOOPS + 1);
    lw.b.bind(fits);
    lw.scopes.push();
    let slot = lw.scopes.declare(&var.name);
    // The checker's `hoist_floor`: the body's variables stay in the loop.
    let floor = std::mem::replace(&mut lw.scopes.floor, lw.scopes.stack.len() - 1);
    let cb = callback::build(
        lw,
        2,
        1,
        1,
        Some(slot),
        body,
        |lw, cslot, off| {
            let src = s.src(&mut lw.b);
            match src {
                crate::codegen::Src::Reg(r) => lw.b.store(Size::Dw, cslot, off, r),
                crate::codegen::Src::Imm(i) => lw.b.store(Size::Dw, cslot, off, i),
            }
            Ok(())
        },
        |lw, entry: &Entry| {
            let i = lw.b.vreg();
            lw.b.load(Size::Dw, i, entry.ctx, entry.extra);
            lw.b.alu(true, AluOp::Add, i, entry.params[0]);
            let t = lw.var_type(slot);
            super::stmt::assign_var(lw, slot, Val::Int(Value::Reg(i), IntTy::I64), &t);
            Ok(())
        },
    );
    lw.scopes.floor = floor;
    lw.scopes.pop();
    let cb = cb?;
    lw.b.set_span(span);
    lw.b.call_void(
        Helper::Loop,
        &[
            Arg::Reg(n),
            Arg::Func(cb.func),
            Arg::Slot(cb.ctx, 0),
            Arg::Imm(0),
        ],
    );
    callback::after_call(lw, &cb);
    lw.b.bind(skip);
    Ok(())
}

/// `e` as a signed 64-bit value.
fn int64(lw: &mut Lower<'_>, e: &Expr, t: &Type) -> Result<Value, LowerError> {
    let v = super::expr::lower_expr(lw, e)?.value();
    Ok(match super::int_ty(t) {
        Some(it) => crate::codegen::emit::arith::cast(&mut lw.b, v, it, IntTy::I64),
        None => v,
    })
}
