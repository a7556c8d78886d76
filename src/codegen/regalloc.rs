//! Register allocation: virtual registers onto r0–r9 by linear scan over live intervals, with
//! spilling to stack slots when registers run out.
//!
//! Input: the builder's instruction list. Output: the (possibly rewritten) list and a physical
//! register for every virtual register that appears in it.
//! Rules and invariants:
//! - a value live across a helper call (which clobbers r0–r5) only ever gets r6–r9;
//! - other values may take any of r0–r9; hints put a call's result in r0, the context in r1
//!   and a call argument whose life ends at the call in its argument register, so most moves
//!   disappear;
//! - when a register class is full, the interval ending last is spilled: every occurrence is
//!   rewritten to a short-lived temporary loaded from / stored to an 8-byte stack slot, and
//!   allocation runs again (temporaries are never spilled, so this terminates);
//! - two intervals share a register only if they do not overlap, except that an interval
//!   ending at an instruction may share with one starting there (operands are read before the
//!   result is written in every operation here).

use super::builder::{Arg, Builder, Inst, Mem, Op, Slot, VReg};
use super::liveness::liveness;
use super::CodegenError;
use crate::asm::isa::Size;
use crate::asm::Reg;

/// Registers a helper call preserves.
const CALLEE_SAVED: [u8; 4] = [6, 7, 8, 9];
/// Preference order for values not live across a call: scratch registers first.
const ANY: [u8; 10] = [0, 1, 2, 3, 4, 5, 6, 7, 8, 9];

/// The result of allocation: the register of each virtual register (`None` if unused).
#[derive(Clone, Debug)]
pub(crate) struct Allocation {
    pub regs: Vec<Option<Reg>>,
    /// How many values were spilled (over all rounds).
    pub spilled: usize,
}

struct Interval {
    vreg: VReg,
    start: usize,
    end: usize,
    crosses_call: bool,
    hint: Option<u8>,
}

/// Allocates registers for `b`, rewriting its instructions with spill code when needed.
pub(crate) fn allocate(b: &mut Builder) -> Result<Allocation, CodegenError> {
    let mut temps: Vec<bool> = vec![false; b.nvregs as usize];
    let mut spilled_total = 0;
    for _round in 0..64 {
        temps.resize(b.nvregs as usize, false);
        match scan(b, &temps) {
            Ok(regs) => {
                return Ok(Allocation {
                    regs,
                    spilled: spilled_total,
                })
            }
            Err(Spill(victims)) if !victims.is_empty() => {
                spilled_total += victims.len();
                let spills: Vec<(VReg, Slot)> =
                    victims.into_iter().map(|v| (v, b.slot(8, 8))).collect();
                rewrite_spilled(b, &spills, &mut temps);
            }
            Err(_) => break,
        }
    }
    Err(CodegenError::RegisterPressure {
        insns: b.insts.len(),
    })
}

struct Spill(Vec<VReg>);

fn scan(b: &Builder, temps: &[bool]) -> Result<Vec<Option<Reg>>, Spill> {
    let live = liveness(&b.insts, b.nvregs, b.nlabels);
    let mut intervals: Vec<Interval> = live
        .intervals
        .iter()
        .enumerate()
        .filter_map(|(v, iv)| {
            iv.map(|(start, end)| Interval {
                vreg: VReg(v as u32),
                start,
                end,
                crosses_call: false,
                hint: None,
            })
        })
        .collect();
    let index_of: std::collections::HashMap<VReg, usize> = intervals
        .iter()
        .enumerate()
        .map(|(i, iv)| (iv.vreg, i))
        .collect();
    for (i, after) in &live.live_after_calls {
        if let Op::Call { ret, .. } = &b.insts[*i].op {
            for v in after {
                if Some(*v) != *ret {
                    intervals[index_of[v]].crosses_call = true;
                }
            }
        }
    }
    for (i, inst) in b.insts.iter().enumerate() {
        match &inst.op {
            Op::Call { args, ret, .. } => {
                if let Some(r) = ret {
                    intervals[index_of[r]].hint.get_or_insert(0);
                }
                for (pos, a) in args.iter().enumerate() {
                    if let Arg::Reg(v) = a {
                        let iv = &mut intervals[index_of[v]];
                        if iv.end == i {
                            iv.hint.get_or_insert(pos as u8 + 1);
                        }
                    }
                }
            }
            Op::Entry { ctx } => intervals[index_of[ctx]].hint = Some(1),
            // Parameters come first, in order: each finds its own register free (earlier ones
            // hold theirs or r6–r9), so no parameter overwrites one not yet read.
            Op::Param { dst, n } => intervals[index_of[dst]].hint = Some(*n),
            Op::Exit {
                value: super::builder::Src::Reg(v),
            } => {
                let iv = &mut intervals[index_of[v]];
                if iv.end == i {
                    iv.hint.get_or_insert(0);
                }
            }
            _ => {}
        }
    }
    intervals.sort_by_key(|iv| (iv.start, iv.end));

    let mut regs: Vec<Option<Reg>> = vec![None; b.nvregs as usize];
    // (end, register, interval index) of intervals holding a register.
    let mut active: Vec<(usize, u8, usize)> = Vec::new();
    let mut spills: Vec<VReg> = Vec::new();
    let mut spilled = vec![false; intervals.len()];
    for idx in 0..intervals.len() {
        let cur = &intervals[idx];
        active.retain(|&(end, _, _)| end > cur.start);
        let pool: &[u8] = if cur.crosses_call {
            &CALLEE_SAVED
        } else {
            &ANY
        };
        let busy = |r: u8, active: &[(usize, u8, usize)]| active.iter().any(|a| a.1 == r);
        let free = cur
            .hint
            .filter(|h| pool.contains(h) && !busy(*h, &active))
            .or_else(|| pool.iter().copied().find(|r| !busy(*r, &active)));
        if let Some(r) = free {
            active.push((cur.end, r, idx));
            regs[cur.vreg.0 as usize] = Reg::new(r);
            continue;
        }
        // Full: spill whichever of `cur` and the holders of its pool's registers ends last
        // (temporaries are never chosen).
        let victim = active
            .iter()
            .filter(|a| pool.contains(&a.1) && !temps[intervals[a.2].vreg.0 as usize])
            .max_by_key(|a| a.0)
            .copied();
        let cur_spillable = !temps[cur.vreg.0 as usize];
        match victim {
            Some((end, r, vidx)) if !cur_spillable || end > cur.end => {
                spilled[vidx] = true;
                spills.push(intervals[vidx].vreg);
                active.retain(|a| a.2 != vidx);
                active.push((cur.end, r, idx));
                regs[cur.vreg.0 as usize] = Reg::new(r);
            }
            _ if cur_spillable => {
                spilled[idx] = true;
                spills.push(cur.vreg);
            }
            _ => return Err(Spill(Vec::new())),
        }
    }
    if spills.is_empty() {
        Ok(regs)
    } else {
        Err(Spill(spills))
    }
}

/// Rewrites every occurrence of each spilled `v` to a fresh temporary with a reload before each
/// use and a store after each definition, all victims in one pass over the program (a pass per
/// victim would make spilling quadratic). Temporaries are numbered victim by victim, and
/// reloads come in victim order, as if each victim had been rewritten in turn.
fn rewrite_spilled(b: &mut Builder, spills: &[(VReg, Slot)], temps: &mut Vec<bool>) {
    let victim: std::collections::HashMap<VReg, usize> = spills
        .iter()
        .enumerate()
        .map(|(k, (v, _))| (*v, k))
        .collect();
    let mut uses = Vec::new();
    // Which victims an instruction mentions, in victim order.
    let mentioned = |inst: &Inst, uses: &mut Vec<VReg>, out: &mut Vec<usize>| {
        out.clear();
        inst.op.uses(uses);
        out.extend(uses.iter().filter_map(|u| victim.get(u).copied()));
        out.extend(inst.op.def().and_then(|d| victim.get(&d).copied()));
        out.sort_unstable();
        out.dedup();
    };
    let mut ks = Vec::new();
    let mut count = vec![0u32; spills.len()];
    for inst in &b.insts {
        mentioned(inst, &mut uses, &mut ks);
        for &k in &ks {
            count[k] += 1;
        }
    }
    let mut next: Vec<u32> = Vec::with_capacity(spills.len());
    let mut base = b.nvregs;
    for c in &count {
        next.push(base);
        base += c;
    }
    b.nvregs = base;
    temps.resize(b.nvregs as usize, false);
    let old = std::mem::take(&mut b.insts);
    let mut out: Vec<Inst> = Vec::with_capacity(old.len() + 2 * spills.len());
    for mut inst in old {
        mentioned(&inst, &mut uses, &mut ks);
        if ks.is_empty() {
            out.push(inst);
            continue;
        }
        inst.op.uses(&mut uses);
        let def = inst.op.def();
        let mut store = None;
        for &k in &ks {
            let (v, slot) = spills[k];
            let t = VReg(next[k]);
            next[k] += 1;
            temps[t.0 as usize] = true;
            if uses.contains(&v) {
                out.push(Inst {
                    op: Op::Load {
                        size: Size::Dw,
                        dst: t,
                        base: Mem::Slot(slot),
                        off: 0,
                        reloc: None,
                    },
                    span: inst.span,
                    comment: Some("reload".into()),
                });
            }
            if def == Some(v) {
                store = Some((t, slot));
            }
            inst.op.rename(v, t);
        }
        let span = inst.span;
        out.push(inst);
        if let Some((t, slot)) = store {
            out.push(Inst {
                op: Op::Store {
                    size: Size::Dw,
                    base: Mem::Slot(slot),
                    off: 0,
                    src: t.into(),
                },
                span,
                comment: Some("spill".into()),
            });
        }
    }
    b.insts = out;
}
