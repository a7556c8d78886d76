//! ELF function symbols of a binary for uprobe wildcards: name → file offset. (Kernel symbols
//! come from `strobe::kernel::kallsyms`, which also maps `bpf_get_func_ip` addresses back to
//! functions for kprobes.)

use std::path::Path;

use crate::btf::Glob;

/// A function in an ELF file: its name and the file offset uprobes attach at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElfFunc {
    pub name: String,
    pub offset: u64,
    /// Link-time address and size (`st_value`, `st_size`).
    pub addr: u64,
    pub size: u64,
}

/// Every defined function symbol of the ELF at `path` (`.symtab` and `.dynsym`) whose name
/// matches `pattern`, with its file offset (address mapped through the PT_LOAD segment that
/// holds it); sorted by name, one entry per name.
pub fn elf_functions(path: &Path, pattern: &str) -> Result<Vec<ElfFunc>, String> {
    let glob = Glob::new(pattern).map_err(|e| e.to_string())?;
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
            if !glob.matches(name) {
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
                    addr: s.st_value,
                    size: s.st_size,
                });
            }
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out.dedup_by(|a, b| a.name == b.name);
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn elf_functions_of_this_test_binary_include_its_own_functions() {
        let exe = std::env::current_exe().unwrap();
        let f = elf_functions(&exe, "*elf_functions_of_this_test_binary*").unwrap();
        assert!(!f.is_empty(), "symbols of {}", exe.display());
        assert!(f.iter().all(|x| x.offset > 0));
        assert!(elf_functions(Path::new("/nonexistent"), "*").is_err());
    }
}
