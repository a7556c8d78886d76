//! BPF instructions: the `Insn` type, the tables generated from `isa/`, typed views and
//! builders, the assembler and the disassembler. This module never makes a syscall.
//!
//! Text → `Object`: `assemble` (lex → cursor → parse → parse_insn, resolved in assemble).
//! `Insn`s → text: `disassemble`. `Insn` ↔ `Decoded`: `decode` / `Decoded::encode`.

pub mod assemble;
pub mod builder;
mod cursor;
pub mod decode;
pub mod disasm;
pub mod insn;
pub mod isa;
mod lex;
pub mod listing;
pub mod object;
mod parse;
mod parse_insn;
mod parse_mem;
pub mod reg;

pub use assemble::{assemble, assemble_file, assemble_insns, AsmError};
pub use decode::{decode, Call, DecodeError, Decoded, Operand};
pub use disasm::{disassemble, disassemble_one};
pub use insn::Insn;
pub use isa::Helper;
pub use listing::{disassemble_labeled, disassemble_object};
pub use object::{MapDef, Object, Reloc, Section, Symbol};
pub use reg::Reg;
