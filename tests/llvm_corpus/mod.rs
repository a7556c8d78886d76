//! The differential test's corpus, generated from the `isa` tables: every ALU op × 32/64 ×
//! imm/reg, every jump op × JMP/JMP32 × imm/reg, every load/store size and mode (incl. the v4
//! sign-extending loads), every atomic op and size, the byte swaps and sign-extending moves,
//! plain `ld_imm64`, legacy packet loads, helper calls, `goto`/`gotol`/`may_goto` and `exit` — each with
//! boundary immediates and offsets (0, ±1, i32 and i16 bounds).
//!
//! Each item is written in LLVM's assembler syntax by this file (not by strobe's
//! disassembler, so that a shared misreading would show up) together with the `Decoded` value
//! it must encode to. Adding a row to `isa/opcodes.txt` adds items here through the tables'
//! `ALL` arrays; `uncovered_opcodes` then proves every opcode byte the decoder accepts is in
//! the corpus or named in `LLVM_CANNOT_EXPRESS` with the reason.
#![allow(dead_code)]

use std::collections::BTreeSet;

use strobe::asm::decode::{decode, Call, Decoded, Operand};
use strobe::asm::isa::{AluOp, AtomicOp, Endian, JmpOp, JmpSpecial, MovsxWidth, Pseudo, Size};
use strobe::asm::{Insn, Reg};

/// One corpus line and what it must assemble to.
#[derive(Clone, Debug)]
pub struct Item {
    pub text: String,
    pub expect: Decoded,
}

/// Forms the oracle's assembler has no syntax for (checked by strobe's own round-trip tests,
/// not here): pseudo `ld_imm64` sources other than a plain constant (LLVM only emits them via
/// relocations against symbols), BPF-to-BPF and kfunc calls by number (LLVM writes them
/// against symbols), `ld_ind` with a non-zero immediate and 64-bit `ld_abs`/`ld_ind`.
pub const LLVM_CANNOT_EXPRESS: &[&str] = &[
    "ld_imm64 with a pseudo source (map_fd, map_value, btf_id, func, map_idx, map_idx_value)",
    "call with src_reg 1 (local) or 2 (kfunc) by number",
    "ld_ind with a non-zero immediate; ld_abs/ld_ind of u64",
];

const IMMS: [i32; 7] = [0, -1, 1, i32::MIN, i32::MAX, 0x7fff, -0x8000];
const OFFS: [i16; 6] = [0, -1, 1, i16::MIN, i16::MAX, 8];

fn reg(n: u8) -> Reg {
    Reg::new(n).expect("register number below 11")
}

/// `r3` / `w3`.
fn r(n: Reg, wide: bool) -> String {
    format!("{}{}", if wide { 'r' } else { 'w' }, n.num())
}

/// `(r1 + 8)` / `(r10 - 4)`.
fn addr(base: Reg, off: i16) -> String {
    let sign = if off < 0 { '-' } else { '+' };
    format!("(r{} {} {})", base.num(), sign, off.unsigned_abs())
}

fn jump_off(off: i32) -> String {
    if off >= 0 {
        format!("+{off}")
    } else {
        off.to_string()
    }
}

fn item(text: String, expect: Decoded) -> Item {
    Item { text, expect }
}

/// The whole corpus, in a fixed order.
pub fn corpus() -> Vec<Item> {
    let mut v = Vec::new();
    alu(&mut v);
    ld_imm64(&mut v);
    memory(&mut v);
    atomics(&mut v);
    jumps(&mut v);
    v
}

fn alu(v: &mut Vec<Item>) {
    let mut k = 0u8;
    for wide in [true, false] {
        for op in AluOp::ALL {
            for imm in IMMS {
                let dst = reg(k % 10);
                k = k.wrapping_add(1);
                let text = format!("{} {} {imm}", r(dst, wide), op.asm());
                let src = Operand::Imm(imm);
                v.push(item(text, Decoded::Alu { wide, op, dst, src }));
            }
            for (d, s) in [(0, 1), (9, 10), (5, 5)] {
                let (dst, src) = (reg(d), reg(s));
                let text = format!("{} {} {}", r(dst, wide), op.asm(), r(src, wide));
                let src = Operand::Reg(src);
                v.push(item(text, Decoded::Alu { wide, op, dst, src }));
            }
        }
        for d in [0, 9] {
            let dst = reg(d);
            v.push(item(
                format!("{0} = -{0}", r(dst, wide)),
                Decoded::Neg { wide, dst },
            ));
        }
        for width in MovsxWidth::ALL {
            // A 32-bit move cannot widen from 32 bits: LLVM and the kernel reject `(s32)` there.
            if !wide && width.value() == 32 {
                continue;
            }
            let (dst, src) = (reg(1), reg(2));
            let text = format!("{} = ({}){}", r(dst, wide), width.asm(), r(src, wide));
            v.push(item(
                text,
                Decoded::Movsx {
                    wide,
                    dst,
                    src,
                    width,
                },
            ));
        }
    }
    for kind in Endian::ALL {
        for bits in [16u16, 32, 64] {
            let dst = reg(bits as u8 % 10);
            let text = format!("r{0} = {1}{bits} r{0}", dst.num(), kind.asm());
            v.push(item(text, Decoded::Endian { kind, bits, dst }));
        }
    }
}

fn ld_imm64(v: &mut Vec<Item>) {
    let values: [(u64, &str); 8] = [
        (0, "0"),
        (1, "1"),
        (u64::MAX, "-1"),
        (0x1_2345_6789, "0x123456789"),
        (0x8000_0000_0000_0000, "0x8000000000000000"),
        (0x7fff_ffff_ffff_ffff, "9223372036854775807"),
        (0xffff_ffff, "4294967295"),
        (0xdead_beef_0000_0001, "0xdeadbeef00000001"),
    ];
    for (i, (value, text)) in values.into_iter().enumerate() {
        let dst = reg(i as u8 % 10);
        v.push(item(
            format!("r{} = {text} ll", dst.num()),
            Decoded::LdImm64 {
                dst,
                pseudo: Pseudo::None,
                imm: value as u32 as i32,
                next_imm: (value >> 32) as u32 as i32,
            },
        ));
    }
}

fn memory(v: &mut Vec<Item>) {
    for size in Size::ALL {
        let bits = size.bytes() as u32 * 8;
        for (i, off) in OFFS.into_iter().enumerate() {
            let (dst, src) = (reg(i as u8 % 10), reg(10 - i as u8 % 3));
            v.push(item(
                format!("r{} = *(u{bits} *){}", dst.num(), addr(src, off)),
                Decoded::Load {
                    size,
                    sx: false,
                    dst,
                    src,
                    off,
                },
            ));
            if size != Size::Dw {
                v.push(item(
                    format!("r{} = *(s{bits} *){}", dst.num(), addr(src, off)),
                    Decoded::Load {
                        size,
                        sx: true,
                        dst,
                        src,
                        off,
                    },
                ));
            }
            v.push(item(
                format!("*({} *){} = r{}", size.asm(), addr(dst, off), src.num()),
                Decoded::Store {
                    size,
                    dst,
                    off,
                    src: Operand::Reg(src),
                },
            ));
        }
        for (i, imm) in IMMS.into_iter().enumerate() {
            let (dst, off) = (reg(i as u8 % 11), OFFS[i % OFFS.len()]);
            v.push(item(
                format!("*({} *){} = {imm}", size.asm(), addr(dst, off)),
                Decoded::Store {
                    size,
                    dst,
                    off,
                    src: Operand::Imm(imm),
                },
            ));
        }
        if size != Size::Dw {
            for imm in [0, 1, -1, i32::MAX, i32::MIN] {
                v.push(item(
                    format!("r0 = *({} *)skb[{imm}]", size.asm()),
                    Decoded::LdAbs { size, imm },
                ));
            }
            for src in [1, 9] {
                let src = reg(src);
                v.push(item(
                    format!("r0 = *({} *)skb[r{}]", size.asm(), src.num()),
                    Decoded::LdInd { size, src, imm: 0 },
                ));
            }
        }
    }
    // Spellings LLVM also accepts for 32-bit subregisters (same encodings as the r forms).
    v.push(item(
        "w1 = *(u8 *)(r2 + 8)".into(),
        Decoded::Load {
            size: Size::B,
            sx: false,
            dst: reg(1),
            src: reg(2),
            off: 8,
        },
    ));
    v.push(item(
        "*(u16 *)(r1 + 0) = w2".into(),
        Decoded::Store {
            size: Size::H,
            dst: reg(1),
            off: 0,
            src: Operand::Reg(reg(2)),
        },
    ));
}

fn atomics(v: &mut Vec<Item>) {
    for op in AtomicOp::ALL {
        let sizes: &[Size] = match op.form() {
            "load_acquire" | "store_release" => &Size::ALL,
            _ => &[Size::W, Size::Dw],
        };
        for &size in sizes {
            let wide = size == Size::Dw;
            for (i, off) in [0i16, -8, i16::MAX, i16::MIN].into_iter().enumerate() {
                let (dst, src) = (reg(1 + i as u8), reg(2 + i as u8 * 2));
                let (s, ty) = (r(src, wide), size.asm());
                let a = addr(dst, off);
                let tail = &a[3..a.len() - 1]; // `+ 8` inside `(r1 + 8)`
                let suffix = if wide { "_64" } else { "32_32" };
                let text = match op.form() {
                    "lock" => format!("lock *({ty} *){a} {} {s}", op.asm()),
                    "fetch" => format!("{s} = {}(({ty} *){a}, {s})", op.asm()),
                    "xchg" => format!("{s} = {}{suffix}(r{} {tail}, {s})", op.asm(), dst.num()),
                    "cmpxchg" => {
                        let r0 = r(reg(0), wide);
                        format!(
                            "{r0} = {}{suffix}(r{} {tail}, {r0}, {s})",
                            op.asm(),
                            dst.num()
                        )
                    }
                    // Here `dst` of the encoding is the destination register, `src` the base.
                    "load_acquire" => {
                        format!(
                            "{} = {}(({ty} *){})",
                            r(src, wide),
                            op.asm(),
                            addr(dst, off)
                        )
                    }
                    "store_release" => format!("{}(({ty} *){a}, {s})", op.asm()),
                    other => panic!("corpus: atomic form `{other}` has no LLVM syntax here"),
                };
                let expect = if op.form() == "load_acquire" {
                    Decoded::Atomic {
                        size,
                        op,
                        dst: src,
                        src: dst,
                        off,
                    }
                } else {
                    Decoded::Atomic {
                        size,
                        op,
                        dst,
                        src,
                        off,
                    }
                };
                v.push(item(text, expect));
            }
        }
    }
}

fn jumps(v: &mut Vec<Item>) {
    let mut k = 0usize;
    for wide in [true, false] {
        for op in JmpOp::ALL {
            for imm in [0, -1, i32::MIN, i32::MAX] {
                let off = OFFS[k % OFFS.len()];
                let dst = reg((k % 11) as u8);
                k += 1;
                v.push(item(
                    format!(
                        "if {} {} {imm} goto {}",
                        r(dst, wide),
                        op.asm(),
                        jump_off(off.into())
                    ),
                    Decoded::Jmp {
                        wide,
                        op,
                        dst,
                        src: Operand::Imm(imm),
                        off,
                    },
                ));
            }
            for (d, s) in [(1, 2), (10, 0)] {
                let off = OFFS[k % OFFS.len()];
                k += 1;
                let (dst, src) = (reg(d), reg(s));
                v.push(item(
                    format!(
                        "if {} {} {} goto {}",
                        r(dst, wide),
                        op.asm(),
                        r(src, wide),
                        jump_off(off.into())
                    ),
                    Decoded::Jmp {
                        wide,
                        op,
                        dst,
                        src: Operand::Reg(src),
                        off,
                    },
                ));
            }
        }
    }
    for off in OFFS {
        let off = i32::from(off);
        v.push(item(
            format!("goto {}", jump_off(off)),
            Decoded::Ja { off, long: false },
        ));
        // LLVM's assembler takes only 16-bit `gotol` immediates; wider ones are strobe-only.
        v.push(item(
            format!("gotol {}", jump_off(off)),
            Decoded::Ja { off, long: true },
        ));
        v.push(item(
            format!("{} {}", JmpSpecial::MayGoto.asm(), jump_off(off)),
            Decoded::MayGoto { off: off as i16 },
        ));
    }
    for id in [0, 1, 6, 211, i32::MAX, -1] {
        v.push(item(format!("call {id}"), Decoded::Call(Call::Helper(id))));
    }
    v.push(item("exit".into(), Decoded::Exit));
}

/// The expected bytes of the whole corpus, in order.
pub fn expected_insns(items: &[Item]) -> Vec<Insn> {
    items.iter().flat_map(|i| i.expect.encode()).collect()
}

/// Every opcode byte the decoder accepts in some encoding: probed with register, offset and
/// immediate patterns that satisfy each form's reserved-field rules.
pub fn valid_opcodes() -> BTreeSet<u8> {
    let mut imms: Vec<i32> = vec![0, 1, 16, 32, 64];
    imms.extend(AtomicOp::ALL.iter().map(|op| op.value()));
    let mut codes = BTreeSet::new();
    for code in 0..=255u8 {
        'probe: for regs in [0x00, 0x01, 0x21, 0x10] {
            for off in [0i16, 1, 8, 16, 32] {
                for &imm in &imms {
                    // Raw fields on purpose: this sweeps every opcode byte, valid or not, to
                    // find what the decoder accepts, so no typed builder applies.
                    let insns = [
                        Insn::new(code, regs & 0xf, regs >> 4, off, imm),
                        Insn::default(),
                    ];
                    if decode(&insns, 0).is_ok() {
                        codes.insert(code);
                        break 'probe;
                    }
                }
            }
        }
    }
    codes
}

/// Opcode bytes the decoder accepts that no corpus item uses.
pub fn uncovered_opcodes(items: &[Item]) -> BTreeSet<u8> {
    let used: BTreeSet<u8> = expected_insns(items).iter().map(|i| i.code).collect();
    // The second half of an ld_imm64 has code 0; it is covered by the ld_imm64 items.
    valid_opcodes()
        .difference(&used)
        .copied()
        .filter(|&c| c != 0)
        .collect()
}
