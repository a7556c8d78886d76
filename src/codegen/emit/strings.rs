//! Strings and buffers: bounded reads into stack buffers, comparison, truncation, `buf()`.
//!
//! A string value is a NUL-terminated byte array in a buffer of fixed size (`FieldType::Str`);
//! reads are bounded by the buffer size, so the verifier always sees a constant length.
//! Comparison is unrolled (one load pair and two branches per byte), bounded by the smaller
//! buffer or the `strncmp` length; it stops at the first difference or the first NUL;
//! `strcontains` loops over start positions around a branch-free 8-byte compare.

use super::{Place, Value};
use crate::asm::isa::{AluOp, Helper, JmpOp, Size};
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

/// Like [`read_str`], but a string of `size` characters or more fills all `size` bytes, its
/// last one a character rather than the NUL (bpftrace's string type below 1024 bytes: a
/// buffer without a NUL is printed with the truncation trailer). When the read filled the
/// buffer (the helper returned `size`), byte `size - 1` is read again from the source: a NUL
/// when the string had exactly `size - 1` characters, else the character the NUL replaced.
/// The extra read costs a compare on strings that do not fill the buffer. Returns the first
/// read's result.
pub fn read_str_full(b: &mut Builder, user: bool, dst: Place, size: u32, src: Value) -> VReg {
    let n = read_str(b, user, dst, size, src);
    if size < 2 {
        return n;
    }
    let done = b.label();
    b.jmp64(JmpOp::Jne, n, size as i32, done);
    let last = b.vreg();
    match src {
        Value::Imm(v) => b.mov_const(last, v.wrapping_add(size as i64 - 1)),
        Value::Reg(r) => {
            b.mov(last, r);
            b.alu(true, AluOp::Add, last, size as i32 - 1);
        }
    }
    let helper = if user {
        Helper::ProbeReadUser
    } else {
        Helper::ProbeReadKernel
    };
    let d = dst.at(size as i32 - 1).arg(b);
    b.call(helper, &[d, Arg::Imm(1), Arg::Reg(last)]);
    b.bind(done);
    n
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

/// `strlen`: the bytes before the first NUL of the buffer of `n` bytes at `a` (`n` when it
/// has none), counted by an unrolled scan.
pub fn strlen(b: &mut Builder, a: Place, n: u32) -> Value {
    let out = b.constant(0);
    let done = b.label();
    for i in 0..n as i32 {
        let x = b.vreg();
        b.load(Size::B, x, a.mem(), a.off + i);
        b.jmp64(JmpOp::Jeq, x, 0, done);
        b.alu(true, AluOp::Add, out, 1);
    }
    b.bind(done);
    Value::Reg(out)
}

/// Bytes of scratch memory [`contains`] needs: the haystack with room for a needle's words
/// past its end, then the needle's words and their byte mask.
pub fn contains_work_size(hsize: u32, nsize: u32) -> u32 {
    let nw = nsize.max(1).next_multiple_of(8);
    hsize.next_multiple_of(8) + 3 * nw
}

/// `strcontains(h, n)`: 1 when the string at `n` (buffer of `nsize` bytes) occurs in the string
/// at `h` (buffer of `hsize` bytes), else 0; an empty needle is in every string, and a needle
/// filling its buffer without a NUL counts all of its bytes.
///
/// `work` is [`contains_work_size`] bytes of map value (the scratch buffer): the haystack is
/// copied there with zeros after it, the needle next to it with a mask of 0xff for each byte
/// before its NUL. A bounded loop (5.3+ verifiers) then tries one start per iteration,
/// comparing 8 bytes at a time without branches (`(hay ^ needle) & mask`, OR-ed over the
/// needle's words), so the verifier walks each iteration once, with no forks to pile up; the
/// pointer into the haystack has a known offset in every iteration it walks. Map values, unlike
/// the stack, take unaligned 8-byte loads and are not tracked by the verifier, so every path
/// leaves the same state. The code is O(nsize) instead of the O(hsize × nsize) of full
/// unrolling, which took seconds to compile for two 64-byte strings. Zeros past the haystack
/// differ from every needle byte the mask keeps, so a needle running past it never matches.
pub fn contains(b: &mut Builder, h: Place, hsize: u32, n: Place, nsize: u32, work: Place) -> Value {
    search(b, h, hsize, n, nsize, work, false)
}

/// `strstr(h, n)`: the index of the first occurrence of the string at `n` in the string at
/// `h`, or -1 (0 for an empty needle); the search of [`contains`], which it shares.
pub fn strstr(b: &mut Builder, h: Place, hsize: u32, n: Place, nsize: u32, work: Place) -> Value {
    search(b, h, hsize, n, nsize, work, true)
}

/// [`contains`] (`index` false: 1 or 0) or [`strstr`] (`index`: the start or -1).
fn search(
    b: &mut Builder,
    h: Place,
    hsize: u32,
    n: Place,
    nsize: u32,
    work: Place,
    index: bool,
) -> Value {
    let nw = nsize.max(1).next_multiple_of(8);
    let hw = hsize.next_multiple_of(8);
    let (hay, needle, mask) = (
        work,
        work.at((hw + nw) as i32),
        work.at((hw + 2 * nw) as i32),
    );
    super::mem::zero(b, work, contains_work_size(hsize, nsize));
    copy_bytes(b, hay, h, hsize);
    copy_bytes(b, needle, n, nsize);
    // The mask: 0xff up to the needle's NUL; the branches join at once (map memory is not
    // tracked), so they cost the verifier nothing later.
    let masked = b.label();
    for j in 0..nsize as i32 {
        let y = b.vreg();
        b.load(Size::B, y, n.mem(), n.off + j);
        b.jmp64(JmpOp::Jeq, y, 0, masked);
        b.store(Size::B, mask.mem(), mask.off + j, 0xff);
    }
    b.bind(masked);
    let out = b.constant(if index { -1 } else { 0 });
    let found = b.label();
    let done = b.label();
    let head = b.label();
    let p = b.vreg();
    let (base, off) = match work.base {
        super::Base::Ptr(r) => (r, work.off),
        super::Base::Slot(_) => unreachable!("strcontains' work buffer is map memory"),
    };
    b.mov(p, base);
    b.alu(true, AluOp::Add, p, off);
    let i = b.constant(0);
    b.bind(head);
    let acc = b.constant(0);
    for k in 0..(nw / 8) as i32 {
        let x = b.vreg();
        b.load(Size::Dw, x, p, 8 * k);
        let y = b.vreg();
        b.load(Size::Dw, y, needle.mem(), needle.off + 8 * k);
        b.alu(true, AluOp::Xor, x, y);
        let m = b.vreg();
        b.load(Size::Dw, m, mask.mem(), mask.off + 8 * k);
        b.alu(true, AluOp::And, x, m);
        b.alu(true, AluOp::Or, acc, x);
    }
    b.jmp64(JmpOp::Jeq, acc, 0, found);
    // The haystack ended at this start: no later start can match a non-empty needle.
    let x = b.vreg();
    b.load(Size::B, x, p, 0);
    b.jmp64(JmpOp::Jeq, x, 0, done);
    b.alu(true, AluOp::Add, p, 1);
    b.alu(true, AluOp::Add, i, 1);
    b.jmp64(JmpOp::Jlt, i, hsize as i32, head);
    b.ja(done);
    b.bind(found);
    if index {
        b.mov(out, i);
    } else {
        b.mov(out, 1);
    }
    b.bind(done);
    Value::Reg(out)
}

/// Bytes of scratch memory [`concat`] needs for a result of `size` bytes: room for the
/// second part's whole buffer after any length of the first.
pub fn concat_work_size(size: u32) -> u32 {
    2 * size
}

/// `str_concat(a, c)`: the string at `a` (buffer of `asize` bytes) followed by the string at
/// `c` (`csize`), in the `size` bytes at the start of `work` ([`concat_work_size`] bytes of
/// map value), NUL-padded, cut to `size - 1` characters.
///
/// Each part is copied by `bpf_probe_read_kernel_str` (which stops at the NUL and returns
/// the length with it); the second part starts at the first one's length, clamped to the
/// result so the verifier sees a bounded offset, and may write up to its whole buffer past
/// it, which the work area's second half absorbs; the result's last byte is then set to 0.
pub fn concat(b: &mut Builder, work: Place, size: u32, a: Place, asize: u32, c: Place, csize: u32) {
    super::mem::zero(b, work, size);
    let (base, off) = match work.base {
        super::Base::Ptr(r) => (r, work.off),
        super::Base::Slot(_) => unreachable!("str_concat's work buffer is map memory"),
    };
    let first = a.arg(b);
    let out = work.arg(b);
    let n = b.call(
        Helper::ProbeReadKernelStr,
        &[out, Arg::Imm(asize.min(size) as i64), first],
    );
    // The first part's characters: the length less its NUL, 0 on an error, at most size - 1.
    let len = b.vreg();
    b.mov(len, n);
    let positive = b.label();
    b.jmp64(JmpOp::Jsgt, len, 0, positive);
    b.mov(len, 1);
    b.bind(positive);
    b.alu(true, AluOp::Sub, len, 1);
    let bounded = b.label();
    b.jmp64(JmpOp::Jle, len, size as i32 - 1, bounded);
    b.mov(len, size as i32 - 1);
    b.bind(bounded);
    let dst = b.vreg();
    b.mov(dst, base);
    b.alu(true, AluOp::Add, dst, off);
    b.alu(true, AluOp::Add, dst, len);
    let second = c.arg(b);
    b.call(
        Helper::ProbeReadKernelStr,
        &[Arg::Reg(dst), Arg::Imm(csize.min(size) as i64), second],
    );
    b.store(Size::B, work.mem(), work.off + size as i32 - 1, 0);
}

/// Copies `len` bytes from `src` to `dst`, in the widest aligned loads both allow.
fn copy_bytes(b: &mut Builder, dst: Place, src: Place, len: u32) {
    let mut i = 0i32;
    while (i as u32) < len {
        let left = len - i as u32;
        let aligned = |a: i32| (src.off + i) % a == 0 && (dst.off + i) % a == 0;
        let (sz, w) = if left >= 8 && aligned(8) {
            (Size::Dw, 8)
        } else if left >= 4 && aligned(4) {
            (Size::W, 4)
        } else {
            (Size::B, 1)
        };
        let r = b.vreg();
        b.load(sz, r, src.mem(), src.off + i);
        b.store(sz, dst.mem(), dst.off + i, r);
        i += w;
    }
}

/// `a == b` for the `n` bytes at `a` and `c` (array values): 1 or 0, one byte pair at a time.
pub fn bytes_eq(b: &mut Builder, a: Place, c: Place, n: u32) -> Value {
    let out = b.constant(0);
    let done = b.label();
    for i in 0..n as i32 {
        let x = b.vreg();
        let y = b.vreg();
        b.load(Size::B, x, a.mem(), a.off + i);
        b.load(Size::B, y, c.mem(), c.off + i);
        b.jmp64(JmpOp::Jne, x, y, done);
    }
    b.mov(out, 1);
    b.bind(done);
    Value::Reg(out)
}

/// `a == lit` for a string in a buffer of `size_a` bytes and a string literal of `size_lit`
/// bytes (`lit`, zero-padded): 1 or 0, as [`str_eq`] computes it, without storing the literal:
/// the bytes up to the literal's NUL (or its first `min(size_a, size_lit)` bytes) are compared
/// against immediates in the widest loads the place's alignment allows (the verifier wants
/// stack accesses aligned), 8 bytes at a time for a stack string.
pub fn str_eq_literal(b: &mut Builder, a: Place, size_a: u32, lit: &[u8], size_lit: u32) -> Value {
    let n = size_a.max(1).min(size_lit.max(1)) as usize;
    let byte = |i: usize| lit.get(i).copied().unwrap_or(0);
    // Up to and including the literal's NUL: the strings agree there or not at all.
    let m = (0..n).find(|&i| byte(i) == 0).map_or(n, |i| i + 1);
    let align = match a.base {
        super::Base::Slot(s) => b.slot_align(s) as i32,
        super::Base::Ptr(_) => 1,
    };
    let out = b.constant(0);
    let done = b.label();
    let mut i = 0usize;
    while i < m {
        let off = a.off + i as i32;
        let w = [8usize, 4, 2, 1]
            .into_iter()
            .find(|&w| w <= m - i && w as i32 <= align && off.rem_euclid(w as i32) == 0)
            .unwrap_or(1);
        let v = (0..w).fold(0u64, |acc, j| acc | (byte(i + j) as u64) << (8 * j));
        let size = match w {
            8 => Size::Dw,
            4 => Size::W,
            2 => Size::H,
            _ => Size::B,
        };
        let x = b.vreg();
        b.load(size, x, a.mem(), off);
        // A load zero-extends; a jump's immediate is sign-extended, so wide constants go
        // through a register.
        if v <= i32::MAX as u64 {
            b.jmp64(JmpOp::Jne, x, v as i32, done);
        } else {
            let k = b.constant(v as i64);
            b.jmp64(JmpOp::Jne, x, k, done);
        }
        i += w;
    }
    b.mov(out, 1);
    b.bind(done);
    Value::Reg(out)
}

/// `a == b` for strings in buffers of `size_a` and `size_b` bytes: 1 or 0.
pub fn str_eq(b: &mut Builder, a: Place, size_a: u32, c: Place, size_b: u32) -> Value {
    let r = strncmp(b, a, c, size_a.min(size_b));
    super::arith::logical_not(b, r)
}

/// `==` of two `buf()` values (`u32` length, then the bytes; capacities `cap_a`, `cap_c`):
/// 1 when the lengths and the first `length` bytes agree, else 0. Bytes past the length are
/// not compared (they are whatever the read left there).
pub fn buf_eq(b: &mut Builder, a: Place, cap_a: u32, c: Place, cap_c: u32) -> Value {
    let out = b.constant(0);
    let done = b.label();
    let equal = b.label();
    let la = b.vreg();
    let lc = b.vreg();
    b.load(Size::W, la, a.mem(), a.off);
    b.load(Size::W, lc, c.mem(), c.off);
    b.jmp64(JmpOp::Jne, la, lc, done);
    for i in 0..cap_a.min(cap_c) as i32 {
        b.jmp64(JmpOp::Jle, la, i, equal);
        let x = b.vreg();
        let y = b.vreg();
        b.load(Size::B, x, a.mem(), a.off + 4 + i);
        b.load(Size::B, y, c.mem(), c.off + 4 + i);
        b.jmp64(JmpOp::Jne, x, y, done);
    }
    b.bind(equal);
    b.mov(out, 1);
    b.bind(done);
    Value::Reg(out)
}

/// Zeroes every byte of the `size`-byte string buffer at `place` after its first NUL, so two
/// buffers holding the same string are the same bytes (map keys hash and compare bytewise). A
/// buffer without a NUL is left as it is. One load and branch per byte finds the NUL; each
/// branch enters a run of byte stores at its position, so the code is 3 × `size` instructions
/// and the verifier walks each entry once (the paths join in one state: bytes it knows are
/// zero are subsumed by the no-NUL path's unknown bytes).
pub fn zero_after_nul(b: &mut Builder, place: Place, size: u32) {
    if size < 2 {
        return;
    }
    let done = b.label();
    // The byte after position i is the first one to clear when byte i is the NUL.
    let entries: Vec<_> = (0..size - 1).map(|_| b.label()).collect();
    for (i, entry) in entries.iter().enumerate() {
        let x = b.vreg();
        b.load(Size::B, x, place.mem(), place.off + i as i32);
        b.jmp64(JmpOp::Jeq, x, 0, *entry);
    }
    b.ja(done);
    for (i, entry) in entries.iter().enumerate() {
        b.bind(*entry);
        b.store(Size::B, place.mem(), place.off + i as i32 + 1, 0);
    }
    b.bind(done);
}

/// Ends the string at `place` (buffer of `size` bytes) after `len - 1` bytes, for a length
/// known only at run time: one compare per position picks the store, so each store has a
/// constant offset. A length of 0 or 1 leaves the empty string; one past the buffer, all of it.
pub fn cut_at(b: &mut Builder, place: Place, size: u32, len: Value) {
    let len = len.fresh(b);
    let done = b.label();
    for k in 0..size as i32 {
        let next = b.label();
        // Byte k ends the string when len - 1 <= k, i.e. len <= k + 1.
        b.jmp64(JmpOp::Jgt, len, k + 1, next);
        b.store(Size::B, place.mem(), place.off + k, 0);
        b.ja(done);
        b.bind(next);
    }
    b.bind(done);
}

/// Truncates the string at `place` (buffer of `size` bytes) to at most `len` bytes.
pub fn truncate(b: &mut Builder, place: Place, size: u32, len: u32) {
    if len < size {
        b.store(Size::B, place.mem(), place.off + len as i32, 0);
    }
}

/// `buf(src, len)`: `u32 length` at `dst`, then up to `capacity` bytes read from `src`.
/// The length is clamped to the capacity (the verifier needs the bound).
pub fn read_buf(
    b: &mut Builder,
    user: bool,
    dst: Place,
    capacity: u32,
    src: Value,
    len: Value,
) -> VReg {
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
    b.call(helper, &[d, n, s])
}
