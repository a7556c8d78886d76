//! Typed views of instructions: `decode` reads kernel-format `Insn`s into a `Decoded` value
//! and `Decoded::encode` writes it back, both through the `isa` tables.
//!
//! Invariant: `decode` accepts exactly the encodings whose reserved fields are zero (as the
//! kernel verifier demands), so `decode(encode(d)) == d` and `encode(decode(i)) == i` for every
//! instruction that decodes. Anything else is a `DecodeError`, never a panic.

use super::isa::{
    class_of, AluOp, AluSpecial, AtomicOp, CallKind, Class, Endian, JmpOp, JmpSpecial, Mode,
    MovsxWidth, Pseudo, Size, Source,
};
use super::{Insn, Reg};

/// A source operand: a register or the immediate.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Operand {
    Reg(Reg),
    Imm(i32),
}

/// What a call calls.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Call {
    /// A helper by `enum bpf_func_id` (which may be newer than the table).
    Helper(i32),
    /// A BPF-to-BPF call, offset from the next instruction.
    Local(i32),
    /// A kernel function by BTF id; `fd_idx` selects module BTF in the fd_array (0: vmlinux).
    Kfunc { btf_id: i32, fd_idx: i16 },
}

/// One decoded instruction (`ld_imm64` spans two `Insn`s).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Decoded {
    /// `dst OP= src` on 64 (`wide`) or 32 bits; `mov` is `dst = src`.
    Alu {
        wide: bool,
        op: AluOp,
        dst: Reg,
        src: Operand,
    },
    Neg {
        wide: bool,
        dst: Reg,
    },
    Movsx {
        wide: bool,
        dst: Reg,
        src: Reg,
        width: MovsxWidth,
    },
    AddrSpaceCast {
        dst: Reg,
        src: Reg,
        dst_as: u16,
        src_as: u16,
    },
    /// `bits` is 16, 32 or 64.
    Endian {
        kind: Endian,
        bits: u16,
        dst: Reg,
    },
    LdImm64 {
        dst: Reg,
        pseudo: Pseudo,
        imm: i32,
        next_imm: i32,
    },
    LdAbs {
        size: Size,
        imm: i32,
    },
    LdInd {
        size: Size,
        src: Reg,
        imm: i32,
    },
    /// `dst = *(size *)(src + off)`; `sx` for the v4 sign-extending load.
    Load {
        size: Size,
        sx: bool,
        dst: Reg,
        src: Reg,
        off: i16,
    },
    /// `*(size *)(dst + off) = src`.
    Store {
        size: Size,
        dst: Reg,
        off: i16,
        src: Operand,
    },
    Atomic {
        size: Size,
        op: AtomicOp,
        dst: Reg,
        src: Reg,
        off: i16,
    },
    /// `goto +off`; `long` is the v4 `gotol` with its offset in imm.
    MayGoto {
        off: i16,
    },
    Ja {
        off: i32,
        long: bool,
    },
    /// `if dst OP src goto +off` on 64 (`wide`) or 32 bits.
    Jmp {
        wide: bool,
        op: JmpOp,
        dst: Reg,
        src: Operand,
        off: i16,
    },
    Call(Call),
    Exit,
}

/// Why an encoding is not a valid instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DecodeError {
    #[error("instruction {index}: unknown opcode {code:#04x}")]
    UnknownOpcode { index: usize, code: u8 },
    #[error("instruction {index}: register {reg} does not exist")]
    BadRegister { index: usize, reg: u8 },
    #[error("instruction {index}: reserved field `{field}` is not zero")]
    ReservedField { index: usize, field: &'static str },
    #[error("instruction {index}: invalid operand `{field}`")]
    BadOperand { index: usize, field: &'static str },
    #[error("instruction {index}: ld_imm64 is missing its second half")]
    TruncatedLdImm64 { index: usize },
    #[error("instruction {index} is past the end ({len} instructions)")]
    OutOfRange { index: usize, len: usize },
}

impl Decoded {
    /// The number of `Insn`s this takes: 2 for `ld_imm64`, else 1.
    pub fn len(&self) -> usize {
        match self {
            Decoded::LdImm64 { .. } => 2,
            _ => 1,
        }
    }

    /// Always false: every instruction has at least one slot.
    pub fn is_empty(&self) -> bool {
        false
    }

    /// The 64-bit value of a plain `ld_imm64`.
    pub fn imm64(imm: i32, next_imm: i32) -> u64 {
        (imm as u32 as u64) | ((next_imm as u32 as u64) << 32)
    }

    /// Appends the encoding (one or two `Insn`s) to `out`.
    pub fn encode_into(&self, out: &mut Vec<Insn>) {
        let one = match *self {
            Decoded::Alu {
                wide,
                op,
                dst,
                src: Operand::Imm(i),
            } => Insn::alu_imm(wide, op, dst, i),
            Decoded::Alu {
                wide,
                op,
                dst,
                src: Operand::Reg(s),
            } => Insn::alu_reg(wide, op, dst, s),
            Decoded::Neg { wide, dst } => Insn::neg(wide, dst),
            Decoded::Movsx {
                wide,
                dst,
                src,
                width,
            } => Insn::movsx(wide, dst, src, width),
            Decoded::Endian { kind, bits, dst } => Insn::endian(kind, bits, dst),
            Decoded::AddrSpaceCast {
                dst,
                src,
                dst_as,
                src_as,
            } => Insn::addr_space_cast(dst, src, dst_as, src_as),
            Decoded::MayGoto { off } => Insn::may_goto(off),
            Decoded::LdImm64 {
                dst,
                pseudo,
                imm,
                next_imm,
            } => {
                out.extend(Insn::ld_pseudo(dst, pseudo, imm, next_imm));
                return;
            }
            Decoded::LdAbs { size, imm } => Insn::ld_abs(size, imm),
            Decoded::LdInd { size, src, imm } => Insn::ld_ind(size, src, imm),
            Decoded::Load {
                size,
                sx: false,
                dst,
                src,
                off,
            } => Insn::load(size, dst, src, off),
            Decoded::Load {
                size,
                sx: true,
                dst,
                src,
                off,
            } => Insn::load_sx(size, dst, src, off),
            Decoded::Store {
                size,
                dst,
                off,
                src: Operand::Imm(i),
            } => Insn::store_imm(size, dst, off, i),
            Decoded::Store {
                size,
                dst,
                off,
                src: Operand::Reg(s),
            } => Insn::store_reg(size, dst, off, s),
            Decoded::Atomic {
                size,
                op,
                dst,
                src,
                off,
            } => Insn::atomic(size, op, dst, off, src),
            Decoded::Ja { off, long: true } => Insn::gotol(off),
            Decoded::Ja { off, long: false } => Insn::ja(off as i16),
            Decoded::Jmp {
                wide,
                op,
                dst,
                src: Operand::Imm(i),
                off,
            } => Insn::jmp_imm_w(wide, op, dst, i, off),
            Decoded::Jmp {
                wide,
                op,
                dst,
                src: Operand::Reg(s),
                off,
            } => Insn::jmp_reg_w(wide, op, dst, s, off),
            Decoded::Call(Call::Helper(id)) => Insn::call_helper_id(id),
            Decoded::Call(Call::Local(off)) => Insn::call_local(off),
            Decoded::Call(Call::Kfunc { btf_id, fd_idx }) => Insn::call_kfunc(btf_id, fd_idx),
            Decoded::Exit => Insn::exit(),
        };
        out.push(one);
    }

    pub fn encode(&self) -> Vec<Insn> {
        let mut v = Vec::with_capacity(2);
        self.encode_into(&mut v);
        v
    }

    /// The instructions of `forms`, one after another.
    pub fn encode_all(forms: &[Decoded]) -> Vec<Insn> {
        let mut v = Vec::with_capacity(forms.len());
        for d in forms {
            d.encode_into(&mut v);
        }
        v
    }
}

/// Field checks shared by the decoders: each returns the error naming the field.
struct Check {
    index: usize,
    insn: Insn,
}

impl Check {
    fn reg(&self, n: u8) -> Result<Reg, DecodeError> {
        Reg::new(n).ok_or(DecodeError::BadRegister {
            index: self.index,
            reg: n,
        })
    }
    fn dst(&self) -> Result<Reg, DecodeError> {
        self.reg(self.insn.dst())
    }
    fn src(&self) -> Result<Reg, DecodeError> {
        self.reg(self.insn.src())
    }
    fn zero(&self, field: &'static str, v: i64) -> Result<(), DecodeError> {
        if v == 0 {
            Ok(())
        } else {
            Err(DecodeError::ReservedField {
                index: self.index,
                field,
            })
        }
    }
    fn bad(&self, field: &'static str) -> DecodeError {
        DecodeError::BadOperand {
            index: self.index,
            field,
        }
    }
    fn unknown(&self) -> DecodeError {
        DecodeError::UnknownOpcode {
            index: self.index,
            code: self.insn.code,
        }
    }
    /// The source operand chosen by the source bit, checking the unused field is zero.
    fn operand(&self) -> Result<Operand, DecodeError> {
        if self.insn.code & Source::X.value() != 0 {
            self.zero("imm", self.insn.imm.into())?;
            Ok(Operand::Reg(self.src()?))
        } else {
            self.zero("src_reg", self.insn.src().into())?;
            Ok(Operand::Imm(self.insn.imm))
        }
    }
}

/// Decodes the instruction at `index`; `Decoded::len` says how many `Insn`s it spans.
pub fn decode(insns: &[Insn], index: usize) -> Result<Decoded, DecodeError> {
    let Some(&insn) = insns.get(index) else {
        return Err(DecodeError::OutOfRange {
            index,
            len: insns.len(),
        });
    };
    let c = Check { index, insn };
    match class_of(insn.code) {
        Class::Alu | Class::Alu64 => decode_alu(&c),
        Class::Jmp | Class::Jmp32 => decode_jmp(&c),
        Class::Ld => decode_ld(&c, insns.get(index + 1).copied()),
        Class::Ldx | Class::St | Class::Stx => decode_mem(&c),
    }
}

fn decode_alu(c: &Check) -> Result<Decoded, DecodeError> {
    let insn = c.insn;
    let wide = class_of(insn.code) == Class::Alu64;
    let op_bits = insn.code & 0xf0;
    let x = insn.code & Source::X.value() != 0;
    let dst = c.dst()?;
    if op_bits == AluSpecial::Neg.value() {
        c.zero("source", x.into())?;
        c.zero("src_reg", insn.src().into())?;
        c.zero("off", insn.off.into())?;
        c.zero("imm", insn.imm.into())?;
        return Ok(Decoded::Neg { wide, dst });
    }
    if op_bits == AluSpecial::End.value() {
        c.zero("src_reg", insn.src().into())?;
        c.zero("off", insn.off.into())?;
        let kind = if wide {
            c.zero("source", x.into())?;
            Endian::Bswap
        } else if x {
            Endian::Be
        } else {
            Endian::Le
        };
        let bits = match insn.imm {
            16 | 32 | 64 => insn.imm as u16,
            _ => return Err(c.bad("imm")),
        };
        return Ok(Decoded::Endian { kind, bits, dst });
    }
    let cast = AluSpecial::AddrSpaceCast;
    if op_bits == cast.value() && insn.off == cast.off() && wide && x {
        let (dst_as, src_as) = ((insn.imm as u32 >> 16) as u16, insn.imm as u16);
        return Ok(Decoded::AddrSpaceCast {
            dst,
            src: c.src()?,
            dst_as,
            src_as,
        });
    }
    if op_bits == AluSpecial::Movsx.value() && insn.off != 0 {
        let width = MovsxWidth::from_value(insn.off).ok_or_else(|| c.bad("off"))?;
        if !x || (!wide && width == MovsxWidth::S32) {
            return Err(c.bad("off"));
        }
        c.zero("imm", insn.imm.into())?;
        return Ok(Decoded::Movsx {
            wide,
            dst,
            src: c.src()?,
            width,
        });
    }
    let op = AluOp::ALL
        .iter()
        .copied()
        .find(|op| op.value() == op_bits && op.off() == insn.off)
        .ok_or_else(|| {
            if AluOp::from_value(op_bits).is_some() {
                c.bad("off")
            } else {
                c.unknown()
            }
        })?;
    Ok(Decoded::Alu {
        wide,
        op,
        dst,
        src: c.operand()?,
    })
}

fn decode_jmp(c: &Check) -> Result<Decoded, DecodeError> {
    let insn = c.insn;
    let wide = class_of(insn.code) == Class::Jmp;
    let op_bits = insn.code & 0xf0;
    let x = insn.code & Source::X.value() != 0;
    if let Some(op) = JmpOp::from_value(op_bits) {
        let dst = c.dst()?;
        return Ok(Decoded::Jmp {
            wide,
            op,
            dst,
            src: c.operand()?,
            off: insn.off,
        });
    }
    let special = JmpSpecial::from_value(op_bits).ok_or_else(|| c.unknown())?;
    c.zero("source", x.into())?;
    c.zero("dst_reg", insn.dst().into())?;
    match special {
        JmpSpecial::Ja => {
            c.zero("src_reg", insn.src().into())?;
            if wide {
                c.zero("imm", insn.imm.into())?;
                Ok(Decoded::Ja {
                    off: insn.off.into(),
                    long: false,
                })
            } else {
                c.zero("off", insn.off.into())?;
                Ok(Decoded::Ja {
                    off: insn.imm,
                    long: true,
                })
            }
        }
        JmpSpecial::Call | JmpSpecial::Exit | JmpSpecial::MayGoto if !wide => Err(c.unknown()),
        JmpSpecial::MayGoto => {
            c.zero("src_reg", insn.src().into())?;
            c.zero("imm", insn.imm.into())?;
            Ok(Decoded::MayGoto { off: insn.off })
        }
        JmpSpecial::Call => {
            let kind = CallKind::from_value(insn.src()).ok_or_else(|| c.bad("src_reg"))?;
            if kind != CallKind::Kfunc {
                c.zero("off", insn.off.into())?;
            }
            Ok(Decoded::Call(match kind {
                CallKind::Helper => Call::Helper(insn.imm),
                CallKind::Local => Call::Local(insn.imm),
                CallKind::Kfunc => Call::Kfunc {
                    btf_id: insn.imm,
                    fd_idx: insn.off,
                },
            }))
        }
        JmpSpecial::Exit => {
            c.zero("src_reg", insn.src().into())?;
            c.zero("off", insn.off.into())?;
            c.zero("imm", insn.imm.into())?;
            Ok(Decoded::Exit)
        }
    }
}

fn size_mode(c: &Check) -> Result<(Size, Mode), DecodeError> {
    let size = Size::from_value(c.insn.code & 0x18).ok_or_else(|| c.unknown())?;
    let mode = Mode::from_value(c.insn.code & 0xe0).ok_or_else(|| c.unknown())?;
    Ok((size, mode))
}

fn decode_ld(c: &Check, next: Option<Insn>) -> Result<Decoded, DecodeError> {
    let insn = c.insn;
    let (size, mode) = size_mode(c)?;
    match mode {
        Mode::Imm if size == Size::Dw => {
            let next = next.ok_or(DecodeError::TruncatedLdImm64 { index: c.index })?;
            c.zero("off", insn.off.into())?;
            let pseudo = Pseudo::from_value(insn.src()).ok_or_else(|| c.bad("src_reg"))?;
            let second = Check {
                index: c.index + 1,
                insn: next,
            };
            second.zero("code", next.code.into())?;
            second.zero("regs", next.regs.into())?;
            second.zero("off", next.off.into())?;
            // The kernel rejects a non-zero second half where it has no meaning.
            if matches!(pseudo, Pseudo::MapFd | Pseudo::MapIdx | Pseudo::Func) {
                second.zero("imm", next.imm.into())?;
            }
            Ok(Decoded::LdImm64 {
                dst: c.dst()?,
                pseudo,
                imm: insn.imm,
                next_imm: next.imm,
            })
        }
        Mode::Abs | Mode::Ind if size != Size::Dw => {
            c.zero("dst_reg", insn.dst().into())?;
            c.zero("off", insn.off.into())?;
            if mode == Mode::Abs {
                c.zero("src_reg", insn.src().into())?;
                Ok(Decoded::LdAbs {
                    size,
                    imm: insn.imm,
                })
            } else {
                Ok(Decoded::LdInd {
                    size,
                    src: c.src()?,
                    imm: insn.imm,
                })
            }
        }
        _ => Err(c.unknown()),
    }
}

fn decode_mem(c: &Check) -> Result<Decoded, DecodeError> {
    let insn = c.insn;
    let (size, mode) = size_mode(c)?;
    let (dst, off) = (c.dst()?, insn.off);
    match (class_of(insn.code), mode) {
        (Class::Ldx, Mode::Mem) | (Class::Ldx, Mode::Memsx) => {
            let sx = mode == Mode::Memsx;
            if sx && size == Size::Dw {
                return Err(c.unknown());
            }
            c.zero("imm", insn.imm.into())?;
            Ok(Decoded::Load {
                size,
                sx,
                dst,
                src: c.src()?,
                off,
            })
        }
        (Class::St, Mode::Mem) => {
            c.zero("src_reg", insn.src().into())?;
            Ok(Decoded::Store {
                size,
                dst,
                off,
                src: Operand::Imm(insn.imm),
            })
        }
        (Class::Stx, Mode::Mem) => {
            c.zero("imm", insn.imm.into())?;
            Ok(Decoded::Store {
                size,
                dst,
                off,
                src: Operand::Reg(c.src()?),
            })
        }
        (Class::Stx, Mode::Atomic) => {
            let op = AtomicOp::from_value(insn.imm).ok_or_else(|| c.bad("imm"))?;
            let any_size = matches!(op, AtomicOp::LoadAcquire | AtomicOp::StoreRelease);
            if !any_size && !matches!(size, Size::W | Size::Dw) {
                return Err(c.unknown());
            }
            Ok(Decoded::Atomic {
                size,
                op,
                dst,
                src: c.src()?,
                off,
            })
        }
        _ => Err(c.unknown()),
    }
}
