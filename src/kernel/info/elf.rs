//! User binaries for uprobes and USDT: finding the file a target names, its function symbols
//! and its `.note.stapsdt` probes.
//!
//! Input: a target as written in a script (`/bin/bash`, `bash`, `libc`, `libc.so.6`) or an ELF
//! path. Output: a path, symbol names, [`UsdtNote`]s.
//! Invariant: a file that is not ELF or is truncated is an error naming the file, never a panic.

use std::path::{Path, PathBuf};

use super::KernelInfoError;

/// One USDT probe from an ELF note (`Documentation` of SystemTap's `sdt.h`: note type 3, owner
/// `stapsdt`; the descriptor holds the probe address, the `.stapsdt.base` address and the
/// semaphore address as 64-bit words, then provider, name and argument strings).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsdtNote {
    pub provider: String,
    pub name: String,
    /// The argument description (`-4@%edi 8@%rsi`).
    pub args: String,
    pub pc: u64,
    pub base: u64,
    /// The semaphore's address, 0 when the probe has none.
    pub semaphore: u64,
}

const LIB_DIRS: &[&str] = &[
    "/lib",
    "/usr/lib",
    "/lib64",
    "/usr/lib64",
    "/lib/x86_64-linux-gnu",
    "/usr/lib/x86_64-linux-gnu",
    "/lib/aarch64-linux-gnu",
    "/usr/lib/aarch64-linux-gnu",
];

/// Finds the file a uprobe/usdt target names, as bpftrace does: a path is used as is; a bare
/// name is looked up in `$PATH`, then as a shared library (`name`, `name.so*`, `libname.so*`)
/// in the ld.so cache and the usual library directories.
pub fn find_binary(target: &str) -> Option<PathBuf> {
    if target.is_empty() {
        return None;
    }
    if target.contains('/') {
        let p = PathBuf::from(target);
        return p.exists().then_some(p);
    }
    if let Some(path) = std::env::var_os("PATH") {
        for dir in std::env::split_paths(&path) {
            let p = dir.join(target);
            if p.is_file() {
                return Some(p);
            }
        }
    }
    let stem = target.strip_prefix("lib").unwrap_or(target);
    let wanted = |file: &str| {
        file == target
            || file.starts_with(&format!("{target}.so"))
            || file.starts_with(&format!("lib{stem}.so"))
    };
    if let Ok(cache) = std::fs::read("/etc/ld.so.cache") {
        for s in cache.split(|&b| b == 0) {
            let Ok(s) = std::str::from_utf8(s) else {
                continue;
            };
            if let Some((_, file)) = s.rsplit_once('/') {
                if s.starts_with('/') && wanted(file) && Path::new(s).exists() {
                    return Some(PathBuf::from(s));
                }
            }
        }
    }
    for dir in LIB_DIRS {
        let Ok(rd) = std::fs::read_dir(dir) else {
            continue;
        };
        let mut hits: Vec<PathBuf> = rd
            .filter_map(|e| e.ok())
            .filter(|e| e.file_name().to_str().is_some_and(wanted))
            .map(|e| e.path())
            .collect();
        hits.sort();
        if let Some(p) = hits.into_iter().next() {
            return Some(p);
        }
    }
    None
}

fn read(path: &Path) -> Result<Vec<u8>, KernelInfoError> {
    std::fs::read(path).map_err(|e| KernelInfoError::Binary {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })
}

fn parse<'a>(path: &Path, bytes: &'a [u8]) -> Result<goblin::elf::Elf<'a>, KernelInfoError> {
    goblin::elf::Elf::parse(bytes).map_err(|e| KernelInfoError::Binary {
        path: path.to_path_buf(),
        reason: format!("not a readable ELF file: {e}"),
    })
}

/// Function symbols with an address from `.symtab` and `.dynsym`, sorted and deduplicated
/// (versioned dynamic names come without their `@VERSION`).
pub fn read_elf_symbols(path: &Path) -> Result<Vec<String>, KernelInfoError> {
    let bytes = read(path)?;
    let elf = parse(path, &bytes)?;
    let mut out = Vec::new();
    let tables = [(&elf.syms, &elf.strtab), (&elf.dynsyms, &elf.dynstrtab)];
    for (syms, strs) in tables {
        for s in syms.iter() {
            if s.st_type() != goblin::elf::sym::STT_FUNC || s.st_value == 0 {
                continue;
            }
            if let Some(name) = strs.get_at(s.st_name) {
                if !name.is_empty() {
                    out.push(name.split('@').next().unwrap_or(name).to_string());
                }
            }
        }
    }
    out.sort();
    out.dedup();
    Ok(out)
}

/// Whether an ELF file is position-independent (`ET_DYN`: a PIE or a shared library), whose
/// link-time addresses are offsets from wherever each process maps it.
pub fn elf_is_dyn(path: &Path) -> bool {
    read(path)
        .ok()
        .and_then(|b| {
            parse(path, &b)
                .ok()
                .map(|e| e.header.e_type == goblin::elf::header::ET_DYN)
        })
        .unwrap_or(false)
}

/// The address and size of function or object symbol `name` of an ELF file: `.symtab` first,
/// then `.dynsym` (bpftrace's `uaddr()` takes the symbol's link-time address as is).
pub fn elf_symbol_address(path: &Path, name: &str) -> Option<(u64, u64)> {
    let bytes = read(path).ok()?;
    let elf = parse(path, &bytes).ok()?;
    let tables = [(&elf.syms, &elf.strtab), (&elf.dynsyms, &elf.dynstrtab)];
    for (syms, strs) in tables {
        for s in syms.iter() {
            let kind = s.st_type();
            if s.st_value == 0
                || !(kind == goblin::elf::sym::STT_FUNC || kind == goblin::elf::sym::STT_OBJECT)
            {
                continue;
            }
            let found = strs
                .get_at(s.st_name)
                .is_some_and(|n| n.split('@').next() == Some(name));
            if found {
                return Some((s.st_value, s.st_size));
            }
        }
    }
    None
}

/// USDT probes from `.note.stapsdt`, in note order.
pub fn read_usdt_notes(path: &Path) -> Result<Vec<UsdtNote>, KernelInfoError> {
    let bytes = read(path)?;
    let elf = parse(path, &bytes)?;
    let mut out = Vec::new();
    let Some(notes) = elf.iter_note_sections(&bytes, Some(".note.stapsdt")) else {
        return Ok(out);
    };
    for note in notes {
        let Ok(note) = note else {
            break;
        };
        if note.n_type != 3 || note.name != "stapsdt" {
            continue;
        }
        if let Some(n) = parse_stapsdt(note.desc) {
            out.push(n);
        }
    }
    Ok(out)
}

/// Decodes one stapsdt descriptor (64-bit ELF only, which is all strobe traces).
pub fn parse_stapsdt(desc: &[u8]) -> Option<UsdtNote> {
    let word = |i: usize| -> Option<u64> {
        Some(u64::from_le_bytes(
            desc.get(i * 8..i * 8 + 8)?.try_into().ok()?,
        ))
    };
    let (pc, base, semaphore) = (word(0)?, word(1)?, word(2)?);
    let mut strs = desc.get(24..)?.split(|&b| b == 0);
    let mut next = || Some(String::from_utf8_lossy(strs.next()?).into_owned());
    Some(UsdtNote {
        provider: next()?,
        name: next()?,
        args: next().unwrap_or_default(),
        pc,
        base,
        semaphore,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stapsdt_descriptor_decodes_addresses_and_strings() {
        let mut d = Vec::new();
        for w in [0x1000u64, 0x2000, 0x3000] {
            d.extend_from_slice(&w.to_le_bytes());
        }
        d.extend_from_slice(b"libc\0setjmp\0-8@%rdi -4@%esi\0");
        let n = parse_stapsdt(&d).unwrap();
        assert_eq!(
            (n.provider.as_str(), n.name.as_str(), n.args.as_str()),
            ("libc", "setjmp", "-8@%rdi -4@%esi")
        );
        assert_eq!((n.pc, n.base, n.semaphore), (0x1000, 0x2000, 0x3000));
        assert_eq!(parse_stapsdt(&d[..20]), None);
    }

    #[test]
    fn own_test_binary_has_function_symbols() {
        let exe = std::env::current_exe().unwrap();
        let syms = read_elf_symbols(&exe).unwrap();
        assert!(syms.iter().any(|s| s == "main"), "{} symbols", syms.len());
        assert!(read_elf_symbols(Path::new("/nonexistent/x")).is_err());
    }
}
