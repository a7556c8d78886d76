//! Code generation core: a builder of BPF programs over virtual registers, labels and stack
//! slots; register allocation with spilling; stack-slot allocation; reusable lowering
//! primitives ([`emit`]); and the finishing pass that produces a relocatable
//! [`Template`](crate::template::Template) with its source map.
//!
//! Input: calls from lowering (one probe block at a time): `Builder` methods and `emit::*`
//! functions, each tagged with the current script [`Span`](crate::diag::Span). Output:
//! [`Compiled`] from [`finish`]. Flow:
//! `Builder` → `hoist` (stack addresses used by many calls) → `regalloc` (r0–r9, spills) → `stack` (frame ≤ 512 bytes) → `machine` (insns with
//! labels) → `finish` (peephole, labels, relocations, source map, arming guard).
//! This module never makes a syscall; instruction encodings come from `asm::isa` only.

pub mod builder;
mod crossjump;
mod deadstores;
pub mod emit;
pub mod finish;
mod hoist;
pub mod link;
mod liveness;
pub mod lower;
mod machine;
mod regalloc;
pub mod stack;
mod stores;

#[cfg(test)]
mod tests;

pub use builder::{Arg, Builder, Label, Mem, Slot, Src, VReg};
pub use finish::{finish, Compiled, FinishOptions};
pub use link::finish_program;

/// Why a program could not be generated.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum CodegenError {
    #[error("program needs {needed} bytes of stack; the kernel allows {limit}")]
    StackOverflow { needed: u32, limit: u32 },
    #[error("too many values live at once to fit in registers ({insns} instructions)")]
    RegisterPressure { insns: usize },
    #[error("jump at instruction {insn} spans {off} instructions; at most 32767 are allowed")]
    JumpRange { insn: usize, off: i64 },
    #[error("memory offset {off} does not fit an instruction's 16-bit offset")]
    OffsetRange { off: i32 },
    #[error("internal error: label {label} is jumped to but never bound")]
    UnboundLabel { label: u32 },
    #[error("{what} of {size} bytes does not fit in {limit} bytes")]
    TooLarge {
        what: &'static str,
        size: usize,
        limit: usize,
    },
}
