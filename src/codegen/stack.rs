//! Stack-slot allocation: fp-relative offsets for every slot, within the kernel's 512-byte
//! frame, letting slots whose lifetimes do not overlap share bytes.
//!
//! Input: the instruction list after register allocation (spill slots included), the slots'
//! sizes/alignments and the live intervals of registers holding slot addresses. Output: the
//! offset (negative, from r10) of each slot's first byte, and the frame size used.
//! A slot's lifetime is `[first reference, last reference]`, widened to the life of any
//! register holding its address (a key pointer passed to a later helper) and to whole loops
//! when it is referenced inside one (a loop may read in iteration n what iteration n-1 wrote).
//! A slot whose address escapes to memory must be pinned (`Builder::pin`): it then lives for
//! the whole program.
//! Nothing is zeroed here: slots hold whatever their users write (see `emit::mem::zero`).

use super::builder::{Arg, Builder, Mem, Op, Slot};
use super::liveness::{label_positions, liveness};
use super::CodegenError;

/// The BPF stack limit (`MAX_BPF_STACK`, include/linux/filter.h).
pub const MAX_STACK: u32 = 512;

/// Offsets chosen for a program's slots.
#[derive(Clone, Debug)]
pub(crate) struct Frame {
    /// fp-relative offset of each slot (`None` for slots never referenced).
    pub offsets: Vec<Option<i32>>,
    /// Bytes of stack used.
    pub size: u32,
}

fn refs(op: &Op, mut f: impl FnMut(Slot)) {
    match op {
        Op::Load {
            base: Mem::Slot(s), ..
        }
        | Op::Store {
            base: Mem::Slot(s), ..
        }
        | Op::SlotAddr { slot: s, .. }
        | Op::KeepAlive(s) => f(*s),
        Op::Call { args, .. } => {
            for a in args {
                if let Arg::Slot(s, _) = a {
                    f(*s)
                }
            }
        }
        _ => {}
    }
}

/// Lifetime of every slot, as `[first, last]` instruction indices.
fn lifetimes(b: &Builder) -> Vec<Option<(usize, usize)>> {
    let mut life: Vec<Option<(usize, usize)>> = vec![None; b.slots.len()];
    let widen = |life: &mut Vec<Option<(usize, usize)>>, s: Slot, a: usize, z: usize| {
        let e = &mut life[s.0 as usize];
        *e = Some(match *e {
            None => (a, z),
            Some((x, y)) => (x.min(a), y.max(z)),
        });
    };
    let regs = liveness(&b.insts, b.nvregs, b.nlabels);
    for (i, inst) in b.insts.iter().enumerate() {
        refs(&inst.op, |s| widen(&mut life, s, i, i));
        if let Op::SlotAddr { dst, slot, .. } = inst.op {
            if let Some((a, z)) = regs.intervals[dst.0 as usize] {
                widen(&mut life, slot, a, z);
            }
        }
    }
    let n = b.insts.len().saturating_sub(1);
    for (s, info) in b.slots.iter().enumerate() {
        if info.pinned {
            life[s] = Some((0, n));
        }
    }
    // Back edges: a slot referenced anywhere inside a loop lives for the whole loop.
    let labels = label_positions(&b.insts, b.nlabels);
    let loops: Vec<(usize, usize)> = b
        .insts
        .iter()
        .enumerate()
        .filter_map(|(i, inst)| {
            let t = labels[inst.op.target()?.0 as usize]?;
            (t <= i).then_some((t, i))
        })
        .collect();
    let mut changed = true;
    while changed {
        changed = false;
        for &(head, tail) in &loops {
            for e in life.iter_mut().flatten() {
                if e.0 <= tail && e.1 >= head && (e.0 > head || e.1 < tail) {
                    *e = (e.0.min(head), e.1.max(tail));
                    changed = true;
                }
            }
        }
    }
    life
}

/// Chooses offsets: slots in order of first use, each at the highest address (closest to fp)
/// whose bytes no slot with an overlapping lifetime occupies.
pub(crate) fn layout(b: &Builder) -> Result<Frame, CodegenError> {
    let life = lifetimes(b);
    let mut order: Vec<usize> = (0..b.slots.len()).filter(|&s| life[s].is_some()).collect();
    order.sort_by_key(|&s| life[s]);
    // (lifetime, byte range [lo, hi) as positive depths below fp) of the placed slots still
    // alive: slots come in order of first use, so one that ended before the current slot's
    // start conflicts with no later slot and leaves the set (a linear scan, not all pairs).
    let mut placed: Vec<((usize, usize), (u32, u32))> = Vec::new();
    let mut offsets = vec![None; b.slots.len()];
    let mut size = 0;
    let mut conflicts: Vec<(u32, u32)> = Vec::new();
    for s in order {
        let info = b.slots[s];
        let (a, z) = life[s].unwrap_or((0, 0));
        placed.retain(|(l, _)| l.1 >= a);
        conflicts.clear();
        conflicts.extend(
            placed
                .iter()
                .filter(|(l, _)| l.0 <= z && a <= l.1)
                .map(|&(_, r)| r),
        );
        // Depth d means bytes fp-d .. fp-d+size; d must be a multiple of the alignment.
        let mut d = info.size.div_ceil(info.align) * info.align;
        loop {
            let lo = d - info.size;
            if d > MAX_STACK {
                return Err(CodegenError::StackOverflow {
                    needed: d,
                    limit: MAX_STACK,
                });
            }
            if conflicts.iter().all(|&(clo, chi)| d <= clo || lo >= chi) {
                break;
            }
            d += info.align;
        }
        placed.push(((a, z), (d - info.size, d)));
        offsets[s] = Some(-(d as i32));
        size = size.max(d);
    }
    Ok(Frame { offsets, size })
}
