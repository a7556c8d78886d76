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
use crate::asm::Insn;

// Opcode fields (include/uapi/linux/bpf.h, bpf_common.h).
const CLASS_MASK: u8 = 0x07;
const CLASS_LDX: u8 = 0x01;
const CLASS_ST: u8 = 0x02;
const CLASS_STX: u8 = 0x03;
const CLASS_JMP: u8 = 0x05;
const CLASS_JMP32: u8 = 0x06;
const MODE_MASK: u8 = 0xe0;
const MODE_MEM: u8 = 0x60;
const MODE_MEMSX: u8 = 0x80;
const MODE_ATOMIC: u8 = 0xc0;
const OP_EXIT: u8 = 0x90;
const FP: u8 = 10;

fn size_of(code: u8) -> i32 {
    match code & 0x18 {
        0x00 => 4,
        0x08 => 2,
        0x10 => 1,
        _ => 8,
    }
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

const CALL_HELPER: u8 = 0x85;

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
enum Step {
    /// Keep scanning.
    Go,
    /// The store's bytes may be read, or control may leave the straight line: keep it.
    Keep,
    /// The program ends: the store is dead.
    Exit,
}

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
        CLASS_JMP if i.code & 0xf0 == OP_EXIT => Step::Exit,
        CLASS_JMP if i.code == CALL_HELPER && i.src() == 0 && reads_no_memory(i.imm) => Step::Go,
        CLASS_JMP | CLASS_JMP32 => Step::Keep,
        _ => Step::Go,
    }
}

/// Drops the dead stack stores of the module doc; true when it dropped any.
pub(crate) fn drop_dead_stack_stores(items: &mut Vec<MItem>) -> bool {
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
    super::stores::remove_marked(items, &drop)
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
}
