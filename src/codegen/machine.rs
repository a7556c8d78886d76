//! Machine emission: each operation over virtual registers becomes kernel instructions over
//! the allocated physical registers and frame offsets; jumps still name labels.
//!
//! Input: the allocated instruction list, the register of each virtual register, the frame
//! layout. Output: [`MItem`]s (instructions with their relocation, jump label, span and
//! comment; label positions), which `finish` cleans up and resolves.
//! Invariant: a helper call's arguments are moved into r1..r5 as a parallel move (a value
//! already in an argument register is never overwritten before it is read; cycles are broken
//! with XOR swaps, so no scratch register is needed).

use super::builder::{Arg, Inst, Label, Mem, Op, Src, VReg};
use super::stack::Frame;
use super::CodegenError;
use crate::asm::isa::{AluOp, AtomicOp};
use crate::asm::{Insn, Reg};
use crate::diag::Span;
use crate::template::{Field, RelocKind};

/// One emitted instruction or a label position.
#[derive(Clone, Debug)]
pub(crate) enum MItem {
    Insn {
        insn: Insn,
        reloc: Option<(Field, RelocKind)>,
        target: Option<Label>,
        span: Span,
        comment: Option<String>,
    },
    Label(Label),
}

struct Emitter<'a> {
    regs: &'a [Option<Reg>],
    frame: &'a Frame,
    out: Vec<MItem>,
    span: Span,
    comment: Option<String>,
}

pub(crate) fn emit(
    insts: &[Inst],
    regs: &[Option<Reg>],
    frame: &Frame,
) -> Result<Vec<MItem>, CodegenError> {
    let mut e = Emitter {
        regs,
        frame,
        out: Vec::with_capacity(insts.len() + insts.len() / 2),
        span: Span::default(),
        comment: None,
    };
    for inst in insts {
        e.span = inst.span;
        e.comment = inst.comment.clone();
        e.op(&inst.op)?;
    }
    Ok(e.out)
}

impl Emitter<'_> {
    fn r(&self, v: VReg) -> Reg {
        self.regs[v.0 as usize]
            .unwrap_or_else(|| panic!("internal error: codegen vreg {} has no register", v.0))
    }

    fn push(&mut self, insn: Insn) {
        self.push_full(insn, None, None);
    }

    fn push_full(&mut self, insn: Insn, reloc: Option<(Field, RelocKind)>, target: Option<Label>) {
        self.out.push(MItem::Insn {
            insn,
            reloc,
            target,
            span: self.span,
            comment: self.comment.take(),
        });
    }

    fn slot_off(&self, s: super::builder::Slot, off: i32) -> Result<i16, CodegenError> {
        let base = self.frame.offsets[s.0 as usize]
            .unwrap_or_else(|| panic!("internal error: codegen slot {} not laid out", s.0));
        off16(base + off)
    }

    fn mem(&self, m: Mem, off: i32) -> Result<(Reg, i16), CodegenError> {
        Ok(match m {
            Mem::Reg(v) => (self.r(v), off16(off)?),
            Mem::Slot(s) => (Reg::FP, self.slot_off(s, off)?),
        })
    }

    fn op(&mut self, op: &Op) -> Result<(), CodegenError> {
        match *op {
            Op::Entry { ctx } => self.push(Insn::mov64_reg(self.r(ctx), Reg::R1)),
            Op::Param { dst, n } => self.push(Insn::mov64_reg(self.r(dst), reg(n))),
            Op::Alu { wide, op, dst, src } => {
                let d = self.r(dst);
                self.push(match src {
                    Src::Reg(s) => Insn::alu_reg(wide, op, d, self.r(s)),
                    Src::Imm(i) => Insn::alu_imm(wide, op, d, i),
                });
            }
            Op::Neg { dst } => self.push(Insn::neg(true, self.r(dst))),
            Op::LdImm64 { dst, value } => {
                let [lo, hi] = Insn::ld_imm64(self.r(dst), value);
                self.push(lo);
                self.push(hi);
            }
            Op::LdMap {
                dst,
                map,
                value_off,
            } => {
                let (pair, kind) = match value_off {
                    None => (Insn::ld_map_fd(self.r(dst), 0), RelocKind::MapFd { map }),
                    Some(off) => (
                        Insn::ld_map_value(self.r(dst), 0, off as i32),
                        RelocKind::MapValue { map, off },
                    ),
                };
                self.push_full(pair[0], Some((Field::Imm, kind)), None);
                self.push(pair[1]);
            }
            Op::LdKsym { dst, btf_id } => {
                let [lo, hi] = Insn::ld_ksym(self.r(dst), btf_id);
                self.push(lo);
                self.push(hi);
            }
            Op::MovReloc { dst, kind } => self.push_full(
                Insn::mov64_imm(self.r(dst), 0),
                Some((Field::Imm, kind)),
                None,
            ),
            Op::LdImm64Reloc { dst, kind } => {
                let [lo, hi] = Insn::ld_imm64(self.r(dst), 0);
                self.push_full(lo, Some((Field::Imm64, kind)), None);
                self.push(hi);
            }
            Op::Load {
                size,
                dst,
                base,
                off,
                reloc,
            } => {
                let (b, o) = self.mem(base, off)?;
                let insn = Insn::load(size, self.r(dst), b, o);
                self.push_full(insn, reloc.map(|k| (Field::Off, k)), None);
            }
            Op::Store {
                size,
                base,
                off,
                src,
            } => {
                let (b, o) = self.mem(base, off)?;
                self.push(match src {
                    Src::Reg(s) => Insn::store_reg(size, b, o, self.r(s)),
                    Src::Imm(i) => Insn::store_imm(size, b, o, i),
                });
            }
            Op::AtomicAdd {
                size,
                base,
                off,
                src,
            } => {
                let insn =
                    Insn::atomic(size, AtomicOp::Add, self.r(base), off16(off)?, self.r(src));
                self.push(insn);
            }
            Op::SlotAddr { dst, slot, off } => {
                let d = self.r(dst);
                let o = self.slot_off(slot, off)?;
                self.push(Insn::mov64_reg(d, Reg::FP));
                self.push(Insn::alu64_imm(AluOp::Add, d, o as i32));
            }
            Op::Jmp {
                wide,
                op,
                a,
                b,
                target,
            } => {
                let a = self.r(a);
                let insn = match b {
                    Src::Reg(s) => Insn::jmp_reg_w(wide, op, a, self.r(s), 0),
                    Src::Imm(i) => Insn::jmp_imm_w(wide, op, a, i, 0),
                };
                self.push_full(insn, None, Some(target));
            }
            Op::Ja { target } => self.push_full(Insn::ja(0), None, Some(target)),
            Op::Bind(l) => self.out.push(MItem::Label(l)),
            Op::KeepAlive(_) => {}
            Op::Call {
                helper,
                ref args,
                ret,
            } => self.call(helper, args, ret)?,
            Op::Exit { value } => {
                match value {
                    Src::Reg(v) => self.push(Insn::mov64_reg(Reg::R0, self.r(v))),
                    Src::Imm(i) => self.push(Insn::mov64_imm(Reg::R0, i)),
                }
                self.push(Insn::exit());
            }
        }
        Ok(())
    }

    fn call(
        &mut self,
        helper: super::builder::Callee,
        args: &[Arg],
        ret: Option<VReg>,
    ) -> Result<(), CodegenError> {
        // Register arguments first (a parallel move), then the others, which read nothing.
        let mut moves: Vec<(u8, u8)> = args
            .iter()
            .enumerate()
            .filter_map(|(i, a)| match a {
                Arg::Reg(v) => Some((i as u8 + 1, self.r(*v).num())),
                _ => None,
            })
            .filter(|(d, s)| d != s)
            .collect();
        while !moves.is_empty() {
            // A move is ready when no other pending move still reads its destination.
            let ready = moves
                .iter()
                .position(|&(d, _)| !moves.iter().any(|&(md, s)| s == d && md != d));
            match ready {
                Some(i) => {
                    let (d, s) = moves.remove(i);
                    self.push(Insn::mov64_reg(reg(d), reg(s)));
                }
                None => {
                    // Every destination is still needed: swap one pair in place.
                    let (d, s) = moves.remove(0);
                    for (x, y) in [(d, s), (s, d), (d, s)] {
                        self.push(Insn::alu64_reg(AluOp::Xor, reg(x), reg(y)));
                    }
                    for m in moves.iter_mut() {
                        if m.1 == d {
                            m.1 = s;
                        }
                    }
                    // A move that now reads its own destination is done.
                    moves.retain(|m| m.0 != m.1);
                }
            }
        }
        for (i, a) in args.iter().enumerate() {
            let d = reg(i as u8 + 1);
            match *a {
                Arg::Reg(_) => {}
                Arg::Imm(v) => match i32::try_from(v) {
                    Ok(v) => self.push(Insn::mov64_imm(d, v)),
                    Err(_) => {
                        let [lo, hi] = Insn::ld_imm64(d, v as u64);
                        self.push(lo);
                        self.push(hi);
                    }
                },
                Arg::Map(map) => {
                    let [lo, hi] = Insn::ld_map_fd(d, 0);
                    self.push_full(lo, Some((Field::Imm, RelocKind::MapFd { map })), None);
                    self.push(hi);
                }
                Arg::Slot(s, off) => {
                    let o = self.slot_off(s, off)?;
                    self.push(Insn::mov64_reg(d, Reg::FP));
                    self.push(Insn::alu64_imm(AluOp::Add, d, o as i32));
                }
                Arg::Func(func) => {
                    // The offset is filled in when the subprograms are linked.
                    let [mut lo, hi] = Insn::ld_imm64(d, 0);
                    lo.set_src(crate::template::PSEUDO_FUNC);
                    self.push_full(lo, Some((Field::Imm, RelocKind::Subprog { func })), None);
                    self.push(hi);
                }
            }
        }
        self.push(match helper {
            super::builder::Callee::Helper(h) => Insn::call_helper(h),
            super::builder::Callee::Kfunc(id) => Insn::call_kfunc(id as i32, 0),
        });
        if let Some(v) = ret {
            let r = self.r(v);
            if r != Reg::R0 {
                self.push(Insn::mov64_reg(r, Reg::R0));
            }
        }
        Ok(())
    }
}

fn reg(n: u8) -> Reg {
    Reg::new(n).unwrap_or_else(|| panic!("internal error: no register r{n}"))
}

fn off16(off: i32) -> Result<i16, CodegenError> {
    i16::try_from(off).map_err(|_| CodegenError::OffsetRange { off })
}
