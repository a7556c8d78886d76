//! Stack memory: storing and loading integers at a [`Place`], and zeroing byte ranges with the
//! fewest stores (8-byte stores where alignment allows).
//!
//! Zeroing exists for bytes that are *not* otherwise written but must be defined: struct
//! padding in map keys (keys are hashed bytewise) and string buffers whose tail a string read
//! leaves undefined. Everything fully written by its producer is left alone.

use super::arith::normalize;
use super::{IntTy, Place, Value};
use crate::asm::isa::Size;
use crate::codegen::builder::{Builder, VReg};

/// The access size for `bytes` (1, 2, 4 or 8).
pub fn size_of_bytes(bytes: u32) -> Size {
    match bytes {
        1 => Size::B,
        2 => Size::H,
        4 => Size::W,
        _ => Size::Dw,
    }
}

/// Writes zeros over `len` bytes at `place`, assuming the slot is 8-byte aligned.
pub fn zero(b: &mut Builder, place: Place, len: u32) {
    let (mut off, end) = (place.off, place.off + len as i32);
    while off < end {
        let left = end - off;
        let n = [8, 4, 2, 1]
            .into_iter()
            .find(|&n| n <= left && off % n == 0)
            .unwrap_or(1);
        b.store(size_of_bytes(n as u32), place.slot, off, 0);
        off += n;
    }
}

/// Stores the low `bytes` bytes of `v` at `place`.
pub fn store_int(b: &mut Builder, place: Place, v: Value, bytes: u32) {
    let size = size_of_bytes(bytes);
    match v {
        Value::Imm(x) if i32::try_from(x).is_ok() || bytes <= 4 => {
            b.store(size, place.slot, place.off, x as i32)
        }
        _ => {
            let r = v.reg(b);
            b.store(size, place.slot, place.off, r);
        }
    }
}

/// Loads an integer of type `ty` from `place`, normalized.
pub fn load_int(b: &mut Builder, place: Place, ty: IntTy) -> Value {
    let r = b.vreg();
    b.load(size_of_bytes(ty.bytes()), r, place.slot, place.off);
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
