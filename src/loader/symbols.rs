//! Symbol sources for wildcard expansion and for mapping addresses back to names:
//! ELF function symbols of a binary (uprobes: name → file offset) and `/proc/kallsyms`
//! (kprobes: text symbols for expansion; address → function for `func` from
//! `bpf_get_func_ip`). Stopgaps until `strobe::kernel` owns kallsyms; small and pure.

use std::path::Path;

use super::glob::glob_match;

/// A function in an ELF file: its name and the file offset uprobes attach at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElfFunc {
    pub name: String,
    pub offset: u64,
}

/// Every defined function symbol of the ELF at `path` (`.symtab` and `.dynsym`) whose name
/// matches `pattern`, with its file offset (address mapped through the PT_LOAD segment that
/// holds it); sorted by name, one entry per name.
pub fn elf_functions(path: &Path, pattern: &str) -> Result<Vec<ElfFunc>, String> {
    let data = std::fs::read(path).map_err(|e| e.to_string())?;
    let elf = goblin::elf::Elf::parse(&data).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    let tables = [(&elf.syms, &elf.strtab), (&elf.dynsyms, &elf.dynstrtab)];
    for (syms, strs) in tables {
        for s in syms.iter() {
            if s.st_type() != goblin::elf::sym::STT_FUNC || s.st_value == 0 || s.st_shndx == 0 {
                continue;
            }
            let Some(name) = strs.get_at(s.st_name) else {
                continue;
            };
            if !glob_match(pattern, name) {
                continue;
            }
            let seg = elf.program_headers.iter().find(|ph| {
                ph.p_type == goblin::elf::program_header::PT_LOAD
                    && s.st_value >= ph.p_vaddr
                    && s.st_value < ph.p_vaddr + ph.p_memsz
            });
            if let Some(ph) = seg {
                out.push(ElfFunc {
                    name: name.to_string(),
                    offset: s.st_value - ph.p_vaddr + ph.p_offset,
                });
            }
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out.dedup_by(|a, b| a.name == b.name);
    Ok(out)
}

/// Kernel text symbols from `/proc/kallsyms`, sorted by address.
#[derive(Clone, Debug, Default)]
pub struct Kallsyms {
    syms: Vec<(u64, String)>,
}

impl Kallsyms {
    pub fn load() -> std::io::Result<Kallsyms> {
        Ok(Kallsyms::parse(&std::fs::read_to_string("/proc/kallsyms")?))
    }

    /// `ADDR TYPE NAME [MODULE]` lines; text symbols (`t`/`T`) only.
    pub fn parse(text: &str) -> Kallsyms {
        let mut syms: Vec<(u64, String)> = text
            .lines()
            .filter_map(|l| {
                let mut it = l.split_whitespace();
                let addr = u64::from_str_radix(it.next()?, 16).ok()?;
                let ty = it.next()?;
                let name = it.next()?;
                matches!(ty, "t" | "T").then(|| (addr, name.to_string()))
            })
            .collect();
        syms.sort();
        Kallsyms { syms }
    }

    /// The function containing `addr` (the nearest symbol at or below it).
    pub fn lookup(&self, addr: u64) -> Option<&str> {
        let i = self.syms.partition_point(|(a, _)| *a <= addr);
        (i > 0 && addr != 0).then(|| self.syms[i - 1].1.as_str())
    }

    /// Names matching `pattern`, sorted and unique, leaving out compiler-made local copies
    /// (`name.isra.0`, `name.cold`), which kprobes cannot be attached to by name.
    pub fn matching(&self, pattern: &str) -> Vec<String> {
        let mut v: Vec<String> = self
            .syms
            .iter()
            .filter(|(_, n)| !n.contains('.') && glob_match(pattern, n))
            .map(|(_, n)| n.clone())
            .collect();
        v.sort();
        v.dedup();
        v
    }

    /// Whether addresses are real (root sees them; others see zeros).
    pub fn has_addresses(&self) -> bool {
        self.syms.iter().any(|(a, _)| *a != 0)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kallsyms_maps_addresses_to_the_containing_function() {
        let k = Kallsyms::parse(
            "ffffffff81000000 T _stext\nffffffff81000100 t vfs_read\n\
             ffffffff81000200 T vfs_write\nffffffff81000300 d some_data\n\
             ffffffff81000400 t vfs_read.cold\n",
        );
        assert_eq!(k.lookup(0xffffffff81000150), Some("vfs_read"));
        assert_eq!(k.lookup(0xffffffff81000200), Some("vfs_write"));
        assert_eq!(k.lookup(0x10), None);
        assert_eq!(k.matching("vfs_*"), vec!["vfs_read", "vfs_write"]);
        assert!(k.has_addresses());
    }

    #[test]
    fn elf_functions_of_this_test_binary_include_its_own_functions() {
        let exe = std::env::current_exe().unwrap();
        let f = elf_functions(&exe, "*elf_functions_of_this_test_binary*").unwrap();
        assert!(!f.is_empty(), "symbols of {}", exe.display());
        assert!(f.iter().all(|x| x.offset > 0));
        assert!(elf_functions(Path::new("/nonexistent"), "*").is_err());
    }
}
