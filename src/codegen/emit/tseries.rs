//! `tseries()` updates: the interval of the current time picks a bucket (its own map key), and
//! the value is combined into this CPU's slot of that bucket, as
//! [`TSeriesKind`](crate::plan::agg::TSeriesKind) lays them out (`[value, meta, epoch]`).
//!
//! Shape: `epoch = now / interval`, `bucket = epoch % n` into the key's last field; look the
//! key up. Present: unless the aggregation is "last value", a slot still holding an older
//! epoch is reset first; then the value is combined and the epoch written. Absent: the first
//! slot is built on the stack and inserted, a failed insert counting as a drop. The slot is
//! this CPU's copy, so plain loads and stores do not race another CPU.

use super::arith::{binop, BinOp};
use super::maps::{lookup, update, Counter, Key, BPF_ANY};
use super::mem::store_int;
use super::{IntTy, Place, Value};
use crate::asm::isa::{JmpOp, Size};
use crate::codegen::builder::{Builder, Src};
use crate::plan::agg::{TSeriesAgg, TSeriesKind};

/// Byte offsets of a slot's words.
const VALUE: i32 = 0;
const META: i32 = 8;
const EPOCH: i32 = 16;

/// Records `v` (normalized to 64 bits) at time `now` (nanoseconds) under `key` of per-CPU map
/// `map`; `key` was built with the bucket as its last field, which is written here.
pub fn update_tseries(
    b: &mut Builder,
    map: usize,
    key: &Key,
    kind: TSeriesKind,
    v: Value,
    now: Value,
    drops: Option<Counter>,
) {
    let now = Value::Reg(now.reg(b));
    let epoch = binop(
        b,
        BinOp::Div,
        now,
        Value::Imm(kind.interval_ns as i64),
        IntTy::U64,
    );
    let epoch = Value::Reg(epoch.reg(b));
    let bucket = binop(
        b,
        BinOp::Mod,
        epoch,
        Value::Imm(i64::from(kind.num_intervals)),
        IntTy::U64,
    );
    key.set_int(b, key.fields.len() - 1, bucket);
    let v = Value::Reg(v.reg(b));
    let p = lookup(b, map, key.place);
    let absent = b.label();
    let done = b.label();
    b.jmp64(JmpOp::Jeq, p, 0, absent);
    let epoch_r = epoch.reg(b);
    if kind.agg != TSeriesAgg::Last {
        let old = b.vreg();
        b.load(Size::Dw, old, p, EPOCH);
        let same = b.label();
        b.jmp64(JmpOp::Jeq, old, epoch_r, same);
        b.store(Size::Dw, p, VALUE, 0);
        b.store(Size::Dw, p, META, 0);
        b.bind(same);
    }
    let vr = v.reg(b);
    match kind.agg {
        TSeriesAgg::Last => {
            b.store(Size::Dw, p, VALUE, vr);
            let nr = now.reg(b);
            b.store(Size::Dw, p, META, nr);
        }
        TSeriesAgg::Sum | TSeriesAgg::Avg => {
            let cur = b.vreg();
            b.load(Size::Dw, cur, p, VALUE);
            b.alu(true, crate::asm::isa::AluOp::Add, cur, vr);
            b.store(Size::Dw, p, VALUE, cur);
            if kind.agg == TSeriesAgg::Avg {
                let n = b.vreg();
                b.load(Size::Dw, n, p, META);
                b.alu(true, crate::asm::isa::AluOp::Add, n, 1);
                b.store(Size::Dw, p, META, n);
            }
        }
        TSeriesAgg::Min | TSeriesAgg::Max => {
            let set = b.vreg();
            b.load(Size::Dw, set, p, META);
            let write = b.label();
            let stamp = b.label();
            b.jmp64(JmpOp::Jeq, set, 0, write);
            let cur = b.vreg();
            b.load(Size::Dw, cur, p, VALUE);
            // Keep the current value unless v beats it strictly.
            let keep = match (kind.agg == TSeriesAgg::Max, kind.signed) {
                (false, true) => JmpOp::Jsge,
                (false, false) => JmpOp::Jge,
                (true, true) => JmpOp::Jsle,
                (true, false) => JmpOp::Jle,
            };
            b.jmp64(keep, vr, Src::Reg(cur), stamp);
            b.bind(write);
            b.store(Size::Dw, p, VALUE, vr);
            b.store(Size::Dw, p, META, 1);
            b.bind(stamp);
        }
    }
    b.store(Size::Dw, p, EPOCH, epoch_r);
    b.ja(done);
    b.bind(absent);
    let slot = b.slot(24, 8);
    let init = Place::new(slot, 0);
    store_int(b, init, v, 8);
    let meta = match kind.agg {
        TSeriesAgg::Last => now,
        TSeriesAgg::Sum => Value::Imm(0),
        TSeriesAgg::Avg | TSeriesAgg::Min | TSeriesAgg::Max => Value::Imm(1),
    };
    store_int(b, init.at(META), meta, 8);
    store_int(b, init.at(EPOCH), epoch, 8);
    update(b, map, key.place, init, BPF_ANY, drops);
    b.bind(done);
}
