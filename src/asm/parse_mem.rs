//! Memory forms of the instruction grammar: loads, stores, legacy packet loads and atomics.
//!
//! Atomics are read in LLVM's spelling (`lock *(u64 *)(r1 + 0) += r2`,
//! `r0 = atomic_fetch_add((u64 *)(r1 + 0), r0)`, `r0 = xchg_64(r1 + 0, r0)`,
//! `w0 = cmpxchg32_32(r1 + 0, w0, w2)`, `load_acquire`, `store_release`) and in the kernel
//! verifier log's (`r0 = atomic64_fetch_add((u64 *)(r1 +0), r0)`, `atomic64_xchg`,
//! `r0 = atomic_cmpxchg((u32 *)(r1 +0), r0, r2)`), which uses `rN` even for 32-bit operands.

use super::cursor::{imm32, off16, Cursor, PResult};
use super::decode::{Decoded, Operand};
use super::isa::{AtomicOp, Size};
use super::lex::Tok;
use super::parse_insn::{err, same_reg, same_width, Item, MapHelp};
use super::Reg;
use crate::diag::Span;

/// `(u64 *)` after the opening `(` has been consumed: the size and whether it is signed.
pub(super) fn mem_type(c: &mut Cursor<'_, '_>) -> PResult<(Size, bool, Span)> {
    let (ty, span) = c.ident().ok_or_else(|| c.error("a type such as `u64`"))?;
    let (sx, base) = match ty.strip_prefix('s') {
        Some(rest) => (true, rest),
        None => (false, ty.strip_prefix('u').unwrap_or("")),
    };
    let size = Size::ALL
        .into_iter()
        .find(|s| &s.asm()[1..] == base)
        .ok_or_else(|| {
            err(
                span,
                format!("expected `u8`, `u16`, `u32` or `u64`, found `{ty}`"),
            )
        })?;
    c.expect_punct("*")?;
    c.expect_punct(")")?;
    Ok((size, sx, span))
}

/// The offset part of an address: `+ 8`, `- 4`, `+0x10`, or nothing before `end`.
fn offset(c: &mut Cursor<'_, '_>, end: &str) -> PResult<i16> {
    if c.is_punct(end) {
        return Ok(0);
    }
    if !c.is_punct("+") && !c.is_punct("-") {
        return Err(c.error(&format!("`+ offset`, `- offset` or `{end}`")));
    }
    let (v, span) = c.signed()?;
    off16(v, span)
}

/// `(rN + off)`, `(rN - off)`, `(rN)`.
pub(super) fn address(c: &mut Cursor<'_, '_>) -> PResult<(Reg, i16)> {
    c.expect_punct("(")?;
    let base = c.reg64()?;
    let off = offset(c, ")")?;
    c.expect_punct(")")?;
    Ok((base, off))
}

/// A register of a memory access of `size`: `w` is accepted below 64 bits.
fn data_reg(c: &mut Cursor<'_, '_>, size: Size) -> PResult<(Reg, bool, Span)> {
    let (r, wide, span) = c.reg()?;
    if !wide && size == Size::Dw {
        return Err(err(span, "a 64-bit access needs a 64-bit register")
            .map_help(|| Some(format!("write `r{}`", r.num()))));
    }
    Ok((r, wide, span))
}

/// `rD = *(u32 *)(rS + off)`, `rD = *(s8 *)(…)`, `r0 = *(u8 *)skb[…]`.
pub(super) fn parse_load<'a>(
    c: &mut Cursor<'_, 'a>,
    dst: Reg,
    wide: bool,
    dspan: Span,
) -> PResult<Item<'a>> {
    c.expect_punct("*")?;
    c.expect_punct("(")?;
    let (size, sx, tspan) = mem_type(c)?;
    if !wide && size == Size::Dw {
        return Err(err(dspan, "a 64-bit load needs a 64-bit register"));
    }
    if sx && size == Size::Dw {
        return Err(err(
            tspan,
            "there is no sign-extending 64-bit load: write `u64`",
        ));
    }
    if c.eat_ident("skb") {
        return parse_skb(c, dst, size, sx, tspan);
    }
    let (src, off) = address(c)?;
    c.end()?;
    Ok(Item::Done(Decoded::Load {
        size,
        sx,
        dst,
        src,
        off,
    }))
}

/// Legacy packet loads: `r0 = *(u8 *)skb[14]`, `r0 = *(u16 *)skb[r1]`, `skb[r1 + 4]`.
fn parse_skb<'a>(
    c: &mut Cursor<'_, 'a>,
    dst: Reg,
    size: Size,
    sx: bool,
    tspan: Span,
) -> PResult<Item<'a>> {
    if dst != Reg::R0 || sx || size == Size::Dw {
        return Err(err(tspan, "packet loads are `r0 = *(u8|u16|u32 *)skb[…]`"));
    }
    c.expect_punct("[")?;
    let item = if matches!(c.peek(), Some(Tok::Reg { .. })) {
        let src = c.reg64()?;
        let imm = if c.is_punct("]") {
            0
        } else {
            let (v, span) = c.signed()?;
            imm32(v, span)?
        };
        Decoded::LdInd { size, src, imm }
    } else {
        let (v, span) = c.signed()?;
        Decoded::LdAbs {
            size,
            imm: imm32(v, span)?,
        }
    };
    c.expect_punct("]")?;
    c.end()?;
    Ok(Item::Done(item))
}

/// `*(u32 *)(rD + off) = rS` or `= imm`.
pub(super) fn parse_store<'a>(c: &mut Cursor<'_, 'a>) -> PResult<Item<'a>> {
    c.expect_punct("*")?;
    c.expect_punct("(")?;
    let (size, sx, tspan) = mem_type(c)?;
    if sx {
        return Err(err(tspan, "stores take unsigned types (`u8`…`u64`)"));
    }
    let (dst, off) = address(c)?;
    c.expect_punct("=")?;
    let src = if matches!(c.peek(), Some(Tok::Reg { .. })) {
        Operand::Reg(data_reg(c, size)?.0)
    } else {
        let (v, span) = c.signed()?;
        Operand::Imm(imm32(v, span)?)
    };
    c.end()?;
    Ok(Item::Done(Decoded::Store {
        size,
        dst,
        off,
        src,
    }))
}

fn rmw_size(size: Size, sx: bool, span: Span) -> PResult<()> {
    if sx || !matches!(size, Size::W | Size::Dw) {
        return Err(err(
            span,
            "atomic read-modify-write operations take `u32` or `u64`",
        ));
    }
    Ok(())
}

/// `lock *(u64 *)(rD + off) += rS`.
pub(super) fn parse_lock<'a>(c: &mut Cursor<'_, 'a>) -> PResult<Item<'a>> {
    c.expect_punct("*")?;
    c.expect_punct("(")?;
    let (size, sx, tspan) = mem_type(c)?;
    rmw_size(size, sx, tspan)?;
    let (dst, off) = address(c)?;
    let op_span = c.span();
    let op = match c.bump().map(|t| t.tok) {
        Some(Tok::Punct(p)) => AtomicOp::ALL
            .into_iter()
            .find(|o| o.form() == "lock" && o.asm() == p),
        _ => None,
    }
    .ok_or_else(|| err(op_span, "expected `+=`, `|=`, `&=` or `^=`"))?;
    let (src, _, _) = data_reg(c, size)?;
    c.end()?;
    Ok(Item::Done(Decoded::Atomic {
        size,
        op,
        dst,
        src,
        off,
    }))
}

/// `store_release((u64 *)(rD + off), rS)`.
pub(super) fn parse_store_release<'a>(c: &mut Cursor<'_, 'a>) -> PResult<Item<'a>> {
    c.expect_punct("(")?;
    c.expect_punct("(")?;
    let (size, sx, tspan) = mem_type(c)?;
    if sx {
        return Err(err(tspan, "expected an unsigned type"));
    }
    let (dst, off) = address(c)?;
    c.expect_punct(",")?;
    let (src, _, _) = data_reg(c, size)?;
    c.expect_punct(")")?;
    c.end()?;
    Ok(Item::Done(Decoded::Atomic {
        size,
        op: AtomicOp::StoreRelease,
        dst,
        src,
        off,
    }))
}

/// How an atomic's operand list is written.
#[derive(Clone, Copy, PartialEq, Eq)]
pub(super) enum Spelling {
    /// `((u64 *)(rD + off), …)`: LLVM's fetch and load_acquire, and every kernel-log form.
    Typed,
    /// `(rD + off, …)` with the size in the name: LLVM's `xchg_64`, `cmpxchg32_32`.
    Bare(Size),
}

/// The atomic a `rX = NAME(…)` names, in LLVM's or the kernel's spelling.
pub(super) fn atomic_by_name(name: &str) -> Option<(AtomicOp, Spelling)> {
    for op in AtomicOp::ALL {
        let asm = op.asm();
        let hit = match op.form() {
            "fetch" | "load_acquire" if name == asm => Some(Spelling::Typed),
            "xchg" | "cmpxchg" if name.strip_suffix("_64") == Some(asm) => {
                Some(Spelling::Bare(Size::Dw))
            }
            "xchg" | "cmpxchg" if name.strip_suffix("32_32") == Some(asm) => {
                Some(Spelling::Bare(Size::W))
            }
            _ => None,
        };
        if let Some(s) = hit {
            return Some((op, s));
        }
        // Kernel log: atomic_fetch_add / atomic64_fetch_add, atomic_xchg, atomic64_cmpxchg.
        if matches!(op.form(), "fetch" | "xchg" | "cmpxchg") {
            let bare = asm.strip_prefix("atomic_").unwrap_or(asm);
            for prefix in ["atomic64_", "atomic_"] {
                if name.strip_prefix(prefix) == Some(bare) {
                    return Some((op, Spelling::Typed));
                }
            }
        }
    }
    None
}

/// Names that can follow `rD =` for atomics, for suggestions.
pub(super) fn atomic_names() -> Vec<String> {
    let mut v = Vec::new();
    for op in AtomicOp::ALL {
        match op.form() {
            "fetch" | "load_acquire" => v.push(op.asm().to_string()),
            "xchg" | "cmpxchg" => {
                v.push(format!("{}_64", op.asm()));
                v.push(format!("{}32_32", op.asm()));
            }
            _ => {}
        }
    }
    v
}

/// `lhs = NAME(…)` for an atomic with a result: fetch ops, xchg, cmpxchg, load_acquire.
pub(super) fn parse_atomic_call<'a>(
    c: &mut Cursor<'_, 'a>,
    (op, spelling): (AtomicOp, Spelling),
    lhs: Reg,
    wide: bool,
    dspan: Span,
) -> PResult<Item<'a>> {
    c.expect_punct("(")?;
    let (size, base, off) = match spelling {
        Spelling::Typed => {
            c.expect_punct("(")?;
            let (size, sx, tspan) = mem_type(c)?;
            if op.form() == "load_acquire" {
                if sx {
                    return Err(err(tspan, "expected an unsigned type"));
                }
            } else {
                rmw_size(size, sx, tspan)?;
            }
            let (base, off) = address(c)?;
            (size, base, off)
        }
        Spelling::Bare(size) => {
            same_width(size == Size::Dw, wide, dspan)?;
            let base = c.reg64()?;
            (size, base, offset(c, ",")?)
        }
    };
    if !wide && size == Size::Dw {
        return Err(err(dspan, "a 64-bit atomic needs a 64-bit register"));
    }
    let item = match op.form() {
        "load_acquire" => Decoded::Atomic {
            size,
            op,
            dst: lhs,
            src: base,
            off,
        },
        form => {
            c.expect_punct(",")?;
            let (first, w, rspan) = data_reg(c, size)?;
            same_width(wide, w, rspan)?;
            let src = if form == "cmpxchg" {
                same_reg(Reg::R0, lhs, dspan, "cmpxchg")?;
                same_reg(Reg::R0, first, rspan, "cmpxchg")?;
                c.expect_punct(",")?;
                let (src, w, rspan) = data_reg(c, size)?;
                same_width(wide, w, rspan)?;
                src
            } else {
                same_reg(lhs, first, rspan, "a fetching atomic")?;
                first
            };
            Decoded::Atomic {
                size,
                op,
                dst: base,
                src,
                off,
            }
        }
    };
    c.expect_punct(")")?;
    c.end()?;
    Ok(Item::Done(item))
}
