//! User binaries for uprobes and USDT: finding the file a target names, its function symbols
//! and its `.note.stapsdt` probes.
//!
//! Input: a target as written in a script (`/bin/bash`, `bash`, `libc`, `libc.so.6`) or an ELF
//! path. Output: a path, symbol names, [`UsdtNote`]s.
//! Invariant: a file that is not ELF or is truncated is an error naming the file, never a panic.

use std::path::{Path, PathBuf};

use super::KernelInfoError;

pub use crate::elf::usdt_note::{parse_stapsdt, UsdtNote};

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
    let wanted = |file: &str| library_name_matches(target, file);
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

/// Whether file name `file` is what a bare target names: the name itself, `NAME.so*` or
/// `libNAME.so*` (`libc` and `c` both name `libc.so.6`).
fn library_name_matches(target: &str, file: &str) -> bool {
    let stem = target.strip_prefix("lib").unwrap_or(target);
    file == target
        || file.starts_with(&format!("{target}.so"))
        || file.starts_with(&format!("lib{stem}.so"))
}

/// How process `pid`'s files are reached from here: `/proc/PID/root` when it lives in another
/// mount namespace than strobe, else the empty prefix (paths are the same in both).
pub fn pid_root(pid: u32) -> String {
    use std::os::unix::fs::MetadataExt;
    let ns = |p: &str| std::fs::metadata(p).map(|m| (m.dev(), m.ino())).ok();
    match (ns("/proc/self/ns/mnt"), ns(&format!("/proc/{pid}/ns/mnt"))) {
        (Some(a), Some(b)) if a != b => format!("/proc/{pid}/root"),
        _ => String::new(),
    }
}

/// The files process `pid` maps (its executable first, then `/proc/PID/maps` in order, each
/// once, deleted ones left out), as reachable from here (see [`pid_root`]).
pub fn mapped_objects(pid: u32) -> Vec<PathBuf> {
    let root = pid_root(pid);
    let mut seen = std::collections::HashSet::new();
    let mut out = Vec::new();
    let mut add = |p: &str| {
        if p.starts_with('/') && !p.ends_with(" (deleted)") && seen.insert(p.to_string()) {
            out.push(PathBuf::from(format!("{root}{p}")));
        }
    };
    if let Ok(exe) = std::fs::read_link(format!("/proc/{pid}/exe")) {
        if let Some(e) = exe.to_str() {
            add(e);
        }
    }
    if let Ok(maps) = std::fs::read_to_string(format!("/proc/{pid}/maps")) {
        for line in maps.lines() {
            // `start-end perms offset dev inode   path`: the path is the sixth field.
            if let Some(path) = line.splitn(6, ' ').nth(5) {
                add(path.trim_start());
            }
        }
    }
    out
}

/// Whether `path` is an ELF file a uprobe can go into: a shared object or PIE (`ET_DYN`), or
/// an executable (`ET_EXEC`) with execute permission.
fn is_probeable_elf(path: &Path) -> bool {
    use std::io::Read;
    use std::os::unix::fs::PermissionsExt;
    let mut head = [0u8; 18];
    let ok = std::fs::File::open(path).and_then(|mut f| f.read_exact(&mut head));
    if ok.is_err() || &head[..4] != b"\x7fELF" {
        return false;
    }
    let e_type = if head[5] == 2 {
        u16::from_be_bytes([head[16], head[17]])
    } else {
        u16::from_le_bytes([head[16], head[17]])
    };
    let exec = std::fs::metadata(path).is_ok_and(|m| m.permissions().mode() & 0o111 != 0);
    e_type == goblin::elf::header::ET_DYN || (e_type == goblin::elf::header::ET_EXEC && exec)
}

/// The files a path glob (`./testprogs/uprobe*`, `/usr/lib/*/libc.so*`) matches, sorted.
/// Each wildcard component is matched against one directory listing; `/` is never matched
/// by a wildcard.
fn glob_paths(pattern: &str) -> Vec<PathBuf> {
    use crate::btf::glob::{glob_match, has_wildcard};
    let absolute = pattern.starts_with('/');
    let mut found: Vec<PathBuf> = vec![PathBuf::from(if absolute { "/" } else { "" })];
    for comp in pattern.split('/').filter(|c| !c.is_empty()) {
        let mut next = Vec::new();
        for base in &found {
            if !has_wildcard(comp) {
                next.push(base.join(comp));
                continue;
            }
            let dir = if base.as_os_str().is_empty() {
                Path::new(".")
            } else {
                base.as_path()
            };
            let Ok(rd) = std::fs::read_dir(dir) else {
                continue;
            };
            let mut names: Vec<String> = rd
                .filter_map(|e| e.ok()?.file_name().into_string().ok())
                .filter(|n| glob_match(comp, n) && (comp.starts_with('.') || !n.starts_with('.')))
                .collect();
            names.sort();
            next.extend(names.into_iter().map(|n| base.join(n)));
        }
        found = next;
    }
    found.retain(|p| p.is_file());
    found
}

/// Every file a uprobe/usdt target names, as bpftrace resolves targets:
/// - with a process (`-p PID`), `*` or an empty target is every object the process maps;
///   an absolute path is looked up in the process's mount namespace; a bare library name is
///   first looked for among the process's objects;
/// - a path with wildcards is every probeable ELF file it matches (in order);
/// - otherwise the one file [`find_binary`] finds.
pub fn find_binaries(target: &str, pid: Option<u32>) -> Vec<PathBuf> {
    use crate::btf::glob::has_wildcard;
    if let Some(pid) = pid {
        if target.is_empty() || target == "*" {
            return mapped_objects(pid);
        }
        let root = pid_root(pid);
        if target.starts_with('/') && !root.is_empty() && !target.starts_with(&root) {
            let rooted = format!("{root}{target}");
            return if has_wildcard(target) {
                glob_paths(&rooted)
                    .into_iter()
                    .filter(|p| is_probeable_elf(p))
                    .collect()
            } else {
                let p = PathBuf::from(rooted);
                if p.exists() {
                    vec![p]
                } else {
                    Vec::new()
                }
            };
        }
        if !target.contains('/') {
            let own = mapped_objects(pid).into_iter().find(|p| {
                p.file_name()
                    .and_then(|f| f.to_str())
                    .is_some_and(|f| library_name_matches(target, f))
            });
            if let Some(p) = own {
                return vec![p];
            }
        }
    }
    if has_wildcard(target) {
        return glob_paths(target)
            .into_iter()
            .filter(|p| is_probeable_elf(p))
            .collect();
    }
    find_binary(target).into_iter().collect()
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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn own_test_binary_has_function_symbols() {
        let exe = std::env::current_exe().unwrap();
        let syms = read_elf_symbols(&exe).unwrap();
        assert!(syms.iter().any(|s| s == "main"), "{} symbols", syms.len());
        assert!(read_elf_symbols(Path::new("/nonexistent/x")).is_err());
    }
}
