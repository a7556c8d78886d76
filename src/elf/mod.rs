//! BPF ELF objects: writing relocatable objects from an assembled [`Object`](crate::asm::Object)
//! and reading any BPF ELF (strobe's or clang's) back into one.
//!
//! Input/output: `write_object(&Object) -> Vec<u8>` (maps as libbpf 1.x's BTF-defined
//! `.maps`; `write_object_with` can write the legacy `maps` section instead) and
//! `read_object(&[u8]) -> Object` (either form); `read_data_sections` gives a clang object's
//! global data (`.rodata*`, `.data*`, `.bss*`) for the loader to turn into maps.
//! Invariants: `read_object(write_object(o))` gives back `o`'s sections, symbols, relocations,
//! maps and license (symbols and relocations sorted by instruction), whichever map encoding;
//! the reader never panics, whatever the bytes. This module makes no syscall.

mod btf_maps;
pub mod cpp;
mod data;
mod read;
pub mod symbols;
pub mod usdt_note;
mod write;

pub use btf_maps::map_shapes as btf_map_shapes;
pub use data::{
    is_data_section, locate as locate_data, read_data_sections, DataSection, DataSymbols,
};
pub use read::{read_object, ReadError, SectionProblem, EM_BPF};
pub use usdt_note::UsdtNote;
pub use write::{
    write_object, write_object_with, MapEncoding, WriteError, WriteOptions, MAP_DEF_SIZE,
};

/// The ELF relocation type an instruction that names a symbol carries, inferred from its opcode
/// the way clang chooses it: `R_BPF_64_64` for `ld_imm64`, `R_BPF_64_32` for a call; `None` for
/// any other instruction (no program section of a BPF object relocates those).
pub fn reloc_type_name(code: u8) -> Option<&'static str> {
    match code {
        write::CODE_LD_IMM64 => Some("R_BPF_64_64"),
        write::CODE_CALL => Some("R_BPF_64_32"),
        _ => None,
    }
}

#[cfg(test)]
mod tests;
