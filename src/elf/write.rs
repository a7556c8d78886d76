//! Writes an assembled [`Object`] as a relocatable little-endian ELF64 for EM_BPF, laid out the
//! way clang lays out BPF objects so that `llvm-objdump`, libbpf, bpftool and aya-obj read it:
//!
//! - one `SHF_ALLOC | SHF_EXECINSTR` section per program section, under its own name;
//! - `license` (NUL-terminated) when the object has one;
//! - maps, by default as clang writes them for libbpf 1.x: a `.maps` section with one global
//!   `STT_OBJECT` symbol per map and a `.BTF` section that describes each map as a VAR of an
//!   anonymous struct of `int (*name)[N]` members, listed in the DATASEC `.maps` (see
//!   `btf_maps`); or, with [`MapEncoding::Legacy`], a legacy `maps` section of 20-byte
//!   `struct bpf_map_def { type, key_size, value_size, max_entries, map_flags }` records, one
//!   global `STT_OBJECT` symbol of size 20 per map. libbpf 1.0 and later (so bpftool 7) refuse
//!   the legacy section; older loaders that do not read BTF need it;
//! - global symbols as `STT_FUNC` whose size runs to the next global symbol of the section (aya-obj
//!   and libbpf cut programs out of a section by symbol size), other labels as local `STT_NOTYPE`;
//! - `.rel<section>` (REL, implicit addends, as clang emits for BPF) with `R_BPF_64_64` on each
//!   `ld_imm64` that names a symbol and `R_BPF_64_32` on each call that names one.
//!
//! Invariants: the instruction bytes are written exactly as given (a relocation's addend is the
//! immediate already in the instruction, so a call to a global function must carry `imm = -1`,
//! libbpf's convention for "the symbol itself"); a symbol a relocation names that is defined
//! nowhere in the object becomes an undefined global, as an `extern` does in C.

use std::collections::{HashMap, HashSet};

use object::write::{self as ow, Relocation, SectionId, SymbolId, SymbolSection};
use object::{
    elf, Architecture, BinaryFormat, Endianness, RelocationFlags, SectionKind, SymbolFlags,
    SymbolKind, SymbolScope,
};

use super::btf_maps;
use crate::asm::{insn::insns_to_bytes, MapDef, Object, Section};
use crate::btf::encode::EncodeError;

/// Size of the legacy `struct bpf_map_def` record written for each map (five `u32`s).
pub const MAP_DEF_SIZE: usize = 20;

pub(crate) use crate::asm::isa::{CODE_CALL, CODE_LD_IMM64};

/// How map definitions are written.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MapEncoding {
    /// `.maps` + `.BTF`, libbpf's BTF-defined maps: what libbpf 1.x, bpftool, aya and
    /// cilium/ebpf read.
    #[default]
    Btf,
    /// The legacy `maps` section of `struct bpf_map_def` records, for loaders that predate
    /// BTF-defined maps (libbpf before 1.0 and loaders modelled on it); libbpf 1.x refuses it.
    Legacy,
}

/// Choices [`write_object_with`] offers; `Default` is what [`write_object`] writes.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct WriteOptions {
    pub maps: MapEncoding,
}

/// Why an [`Object`] cannot be written as ELF.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum WriteError {
    #[error("section `{section}`: relocation at instruction {insn} is past the end ({len} instructions)")]
    RelocOutOfRange {
        section: String,
        insn: usize,
        len: usize,
    },
    #[error("section `{section}`: relocation against `{symbol}` at instruction {insn} patches opcode {code:#04x}; only ld_imm64 (0x18) and call (0x85) can name a symbol")]
    RelocSite {
        section: String,
        insn: usize,
        code: u8,
        symbol: String,
    },
    #[error("section `{section}`: symbol `{name}` at instruction {insn} is past the end ({len} instructions)")]
    SymbolOutOfRange {
        section: String,
        name: String,
        insn: usize,
        len: usize,
    },
    #[error("symbol name {name:?} is empty or contains a NUL byte")]
    BadSymbolName { name: String },
    #[error("symbol `{name}` is defined more than once")]
    DuplicateSymbol { name: String },
    #[error("section name `{name}` is not usable for a program: {reason}")]
    BadSectionName { name: String, reason: &'static str },
    #[error("section `{name}` appears more than once")]
    DuplicateSection { name: String },
    #[error("the license string contains a NUL byte")]
    LicenseNul,
    #[error("cannot encode the maps' BTF: {source}")]
    MapBtf { source: EncodeError },
    #[error("ELF encoding failed: {message}")]
    Encode { message: String },
}

/// Encodes `obj` as a relocatable BPF ELF object, maps as BTF-defined `.maps`.
pub fn write_object(obj: &Object) -> Result<Vec<u8>, WriteError> {
    write_object_with(obj, &WriteOptions::default())
}

/// Encodes `obj` as a relocatable BPF ELF object, with the choices in `opts`.
pub fn write_object_with(obj: &Object, opts: &WriteOptions) -> Result<Vec<u8>, WriteError> {
    check_names(obj)?;
    let mut out = ow::Object::new(BinaryFormat::Elf, Architecture::Bpf, Endianness::Little);
    let mut defined: HashMap<&str, SymbolId> = HashMap::new();

    let mut prog_ids = Vec::with_capacity(obj.sections.len());
    for sec in &obj.sections {
        let id = out.add_section(Vec::new(), sec.name.as_bytes().to_vec(), SectionKind::Text);
        out.set_section_data(id, insns_to_bytes(&sec.insns), 8);
        add_section_symbols(&mut out, id, sec, &mut defined)?;
        prog_ids.push(id);
    }
    if let Some(license) = &obj.license {
        if license.contains('\0') {
            return Err(WriteError::LicenseNul);
        }
        let id = out.add_section(Vec::new(), b"license".to_vec(), SectionKind::Data);
        let mut data = license.as_bytes().to_vec();
        data.push(0);
        out.set_section_data(id, data, 1);
    }
    if !obj.maps.is_empty() {
        match opts.maps {
            MapEncoding::Btf => add_btf_maps(&mut out, &obj.maps, &mut defined)?,
            MapEncoding::Legacy => add_legacy_maps(&mut out, &obj.maps, &mut defined)?,
        }
    }
    for (sec, &id) in obj.sections.iter().zip(&prog_ids) {
        add_relocs(&mut out, id, sec, &mut defined)?;
    }
    out.write().map_err(|e| WriteError::Encode {
        message: e.to_string(),
    })
}

/// Sections the writer makes itself (whichever map encoding is chosen, so that an object stays
/// writable both ways).
const RESERVED_SECTIONS: [&str; 5] = ["license", "maps", ".maps", ".BTF", ".BTF.ext"];

fn check_names(obj: &Object) -> Result<(), WriteError> {
    let symbol_names = obj
        .sections
        .iter()
        .flat_map(|s| {
            let labels = s.symbols.iter().map(|sym| &sym.name);
            labels.chain(s.relocs.iter().map(|r| &r.symbol))
        })
        .chain(obj.maps.iter().map(|m| &m.name));
    for name in symbol_names {
        if name.is_empty() || name.contains('\0') {
            return Err(WriteError::BadSymbolName { name: name.clone() });
        }
    }
    let mut seen = HashSet::new();
    for sec in &obj.sections {
        let reason = if sec.name.is_empty() {
            Some("it is empty")
        } else if sec.name.contains('\0') {
            Some("it contains a NUL byte")
        } else if RESERVED_SECTIONS.contains(&sec.name.as_str()) || sec.name.starts_with(".rel") {
            Some("the ELF writer uses that name for its own section")
        } else {
            None
        };
        if let Some(reason) = reason {
            return Err(WriteError::BadSectionName {
                name: sec.name.clone(),
                reason,
            });
        }
        if !seen.insert(sec.name.as_str()) {
            return Err(WriteError::DuplicateSection {
                name: sec.name.clone(),
            });
        }
    }
    Ok(())
}

fn add_section_symbols<'o>(
    out: &mut ow::Object<'_>,
    id: SectionId,
    sec: &'o Section,
    defined: &mut HashMap<&'o str, SymbolId>,
) -> Result<(), WriteError> {
    let len = sec.insns.len();
    // Each global's size runs to the next global at a higher address, so that tools that cut a
    // section into functions by symbol size see every instruction exactly once.
    let mut starts: Vec<usize> = sec
        .symbols
        .iter()
        .filter(|s| s.global)
        .map(|s| s.insn)
        .collect();
    starts.sort_unstable();
    starts.dedup();
    for sym in &sec.symbols {
        if sym.insn > len {
            return Err(WriteError::SymbolOutOfRange {
                section: sec.name.clone(),
                name: sym.name.clone(),
                insn: sym.insn,
                len,
            });
        }
        if defined.contains_key(sym.name.as_str()) {
            return Err(WriteError::DuplicateSymbol {
                name: sym.name.clone(),
            });
        }
        let size = if sym.global {
            let next = starts
                .iter()
                .copied()
                .find(|&s| s > sym.insn)
                .unwrap_or(len);
            ((next - sym.insn) * 8) as u64
        } else {
            0
        };
        let sid = out.add_symbol(ow::Symbol {
            name: sym.name.as_bytes().to_vec(),
            value: (sym.insn * 8) as u64,
            size,
            kind: if sym.global {
                SymbolKind::Text
            } else {
                SymbolKind::Label
            },
            scope: if sym.global {
                SymbolScope::Linkage
            } else {
                SymbolScope::Compilation
            },
            weak: false,
            section: SymbolSection::Section(id),
            flags: SymbolFlags::None,
        });
        defined.insert(&sym.name, sid);
    }
    Ok(())
}

/// A global `STT_OBJECT` symbol for a map in section `id`.
fn add_map_symbol<'o>(
    out: &mut ow::Object<'_>,
    id: SectionId,
    map: &'o MapDef,
    (offset, size): (u64, u64),
    defined: &mut HashMap<&'o str, SymbolId>,
) -> Result<(), WriteError> {
    if defined.contains_key(map.name.as_str()) {
        return Err(WriteError::DuplicateSymbol {
            name: map.name.clone(),
        });
    }
    let sid = out.add_symbol(ow::Symbol {
        name: map.name.as_bytes().to_vec(),
        value: offset,
        size,
        kind: SymbolKind::Data,
        scope: SymbolScope::Dynamic,
        weak: false,
        section: SymbolSection::Section(id),
        flags: SymbolFlags::None,
    });
    defined.insert(&map.name, sid);
    Ok(())
}

/// `.maps` (zero-filled, one symbol per map: libbpf matches relocations to maps by symbol
/// offset, and the BTF variables to symbols by name) and `.BTF` (the shapes).
fn add_btf_maps<'o>(
    out: &mut ow::Object<'_>,
    maps: &'o [MapDef],
    defined: &mut HashMap<&'o str, SymbolId>,
) -> Result<(), WriteError> {
    let encoded = btf_maps::encode_maps(maps).map_err(|source| WriteError::MapBtf { source })?;
    let id = out.add_section(Vec::new(), b".maps".to_vec(), SectionKind::Data);
    out.set_section_data(id, vec![0; encoded.section_size as usize], 8);
    for (map, &(offset, size)) in maps.iter().zip(&encoded.vars) {
        add_map_symbol(out, id, map, (offset.into(), size.into()), defined)?;
    }
    // Not SHF_ALLOC, as clang writes it: loaders read `.BTF` and hand it to the kernel.
    let btf = out.add_section(Vec::new(), b".BTF".to_vec(), SectionKind::Metadata);
    out.set_section_data(btf, encoded.btf, 4);
    Ok(())
}

fn add_legacy_maps<'o>(
    out: &mut ow::Object<'_>,
    maps: &'o [MapDef],
    defined: &mut HashMap<&'o str, SymbolId>,
) -> Result<(), WriteError> {
    let id = out.add_section(Vec::new(), b"maps".to_vec(), SectionKind::Data);
    let mut data = Vec::with_capacity(maps.len() * MAP_DEF_SIZE);
    for (i, map) in maps.iter().enumerate() {
        for field in [
            map.map_type,
            map.key_size,
            map.value_size,
            map.max_entries,
            map.flags,
        ] {
            data.extend_from_slice(&field.to_le_bytes());
        }
        let at = (i * MAP_DEF_SIZE) as u64;
        add_map_symbol(out, id, map, (at, MAP_DEF_SIZE as u64), defined)?;
    }
    out.set_section_data(id, data, 4);
    Ok(())
}

fn add_relocs<'o>(
    out: &mut ow::Object<'_>,
    id: SectionId,
    sec: &'o Section,
    defined: &mut HashMap<&'o str, SymbolId>,
) -> Result<(), WriteError> {
    for reloc in &sec.relocs {
        let insn = sec
            .insns
            .get(reloc.insn)
            .ok_or_else(|| WriteError::RelocOutOfRange {
                section: sec.name.clone(),
                insn: reloc.insn,
                len: sec.insns.len(),
            })?;
        let r_type = match insn.code {
            CODE_LD_IMM64 => elf::R_BPF_64_64,
            CODE_CALL => elf::R_BPF_64_32,
            code => {
                return Err(WriteError::RelocSite {
                    section: sec.name.clone(),
                    insn: reloc.insn,
                    code,
                    symbol: reloc.symbol.clone(),
                })
            }
        };
        let symbol = *defined.entry(&reloc.symbol).or_insert_with(|| {
            out.add_symbol(ow::Symbol {
                name: reloc.symbol.as_bytes().to_vec(),
                value: 0,
                size: 0,
                kind: SymbolKind::Unknown,
                scope: SymbolScope::Dynamic,
                weak: false,
                section: SymbolSection::Undefined,
                flags: SymbolFlags::None,
            })
        });
        out.add_relocation(
            id,
            Relocation {
                offset: (reloc.insn * 8) as u64,
                symbol,
                addend: 0,
                flags: RelocationFlags::Elf { r_type },
            },
        )
        .map_err(|e| WriteError::Encode {
            message: e.to_string(),
        })?;
    }
    Ok(())
}
