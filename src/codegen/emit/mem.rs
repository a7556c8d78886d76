//! Stack memory: storing and loading integers at a [`Place`], and zeroing byte ranges with the
//! fewest stores (8-byte stores where alignment allows).
//!
//! Zeroing exists for bytes that are *not* otherwise written but must be defined: struct
//! padding in map keys (keys are hashed bytewise) and string buffers whose tail a string read
//! leaves undefined. Everything fully written by its producer is left alone.

use super::arith::normalize;
use super::{IntTy, Place, Value};
use crate::asm::isa::{Helper, Size};
use crate::codegen::builder::{Arg, Builder, VReg};

/// The access size for `bytes` (1, 2, 4 or 8).
pub fn size_of_bytes(bytes: u32) -> Size {
    match bytes {
        1 => Size::B,
        2 => Size::H,
        4 => Size::W,
        _ => Size::Dw,
    }
}

/// From this many bytes on, values in memory a pointer holds (the scratch buffer) are zeroed
/// and copied by one helper call instead of a store per 8 bytes: a 1024-byte string would
/// cost 128 stores (256 instructions to copy), and the verifier walks each of them.
pub const BULK_MIN: u32 = 512;

/// Writes zeros over `len` bytes at `place`, assuming its base is 8-byte aligned.
pub fn zero(b: &mut Builder, place: Place, len: u32) {
    if len >= BULK_MIN && matches!(place.base, super::Base::Ptr(_)) {
        // `bpf_probe_read_kernel` zeroes its destination when the read fails, and a read of
        // address 0 always fails (kernel/trace/bpf_trace.c, `bpf_probe_read_kernel_common`).
        let d = place.arg(b);
        b.call(
            Helper::ProbeReadKernel,
            &[d, Arg::Imm(len as i64), Arg::Imm(0)],
        );
        return;
    }
    let (mut off, end) = (place.off, place.off + len as i32);
    while off < end {
        let left = end - off;
        let n = [8, 4, 2, 1]
            .into_iter()
            .find(|&n| n <= left && off % n == 0)
            .unwrap_or(1);
        b.store(size_of_bytes(n as u32), place.mem(), off, 0);
        off += n;
    }
}

/// Copies `len` bytes from `src` to `dst` with one `bpf_probe_read_kernel` when both are in
/// memory a pointer holds and the copy is long (see [`BULK_MIN`]); returns whether it did.
/// Stack slots are left to loads and stores, which the verifier sees initializing them.
pub fn copy_bulk(b: &mut Builder, dst: Place, src: Place, len: u32) -> bool {
    let ptr = |p: Place| matches!(p.base, super::Base::Ptr(_));
    if len < BULK_MIN || !ptr(dst) || !ptr(src) {
        return false;
    }
    let d = dst.arg(b);
    let s = src.arg(b);
    b.call(Helper::ProbeReadKernel, &[d, Arg::Imm(len as i64), s]);
    true
}

/// Stores the low `bytes` bytes of `v` at `place`.
pub fn store_int(b: &mut Builder, place: Place, v: Value, bytes: u32) {
    let size = size_of_bytes(bytes);
    match v {
        Value::Imm(x) if i32::try_from(x).is_ok() || bytes <= 4 => {
            b.store(size, place.mem(), place.off, x as i32)
        }
        _ => {
            let r = v.reg(b);
            b.store(size, place.mem(), place.off, r);
        }
    }
}

/// Loads an integer of type `ty` from `place`, normalized.
pub fn load_int(b: &mut Builder, place: Place, ty: IntTy) -> Value {
    let r = b.vreg();
    b.load(size_of_bytes(ty.bytes()), r, place.mem(), place.off);
    if ty.signed {
        normalize(b, r, ty);
    }
    Value::Reg(r)
}

/// Loads an integer of type `ty` at `ptr + off` (a pointer the verifier knows, e.g. a map
/// value), normalized.
pub fn load_int_at(b: &mut Builder, ptr: VReg, off: i32, ty: IntTy) -> VReg {
    let r = b.vreg();
    b.load(size_of_bytes(ty.bytes()), r, ptr, off);
    if ty.signed {
        normalize(b, r, ty);
    }
    r
}

/// Writes the constant bytes `data` at `place` (string literals, formats): 4-byte stores where
/// possible, then the remainder byte by byte.
pub fn write_bytes(b: &mut Builder, place: Place, data: &[u8]) {
    let mut i = 0;
    while i < data.len() {
        let off = place.off + i as i32;
        if data.len() - i >= 4 && off % 4 == 0 {
            let w = u32::from_le_bytes([data[i], data[i + 1], data[i + 2], data[i + 3]]);
            b.store(Size::W, place.mem(), off, w as i32);
            i += 4;
        } else {
            b.store(Size::B, place.mem(), off, data[i] as i32);
            i += 1;
        }
    }
}

/// Writes string literal `s` into a buffer of `size` bytes at `place`, NUL-padded (so it can
/// serve as a map key), truncated to `size - 1` bytes.
pub fn write_str(b: &mut Builder, place: Place, s: &[u8], size: u32) {
    let n = s.len().min(size.saturating_sub(1) as usize);
    let mut bytes = s[..n].to_vec();
    bytes.resize(size as usize, 0);
    let zeros_from = n.next_multiple_of(8).min(size as usize);
    write_bytes(b, place, &bytes[..zeros_from]);
    zero(b, place.at(zeros_from as i32), size - zeros_from as u32);
}
