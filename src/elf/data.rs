//! Global data of a clang-built BPF object: its `.rodata*`, `.data*` and `.bss*` sections,
//! which a loader turns into single-entry array maps (as libbpf does), and the variables
//! defined in them.
//!
//! Input: the object's bytes. Output: one [`DataSection`] per non-empty data section, with its
//! initial contents (zeros for `.bss`) and the symbols that point into it. Programs refer to
//! the data through `ld_imm64` relocations naming either a variable (`counter`) or the section
//! itself (`.rodata.str1.1`, for statics and string literals), with the offset within the
//! section in the instruction's immediate (REL relocations keep the addend in place).
//! Invariants: like [`read_object`](super::read_object), bytes are untrusted and nothing
//! panics; a symbol whose value lies outside its section is an error.

use goblin::elf::{section_header as sh, sym, Elf};
use std::collections::HashMap;

use super::read::{ReadError, SectionProblem};

/// The largest data section accepted: the kernel refuses array values above
/// `KMALLOC_MAX_SIZE` (4 MiB on x86-64 with 4 KiB pages, larger on some configurations).
pub const MAX_DATA: u64 = 64 << 20;

/// One global data section.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct DataSection {
    /// `.rodata`, `.data`, `.bss`, or a custom `.rodata.xxx` / `.data.xxx`.
    pub name: String,
    /// Initial contents; all zeros for `.bss` (its length is the section's size).
    pub bytes: Vec<u8>,
    /// Constants (`.rodata*`): the map is frozen after it is filled.
    pub readonly: bool,
    /// Variables defined in the section: (name, byte offset), in offset order.
    pub symbols: Vec<(String, u64)>,
}

/// Whether a section named `name` holds global data.
pub fn is_data_section(name: &str) -> bool {
    let under = |base: &str| {
        name == base
            || name
                .strip_prefix(base)
                .is_some_and(|rest| rest.starts_with('.'))
    };
    under(".rodata") || under(".data") || under(".bss")
}

/// The global data sections of the ELF object `bytes`, in section order; empty ones are left
/// out (no instruction can point into them, and a map cannot have a zero-sized value).
pub fn read_data_sections(bytes: &[u8]) -> Result<Vec<DataSection>, ReadError> {
    let elf = Elf::parse(bytes).map_err(|e| ReadError::NotElf {
        message: e.to_string(),
    })?;
    let mut out = Vec::new();
    for (idx, shdr) in elf.section_headers.iter().enumerate() {
        let Some(name) = elf.shdr_strtab.get_at(shdr.sh_name) else {
            continue;
        };
        let alloc = shdr.sh_flags & u64::from(sh::SHF_ALLOC) != 0;
        let exec = shdr.sh_flags & u64::from(sh::SHF_EXECINSTR) != 0;
        if !alloc || exec || shdr.sh_size == 0 || !is_data_section(name) {
            continue;
        }
        if shdr.sh_size > MAX_DATA {
            // Checked before allocating: a `.bss` claims its size without bytes in the file.
            return Err(ReadError::BadSection {
                section: name.to_string(),
                problem: SectionProblem::DataTooLarge {
                    size: shdr.sh_size,
                    max: MAX_DATA,
                },
            });
        }
        let size = shdr.sh_size as usize;
        let contents = match shdr.sh_type {
            sh::SHT_NOBITS => vec![0; size],
            sh::SHT_PROGBITS => shdr
                .sh_offset
                .checked_add(shdr.sh_size)
                .and_then(|end| bytes.get(shdr.sh_offset as usize..end as usize))
                .ok_or_else(|| truncated(name, shdr, bytes))?
                .to_vec(),
            _ => continue,
        };
        let mut symbols = Vec::new();
        for s in elf.syms.iter() {
            if s.st_shndx != idx || s.st_type() == sym::STT_SECTION {
                continue;
            }
            let Some(sym_name) = elf.strtab.get_at(s.st_name).filter(|n| !n.is_empty()) else {
                continue;
            };
            if s.st_value >= shdr.sh_size {
                return Err(ReadError::BadSection {
                    section: name.to_string(),
                    problem: SectionProblem::SymbolOffset {
                        name: sym_name.to_string(),
                        offset: s.st_value,
                    },
                });
            }
            symbols.push((sym_name.to_string(), s.st_value));
        }
        symbols.sort_by_key(|(_, off)| *off);
        out.push(DataSection {
            name: name.to_string(),
            bytes: contents,
            readonly: name.starts_with(".rodata"),
            symbols,
        });
    }
    Ok(out)
}

fn truncated(name: &str, shdr: &goblin::elf::SectionHeader, bytes: &[u8]) -> ReadError {
    ReadError::Truncated {
        section: name.to_string(),
        offset: shdr.sh_offset,
        end: shdr.sh_offset.saturating_add(shdr.sh_size),
        file_len: bytes.len(),
    }
}

/// Where symbol `symbol` (a variable, or a data section by name) lives: the section's index in
/// `data` and the symbol's offset in it. `Err` names the sections when the name is ambiguous
/// (two static variables of the same name in different sections). For many lookups, build a
/// [`DataSymbols`] once.
pub fn locate(data: &[DataSection], symbol: &str) -> Result<Option<(usize, u64)>, String> {
    DataSymbols::new(data).locate(symbol)
}

/// An index of data sections' names and variables: each lookup is a hash probe, not a scan of
/// every symbol (an object with many globals and relocations would be quadratic).
pub struct DataSymbols<'a> {
    data: &'a [DataSection],
    sections: HashMap<&'a str, usize>,
    vars: HashMap<&'a str, Vec<(usize, u64)>>,
}

impl<'a> DataSymbols<'a> {
    pub fn new(data: &'a [DataSection]) -> DataSymbols<'a> {
        let mut sections = HashMap::new();
        let mut vars: HashMap<&str, Vec<(usize, u64)>> = HashMap::new();
        for (i, d) in data.iter().enumerate() {
            sections.entry(d.name.as_str()).or_insert(i);
            for (n, off) in &d.symbols {
                vars.entry(n.as_str()).or_default().push((i, *off));
            }
        }
        DataSymbols {
            data,
            sections,
            vars,
        }
    }

    /// See [`locate`].
    pub fn locate(&self, symbol: &str) -> Result<Option<(usize, u64)>, String> {
        if let Some(&i) = self.sections.get(symbol) {
            return Ok(Some((i, 0)));
        }
        match self.vars.get(symbol).map(Vec::as_slice).unwrap_or_default() {
            [] => Ok(None),
            [one] => Ok(Some(*one)),
            many => Err(format!(
                "`{symbol}` is defined in several data sections ({})",
                many.iter()
                    .map(|(i, _)| self.data[*i].name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn data_sections_are_rodata_data_and_bss_with_optional_suffixes() {
        for yes in [
            ".rodata",
            ".rodata.str1.1",
            ".data",
            ".data.cfg",
            ".bss",
            ".bss.x",
        ] {
            assert!(is_data_section(yes), "{yes}");
        }
        for no in [
            ".datax", ".rodatas", ".BTF", ".maps", "data", ".text", ".bssfoo",
        ] {
            assert!(!is_data_section(no), "{no}");
        }
    }

    #[test]
    fn locate_prefers_section_names_and_refuses_ambiguous_variables() {
        let sec = |name: &str, syms: &[(&str, u64)]| DataSection {
            name: name.into(),
            bytes: vec![0; 16],
            readonly: false,
            symbols: syms.iter().map(|(n, o)| (n.to_string(), *o)).collect(),
        };
        let data = [
            sec(".data", &[("a", 0), ("b", 8)]),
            sec(".bss", &[("b", 4), ("c", 0)]),
        ];
        assert_eq!(locate(&data, ".bss"), Ok(Some((1, 0))));
        assert_eq!(locate(&data, "a"), Ok(Some((0, 0))));
        assert_eq!(locate(&data, "c"), Ok(Some((1, 0))));
        assert_eq!(locate(&data, "nope"), Ok(None));
        assert!(locate(&data, "b").unwrap_err().contains(".data, .bss"));
    }

    #[test]
    fn garbage_is_an_error_not_a_panic() {
        assert!(read_data_sections(b"not an elf").is_err());
    }

    #[test]
    fn a_huge_bss_is_refused_before_anything_is_allocated() {
        let obj = std::fs::read(concat!(
            env!("CARGO_MANIFEST_DIR"),
            "/tests/fixtures/clang_data.o"
        ))
        .unwrap();
        let elf = Elf::parse(&obj).unwrap();
        let (idx, _) = elf
            .section_headers
            .iter()
            .enumerate()
            .find(|(_, s)| elf.shdr_strtab.get_at(s.sh_name) == Some(".bss"))
            .unwrap();
        // sh_size is the sixth field (offset 32) of a 64-byte ELF64 section header.
        let at = elf.header.e_shoff as usize + idx * 64 + 32;
        let mut bad = obj.clone();
        bad[at..at + 8].copy_from_slice(&(1u64 << 48).to_le_bytes());
        let err = read_data_sections(&bad).unwrap_err();
        assert!(err.to_string().contains("more than one map value"), "{err}");
    }
}
