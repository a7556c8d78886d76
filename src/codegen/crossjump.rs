//! Two size rules of the peephole that work across blocks, run after register allocation on
//! the emitted items (`machine::MItem`).
//!
//! - Cross-jumping (tail merging): when the instructions just before a `goto L` are the same
//!   as the instructions that fall into `L`, the copy before the `goto` is dropped and the
//!   `goto` jumps to the start of the other copy instead. Lowering produces this shape at every
//!   map update: the "value found" path ends with `r1 = 1; lock *(u64 *)(r0 + 0) += r1; goto
//!   end` and the failure counter right before `end` is the same two instructions.
//! - A conditional jump over a `goto` (`if c goto A; goto B; A:`) becomes `if !c goto B`.
//!
//! Input: the items of one program. Output: the same program, never longer. Invariants: only
//! straight-line instructions without relocations or jump targets are compared and merged
//! (ld_imm64, calls and jumps never are), so relocation sites and jump offsets stay exact; a
//! fresh label is numbered above every label in use; a comparison is only inverted when its
//! exact negation exists (`JSET` has none).

use super::builder::Label;
use super::machine::MItem;
use crate::asm::isa::{class_of, jmp_op_of, opcode, with_jmp_op, Class, JmpSpecial};
use crate::asm::Insn;

fn is_goto(insn: &Insn) -> bool {
    insn.code == opcode(Class::Jmp, JmpSpecial::Ja.value())
}

/// An instruction that may be merged with an identical one: no relocation, no jump target,
/// not a jump, call or exit, not a half of ld_imm64.
fn mergeable(it: &MItem) -> Option<&Insn> {
    match it {
        MItem::Insn {
            insn,
            reloc: None,
            target: None,
            ..
        } => {
            let class = class_of(insn.code);
            (!matches!(class, Class::Ld | Class::Jmp | Class::Jmp32)).then_some(insn)
        }
        _ => None,
    }
}

fn next_label(items: &[MItem]) -> u32 {
    items
        .iter()
        .filter_map(|it| match it {
            MItem::Label(l) => Some(l.0),
            MItem::Insn {
                target: Some(t), ..
            } => Some(t.0),
            _ => None,
        })
        .max()
        .map_or(0, |m| m + 1)
}

/// One cross-jump found: the copy `[a, goto)` before the goto at `goto` is dropped and the goto
/// jumps to a fresh label put before `start`, the first instruction of the other copy.
struct Merge {
    a: usize,
    goto: usize,
    start: usize,
    fresh: Label,
}

/// Applies every cross-jump that does not touch another one's instructions, in one pass
/// (those that do wait for the next peephole round); true when the program changed.
pub(crate) fn cross_jump(items: &mut Vec<MItem>) -> bool {
    let label_at: std::collections::HashMap<Label, usize> = items
        .iter()
        .enumerate()
        .filter_map(|(k, it)| match it {
            MItem::Label(l) => Some((*l, k)),
            MItem::Insn { .. } => None,
        })
        .rev()
        .collect();
    let mut fresh = next_label(items);
    // Items an earlier merge of this pass drops or shares.
    let mut claimed = vec![false; items.len()];
    let mut merges: Vec<Merge> = Vec::new();
    for i in 0..items.len() {
        let MItem::Insn {
            insn,
            target: Some(t),
            ..
        } = &items[i]
        else {
            continue;
        };
        if !is_goto(insn) {
            continue;
        }
        let Some(&j) = label_at.get(t) else {
            continue;
        };
        // Walk back from the goto (a) and from the label (b) while the instructions match;
        // labels on the fall-through side are only positions and are stepped over.
        let (mut a, mut b, mut n) = (i, j, 0);
        let mut start = j;
        while a > 0 && b > 0 {
            let Some(x) = mergeable(&items[a - 1]) else {
                break;
            };
            let mut bb = b;
            while bb > 0 && matches!(items[bb - 1], MItem::Label(_)) {
                bb -= 1;
            }
            if bb == 0 || bb - 1 == i || mergeable(&items[bb - 1]) != Some(x) {
                break;
            }
            a -= 1;
            b = bb - 1;
            start = b;
            n += 1;
        }
        // The two copies must not overlap (a backward goto into its own tail).
        if n == 0 || (start < i && j > a) {
            continue;
        }
        if claimed[a..=i].iter().any(|&c| c) || claimed[start..j].iter().any(|&c| c) {
            continue;
        }
        claimed[a..=i].fill(true);
        claimed[start..j].fill(true);
        merges.push(Merge {
            a,
            goto: i,
            start,
            fresh: Label(fresh),
        });
        fresh += 1;
    }
    if merges.is_empty() {
        return false;
    }
    // Rebuild once: dropped ranges, retargeted gotos and fresh labels.
    let mut drop = vec![false; items.len()];
    let mut label_before: std::collections::HashMap<usize, Label> =
        std::collections::HashMap::new();
    let mut retarget: std::collections::HashMap<usize, Label> = std::collections::HashMap::new();
    for m in &merges {
        drop[m.a..m.goto].fill(true);
        label_before.insert(m.start, m.fresh);
        retarget.insert(m.goto, m.fresh);
    }
    let old = std::mem::take(items);
    items.reserve(old.len() + merges.len());
    for (k, mut it) in old.into_iter().enumerate() {
        if let Some(l) = label_before.get(&k) {
            items.push(MItem::Label(*l));
        }
        if drop[k] {
            continue;
        }
        if let (Some(l), MItem::Insn { target, .. }) = (retarget.get(&k), &mut it) {
            *target = Some(*l);
        }
        items.push(it);
    }
    true
}

/// Rewrites every `if c goto A; goto B; A:` into `if !c goto B; A:`; true when it did.
pub(crate) fn invert_over_goto(items: &mut Vec<MItem>) -> bool {
    let mut drop = vec![false; items.len()];
    let mut i = 0;
    while i + 2 < items.len() {
        let rewrite = match (&items[i], &items[i + 1]) {
            (
                MItem::Insn {
                    insn: c,
                    target: Some(a),
                    ..
                },
                MItem::Insn {
                    insn: g,
                    target: Some(b),
                    ..
                },
            ) if is_goto(g) && matches!(class_of(c.code), Class::Jmp | Class::Jmp32) => {
                let lands_after = items[i + 2..]
                    .iter()
                    .take_while(|x| matches!(x, MItem::Label(_)))
                    .any(|x| matches!(x, MItem::Label(l) if l == a));
                match jmp_op_of(c.code).and_then(|op| op.negate()) {
                    Some(op) if lands_after => Some((op, *b)),
                    _ => None,
                }
            }
            _ => None,
        };
        if let Some((op, b)) = rewrite {
            if let MItem::Insn { insn, target, .. } = &mut items[i] {
                insn.code = with_jmp_op(insn.code, op);
                *target = Some(b);
            }
            // Marked, not removed here: removing one by one would make the pass quadratic.
            drop[i + 1] = true;
            i += 1;
        }
        i += 1;
    }
    super::stores::remove_marked(items, &drop)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::asm::isa::{AtomicOp, JmpOp, Size};
    use crate::asm::Reg;
    use crate::diag::Span;

    fn ins(insn: Insn, target: Option<u32>) -> MItem {
        MItem::Insn {
            insn,
            reloc: None,
            target: target.map(Label),
            span: Span::default(),
            comment: None,
        }
    }

    fn code(items: &[MItem]) -> Vec<(Insn, Option<u32>)> {
        items
            .iter()
            .filter_map(|it| match it {
                MItem::Insn { insn, target, .. } => Some((*insn, target.map(|l| l.0))),
                MItem::Label(_) => None,
            })
            .collect()
    }

    #[test]
    fn identical_tails_before_a_goto_and_its_target_are_merged() {
        let one = Insn::mov64_imm(Reg::R1, 1);
        let add = Insn::atomic(Size::Dw, AtomicOp::Add, Reg::R0, 0, Reg::R1);
        // if r0 == 0 goto 1; r1 = 1; add; goto 2; 1: r0 = 5; r1 = 1; add; 2: exit
        let mut items = vec![
            ins(Insn::jmp_imm(JmpOp::Jeq, Reg::R0, 0, 0), Some(1)),
            ins(one, None),
            ins(add, None),
            ins(Insn::ja(0), Some(2)),
            MItem::Label(Label(1)),
            ins(Insn::mov64_imm(Reg::R0, 5), None),
            ins(one, None),
            ins(add, None),
            MItem::Label(Label(2)),
            ins(Insn::exit(), None),
        ];
        assert!(cross_jump(&mut items));
        assert!(invert_over_goto(&mut items));
        // if r0 != 0 goto 3; r0 = 5; 3: r1 = 1; add; exit
        let got = code(&items);
        assert_eq!(got.len(), 5, "{got:?}");
        assert_eq!(got[0].0, Insn::jmp_imm(JmpOp::Jne, Reg::R0, 0, 0));
        assert_eq!(got[0].1, Some(3));
        assert_eq!(got[1].0, Insn::mov64_imm(Reg::R0, 5));
        assert_eq!(got[2].0, one);
        assert!(matches!(&items[3], MItem::Label(Label(3))));
    }

    #[test]
    fn different_tails_and_jset_are_left_alone() {
        let mut items = vec![
            ins(Insn::jmp_imm(JmpOp::Jset, Reg::R0, 1, 0), Some(1)),
            ins(Insn::mov64_imm(Reg::R1, 1), None),
            ins(Insn::ja(0), Some(2)),
            MItem::Label(Label(1)),
            ins(Insn::mov64_imm(Reg::R1, 2), None),
            MItem::Label(Label(2)),
            ins(Insn::exit(), None),
        ];
        assert!(!cross_jump(&mut items));
        let mut items2 = vec![
            ins(Insn::jmp_imm(JmpOp::Jset, Reg::R0, 1, 0), Some(1)),
            ins(Insn::ja(0), Some(2)),
            MItem::Label(Label(1)),
            ins(Insn::exit(), None),
            MItem::Label(Label(2)),
            ins(Insn::exit(), None),
        ];
        assert!(!invert_over_goto(&mut items2));
        assert_eq!(items2.len(), 6);
    }
}
