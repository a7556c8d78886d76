//! Reads any BPF ELF object (strobe's, clang's, with or without `.BTF`/`.BTF.ext`) into an
//! [`Object`].
//!
//! Input: the bytes of a file. Output: every non-empty executable section as a program
//! [`Section`] (instructions, the function and label symbols defined in it, and the relocations
//! that target it, by symbol name — a section symbol is named after its section, as
//! `llvm-objdump -r` does), the `license` string, and the maps of a legacy `maps` section or of
//! a BTF-defined `.maps` section.
//! Invariants: bytes are untrusted — every offset and size is checked before use, errors are
//! typed, nothing panics; symbols and relocations come out in address order.

use goblin::elf::{header, section_header as sh, sym, Elf, SectionHeader};

use super::btf_maps;
use crate::asm::{insn::insns_from_bytes, Insn, MapDef, Object, Reloc, Section, Symbol};

/// `EM_BPF` from the ELF machine registry (`include/uapi/linux/elf-em.h`).
pub const EM_BPF: u16 = 247;

/// Why bytes could not be read as a BPF object.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum ReadError {
    #[error("not an ELF object: {message}")]
    NotElf { message: String },
    #[error("not a BPF object: ELF machine is {machine}, expected EM_BPF (247)")]
    NotBpf { machine: u16 },
    #[error("unsupported ELF layout: BPF objects are 64-bit little-endian")]
    UnsupportedLayout { is_64: bool, little_endian: bool },
    #[error(
        "truncated: section `{section}` needs bytes {offset}..{end} but the file has {file_len}"
    )]
    Truncated {
        section: String,
        offset: u64,
        end: u64,
        file_len: usize,
    },
    #[error("section `{section}`: {problem}")]
    BadSection {
        section: String,
        problem: SectionProblem,
    },
}

/// What is wrong inside one section.
#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum SectionProblem {
    #[error("section name is not valid UTF-8 or out of the string table")]
    BadName,
    #[error("size {size} is not a whole number of 8-byte instructions")]
    PartialInsn { size: u64 },
    #[error(
        "relocation at byte offset {offset} is outside the section or not instruction-aligned"
    )]
    RelocOffset { offset: u64 },
    #[error("relocation refers to symbol index {index}, which does not exist")]
    RelocSymbol { index: usize },
    #[error(
        "symbol `{name}` at byte offset {offset} is outside the section or not instruction-aligned"
    )]
    SymbolOffset { name: String, offset: u64 },
    #[error("map `{name}` at byte offset {offset} lies outside the section")]
    MapOffset { name: String, offset: u64 },
    #[error("BTF: {message}")]
    Btf { message: String },
    #[error("global data of {size} bytes is more than one map value can hold ({max} bytes)")]
    DataTooLarge { size: u64, max: u64 },
}

/// Parses a BPF ELF object.
pub fn read_object(bytes: &[u8]) -> Result<Object, ReadError> {
    let elf = Elf::parse(bytes).map_err(|e| ReadError::NotElf {
        message: e.to_string(),
    })?;
    if elf.header.e_machine != header::EM_BPF {
        return Err(ReadError::NotBpf {
            machine: elf.header.e_machine,
        });
    }
    if !elf.is_64 || !elf.little_endian {
        return Err(ReadError::UnsupportedLayout {
            is_64: elf.is_64,
            little_endian: elf.little_endian,
        });
    }
    let reader = Reader { bytes, elf: &elf };
    let mut obj = Object::default();
    for (idx, shdr) in elf.section_headers.iter().enumerate() {
        let name = reader.section_name(shdr)?;
        if shdr.sh_type == sh::SHT_PROGBITS && shdr.sh_flags & u64::from(sh::SHF_EXECINSTR) != 0 {
            if shdr.sh_size > 0 {
                obj.sections.push(reader.program_section(idx, shdr, name)?);
            }
        } else if name == "license" {
            let data = reader.data(shdr, name)?;
            let end = data.iter().position(|&b| b == 0).unwrap_or(data.len());
            obj.license = Some(String::from_utf8_lossy(&data[..end]).into_owned());
        } else if name == "maps" || name.starts_with("maps/") {
            obj.maps.extend(reader.legacy_maps(idx, shdr, name)?);
        } else if name == ".maps" {
            obj.maps.extend(reader.btf_maps(idx, shdr, name)?);
        }
    }
    Ok(obj)
}

struct Reader<'a, 'e> {
    bytes: &'a [u8],
    elf: &'e Elf<'a>,
}

fn bad(section: &str, problem: SectionProblem) -> ReadError {
    ReadError::BadSection {
        section: section.to_string(),
        problem,
    }
}

impl<'a> Reader<'a, '_> {
    fn section_name(&self, shdr: &SectionHeader) -> Result<&'a str, ReadError> {
        self.elf
            .shdr_strtab
            .get_at(shdr.sh_name)
            .ok_or_else(|| bad(&format!("#{}", shdr.sh_name), SectionProblem::BadName))
    }

    /// The bytes of a section, checked against the file's length.
    fn data(&self, shdr: &SectionHeader, name: &str) -> Result<&'a [u8], ReadError> {
        if shdr.sh_type == sh::SHT_NOBITS {
            return Ok(&[]);
        }
        let end = shdr.sh_offset.checked_add(shdr.sh_size);
        match end {
            Some(end) if end <= self.bytes.len() as u64 => {
                Ok(&self.bytes[shdr.sh_offset as usize..end as usize])
            }
            _ => Err(ReadError::Truncated {
                section: name.to_string(),
                offset: shdr.sh_offset,
                end: end.unwrap_or(u64::MAX),
                file_len: self.bytes.len(),
            }),
        }
    }

    fn symbol_name(&self, s: &sym::Sym) -> &'a str {
        if s.st_type() == sym::STT_SECTION {
            if let Some(shdr) = self.elf.section_headers.get(s.st_shndx) {
                return self.elf.shdr_strtab.get_at(shdr.sh_name).unwrap_or("");
            }
        }
        self.elf.strtab.get_at(s.st_name).unwrap_or("")
    }

    fn program_section(
        &self,
        idx: usize,
        shdr: &SectionHeader,
        name: &str,
    ) -> Result<Section, ReadError> {
        let data = self.data(shdr, name)?;
        let insns = insns_from_bytes(data)
            .map_err(|_| bad(name, SectionProblem::PartialInsn { size: shdr.sh_size }))?;
        let mut symbols = Vec::new();
        for s in self.elf.syms.iter() {
            let kind = s.st_type();
            if s.st_shndx != idx || !(kind == sym::STT_FUNC || kind == sym::STT_NOTYPE) {
                continue;
            }
            let sym_name = self.symbol_name(&s);
            if sym_name.is_empty() {
                continue;
            }
            let insn = insn_index(s.st_value, data.len(), true).ok_or_else(|| {
                bad(
                    name,
                    SectionProblem::SymbolOffset {
                        name: sym_name.to_string(),
                        offset: s.st_value,
                    },
                )
            })?;
            symbols.push(Symbol {
                name: sym_name.to_string(),
                insn,
                global: s.st_bind() != sym::STB_LOCAL,
            });
        }
        symbols.sort_by_key(|s| s.insn);
        let relocs = self.relocs_for(idx, name, &insns)?;
        Ok(Section {
            name: name.to_string(),
            insns,
            symbols,
            relocs,
        })
    }

    fn relocs_for(&self, idx: usize, name: &str, insns: &[Insn]) -> Result<Vec<Reloc>, ReadError> {
        let mut relocs = Vec::new();
        for (rel_idx, rels) in &self.elf.shdr_relocs {
            let targets_us = self
                .elf
                .section_headers
                .get(*rel_idx)
                .is_some_and(|r| r.sh_info as usize == idx);
            if !targets_us {
                continue;
            }
            for r in rels.iter() {
                let insn = insn_index(r.r_offset, insns.len() * 8, false)
                    .ok_or_else(|| bad(name, SectionProblem::RelocOffset { offset: r.r_offset }))?;
                let s = self
                    .elf
                    .syms
                    .get(r.r_sym)
                    .ok_or_else(|| bad(name, SectionProblem::RelocSymbol { index: r.r_sym }))?;
                relocs.push(Reloc {
                    insn,
                    symbol: self.symbol_name(&s).to_string(),
                });
            }
        }
        relocs.sort_by_key(|r| r.insn);
        Ok(relocs)
    }

    /// Maps of a legacy `maps` section: one `struct bpf_map_def` per symbol, its size given by
    /// the symbol (older objects leave it 0: then the five `u32`s strobe writes are assumed).
    fn legacy_maps(
        &self,
        idx: usize,
        shdr: &SectionHeader,
        name: &str,
    ) -> Result<Vec<MapDef>, ReadError> {
        let data = self.data(shdr, name)?;
        let mut maps: Vec<(u64, MapDef)> = Vec::new();
        for s in self.elf.syms.iter() {
            let kind = s.st_type();
            if s.st_shndx != idx || !(kind == sym::STT_OBJECT || kind == sym::STT_NOTYPE) {
                continue;
            }
            let map_name = self.symbol_name(&s);
            if map_name.is_empty() {
                continue;
            }
            let size = if s.st_size == 0 {
                super::write::MAP_DEF_SIZE as u64
            } else {
                s.st_size
            };
            let start = s.st_value;
            if start >= data.len() as u64 {
                return Err(bad(
                    name,
                    SectionProblem::MapOffset {
                        name: map_name.to_string(),
                        offset: start,
                    },
                ));
            }
            let end = start.saturating_add(size).min(data.len() as u64);
            let rec = &data[start as usize..end as usize];
            let field = |i: usize| -> u32 {
                rec.get(i * 4..i * 4 + 4)
                    .map_or(0, |b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]))
            };
            maps.push((
                start,
                MapDef {
                    name: map_name.to_string(),
                    map_type: field(0),
                    key_size: field(1),
                    value_size: field(2),
                    max_entries: field(3),
                    flags: field(4),
                },
            ));
        }
        maps.sort_by_key(|(off, _)| *off);
        Ok(maps.into_iter().map(|(_, m)| m).collect())
    }

    /// Maps of a BTF-defined `.maps` section: their shapes live in `.BTF`, not in the section.
    fn btf_maps(
        &self,
        idx: usize,
        shdr: &SectionHeader,
        name: &str,
    ) -> Result<Vec<MapDef>, ReadError> {
        self.data(shdr, name)?;
        let mut btf_data = None;
        for s in &self.elf.section_headers {
            if self.elf.shdr_strtab.get_at(s.sh_name) == Some(".BTF") {
                btf_data = Some(self.data(s, ".BTF")?);
            }
        }
        let mut names: Vec<(u64, &str)> = self
            .elf
            .syms
            .iter()
            .filter(|s| s.st_shndx == idx && s.st_type() != sym::STT_SECTION)
            .map(|s| (s.st_value, self.symbol_name(&s)))
            .filter(|(_, n)| !n.is_empty())
            .collect();
        names.sort_by_key(|(off, _)| *off);
        let shapes = match btf_data {
            Some(d) => btf_maps::map_shapes(d).map_err(|e| {
                bad(
                    ".BTF",
                    SectionProblem::Btf {
                        message: e.to_string(),
                    },
                )
            })?,
            None => Vec::new(),
        };
        let mut by_name: std::collections::HashMap<&str, &MapDef> = Default::default();
        for m in &shapes {
            by_name.entry(m.name.as_str()).or_insert(m);
        }
        Ok(names
            .into_iter()
            .map(|(_, n)| {
                by_name
                    .get(n)
                    .map(|m| (*m).clone())
                    .unwrap_or_else(|| MapDef {
                        name: n.to_string(),
                        map_type: 0,
                        key_size: 0,
                        value_size: 0,
                        max_entries: 0,
                        flags: 0,
                    })
            })
            .collect())
    }
}

/// Converts a byte offset into an instruction index, if it is 8-aligned and inside `len`
/// bytes (or at its end, when `end_ok`: a label may follow the last instruction).
fn insn_index(offset: u64, len: usize, end_ok: bool) -> Option<usize> {
    let in_range = if end_ok {
        offset <= len as u64
    } else {
        offset < len as u64
    };
    (offset % 8 == 0 && in_range).then_some((offset / 8) as usize)
}
