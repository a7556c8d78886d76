//! Uses, definitions, control-flow successors and liveness of the builder's operations.
//!
//! Input: the instruction list. Output: per helper call, the virtual registers live after it
//! (backward dataflow over basic blocks to a fixpoint, so loops are exact), and per register a
//! conservative live interval `[first, last]` in instruction order. Sets are sparse: time and
//! memory grow with the program's length times the registers live at once (a handful), never
//! with length times all registers. Every later pass (register allocation, stack
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
            | Op::LdKsym { .. }
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
            | Op::LdKsym { dst, .. }
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
            | Op::LdKsym { dst, .. }
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

/// Liveness of one program.
pub(crate) struct Liveness {
    /// The registers live after each helper call, as `(instruction index, registers)` in
    /// instruction order (calls are where register classes matter).
    pub live_after_calls: Vec<(usize, Vec<VReg>)>,
    /// `[first, last]` instruction index each register is defined, used or live at; `None` for
    /// registers that never appear.
    pub intervals: Vec<Option<(usize, usize)>>,
}

/// A straight run of instructions `[start, end)`: only its first may be a jump target and only
/// its last may jump or stop.
struct Block {
    start: usize,
    end: usize,
    /// Registers read before any write in the block (sorted).
    gen: Vec<u32>,
    /// Registers written in the block (sorted).
    kill: Vec<u32>,
    succs: [Option<usize>; 2],
}

/// `a ∪ b` of sorted, duplicate-free lists.
fn union(a: &[u32], b: &[u32]) -> Vec<u32> {
    let mut out = Vec::with_capacity(a.len() + b.len());
    let (mut i, mut j) = (0, 0);
    while i < a.len() && j < b.len() {
        match a[i].cmp(&b[j]) {
            std::cmp::Ordering::Less => {
                out.push(a[i]);
                i += 1;
            }
            std::cmp::Ordering::Greater => {
                out.push(b[j]);
                j += 1;
            }
            std::cmp::Ordering::Equal => {
                out.push(a[i]);
                i += 1;
                j += 1;
            }
        }
    }
    out.extend_from_slice(&a[i..]);
    out.extend_from_slice(&b[j..]);
    out
}

/// `gen ∪ (out − kill)` of sorted, duplicate-free lists.
fn transfer(gen: &[u32], out: &[u32], kill: &[u32]) -> Vec<u32> {
    let mut k = 0;
    let rest: Vec<u32> = out
        .iter()
        .copied()
        .filter(|r| {
            while k < kill.len() && kill[k] < *r {
                k += 1;
            }
            !(k < kill.len() && kill[k] == *r)
        })
        .collect();
    union(gen, &rest)
}

fn blocks(insts: &[Inst], labels: &[Option<usize>]) -> Vec<Block> {
    let n = insts.len();
    let mut leader = vec![false; n + 1];
    leader[0] = true;
    leader[n] = true;
    for (i, inst) in insts.iter().enumerate() {
        if matches!(inst.op, Op::Bind(_)) {
            leader[i] = true;
        }
        if inst.op.target().is_some() || !inst.op.falls_through() {
            leader[i + 1] = true;
        }
    }
    let starts: Vec<usize> = (0..n).filter(|&i| leader[i]).collect();
    let mut block_of = vec![0usize; n];
    for (b, w) in starts.iter().enumerate() {
        let end = starts.get(b + 1).copied().unwrap_or(n);
        block_of[*w..end].fill(b);
    }
    let mut uses = Vec::new();
    let mut defined = std::collections::HashSet::new();
    let mut read = std::collections::HashSet::new();
    starts
        .iter()
        .enumerate()
        .map(|(b, &start)| {
            let end = starts.get(b + 1).copied().unwrap_or(n);
            let (mut gen, mut kill) = (Vec::new(), Vec::new());
            defined.clear();
            read.clear();
            for inst in &insts[start..end] {
                inst.op.uses(&mut uses);
                for u in &uses {
                    if !defined.contains(&u.0) && read.insert(u.0) {
                        gen.push(u.0);
                    }
                }
                if let Some(d) = inst.op.def() {
                    if defined.insert(d.0) {
                        kill.push(d.0);
                    }
                }
            }
            gen.sort_unstable();
            kill.sort_unstable();
            let last = &insts[end - 1];
            let next = (last.op.falls_through() && end < n).then_some(b + 1);
            let jump = last.op.target().map(|l| {
                let at = labels[l.0 as usize]
                    .unwrap_or_else(|| panic!("internal error: codegen label {} never bound", l.0));
                block_of[at]
            });
            Block {
                start,
                end,
                gen,
                kill,
                succs: [next, jump],
            }
        })
        .collect()
}

/// Liveness by backward dataflow over basic blocks with sparse sets, so time and memory grow
/// with the program's length times the registers live at once, not times all registers.
pub(crate) fn liveness(insts: &[Inst], nvregs: u32, nlabels: u32) -> Liveness {
    let labels = label_positions(insts, nlabels);
    let blocks = blocks(insts, &labels);
    let nb = blocks.len();
    let mut live_in: Vec<Vec<u32>> = vec![Vec::new(); nb];
    let mut live_out: Vec<Vec<u32>> = vec![Vec::new(); nb];
    let mut changed = true;
    while changed {
        changed = false;
        for b in (0..nb).rev() {
            let out = match blocks[b].succs {
                [Some(x), Some(y)] if x != y => union(&live_in[x], &live_in[y]),
                [Some(x), _] | [None, Some(x)] => live_in[x].clone(),
                [None, None] => Vec::new(),
            };
            let inn = transfer(&blocks[b].gen, &out, &blocks[b].kill);
            if out != live_out[b] {
                live_out[b] = out;
                changed = true;
            }
            if inn != live_in[b] {
                live_in[b] = inn;
                changed = true;
            }
        }
    }
    let mut intervals: Vec<Option<(usize, usize)>> = vec![None; nvregs as usize];
    let mut touch = |r: u32, i: usize| {
        let e = &mut intervals[r as usize];
        *e = Some(match *e {
            None => (i, i),
            Some((a, b)) => (a.min(i), b.max(i)),
        });
    };
    // Within a block a register is live from the block's start (when live in) or its first
    // mention to its last mention or the block's end (when live out): touching those points
    // gives the same `[first, last]` as touching every instruction it is live at.
    let mut uses = Vec::new();
    let mut live_after_calls = Vec::new();
    // The registers live at the current point of a backward walk, as a sparse set: `live`
    // lists them, `pos[r]` is r's index in `live` (`u32::MAX` when absent).
    let mut pos = vec![u32::MAX; nvregs as usize];
    let mut live: Vec<u32> = Vec::new();
    let insert = |r: u32, live: &mut Vec<u32>, pos: &mut [u32]| {
        if pos[r as usize] == u32::MAX {
            pos[r as usize] = live.len() as u32;
            live.push(r);
        }
    };
    for (b, blk) in blocks.iter().enumerate() {
        for &r in &live_in[b] {
            touch(r, blk.start);
        }
        for &r in &live_out[b] {
            touch(r, blk.end - 1);
        }
        for (i, inst) in insts.iter().enumerate().take(blk.end).skip(blk.start) {
            let op = &inst.op;
            op.uses(&mut uses);
            if let Some(d) = op.def() {
                touch(d.0, i);
            }
            for u in &uses {
                touch(u.0, i);
            }
        }
        if !insts[blk.start..blk.end]
            .iter()
            .any(|i| matches!(i.op, Op::Call { .. }))
        {
            continue;
        }
        for &r in &live_out[b] {
            insert(r, &mut live, &mut pos);
        }
        let mut calls = Vec::new();
        for i in (blk.start..blk.end).rev() {
            let op = &insts[i].op;
            if matches!(op, Op::Call { .. }) {
                let mut regs: Vec<VReg> = live.iter().map(|&r| VReg(r)).collect();
                regs.sort_unstable_by_key(|r| r.0);
                calls.push((i, regs));
            }
            if let Some(d) = op.def() {
                let at = pos[d.0 as usize];
                if at != u32::MAX {
                    live.swap_remove(at as usize);
                    if let Some(&moved) = live.get(at as usize) {
                        pos[moved as usize] = at;
                    }
                    pos[d.0 as usize] = u32::MAX;
                }
            }
            op.uses(&mut uses);
            for u in &uses {
                insert(u.0, &mut live, &mut pos);
            }
        }
        for r in live.drain(..) {
            pos[r as usize] = u32::MAX;
        }
        live_after_calls.extend(calls.into_iter().rev());
    }
    Liveness {
        live_after_calls,
        intervals,
    }
}
