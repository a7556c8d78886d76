//! BPF instructions: the `Insn` type, the tables generated from `isa/`, the assembler and the
//! disassembler. This module never makes a syscall.

pub mod insn;
pub mod object;

pub use insn::Insn;
pub use object::{MapDef, Object, Reloc, Section, Symbol};
pub mod builder;
pub mod isa;
pub mod reg;

pub use reg::Reg;
pub mod decode;

pub mod disasm;
pub mod forms;
pub use decode::{decode, Call, DecodeError, Decoded, Operand};
pub use disasm::{disassemble, disassemble_one};
