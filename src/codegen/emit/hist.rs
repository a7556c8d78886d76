//! Histogram bucket indices computed in BPF exactly as `runtime::format::hist::log2_bucket`
//! and `linear_bucket` compute them in userspace (the printer labels buckets with those
//! functions, so both sides must agree on every input; the kernel tests check bucket edges).
//!
//! log2 (k = 0..=5): bucket 0 for v < 0; v + 1 for v < 2^k; else with l = msb(v) - k and
//! x = (v >> l) & (2^k - 1): ((l + 1) << k) + x + 1. The msb is found by binary search
//! (six compare-and-shift steps, no loop). Linear: 0 below min; else
//! 1 + (min(v, max) - min) / step, computed unsigned on the non-negative difference.

use super::Value;
use crate::asm::isa::{AluOp, JmpOp};
use crate::codegen::builder::Builder;
use crate::plan::agg::{linear_bucket, log2_bucket, MAX_LOG2_K};

/// The log2 bucket of signed value `v` with `k` sub-buckets bits (clamped to 0..=5).
pub fn log2(b: &mut Builder, v: Value, k: u8) -> Value {
    let k = k.min(MAX_LOG2_K);
    if let Value::Imm(x) = v {
        return Value::Imm(log2_bucket(x, k) as i64);
    }
    let v = v.reg(b);
    let out = b.constant(0);
    let done = b.label();
    b.jmp64(JmpOp::Jslt, v, 0, done);
    let mask = (1i32 << k) - 1;
    b.mov(out, v);
    b.alu(true, AluOp::Add, out, 1);
    b.jmp64(JmpOp::Jle, v, mask, done);
    // msb(v) by binary search: n is shifted down while `out` accumulates the msb (plus 2
    // when k = 0, where the bucket is simply msb + 2).
    let n = b.copy(v);
    b.mov(out, if k == 0 { 2 } else { 0 });
    let hi = b.copy(n);
    b.alu(true, AluOp::Rsh, hi, 32);
    let low32 = b.label();
    b.jmp64(JmpOp::Jeq, hi, 0, low32);
    b.mov(n, hi);
    b.alu(true, AluOp::Add, out, 32);
    b.bind(low32);
    for step in [16, 8, 4, 2, 1] {
        let skip = b.label();
        b.jmp64(JmpOp::Jle, n, ((1u32 << step) - 1) as i32, skip);
        b.alu(true, AluOp::Rsh, n, step);
        b.alu(true, AluOp::Add, out, step);
        b.bind(skip);
    }
    if k > 0 {
        // l = msb - k; bucket = ((l + 1) << k) + ((v >> l) & mask) + 1
        let l = b.copy(out);
        b.alu(true, AluOp::Sub, l, k as i32);
        let x = b.copy(v);
        b.alu(true, AluOp::Rsh, x, l);
        b.alu(true, AluOp::And, x, mask);
        if k > 1 {
            b.alu(true, AluOp::Sub, out, k as i32 - 1);
        }
        b.alu(true, AluOp::Lsh, out, k as i32);
        b.alu(true, AluOp::Add, out, x);
        b.alu(true, AluOp::Add, out, 1);
    }
    b.bind(done);
    Value::Reg(out)
}

/// The linear bucket of signed value `v` for `lhist(v, min, max, step)` (step > 0; a
/// non-positive step gives bucket 0 like `linear_bucket`).
pub fn linear(b: &mut Builder, v: Value, min: i64, max: i64, step: i64) -> Value {
    if step <= 0 {
        return Value::Imm(0);
    }
    if let Value::Imm(x) = v {
        return Value::Imm(linear_bucket(x, min, max, step) as i64);
    }
    let v = v.reg(b);
    let out = b.constant(0);
    let done = b.label();
    let minv = Value::Imm(min).src(b);
    b.jmp64(JmpOp::Jslt, v, minv, done);
    let top = b.copy(v);
    let maxv = Value::Imm(max).src(b);
    let in_range = b.label();
    b.jmp64(JmpOp::Jsle, v, maxv, in_range);
    b.mov_const(top, max);
    b.bind(in_range);
    let minv = Value::Imm(min).src(b);
    b.alu(true, AluOp::Sub, top, minv);
    let stepv = Value::Imm(step).src(b);
    b.alu(true, AluOp::Div, top, stepv);
    b.mov(out, top);
    b.alu(true, AluOp::Add, out, 1);
    b.bind(done);
    Value::Reg(out)
}
