//! Uses, definitions, control-flow successors and liveness of the builder's operations.
//!
//! Input: the instruction list. Output: per instruction, the virtual registers live after it
//! (backward dataflow to a fixpoint, so loops are exact), and per register a conservative live
//! interval `[first, last]` in instruction order. Every later pass (register allocation, stack
//! slot lifetimes) reads these; nothing here changes the program.

use super::builder::{Arg, Inst, Label, Mem, Op, Src, VReg};

impl Op {
    /// Registers this operation reads.
    pub(crate) fn uses(&self, out: &mut Vec<VReg>) {
        out.clear();
        let src = |s: &Src, out: &mut Vec<VReg>| {
            if let Src::Reg(r) = s {
                out.push(*r)
            }
        };
        let mem = |m: &Mem, out: &mut Vec<VReg>| {
            if let Mem::Reg(r) = m {
                out.push(*r)
            }
        };
        match self {
            Op::Alu {
                op, dst, src: s, ..
            } => {
                if *op != crate::asm::isa::AluOp::Mov {
                    out.push(*dst);
                }
                src(s, out);
            }
            Op::Neg { dst } => out.push(*dst),
            Op::Load { base, .. } => mem(base, out),
            Op::Store { base, src: s, .. } => {
                mem(base, out);
                src(s, out);
            }
            Op::AtomicAdd { base, src, .. } => {
                out.push(*base);
                out.push(*src);
            }
            Op::Jmp { a, b, .. } => {
                out.push(*a);
                src(b, out);
            }
            Op::Call { args, .. } => {
                for a in args {
                    if let Arg::Reg(r) = a {
                        out.push(*r);
                    }
                }
            }
            Op::Exit { value } => src(value, out),
            Op::Entry { .. }
            | Op::Param { .. }
            | Op::LdImm64 { .. }
            | Op::LdMap { .. }
            | Op::MovReloc { .. }
            | Op::LdImm64Reloc { .. }
            | Op::SlotAddr { .. }
            | Op::Ja { .. }
            | Op::Bind(_)
            | Op::KeepAlive(_) => {}
        }
    }

    /// The register this operation writes, if any.
    pub(crate) fn def(&self) -> Option<VReg> {
        match self {
            Op::Entry { ctx } => Some(*ctx),
            Op::Param { dst, .. } => Some(*dst),
            Op::Alu { dst, .. }
            | Op::Neg { dst }
            | Op::LdImm64 { dst, .. }
            | Op::LdMap { dst, .. }
            | Op::MovReloc { dst, .. }
            | Op::LdImm64Reloc { dst, .. }
            | Op::Load { dst, .. }
            | Op::SlotAddr { dst, .. } => Some(*dst),
            Op::Call { ret, .. } => *ret,
            _ => None,
        }
    }

    /// Replaces every occurrence of `from` (use or definition) by `to`.
    pub(crate) fn rename(&mut self, from: VReg, to: VReg) {
        let r = |x: &mut VReg| {
            if *x == from {
                *x = to
            }
        };
        let s = |x: &mut Src| {
            if let Src::Reg(v) = x {
                if *v == from {
                    *v = to
                }
            }
        };
        let m = |x: &mut Mem| {
            if let Mem::Reg(v) = x {
                if *v == from {
                    *v = to
                }
            }
        };
        match self {
            Op::Entry { ctx } => r(ctx),
            Op::Param { dst, .. } => r(dst),
            Op::Alu { dst, src, .. } => {
                r(dst);
                s(src);
            }
            Op::Neg { dst }
            | Op::LdImm64 { dst, .. }
            | Op::LdMap { dst, .. }
            | Op::MovReloc { dst, .. }
            | Op::LdImm64Reloc { dst, .. }
            | Op::SlotAddr { dst, .. } => r(dst),
            Op::Load { dst, base, .. } => {
                r(dst);
                m(base);
            }
            Op::Store { base, src, .. } => {
                m(base);
                s(src);
            }
            Op::AtomicAdd { base, src, .. } => {
                r(base);
                r(src);
            }
            Op::Jmp { a, b, .. } => {
                r(a);
                s(b);
            }
            Op::Call { args, ret, .. } => {
                for a in args.iter_mut() {
                    if let Arg::Reg(v) = a {
                        r(v);
                    }
                }
                if let Some(v) = ret {
                    r(v);
                }
            }
            Op::Exit { value } => s(value),
            Op::Ja { .. } | Op::Bind(_) | Op::KeepAlive(_) => {}
        }
    }

    /// The label this operation may jump to.
    pub(crate) fn target(&self) -> Option<Label> {
        match self {
            Op::Jmp { target, .. } | Op::Ja { target } => Some(*target),
            _ => None,
        }
    }

    /// Whether control can continue with the next operation.
    pub(crate) fn falls_through(&self) -> bool {
        !matches!(self, Op::Ja { .. } | Op::Exit { .. })
    }
}

/// Instruction index of each bound label (`None` when unbound).
pub(crate) fn label_positions(insts: &[Inst], nlabels: u32) -> Vec<Option<usize>> {
    let mut pos = vec![None; nlabels as usize];
    for (i, inst) in insts.iter().enumerate() {
        if let Op::Bind(l) = inst.op {
            if pos[l.0 as usize].is_some() {
                panic!("internal error: codegen label {} bound twice", l.0);
            }
            pos[l.0 as usize] = Some(i);
        }
    }
    pos
}

/// A set of virtual registers as a bitset.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct RegSet(Vec<u64>);

impl RegSet {
    pub fn iter(&self) -> impl Iterator<Item = VReg> + '_ {
        self.0.iter().enumerate().flat_map(|(w, &bits)| {
            let mut rest = bits;
            std::iter::from_fn(move || {
                if rest == 0 {
                    return None;
                }
                let b = rest.trailing_zeros();
                rest &= rest - 1;
                Some(VReg((w * 64) as u32 + b))
            })
        })
    }
}

/// Liveness of one program.
pub(crate) struct Liveness {
    /// Registers live after each instruction.
    pub live_out: Vec<RegSet>,
    /// `[first, last]` instruction index each register is defined, used or live at; `None` for
    /// registers that never appear.
    pub intervals: Vec<Option<(usize, usize)>>,
}

/// Successors of each instruction.
pub(crate) fn successors(insts: &[Inst], labels: &[Option<usize>]) -> Vec<[Option<usize>; 2]> {
    let n = insts.len();
    insts
        .iter()
        .enumerate()
        .map(|(i, inst)| {
            let next = (inst.op.falls_through() && i + 1 < n).then_some(i + 1);
            let jump = inst.op.target().map(|l| {
                labels[l.0 as usize]
                    .unwrap_or_else(|| panic!("internal error: codegen label {} never bound", l.0))
            });
            [next, jump]
        })
        .collect()
}

pub(crate) fn liveness(insts: &[Inst], nvregs: u32, nlabels: u32) -> Liveness {
    let labels = label_positions(insts, nlabels);
    let succs = successors(insts, &labels);
    let n = insts.len();
    let w = (nvregs as usize).div_ceil(64);
    // Flat bitsets (one row of `w` words per instruction): no allocation per iteration.
    let mut live_in = vec![0u64; n * w];
    let mut live_out = vec![0u64; n * w];
    let mut tmp = vec![0u64; w];
    let mut uses = Vec::new();
    let mut changed = true;
    while changed {
        changed = false;
        for i in (0..n).rev() {
            tmp.fill(0);
            for s in succs[i].iter().flatten() {
                for (t, x) in tmp.iter_mut().zip(&live_in[s * w..(s + 1) * w]) {
                    *t |= *x;
                }
            }
            if live_out[i * w..(i + 1) * w] != tmp[..] {
                live_out[i * w..(i + 1) * w].copy_from_slice(&tmp);
                changed = true;
            }
            if let Some(d) = insts[i].op.def() {
                tmp[d.0 as usize / 64] &= !(1 << (d.0 % 64));
            }
            insts[i].op.uses(&mut uses);
            for u in &uses {
                tmp[u.0 as usize / 64] |= 1 << (u.0 % 64);
            }
            if live_in[i * w..(i + 1) * w] != tmp[..] {
                live_in[i * w..(i + 1) * w].copy_from_slice(&tmp);
                changed = true;
            }
        }
    }
    let row = |v: &[u64], i: usize| RegSet(v[i * w..(i + 1) * w].to_vec());
    let live_in: Vec<RegSet> = (0..n).map(|i| row(&live_in, i)).collect();
    let live_out: Vec<RegSet> = (0..n).map(|i| row(&live_out, i)).collect();
    let mut intervals: Vec<Option<(usize, usize)>> = vec![None; nvregs as usize];
    let mut touch = |r: VReg, i: usize| {
        let e = &mut intervals[r.0 as usize];
        *e = Some(match *e {
            None => (i, i),
            Some((a, b)) => (a.min(i), b.max(i)),
        });
    };
    for i in 0..n {
        for r in live_in[i].iter() {
            touch(r, i);
        }
        for r in live_out[i].iter() {
            // Live after i: it must survive through i (and into i + 1).
            touch(r, i);
        }
        if let Some(d) = insts[i].op.def() {
            touch(d, i);
        }
    }
    Liveness {
        live_out,
        intervals,
    }
}
