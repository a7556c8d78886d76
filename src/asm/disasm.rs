//! Disassembler: instructions → text in the syntax `llvm-objdump -d` prints and LLVM's
//! assembler reads (plus strobe's spellings for what LLVM has no syntax for: pseudo `ld_imm64`
//! sources, local and kfunc calls, raw `.insn`).
//!
//! Input: `Insn`s (any bytes). Output: one line per instruction (`ld_imm64` is one line).
//! Invariants: never panics; every decodable instruction prints as text that `assemble`
//! turns back into the same bytes; undecodable ones print as `.insn code, regs, off, imm`,
//! which also round-trips.

use std::fmt::{self, Write};

use super::decode::{decode, Call, Decoded, Operand};
use super::isa::{AluSpecial, AtomicOp, Helper, JmpSpecial, Pseudo, Size};
use super::{Insn, Reg};

/// A register as the instruction uses it: `r3` on 64 bits, `w3` on 32.
struct R(Reg, bool);

impl fmt::Display for R {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}{}", if self.1 { 'r' } else { 'w' }, self.0.num())
    }
}

/// `(r10 - 4)`: a base register and a signed offset.
struct Addr(Reg, i16);

impl fmt::Display for Addr {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.1 < 0 { '-' } else { '+' };
        write!(f, "({} {} {})", self.0, sign, self.1.unsigned_abs())
    }
}

/// A jump offset as LLVM prints it: `+3`, `-1`, `+0`.
struct Off(i32);

impl fmt::Display for Off {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if self.0 >= 0 {
            write!(f, "+{}", self.0)
        } else {
            write!(f, "{}", self.0)
        }
    }
}

fn operand(o: Operand, wide: bool) -> impl fmt::Display {
    struct D(Operand, bool);
    impl fmt::Display for D {
        fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
            match self.0 {
                Operand::Reg(r) => R(r, self.1).fmt(f),
                Operand::Imm(i) => i.fmt(f),
            }
        }
    }
    D(o, wide)
}

impl fmt::Display for Decoded {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match *self {
            Decoded::Alu { wide, op, dst, src } => {
                write!(f, "{} {} {}", R(dst, wide), op.asm(), operand(src, wide))
            }
            Decoded::Neg { wide, dst } => write!(f, "{} = -{}", R(dst, wide), R(dst, wide)),
            Decoded::Movsx {
                wide,
                dst,
                src,
                width,
            } => {
                write!(f, "{} = ({}){}", R(dst, wide), width.asm(), R(src, wide))
            }
            Decoded::AddrSpaceCast {
                dst,
                src,
                dst_as,
                src_as,
            } => {
                let name = AluSpecial::AddrSpaceCast.asm();
                write!(f, "{dst} = {name}({src}, {dst_as}, {src_as})")
            }
            Decoded::MayGoto { off } => {
                write!(f, "{} {}", JmpSpecial::MayGoto.asm(), Off(off.into()))
            }
            Decoded::Endian { kind, bits, dst } => {
                write!(f, "{dst} = {}{bits} {dst}", kind.asm())
            }
            Decoded::LdImm64 {
                dst,
                pseudo: Pseudo::None,
                imm,
                next_imm,
            } => {
                let v = Decoded::imm64(imm, next_imm);
                if i32::try_from(v as i64).is_ok() {
                    write!(f, "{dst} = {} ll", v as i64)
                } else {
                    write!(f, "{dst} = {v:#x} ll")
                }
            }
            Decoded::LdImm64 {
                dst,
                pseudo,
                imm,
                next_imm,
            } => {
                write!(f, "{dst} = {}({imm}", pseudo.asm())?;
                if next_imm != 0
                    || matches!(
                        pseudo,
                        Pseudo::MapValue | Pseudo::MapIdxValue | Pseudo::BtfId
                    )
                {
                    write!(f, ", {next_imm}")?;
                }
                f.write_str(") ll")
            }
            Decoded::LdAbs { size, imm } => write!(f, "r0 = *({} *)skb[{imm}]", size.asm()),
            Decoded::LdInd { size, src, imm: 0 } => {
                write!(f, "r0 = *({} *)skb[{src}]", size.asm())
            }
            Decoded::LdInd { size, src, imm } => {
                let sign = if imm < 0 { '-' } else { '+' };
                let abs = imm.unsigned_abs();
                write!(f, "r0 = *({} *)skb[{src} {sign} {abs}]", size.asm())
            }
            Decoded::Load {
                size,
                sx,
                dst,
                src,
                off,
            } => {
                let ty = if sx { 's' } else { 'u' };
                let bits = size.bytes() as u32 * 8;
                write!(f, "{dst} = *({ty}{bits} *){}", Addr(src, off))
            }
            Decoded::Store {
                size,
                dst,
                off,
                src,
            } => {
                // Registers print as r: what the kernel log and LLVM 14 print and LLVM reads.
                write!(
                    f,
                    "*({} *){} = {}",
                    size.asm(),
                    Addr(dst, off),
                    operand(src, true)
                )
            }
            Decoded::Atomic {
                size,
                op,
                dst,
                src,
                off,
            } => fmt_atomic(f, size, op, dst, src, off),
            Decoded::Ja { off, long } => {
                let m = if long { "gotol" } else { JmpSpecial::Ja.asm() };
                write!(f, "{m} {}", Off(off))
            }
            Decoded::Jmp {
                wide,
                op,
                dst,
                src,
                off,
            } => write!(
                f,
                "if {} {} {} goto {}",
                R(dst, wide),
                op.asm(),
                operand(src, wide),
                Off(off.into())
            ),
            Decoded::Call(Call::Helper(id)) => {
                write!(f, "call {id}")?;
                match Helper::from_id(id as u32) {
                    Some(h) if id > 0 => write!(f, " # {h}"),
                    _ => Ok(()),
                }
            }
            Decoded::Call(Call::Local(off)) => write!(f, "call pc{}", Off(off)),
            Decoded::Call(Call::Kfunc { btf_id, fd_idx: 0 }) => write!(f, "call kfunc({btf_id})"),
            Decoded::Call(Call::Kfunc { btf_id, fd_idx }) => {
                write!(f, "call kfunc({btf_id}, {fd_idx})")
            }
            Decoded::Exit => f.write_str(JmpSpecial::Exit.asm()),
        }
    }
}

fn fmt_atomic(
    f: &mut fmt::Formatter<'_>,
    size: Size,
    op: AtomicOp,
    dst: Reg,
    src: Reg,
    off: i16,
) -> fmt::Result {
    // LLVM writes the data register of a sub-64-bit atomic as `wN`.
    let wide = size == Size::Dw;
    let (ty, s) = (size.asm(), R(src, wide));
    let addr = Addr(dst, off);
    // LLVM names the 32-bit xchg/cmpxchg `xchg32_32`, the 64-bit ones `xchg_64`.
    let suffix = if wide { "_64" } else { "32_32" };
    match op.form() {
        "lock" => write!(f, "lock *({ty} *){addr} {} {s}", op.asm()),
        "fetch" => write!(f, "{s} = {}(({ty} *){addr}, {s})", op.asm()),
        "xchg" => write!(
            f,
            "{s} = {}{suffix}({dst} {}, {s})",
            op.asm(),
            &AddrTail(off)
        ),
        "cmpxchg" => write!(
            f,
            "{} = {}{suffix}({dst} {}, {}, {s})",
            R(Reg::R0, wide),
            op.asm(),
            &AddrTail(off),
            R(Reg::R0, wide)
        ),
        "load_acquire" => write!(
            f,
            "{} = {}(({ty} *)({src} {}))",
            R(dst, wide),
            op.asm(),
            &AddrTail(off)
        ),
        "store_release" => write!(f, "{}(({ty} *){addr}, {s})", op.asm()),
        other => panic!("internal error: isa/opcodes.txt atomic form `{other}` has no syntax"),
    }
}

/// `+ 8` / `- 4`: the offset part of `r1 + 8` inside an atomic's operand list.
struct AddrTail(i16);

impl fmt::Display for AddrTail {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let sign = if self.0 < 0 { '-' } else { '+' };
        write!(f, "{sign} {}", self.0.unsigned_abs())
    }
}

/// A raw instruction: `.insn 0x18, 0x01, 0, 5` (code, regs, off, imm).
pub fn write_raw(insn: Insn, out: &mut String) {
    let _ = write!(
        out,
        ".insn {:#04x}, {:#04x}, {}, {}",
        insn.code, insn.regs, insn.off, insn.imm
    );
}

/// Appends the text of the instruction at `index` (no newline) and returns how many `Insn`s
/// it covered (2 for `ld_imm64`). An undecodable instruction prints raw and covers 1.
pub fn disassemble_one(insns: &[Insn], index: usize, out: &mut String) -> usize {
    match decode(insns, index) {
        Ok(d) => {
            let _ = write!(out, "{d}");
            d.len()
        }
        Err(_) => {
            if let Some(&i) = insns.get(index) {
                write_raw(i, out);
            }
            1
        }
    }
}

/// One line per instruction, each ending in a newline.
pub fn disassemble(insns: &[Insn]) -> String {
    let mut out = String::with_capacity(insns.len() * 24);
    let mut i = 0;
    while i < insns.len() {
        i += disassemble_one(insns, i, &mut out);
        out.push('\n');
    }
    out
}
