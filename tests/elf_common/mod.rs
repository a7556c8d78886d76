//! A sample object shared by the ELF integration tests: two programs in one `kprobe/` section
//! (one calling a bpf-to-bpf function in `.text`), a local label, two maps and a license.
#![allow(dead_code)]

use strobe::asm::isa::AluOp;
use strobe::asm::{Helper, Insn, MapDef, Object, Reg, Reloc, Section, Symbol};

#[path = "sample.rs"]
mod sample_object;

#[allow(unused_imports)]
pub use sample_object::{reloc, sample, sym};
