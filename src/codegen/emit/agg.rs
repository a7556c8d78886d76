//! Per-CPU aggregation updates (`count`, `sum`, `min`, `max`, `avg`, `stats`, `hist`, `lhist`)
//! writing exactly the per-CPU slot layouts `runtime::format::agg` merges:
//! count/sum `[n]`, min/max `[value, is_set]`, avg/stats `[total, count]`, and for histograms
//! one key per bucket (the user key plus a `u64` bucket index, see `maps::hist_key_fields`)
//! holding `[n]`.
//!
//! Shape: look the key up; when present, update the value in place (this CPU's copy, so no
//! other CPU races it; adds are atomic anyway, which costs nothing extra in instructions);
//! when absent, build the initial value on the stack and insert it, counting a failed insert
//! as a drop.

use super::hist;
use super::maps::{counter_inc, lookup, update, Counter, Key, BPF_ANY, BPF_EXIST, BPF_NOEXIST};
use super::mem::store_int;
use super::{Place, Value};
use crate::asm::isa::{JmpOp, Size};
use crate::codegen::builder::Builder;
use crate::plan::agg::AggKind;
use crate::plan::agg::HistKind;

/// `count()` or `hist()`/`lhist()` of `v` into per-CPU array `map`, a keyless aggregation's
/// slots (`codegen::lower::maps::slot_maps`): slot 0 of a count, or the bucket's slot of a
/// histogram (the bucket index, below 2^32, is the key's only field, whose low 4 bytes are the
/// array index). Every slot exists, so there is no insert path; the null check is for the
/// verifier (and a bucket past the array, which userspace would not show either).
pub fn update_slot(b: &mut Builder, map: usize, key: &Key, kind: AggKind, v: Value) {
    if let AggKind::Hist(h) = kind {
        let bucket = match h {
            HistKind::Log2 { k } => hist::log2(b, v, k),
            HistKind::Linear { min, max, step } => hist::linear(b, v, min, max, step),
        };
        key.set_int(b, key.fields.len() - 1, bucket);
    }
    let p = lookup(b, map, key.place);
    let done = b.label();
    b.jmp64(JmpOp::Jeq, p, 0, done);
    let one = b.constant(1);
    b.atomic_add(Size::Dw, p, 0, one);
    b.bind(done);
}

/// Applies one aggregation update of `v` (normalized; ignored by `count`) under `key` of
/// per-CPU map `map`. For histograms `key` must have been built from `hist_key_fields`: its
/// last field receives the bucket index here.
pub fn update_agg(
    b: &mut Builder,
    map: usize,
    key: &Key,
    kind: AggKind,
    v: Value,
    drops: Option<Counter>,
) {
    update_agg_with(b, map, key, kind, v, drops, None)
}

/// A bound on the elements of several maps together (`codegen::lower::key_class`): slot
/// `slot` (a `u64`) of plain array `counter` counts them; an insert beyond `max` is a drop.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct InsertLimit {
    pub counter: usize,
    pub slot: u32,
    pub max: u32,
}

/// [`update_agg`], with inserts counted against `limit` when given.
pub fn update_agg_with(
    b: &mut Builder,
    map: usize,
    key: &Key,
    kind: AggKind,
    v: Value,
    drops: Option<Counter>,
    limit: Option<InsertLimit>,
) {
    if let AggKind::Hist(h) = kind {
        let bucket = match h {
            HistKind::Log2 { k } => hist::log2(b, v, k),
            HistKind::Linear { min, max, step } => hist::linear(b, v, min, max, step),
        };
        key.set_int(b, key.fields.len() - 1, bucket);
        return update_agg_with(b, map, key, AggKind::Count, Value::Imm(0), drops, limit);
    }
    let p = lookup(b, map, key.place);
    let absent = b.label();
    let done = b.label();
    b.jmp64(JmpOp::Jeq, p, 0, absent);
    match kind {
        AggKind::Count => {
            let one = b.constant(1);
            b.atomic_add(Size::Dw, p, 0, one);
        }
        AggKind::Sum { .. } => {
            let r = v.reg(b);
            b.atomic_add(Size::Dw, p, 0, r);
        }
        AggKind::Avg { .. } | AggKind::Stats { .. } => {
            let r = v.reg(b);
            b.atomic_add(Size::Dw, p, 0, r);
            let one = b.constant(1);
            b.atomic_add(Size::Dw, p, 8, one);
        }
        AggKind::Min { signed } | AggKind::Max { signed } => {
            let is_max = matches!(kind, AggKind::Max { .. });
            let set = b.vreg();
            b.load(Size::Dw, set, p, 8);
            let write = b.label();
            b.jmp64(JmpOp::Jeq, set, 0, write);
            let cur = b.vreg();
            b.load(Size::Dw, cur, p, 0);
            // Keep the current value unless v beats it strictly.
            let keep = match (is_max, signed) {
                (false, true) => JmpOp::Jsge,
                (false, false) => JmpOp::Jge,
                (true, true) => JmpOp::Jsle,
                (true, false) => JmpOp::Jle,
            };
            let s = v.src(b);
            match s {
                crate::codegen::builder::Src::Reg(r) => b.jmp64(keep, r, cur, done),
                crate::codegen::builder::Src::Imm(_) => {
                    let r = v.reg(b);
                    b.jmp64(keep, r, cur, done)
                }
            }
            b.bind(write);
            let r = v.reg(b);
            b.store(Size::Dw, p, 0, r);
            b.store(Size::Dw, p, 8, 1);
        }
        AggKind::Hist(_) => unreachable!("histograms are handled above"),
        AggKind::TSeries(_) => {
            unreachable!("internal error: emit::agg::update_agg: time series go to emit::tseries")
        }
    }
    b.ja(done);
    b.bind(absent);
    let words = match kind {
        AggKind::Count | AggKind::Sum { .. } => 1,
        _ => 2,
    };
    let slot = b.slot(8 * words, 8);
    let init = Place::new(slot, 0);
    match kind {
        AggKind::Count => store_int(b, init, Value::Imm(1), 8),
        _ => store_int(b, init, v, 8),
    }
    if words == 2 {
        store_int(b, init.at(8), Value::Imm(1), 8);
    }
    match limit {
        None => {
            update(b, map, key.place, init, BPF_ANY, drops);
        }
        Some(l) => insert_counted(b, map, key.place, init, l, drops),
    }
    b.bind(done);
}

/// Inserts `init` under `key` (absent a moment ago) when the maps sharing `l` hold fewer than
/// `l.max` elements: count first, insert only if new (`BPF_NOEXIST`), and take the count back
/// when that fails; then, when another CPU inserted the key meanwhile, write this CPU's slot of
/// its element (`BPF_EXIST`). What still fails is a drop, as a full map's refusal is.
fn insert_counted(
    b: &mut Builder,
    map: usize,
    key: Place,
    init: Place,
    l: InsertLimit,
    drops: Option<Counter>,
) {
    let drop = b.label();
    let ok = b.label();
    let p = b.vreg();
    b.ld_map_value(p, l.counter, 8 * l.slot);
    let cur = b.vreg();
    b.load(Size::Dw, cur, p, 0);
    let max = b.constant(i64::from(l.max));
    b.jmp64(JmpOp::Jge, cur, max, drop);
    let one = b.constant(1);
    b.atomic_add(Size::Dw, p, 0, one);
    let r = update(b, map, key, init, BPF_NOEXIST, None);
    b.jmp64(JmpOp::Jeq, r, 0, ok);
    let minus_one = b.constant(-1);
    b.atomic_add(Size::Dw, p, 0, minus_one);
    let r = update(b, map, key, init, BPF_EXIST, None);
    b.jmp64(JmpOp::Jeq, r, 0, ok);
    b.bind(drop);
    if let Some(c) = drops {
        counter_inc(b, c);
    }
    b.bind(ok);
}
