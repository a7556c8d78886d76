//! The arming guard: all-or-nothing event delivery across many attached clones.
//!
//! The kernel cannot attach many trampolines atomically, so every program starts with a test
//! of a flag in a one-entry array map (read through a direct map-value pointer: the `ld_imm64`
//! is a constant, so an event costs one load and one branch) and returns at once while the
//! flag is 0. The loader sets the flag with one map write after the last attach and clears it
//! first at exit, so users see events from all targets or none.
//!
//! The map value holds two such flags (`u32` each): at 0 for every program but uprobes, at
//! [`USER_FLAG_OFF`] for uprobe (and USDT) programs. A run that `exit()` ends clears the first
//! only, so its uprobes count on until their attachments are closed, as bpftrace's do until
//! it detaches them, while every other probe stops at once (`runtime::driver`).

use super::reloc::{Field, Reloc, RelocKind};
use super::Template;
use crate::asm::isa::{JmpOp, Size};
use crate::asm::{Insn, Reg};

/// The name of the arming map in [`Template::maps`] (`BPF_OBJ_NAME_LEN` is 16).
pub const ARM_MAP_NAME: &str = "strobe_arm";

/// The name of the lost-events counter in [`Template::maps`]: a one-entry array of one `u64`
/// the runtime reports as `Lost N events` (ring buffer records that found no room, and events
/// a program could not deliver at all, such as a kprobe.session return whose arguments had no
/// room to be saved).
pub const LOST_MAP_NAME: &str = "lost";

/// The name of the exit map in [`Template::maps`]: a one-entry array of 8 bytes that `exit()`
/// writes (`u32` code at 0, then `u32` 1 at 4) before its ring-buffer record, so the runtime
/// learns of an `exit()` even when that record is lost in a full buffer
/// (`runtime::exit_flag`).
pub const EXIT_MAP_NAME: &str = "strobe_exit";

/// Byte offset of the uprobe programs' flag in the arming map's value.
pub const USER_FLAG_OFF: i16 = 4;

/// Instructions the guard puts in front of a program that does not end in `r0 = 0; exit`.
pub(crate) const GUARD_LEN: usize = 6;
/// Instructions the guard puts in front of a program that does: it branches to that tail.
pub(crate) const SHORT_GUARD_LEN: usize = 4;

impl Template {
    /// This template with the arming guard in front: `r0 = *(u32 *)map_value(strobe_arm, 0);
    /// if r0 == 0 return 0`. r1 (ctx) is untouched, relative jumps and calls inside the body
    /// keep their targets, and relocations and the source map move down by the guard's length.
    pub fn with_arming_guard(&self) -> Template {
        let mut t = self.clone();
        let arm = t.map_index(ARM_MAP_NAME);
        let [lo, hi] = Insn::ld_map_value(Reg::R0, 0, 0);
        let user = matches!(self.attach, super::AttachKind::Uprobe { .. });
        let flag = if user { USER_FLAG_OFF } else { 0 };
        let load = Insn::load(Size::W, Reg::R0, Reg::R0, flag);
        // Code generated for a probe ends its main program with `r0 = 0; exit`: the guard
        // branches there instead of carrying its own copy (two instructions per program).
        let main_end = self.funcs.first().copied().unwrap_or(self.insns.len());
        let tail = main_end
            .checked_sub(2)
            .filter(|&i| self.insns[i..main_end] == [Insn::mov64_imm(Reg::R0, 0), Insn::exit()])
            .and_then(|i| i16::try_from(i).ok());
        let guard: Vec<Insn> = match tail {
            Some(off) => vec![lo, hi, load, Insn::jmp_imm(JmpOp::Jeq, Reg::R0, 0, off)],
            None => vec![
                lo,
                hi,
                load,
                Insn::jmp_imm(JmpOp::Jne, Reg::R0, 0, 2),
                Insn::mov64_imm(Reg::R0, 0),
                Insn::exit(),
            ],
        };
        let n = guard.len();
        debug_assert_eq!(
            n,
            if tail.is_some() {
                SHORT_GUARD_LEN
            } else {
                GUARD_LEN
            }
        );
        t.insns = guard
            .iter()
            .copied()
            .chain(self.insns.iter().copied())
            .collect();
        t.relocs = std::iter::once(Reloc::new(
            0,
            Field::Imm,
            RelocKind::MapValue { map: arm, off: 0 },
        ))
        .chain(self.relocs.iter().map(|r| r.shifted(n)))
        .collect();
        t.source_map = self.source_map.shifted(n);
        t.funcs = self.funcs.iter().map(|f| f + n).collect();
        t
    }
}
