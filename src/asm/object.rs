//! An assembled multi-program file: the assembler's output and the ELF writer's input, and what
//! the ELF reader gives back for any BPF object (clang's too).

use super::Insn;

/// A whole object: program sections, the maps they refer to by name, and the license.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Object {
    pub sections: Vec<Section>,
    pub maps: Vec<MapDef>,
    pub license: Option<String>,
}

/// One program section (`.section "kprobe/vfs_read"`, or `.text`).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Section {
    pub name: String,
    pub insns: Vec<Insn>,
    /// Labels that name an instruction (a program entry point when `global`).
    pub symbols: Vec<Symbol>,
    /// Instructions whose immediate refers to a symbol resolved at load or link time: an
    /// `ld_imm64` naming a map, or a call naming a function in another section.
    pub relocs: Vec<Reloc>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Symbol {
    pub name: String,
    /// Index (in instructions, not bytes) within the section.
    pub insn: usize,
    pub global: bool,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Reloc {
    /// Index (in instructions) of the instruction to patch.
    pub insn: usize,
    pub symbol: String,
}

/// A map declared in the object: the five fields of `struct bpf_map_def`, which the ELF writer
/// encodes as a BTF-defined `.maps` entry (or, on request, a legacy `maps` record).
/// `Default` is the all-zero shape, which readers fill in field by field.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MapDef {
    pub name: String,
    /// `enum bpf_map_type` value.
    pub map_type: u32,
    pub key_size: u32,
    pub value_size: u32,
    pub max_entries: u32,
    pub flags: u32,
}
