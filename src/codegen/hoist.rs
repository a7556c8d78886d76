//! Stack-address hoisting: a stack address passed to three or more helper calls (a map key
//! used by `get_current_comm`, lookup and update) is computed once at entry into a register
//! that survives calls (r6–r9), so each later use is one move instead of two instructions.
//!
//! Input/output: the builder's instruction list, rewritten in place. Invariant: the hoisted
//! address is defined at the program's entry, which dominates every use; at most
//! [`MAX_HOISTED`] addresses are hoisted, so they never crowd the callee-saved registers.

use std::collections::HashMap;

use super::builder::{Arg, Builder, Inst, Op, Slot};

/// Hoisted addresses occupy callee-saved registers for the whole program; keep two free.
pub const MAX_HOISTED: usize = 2;
/// Uses from which hoisting saves an instruction (2 + n moves < 2n).
const MIN_USES: usize = 3;

pub(crate) fn hoist_slot_addrs(b: &mut Builder) {
    let mut uses: HashMap<(Slot, i32), usize> = HashMap::new();
    for inst in &b.insts {
        if let Op::Call { args, .. } = &inst.op {
            for a in args {
                if let Arg::Slot(s, off) = a {
                    *uses.entry((*s, *off)).or_default() += 1;
                }
            }
        }
    }
    let mut hot: Vec<((Slot, i32), usize)> = uses.into_iter().filter(|e| e.1 >= MIN_USES).collect();
    hot.sort_by_key(|&(k, n)| (std::cmp::Reverse(n), k));
    hot.truncate(MAX_HOISTED);
    for ((slot, off), _) in hot {
        let v = b.vreg();
        for inst in b.insts.iter_mut() {
            if let Op::Call { args, .. } = &mut inst.op {
                for a in args.iter_mut() {
                    if *a == Arg::Slot(slot, off) {
                        *a = Arg::Reg(v);
                    }
                }
            }
        }
        let span = b.insts.first().map(|i| i.span).unwrap_or_default();
        // After the entry (a subprogram's parameters, which must stay first).
        let at = b
            .insts
            .iter()
            .take_while(|i| matches!(i.op, Op::Entry { .. } | Op::Param { .. }))
            .count();
        b.insts.insert(
            at,
            Inst {
                op: Op::SlotAddr { dst: v, slot, off },
                span,
                comment: None,
            },
        );
    }
}
