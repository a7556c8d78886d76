//! Map operations: keys packed on the stack, lookup (pointer or value-or-zero), update with
//! map-full accounting, delete, existence, and per-CPU failure counters.
//!
//! Keys use C struct layout exactly as `runtime::format::decode::tuple_offsets` computes it,
//! so userspace decodes them with the same `FieldType`s: a single integer key is a one-field
//! tuple; `@m[a, b]` is the tuple `(a, b)`; a histogram's key is the user key plus a trailing
//! `u64` bucket index ([`hist_key_fields`]).
//! Map-full accounting: an update that fails (E2BIG when full, ENOMEM) increments a
//! [`Counter`], slot `index` of an array of `u64` that the runtime reads and reports at exit.
//! Two flavours: a plain `BPF_MAP_TYPE_ARRAY` (`percpu: false`) updated with one atomic add
//! through a direct value pointer behind a branch on failure (5 instructions: the cheapest,
//! used by lowering for both drops and lost records), or a `BPF_MAP_TYPE_PERCPU_ARRAY`
//! (`percpu: true`) updated after a lookup (11 instructions).

use super::mem::{store_int, zero};
use super::{IntTy, Place, Value};
use crate::asm::isa::{Helper, JmpOp, Size};
use crate::codegen::builder::{Arg, Builder, VReg};
use crate::plan::layout::{tuple_offsets, FieldType};

/// A failure counter: slot `index` (a `u64`) of array map `map` (an index into the builder's
/// map table); `percpu` says whether the map is a per-CPU array.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Counter {
    pub map: usize,
    pub index: u32,
    pub percpu: bool,
}

impl Counter {
    /// Slot `index` of plain array `map`.
    pub fn global(map: usize, index: u32) -> Counter {
        Counter {
            map,
            index,
            percpu: false,
        }
    }

    /// Slot `index` of per-CPU array `map`.
    pub fn percpu(map: usize, index: u32) -> Counter {
        Counter {
            map,
            index,
            percpu: true,
        }
    }
}

/// `BPF_ANY`, `BPF_NOEXIST`, `BPF_EXIST` (include/uapi/linux/bpf.h).
pub const BPF_ANY: i64 = 0;
pub const BPF_NOEXIST: i64 = 1;
pub const BPF_EXIST: i64 = 2;

/// A map key being built on the stack.
#[derive(Clone, Debug)]
pub struct Key {
    pub place: Place,
    pub fields: Vec<FieldType>,
    pub offsets: Vec<usize>,
    pub size: u32,
}

/// The key fields of a histogram map: the user's key fields and the `u64` bucket index.
pub fn hist_key_fields(user: &[FieldType]) -> Vec<FieldType> {
    let mut f = user.to_vec();
    f.push(FieldType::Int {
        bytes: 8,
        signed: false,
    });
    f
}

impl Key {
    /// A stack slot for a key of `fields`, with its padding (and any string or buffer field,
    /// whose tail a read leaves undefined) zeroed. A key without fields is one zero `u64`,
    /// as a map without a key in bpftrace.
    pub fn new(b: &mut Builder, fields: &[FieldType]) -> Key {
        Key::new_filled(b, fields, &[])
    }

    /// Like [`Key::new`], but string/buffer fields listed in `filled` are not zeroed: their
    /// producer writes every byte (`get_current_comm` NUL-pads its buffer, `mem::write_str`
    /// pads literals), so zeroing them first would be wasted instructions.
    pub fn new_filled(b: &mut Builder, fields: &[FieldType], filled: &[usize]) -> Key {
        let fields: Vec<FieldType> = if fields.is_empty() {
            vec![FieldType::Int {
                bytes: 8,
                signed: false,
            }]
        } else {
            fields.to_vec()
        };
        let size = FieldType::Tuple(fields.clone()).size().max(1) as u32;
        let slot = b.slot(size, 8);
        Key::at_filled(b, Place::new(slot, 0), &fields, filled)
    }

    /// [`Key::new_filled`] at `place` (a scratch buffer for keys too large for the stack).
    pub fn at_filled(b: &mut Builder, place: Place, fields: &[FieldType], filled: &[usize]) -> Key {
        let fields: Vec<FieldType> = if fields.is_empty() {
            vec![FieldType::Int {
                bytes: 8,
                signed: false,
            }]
        } else {
            fields.to_vec()
        };
        let offsets = tuple_offsets(&fields);
        let size = FieldType::Tuple(fields.clone()).size().max(1) as u32;
        // Byte ranges nobody writes fully: padding, strings, buffers.
        let mut undefined: Vec<(u32, u32)> = Vec::new();
        let mut at = 0u32;
        for (i, (f, &off)) in fields.iter().zip(&offsets).enumerate() {
            let off = off as u32;
            if off > at {
                undefined.push((at, off));
            }
            let end = off + f.size() as u32;
            let scalar = matches!(
                f,
                FieldType::Int { .. }
                    | FieldType::Enum { .. }
                    | FieldType::Bool
                    | FieldType::Pointer
            );
            if !scalar && !filled.contains(&i) {
                undefined.push((off, end));
            }
            at = end;
        }
        if size > at {
            undefined.push((at, size));
        }
        // Merge adjacent ranges so zeroing uses wide stores.
        let mut merged: Vec<(u32, u32)> = Vec::new();
        for r in undefined {
            match merged.last_mut() {
                Some(last) if last.1 == r.0 => last.1 = r.1,
                _ => merged.push(r),
            }
        }
        for (a, z) in merged {
            zero(b, place.at(a as i32), z - a);
        }
        Key {
            place,
            fields,
            offsets,
            size,
        }
    }

    /// Where field `i` goes.
    pub fn field(&self, i: usize) -> Place {
        self.place.at(self.offsets[i] as i32)
    }

    /// Writes integer field `i`.
    pub fn set_int(&self, b: &mut Builder, i: usize, v: Value) {
        let bytes = self.fields[i].size() as u32;
        store_int(b, self.field(i), v, bytes);
    }

    /// A key holding one integer of type `ty`.
    pub fn int(b: &mut Builder, v: Value, ty: IntTy) -> Key {
        let k = Key::new(
            b,
            &[FieldType::Int {
                bytes: ty.bytes() as u8,
                signed: ty.signed,
            }],
        );
        k.set_int(b, 0, v);
        k
    }
}

/// `bpf_map_lookup_elem(map, key)`: a pointer to the value or 0.
pub fn lookup(b: &mut Builder, map: usize, key: Place) -> VReg {
    let k = key.arg(b);
    b.call(Helper::MapLookupElem, &[Arg::Map(map), k])
}

/// The integer value under `key`, or 0 when absent.
pub fn lookup_or_zero(b: &mut Builder, map: usize, key: Place, ty: IntTy) -> Value {
    let p = lookup(b, map, key);
    load_or_zero(b, p, ty)
}

/// The integer a lookup's result `p` points to, or 0 when it is null.
pub fn load_or_zero(b: &mut Builder, p: VReg, ty: IntTy) -> Value {
    let out = b.constant(0);
    let done = b.label();
    b.jmp64(JmpOp::Jeq, p, 0, done);
    b.load(super::mem::size_of_bytes(ty.bytes()), out, p, 0);
    if ty.signed {
        super::arith::normalize(b, out, ty);
    }
    b.bind(done);
    Value::Reg(out)
}

/// `bpf_map_update_elem(map, key, value, flags)`; a failure increments `drops` when given.
/// Returns the helper's result (0 or a negative errno).
pub fn update(
    b: &mut Builder,
    map: usize,
    key: Place,
    value: Place,
    flags: i64,
    drops: Option<Counter>,
) -> VReg {
    let k = key.arg(b);
    let v = value.arg(b);
    let r = b.call(
        Helper::MapUpdateElem,
        &[Arg::Map(map), k, v, Arg::Imm(flags)],
    );
    if let Some(c) = drops {
        count_failure(b, c, r);
    }
    r
}

/// Increments counter `c` when helper result `ret` is negative (an errno).
pub fn count_failure(b: &mut Builder, c: Counter, ret: VReg) {
    // A branch, not a branch-free add of the sign bit (same size for a global counter): the
    // atomic add then runs only on failure, so CPUs do not contend for the counter's cache line
    // at every event.
    let ok = b.label();
    b.jmp64(JmpOp::Jeq, ret, 0, ok);
    counter_inc(b, c);
    b.bind(ok);
}

/// Stores an integer under `key` (`@m[k] = v`), counting a failed update in `drops`.
pub fn store(b: &mut Builder, map: usize, key: Place, v: Value, ty: IntTy, drops: Option<Counter>) {
    let slot = b.slot(8, 8);
    let place = Place::new(slot, 0);
    store_int(b, place, v, ty.bytes().max(8));
    update(b, map, key, place, BPF_ANY, drops);
}

/// `delete(@m[k])`: returns 1 when an element was deleted, else 0.
pub fn delete(b: &mut Builder, map: usize, key: Place) -> Value {
    let k = key.arg(b);
    let r = b.call(Helper::MapDeleteElem, &[Arg::Map(map), k]);
    super::arith::compare(
        b,
        super::arith::CmpOp::Eq,
        Value::Reg(r),
        Value::Imm(0),
        false,
    )
}

/// `k in @m` / `has_key(@m, k)`: 1 when present, else 0.
pub fn exists(b: &mut Builder, map: usize, key: Place) -> Value {
    let p = lookup(b, map, key);
    super::arith::compare(
        b,
        super::arith::CmpOp::Ne,
        Value::Reg(p),
        Value::Imm(0),
        false,
    )
}

/// Adds 1 to counter `c` (this CPU's slot for a per-CPU counter).
pub fn counter_inc(b: &mut Builder, c: Counter) {
    if !c.percpu {
        let p = b.vreg();
        b.ld_map_value(p, c.map, 8 * c.index);
        let one = b.constant(1);
        b.atomic_add(Size::Dw, p, 0, one);
        return;
    }
    let slot = b.slot(4, 4);
    b.store(Size::W, slot, 0, c.index as i32);
    let p = lookup(b, c.map, Place::new(slot, 0));
    let done = b.label();
    b.jmp64(JmpOp::Jeq, p, 0, done);
    let one = b.constant(1);
    b.atomic_add(Size::Dw, p, 0, one);
    b.bind(done);
}

/// A per-CPU scratch buffer: the value of key `region` of `BPF_MAP_TYPE_PERCPU_ARRAY` `map`,
/// for data too large for the 512-byte stack (big records, long strings). The program returns
/// 0 at once if the lookup fails (it cannot for a key below the array's size; the verifier
/// needs the check).
pub fn scratch(b: &mut Builder, map: usize, region: u32) -> Place {
    let slot = b.slot(4, 4);
    b.store(Size::W, slot, 0, region as i32);
    let p = lookup(b, map, Place::new(slot, 0));
    let ok = b.label();
    b.jmp64(JmpOp::Jne, p, 0, ok);
    b.exit(0);
    b.bind(ok);
    Place::ptr(p, 0)
}
