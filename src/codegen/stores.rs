//! A peephole rule for redundant memory stores, run after register allocation on the emitted
//! items (`machine::MItem`).
//!
//! - A store immediately followed by a store of the same size to the same base register and
//!   offset is dead: the second overwrites every byte before anything reads them (lowering
//!   zeroes a variable's slot at entry and the first statement then assigns it).
//! - `rX = *(sz *)(rY + o)` immediately followed by `*(sz *)(rY + o) = rX` writes back what is
//!   there; the store goes.
//!
//! Input: the items of one program. Output: the same program, never longer. Invariants: only
//! adjacent instructions without relocations are compared; the write-back rule needs no label
//! between the two (another path could reach the store with a different `rX`); atomics
//! (mode `ATOMIC`) are never touched.

use super::machine::MItem;
use crate::asm::isa::{Class, Mode, CLASS_MASK, MODE_MASK, SIZE_MASK};
use crate::asm::Insn;

// Opcode fields, from the ISA tables (isa/opcodes.txt).
const CLASS_LDX: u8 = Class::Ldx.value();
const CLASS_ST: u8 = Class::St.value();
const CLASS_STX: u8 = Class::Stx.value();
const MODE_MEM: u8 = Mode::Mem.value();

fn plain(it: &MItem) -> Option<&Insn> {
    match it {
        MItem::Insn {
            insn,
            reloc: None,
            target: None,
            ..
        } if insn.code & MODE_MASK == MODE_MEM => Some(insn),
        _ => None,
    }
}

fn is_store(i: &Insn) -> bool {
    matches!(i.code & CLASS_MASK, CLASS_ST | CLASS_STX)
}

fn same_place(a: &Insn, b: &Insn) -> bool {
    a.dst() == b.dst() && a.off == b.off && a.code & SIZE_MASK == b.code & SIZE_MASK
}

/// Drops the redundant stores of the module doc; true when it dropped any.
pub(crate) fn drop_redundant_stores(items: &mut Vec<MItem>) -> bool {
    let mut drop = vec![false; items.len()];
    for i in 0..items.len().saturating_sub(1) {
        let (Some(a), Some(b)) = (plain(&items[i]), plain(&items[i + 1])) else {
            continue;
        };
        if !is_store(b) {
            continue;
        }
        if is_store(a) && same_place(a, b) {
            drop[i] = true;
        } else if a.code & CLASS_MASK == CLASS_LDX
            && b.code & CLASS_MASK == CLASS_STX
            && a.src() == b.dst()
            && a.off == b.off
            && a.code & SIZE_MASK == b.code & SIZE_MASK
            && a.dst() == b.src()
            && a.dst() != a.src()
        {
            drop[i + 1] = true;
        }
    }
    remove_marked(items, &drop)
}

/// Removes the items whose `drop` flag is set; whether any was.
pub(crate) fn remove_marked(items: &mut Vec<MItem>, drop: &[bool]) -> bool {
    let any = drop.iter().any(|&d| d);
    let mut k = 0;
    items.retain(|_| {
        k += 1;
        !drop[k - 1]
    });
    any
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::asm::isa::Size;
    use crate::asm::Reg;
    use crate::diag::Span;

    fn ins(insn: Insn) -> MItem {
        MItem::Insn {
            insn,
            reloc: None,
            target: None,
            span: Span::default(),
            comment: None,
        }
    }

    fn code(items: &[MItem]) -> Vec<Insn> {
        items
            .iter()
            .filter_map(|it| match it {
                MItem::Insn { insn, .. } => Some(*insn),
                MItem::Label(_) => None,
            })
            .collect()
    }

    #[test]
    fn overwritten_store_and_write_back_of_a_load_are_dropped() {
        let zero = Insn::store_imm(Size::Dw, Reg::R10, -8, 0);
        let load = Insn::load(Size::Dw, Reg::R0, Reg::R10, -8);
        let back = Insn::store_reg(Size::Dw, Reg::R10, -8, Reg::R0);
        let mut items = vec![
            ins(zero),
            ins(zero),
            ins(load),
            ins(back),
            ins(Insn::exit()),
        ];
        assert!(drop_redundant_stores(&mut items));
        assert_eq!(code(&items), vec![zero, load, Insn::exit()]);
    }

    #[test]
    fn stores_of_other_sizes_or_places_stay() {
        let a = Insn::store_imm(Size::Dw, Reg::R10, -8, 0);
        let b = Insn::store_imm(Size::W, Reg::R10, -8, 1);
        let c = Insn::store_imm(Size::Dw, Reg::R10, -16, 1);
        let load = Insn::load(Size::Dw, Reg::R0, Reg::R10, -8);
        let other = Insn::store_reg(Size::Dw, Reg::R10, -16, Reg::R0);
        let mut items = vec![ins(a), ins(b), ins(c), ins(load), ins(other)];
        assert!(!drop_redundant_stores(&mut items));
        assert_eq!(items.len(), 5);
    }
}
