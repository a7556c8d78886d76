//! Dead-store elimination for the stack, run after register allocation with the other
//! peephole rules (`stores.rs` removes only a store the very next instruction overwrites).
//!
//! A store to `r10 + off` is dead when, following the straight-line code after it, every one
//! of its bytes is overwritten by other stores to `r10` before anything may read it, or the
//! program exits first (the frame dies with the program). Scanning goes through labels (a
//! joining path does not read this store's bytes) and stops, keeping the store, at anything
//! that may read the stack or leave the straight line:
//! - a load from `r10` overlapping the bytes, or a load or atomic through any other register
//!   (it may hold a stack address: `r1 = r10; r1 += -16`);
//! - a helper call with a memory argument (it may point into the stack; helpers taking only
//!   integers, the context or maps are stepped over);
//! - a jump (the store's value could be read on the other path).
//!
//! Input: the items of one program. Output: the same program, never longer. Invariant: a
//! removed store's bytes are written again, on its only path, before any read.

use super::machine::MItem;
use crate::asm::isa::{self, Class, JmpSpecial, Mode, CLASS_MASK, CODE_CALL, MODE_MASK, OP_MASK};
use crate::asm::{Insn, Reg};

// Opcode fields, from the ISA tables (isa/opcodes.txt).
const CLASS_LDX: u8 = Class::Ldx.value();
const CLASS_ST: u8 = Class::St.value();
const CLASS_STX: u8 = Class::Stx.value();
const CLASS_JMP: u8 = Class::Jmp.value();
const CLASS_JMP32: u8 = Class::Jmp32.value();
const MODE_MEM: u8 = Mode::Mem.value();
const MODE_MEMSX: u8 = Mode::Memsx.value();
const MODE_ATOMIC: u8 = Mode::Atomic.value();
const OP_EXIT: u8 = JmpSpecial::Exit.value();
const FP: u8 = Reg::FP.num();

fn size_of(code: u8) -> i32 {
    isa::size_of(code).bytes() as i32
}

/// The fp-relative byte range a plain store writes, if it is one.
fn fp_store(i: &Insn) -> Option<(i32, i32)> {
    let class = i.code & CLASS_MASK;
    if (class == CLASS_ST || class == CLASS_STX) && i.code & MODE_MASK == MODE_MEM && i.dst() == FP
    {
        let off = i.off as i32;
        Some((off, off + size_of(i.code)))
    } else {
        None
    }
}

const CALL_HELPER: u8 = CODE_CALL;

/// Whether helper `id` takes no memory argument (only integers, the context, maps), so it
/// cannot read the stack (`get_current_pid_tgid`, `ktime_get_ns`, `send_signal`…). Helpers
/// that dereference an arbitrary address (`probe_read*`) also take a destination buffer,
/// so they are never in this set.
fn reads_no_memory(id: i32) -> bool {
    use crate::asm::isa::{ArgKind, Helper};
    u32::try_from(id)
        .ok()
        .and_then(Helper::from_id)
        .filter(|h| h.id() != 0)
        .is_some_and(|h| {
            h.args()
                .iter()
                .all(|(k, _)| matches!(k, ArgKind::Scalar | ArgKind::Ctx | ArgKind::Map))
        })
}

/// What scanning learns from one instruction about the live bytes `[lo, hi)` of a store.
#[cfg(test)]
enum Step {
    /// Keep scanning.
    Go,
    /// The store's bytes may be read, or control may leave the straight line: keep it.
    Keep,
    /// The program ends: the store is dead.
    Exit,
}

#[cfg(test)]
fn step(i: &Insn, live: &mut [bool], lo: i32) -> Step {
    let class = i.code & CLASS_MASK;
    let mode = i.code & MODE_MASK;
    match class {
        CLASS_LDX if mode == MODE_MEM || mode == MODE_MEMSX => {
            if i.src() != FP {
                return Step::Keep;
            }
            let (a, b) = (i.off as i32, i.off as i32 + size_of(i.code));
            let hit = (a..b).any(|x| {
                let k = x - lo;
                k >= 0 && (k as usize) < live.len() && live[k as usize]
            });
            if hit {
                Step::Keep
            } else {
                Step::Go
            }
        }
        CLASS_ST | CLASS_STX if mode == MODE_ATOMIC => Step::Keep,
        CLASS_ST | CLASS_STX => {
            if let Some((a, b)) = fp_store(i) {
                for x in a..b {
                    let k = x - lo;
                    if k >= 0 && (k as usize) < live.len() {
                        live[k as usize] = false;
                    }
                }
            }
            Step::Go
        }
        CLASS_JMP if i.code & OP_MASK == OP_EXIT => Step::Exit,
        CLASS_JMP if i.code == CALL_HELPER && i.src() == 0 && reads_no_memory(i.imm) => Step::Go,
        CLASS_JMP | CLASS_JMP32 => Step::Keep,
        _ => Step::Go,
    }
}

/// What the code after a point does first with each stack byte: for every byte, whether the
/// first event on the straight line ahead is an overwrite or the program's exit (the byte's
/// current value is dead) rather than a read, a barrier or the end of the items. Filled by a
/// backward walk; a barrier resets every byte at once by starting a new epoch.
struct Ahead {
    epoch: u32,
    /// What a byte not touched since the last barrier gets: dead after an exit, else live.
    dead_by_default: bool,
    /// The lowest fp offset the items access; per byte (indexed by offset - `base`): the epoch
    /// of its last event and whether it is dead.
    base: i32,
    stamp: Vec<u32>,
    dead: Vec<bool>,
}

impl Ahead {
    /// Room for every fp-relative byte the items load or store.
    fn new(items: &[MItem]) -> Ahead {
        let (mut lo, mut hi) = (0i32, 0i32);
        for it in items {
            if let MItem::Insn { insn, .. } = it {
                let class = insn.code & CLASS_MASK;
                let fp = match class {
                    CLASS_LDX => insn.src() == FP,
                    CLASS_ST | CLASS_STX => insn.dst() == FP,
                    _ => false,
                };
                if fp {
                    lo = lo.min(insn.off as i32);
                    hi = hi.max(insn.off as i32 + 8);
                }
            }
        }
        let n = (hi - lo) as usize;
        Ahead {
            epoch: 1,
            dead_by_default: false,
            base: lo,
            stamp: vec![0; n],
            dead: vec![false; n],
        }
    }

    fn idx(&self, x: i32) -> usize {
        (x - self.base) as usize
    }

    fn barrier(&mut self, exit: bool) {
        self.epoch += 1;
        self.dead_by_default = exit;
    }

    fn set(&mut self, (lo, hi): (i32, i32), dead: bool) {
        for x in lo..hi {
            let k = self.idx(x);
            self.stamp[k] = self.epoch;
            self.dead[k] = dead;
        }
    }

    fn all_dead(&self, (lo, hi): (i32, i32)) -> bool {
        (lo..hi).all(|x| {
            let k = self.idx(x);
            if self.stamp[k] == self.epoch {
                self.dead[k]
            } else {
                self.dead_by_default
            }
        })
    }

    /// Steps back over `i` (an instruction without a jump target): `self` becomes what the
    /// code from `i` on does first with each byte (the forward scan's rules, run backward).
    fn back_over(&mut self, i: &Insn) {
        let class = i.code & CLASS_MASK;
        let mode = i.code & MODE_MASK;
        match class {
            CLASS_LDX if mode == MODE_MEM || mode == MODE_MEMSX => {
                if i.src() != FP {
                    self.barrier(false);
                } else {
                    let a = i.off as i32;
                    self.set((a, a + size_of(i.code)), false);
                }
            }
            CLASS_ST | CLASS_STX if mode == MODE_ATOMIC => self.barrier(false),
            CLASS_ST | CLASS_STX => {
                if let Some(r) = fp_store(i) {
                    self.set(r, true);
                }
            }
            CLASS_JMP if i.code & OP_MASK == OP_EXIT => self.barrier(true),
            CLASS_JMP if i.code == CALL_HELPER && i.src() == 0 && reads_no_memory(i.imm) => {}
            CLASS_JMP | CLASS_JMP32 => self.barrier(false),
            _ => {}
        }
    }
}

/// Drops the dead stack stores of the module doc; true when it dropped any.
///
/// One backward walk (linear in the items): a store is dead when every one of its bytes is,
/// looking ahead from the instruction after it, overwritten or abandoned at an exit before
/// being read or reaching a barrier: the forward scan from each store (kept as the tests'
/// reference) done for every store at once.
pub(crate) fn drop_dead_stack_stores(items: &mut Vec<MItem>) -> bool {
    let mut drop = vec![false; items.len()];
    let mut ahead = Ahead::new(items);
    for i in (0..items.len()).rev() {
        let MItem::Insn {
            insn,
            reloc,
            target,
            ..
        } = &items[i]
        else {
            continue;
        };
        if reloc.is_none() {
            if let Some(r) = fp_store(insn) {
                drop[i] = ahead.all_dead(r);
            }
        }
        if target.is_some() {
            ahead.barrier(false);
        } else {
            ahead.back_over(insn);
        }
    }
    super::stores::remove_marked(items, &drop)
}

/// The reference rule: scans forward from each store (quadratic; the tests check that the
/// backward walk decides every store the same way).
#[cfg(test)]
fn dead_forward(items: &[MItem]) -> Vec<bool> {
    let mut drop = vec![false; items.len()];
    for i in 0..items.len() {
        let MItem::Insn {
            insn, reloc: None, ..
        } = &items[i]
        else {
            continue;
        };
        let Some((lo, hi)) = fp_store(insn) else {
            continue;
        };
        let mut live = vec![true; (hi - lo) as usize];
        for it in &items[i + 1..] {
            let MItem::Insn { insn, target, .. } = it else {
                continue;
            };
            if target.is_some() {
                break;
            }
            match step(insn, &mut live, lo) {
                Step::Go if live.iter().all(|&l| !l) => {
                    drop[i] = true;
                    break;
                }
                Step::Go => {}
                Step::Keep => break,
                Step::Exit => {
                    drop[i] = true;
                    break;
                }
            }
        }
    }
    drop
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::asm::isa::{JmpOp, Size};
    use crate::asm::{Insn, Reg};
    use crate::diag::Span;

    fn it(insn: Insn) -> MItem {
        MItem::Insn {
            insn,
            reloc: None,
            target: None,
            span: Span::default(),
            comment: None,
        }
    }

    fn run(insns: Vec<Insn>) -> Vec<Insn> {
        let mut items: Vec<MItem> = insns.into_iter().map(it).collect();
        drop_dead_stack_stores(&mut items);
        items
            .into_iter()
            .filter_map(|i| match i {
                MItem::Insn { insn, .. } => Some(insn),
                MItem::Label(_) => None,
            })
            .collect()
    }

    #[test]
    fn a_store_overwritten_later_before_any_read_goes() {
        let zero = Insn::store_imm(Size::Dw, Reg::R10, -16, 0);
        let out = run(vec![
            zero,
            Insn::mov64_imm(Reg::R1, 5),
            Insn::store_imm(Size::W, Reg::R10, -16, 1),
            Insn::store_imm(Size::W, Reg::R10, -12, 2),
            Insn::load(Size::Dw, Reg::R0, Reg::R10, -16),
            Insn::exit(),
        ]);
        assert_eq!(out.len(), 5);
        assert!(!out.contains(&zero));
    }

    #[test]
    fn a_partly_overwritten_store_read_later_stays() {
        let zero = Insn::store_imm(Size::Dw, Reg::R10, -16, 0);
        let out = run(vec![
            zero,
            Insn::store_imm(Size::W, Reg::R10, -16, 1),
            Insn::load(Size::Dw, Reg::R0, Reg::R10, -16),
            Insn::exit(),
        ]);
        assert!(out.contains(&zero));
    }

    #[test]
    fn calls_jumps_and_loads_through_other_registers_keep_the_store() {
        let s = Insn::store_imm(Size::Dw, Reg::R10, -8, 7);
        let later = Insn::store_imm(Size::Dw, Reg::R10, -8, 9);
        for between in [
            Insn::call_helper_id(1),
            Insn::jmp_imm(JmpOp::Jeq, Reg::R1, 0, 1),
            Insn::load(Size::B, Reg::R2, Reg::R1, 0),
        ] {
            let out = run(vec![s, between, later, Insn::exit()]);
            assert!(out.contains(&s), "{between:?}");
        }
    }

    #[test]
    fn helpers_without_memory_arguments_do_not_read_the_stack() {
        let s = Insn::store_imm(Size::Dw, Reg::R10, -8, 0);
        // bpf_get_current_pid_tgid (14) takes nothing; bpf_map_lookup_elem (1) takes a key.
        let out = run(vec![
            s,
            Insn::call_helper_id(14),
            Insn::store_reg(Size::Dw, Reg::R10, -8, Reg::R0),
            Insn::exit(),
        ]);
        assert!(!out.contains(&s));
        assert!(reads_no_memory(14) && reads_no_memory(109));
        assert!(!reads_no_memory(1) && !reads_no_memory(113) && !reads_no_memory(0));
    }

    #[test]
    fn a_store_never_read_before_exit_goes() {
        let s = Insn::store_imm(Size::Dw, Reg::R10, -8, 7);
        let out = run(vec![s, Insn::mov64_imm(Reg::R0, 0), Insn::exit()]);
        assert_eq!(out, vec![Insn::mov64_imm(Reg::R0, 0), Insn::exit()]);
    }

    #[test]
    fn loads_of_other_stack_bytes_do_not_keep_it() {
        let s = Insn::store_imm(Size::W, Reg::R10, -8, 7);
        let out = run(vec![
            s,
            Insn::load(Size::W, Reg::R0, Reg::R10, -4),
            Insn::store_imm(Size::W, Reg::R10, -8, 1),
            Insn::load(Size::W, Reg::R0, Reg::R10, -8),
            Insn::exit(),
        ]);
        assert!(!out.contains(&s));
    }

    /// The backward walk decides every store as the forward scan from it does, on random
    /// straight-line and branching code over a few overlapping stack bytes.
    #[test]
    fn backward_walk_matches_the_forward_scan() {
        let mut seed = 0x9e37_79b9_7f4a_7c15u64;
        let mut next = |m: u64| {
            seed ^= seed << 13;
            seed ^= seed >> 7;
            seed ^= seed << 17;
            seed % m
        };
        for _ in 0..3000 {
            let len = 1 + next(24) as usize;
            let mut items = Vec::new();
            for _ in 0..len {
                let off = -8 * (1 + next(3) as i16) + next(5) as i16;
                let size = [Size::B, Size::H, Size::W, Size::Dw][next(4) as usize];
                let insn = match next(10) {
                    0..=2 => Insn::store_imm(size, Reg::R10, off, 1),
                    3 => Insn::store_reg(size, Reg::R10, off, Reg::R1),
                    4 => Insn::load(size, Reg::R0, Reg::R10, off),
                    5 => Insn::load(size, Reg::R0, Reg::R1, off),
                    6 => Insn::exit(),
                    7 => Insn::jmp_imm(JmpOp::Jeq, Reg::R0, 0, 0),
                    8 => Insn::mov64_imm(Reg::R1, 5),
                    _ => Insn::call_helper(crate::asm::isa::Helper::KtimeGetNs),
                };
                if next(6) == 0 {
                    items.push(MItem::Label(super::super::builder::Label(0)));
                }
                let target = (next(8) == 0).then_some(super::super::builder::Label(0));
                items.push(MItem::Insn {
                    insn,
                    reloc: None,
                    target,
                    span: Span::default(),
                    comment: None,
                });
            }
            let want = dead_forward(&items);
            let mut got_items = items.clone();
            drop_dead_stack_stores(&mut got_items);
            let kept: Vec<bool> = want.iter().map(|d| !d).collect();
            assert_eq!(
                got_items.len(),
                kept.iter().filter(|k| **k).count(),
                "{items:?}"
            );
            let mut k = 0;
            for (it, keep) in items.iter().zip(&kept) {
                if *keep {
                    assert_eq!(format!("{it:?}"), format!("{:?}", got_items[k]));
                    k += 1;
                }
            }
        }
    }
}
