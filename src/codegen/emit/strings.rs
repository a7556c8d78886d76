//! Strings and buffers: bounded reads into stack buffers, comparison, truncation, `buf()`.
//!
//! A string value is a NUL-terminated byte array in a buffer of fixed size (`FieldType::Str`);
//! reads are bounded by the buffer size, so the verifier always sees a constant length.
//! Comparison is unrolled (one load pair and two branches per byte), bounded by the smaller
//! buffer or the `strncmp` length; it stops at the first difference or the first NUL.

use super::{Place, Value};
use crate::asm::isa::{Helper, JmpOp, Size};
use crate::codegen::builder::{Arg, Builder, VReg};

/// Reads a NUL-terminated string from `src` (user or kernel memory) into `size` bytes at
/// `dst`; returns the helper's result (length including the NUL, or a negative errno).
pub fn read_str(b: &mut Builder, user: bool, dst: Place, size: u32, src: Value) -> VReg {
    let helper = if user {
        Helper::ProbeReadUserStr
    } else {
        Helper::ProbeReadKernelStr
    };
    let s = match src {
        Value::Imm(v) => Arg::Imm(v),
        Value::Reg(r) => Arg::Reg(r),
    };
    let d = dst.arg(b);
    b.call(helper, &[d, Arg::Imm(size as i64), s])
}

/// `strncmp(a, b, n)`: 0 when the strings agree on their first `n` bytes (or up to a common
/// NUL), else 1.
pub fn strncmp(b: &mut Builder, a: Place, c: Place, n: u32) -> Value {
    if n == 0 {
        return Value::Imm(0);
    }
    let out = b.constant(1);
    let done = b.label();
    let equal = b.label();
    for i in 0..n as i32 {
        let x = b.vreg();
        let y = b.vreg();
        b.load(Size::B, x, a.mem(), a.off + i);
        b.load(Size::B, y, c.mem(), c.off + i);
        b.jmp64(JmpOp::Jne, x, y, done);
        b.jmp64(JmpOp::Jeq, x, 0, equal);
    }
    b.bind(equal);
    b.mov(out, 0);
    b.bind(done);
    Value::Reg(out)
}

/// `strcontains(h, n)`: 1 when the string at `n` (buffer of `nsize` bytes) occurs in the string
/// at `h` (buffer of `hsize` bytes), else 0; an empty needle is in every string. Unrolled over
/// both buffers (sizes are known at compile time), so every kernel's verifier accepts it
/// without loop support; a needle filling its buffer without a NUL counts all of its bytes.
pub fn contains(b: &mut Builder, h: Place, hsize: u32, n: Place, nsize: u32) -> Value {
    let out = b.constant(0);
    let found = b.label();
    let done = b.label();
    for i in 0..hsize as i32 {
        let next = b.label();
        for j in 0..nsize as i32 {
            let y = b.vreg();
            b.load(Size::B, y, n.mem(), n.off + j);
            b.jmp64(JmpOp::Jeq, y, 0, found);
            if i + j >= hsize as i32 {
                // The needle runs past the haystack's buffer here and at every later start.
                b.ja(done);
                break;
            }
            let x = b.vreg();
            b.load(Size::B, x, h.mem(), h.off + i + j);
            b.jmp64(JmpOp::Jne, x, y, next);
        }
        if i + nsize as i32 <= hsize as i32 {
            b.ja(found);
        }
        b.bind(next);
        // The haystack ended at i: no later start can match a non-empty needle.
        let x = b.vreg();
        b.load(Size::B, x, h.mem(), h.off + i);
        b.jmp64(JmpOp::Jeq, x, 0, done);
    }
    b.ja(done);
    b.bind(found);
    b.mov(out, 1);
    b.bind(done);
    Value::Reg(out)
}

/// `a == b` for strings in buffers of `size_a` and `size_b` bytes: 1 or 0.
pub fn str_eq(b: &mut Builder, a: Place, size_a: u32, c: Place, size_b: u32) -> Value {
    let r = strncmp(b, a, c, size_a.min(size_b));
    super::arith::logical_not(b, r)
}

/// Truncates the string at `place` (buffer of `size` bytes) to at most `len` bytes.
pub fn truncate(b: &mut Builder, place: Place, size: u32, len: u32) {
    if len < size {
        b.store(Size::B, place.mem(), place.off + len as i32, 0);
    }
}

/// `buf(src, len)`: `u32 length` at `dst`, then up to `capacity` bytes read from `src`.
/// The length is clamped to the capacity (the verifier needs the bound).
pub fn read_buf(b: &mut Builder, user: bool, dst: Place, capacity: u32, src: Value, len: Value) {
    let helper = if user {
        Helper::ProbeReadUser
    } else {
        Helper::ProbeReadKernel
    };
    let n = match len {
        Value::Imm(v) => Value::Imm(v.clamp(0, capacity as i64)),
        Value::Reg(r) => {
            let n = b.copy(r);
            let ok = b.label();
            b.jmp64(JmpOp::Jle, n, capacity as i32, ok);
            b.mov(n, capacity as i32);
            b.bind(ok);
            Value::Reg(n)
        }
    };
    super::mem::store_int(b, dst, n, 4);
    let s = match src {
        Value::Imm(v) => Arg::Imm(v),
        Value::Reg(r) => Arg::Reg(r),
    };
    let n = match n {
        Value::Imm(v) => Arg::Imm(v),
        Value::Reg(r) => Arg::Reg(r),
    };
    let d = dst.at(4).arg(b);
    b.call_void(helper, &[d, n, s]);
}
