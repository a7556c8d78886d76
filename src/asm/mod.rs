//! BPF instructions: the `Insn` type, the tables generated from `isa/`, the assembler and the
//! disassembler. This module never makes a syscall.

pub mod insn;
pub mod object;

pub use insn::Insn;
pub use object::{MapDef, Object, Reloc, Section, Symbol};
