//! The running tracer's [`Resolver`]: kernel addresses through /proc/kallsyms (ksym, kstack),
//! user addresses through /proc/PID/maps and the mapped files' ELF symbols (usym, ustack),
//! user names from /etc/passwd, probe names from the compiled script, cgroup paths from
//! cgroupfs and `strftime()` times from the boot clock.
//!
//! Everything is loaded lazily on first use and cached for the run, so a script that never
//! prints a symbol never reads kallsyms (parsing it costs ~10–20 ms). A process that exited
//! before its addresses were printed resolves to nothing (hex addresses are printed).

use std::cell::RefCell;
use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::OnceLock;

use crate::kernel::kallsyms::Kallsyms;
use crate::runtime::format::stack::Sym;
use crate::runtime::format::Resolver;

/// A function symbol of a file: (file offset, size, name).
type FileSym = (u64, u64, String);

/// The runtime's resolver. Not `Sync`: the event loop owns it.
#[derive(Default)]
pub struct Symbolizer {
    kallsyms: OnceLock<Option<Kallsyms>>,
    passwd: OnceLock<HashMap<u64, String>>,
    /// ELF function symbols per file: (start, size, name), sorted by start.
    elf: RefCell<HashMap<PathBuf, Option<Vec<FileSym>>>>,
    /// `probe_index << 32 | target_index` → full probe name.
    pub probe_names: HashMap<u64, String>,
    /// The script's stack-trace maps by (user, limit): stack ids → frame addresses.
    stacks: HashMap<(bool, usize), crate::sys::Map>,
    /// `cgroup_path()` resolution, cached per (hierarchy, id).
    cgroups: RefCell<super::cgroup::CgroupPaths>,
    /// CLOCK_REALTIME − CLOCK_BOOTTIME, read once (for `strftime()`).
    boot_offset: OnceLock<i128>,
}

/// One executable mapping of a process.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Mapping {
    pub start: u64,
    pub end: u64,
    pub file_offset: u64,
    pub path: PathBuf,
}

/// Parses the executable file mappings of a `/proc/PID/maps` text.
pub fn parse_maps(text: &str) -> Vec<Mapping> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split_whitespace();
            let range = f.next()?;
            let perms = f.next()?;
            let off = f.next()?;
            let _dev = f.next()?;
            let _inode = f.next()?;
            let path = f.next()?;
            if !perms.contains('x') || !path.starts_with('/') {
                return None;
            }
            let (s, e) = range.split_once('-')?;
            Some(Mapping {
                start: u64::from_str_radix(s, 16).ok()?,
                end: u64::from_str_radix(e, 16).ok()?,
                file_offset: u64::from_str_radix(off, 16).ok()?,
                path: PathBuf::from(path),
            })
        })
        .collect()
}

/// `name:x:uid:…` lines of /etc/passwd as uid → name.
pub fn parse_passwd(text: &str) -> HashMap<u64, String> {
    text.lines()
        .filter_map(|l| {
            let mut f = l.split(':');
            let name = f.next()?;
            let _pw = f.next()?;
            let uid = f.next()?.parse().ok()?;
            Some((uid, name.to_string()))
        })
        .collect()
}

fn elf_symbols(path: &std::path::Path) -> Option<Vec<FileSym>> {
    let data = std::fs::read(path).ok()?;
    let elf = goblin::elf::Elf::parse(&data).ok()?;
    let mut out = Vec::new();
    for (syms, strs) in [(&elf.syms, &elf.strtab), (&elf.dynsyms, &elf.dynstrtab)] {
        for s in syms.iter() {
            if s.st_type() != goblin::elf::sym::STT_FUNC || s.st_value == 0 {
                continue;
            }
            // Symbol values are virtual addresses; convert to file offsets through the
            // segment that holds them, as the mapping's offset is a file offset.
            let Some(ph) = elf.program_headers.iter().find(|ph| {
                ph.p_type == goblin::elf::program_header::PT_LOAD
                    && s.st_value >= ph.p_vaddr
                    && s.st_value < ph.p_vaddr + ph.p_memsz
            }) else {
                continue;
            };
            if let Some(name) = strs.get_at(s.st_name) {
                out.push((
                    s.st_value - ph.p_vaddr + ph.p_offset,
                    s.st_size,
                    name.to_string(),
                ));
            }
        }
    }
    out.sort();
    out.dedup_by(|a, b| a.0 == b.0);
    Some(out)
}

impl Symbolizer {
    pub fn new(probe_names: HashMap<u64, String>) -> Symbolizer {
        Symbolizer {
            probe_names,
            ..Default::default()
        }
    }

    /// Resolves stack ids through `map`, the `BPF_MAP_TYPE_STACK_TRACE` map of `user` stacks
    /// of depth `limit` (`plan::stack_map_name`).
    pub fn add_stack_map(&mut self, user: bool, limit: usize, map: crate::sys::Map) {
        self.stacks.insert((user, limit), map);
    }

    fn file_symbol(&self, path: &std::path::Path, file_off: u64) -> Option<Sym> {
        let mut cache = self.elf.borrow_mut();
        let syms = cache
            .entry(path.to_path_buf())
            .or_insert_with(|| elf_symbols(path))
            .as_ref()?;
        let i = syms.partition_point(|s| s.0 <= file_off).checked_sub(1)?;
        let (start, size, name) = &syms[i];
        if *size != 0 && file_off >= start + size {
            return None;
        }
        Some(Sym {
            name: name.clone(),
            offset: file_off - start,
            module: None,
        })
    }
}

impl Resolver for Symbolizer {
    fn ksym(&self, addr: u64) -> Option<Sym> {
        let k = self
            .kallsyms
            .get_or_init(|| Kallsyms::load().ok())
            .as_ref()?;
        let (s, off) = k.lookup(addr)?;
        Some(Sym {
            name: s.name.to_string(),
            offset: off,
            module: s.module.map(str::to_string),
        })
    }

    fn usym(&self, pid: i32, addr: u64) -> Option<Sym> {
        let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).ok()?;
        let m = parse_maps(&maps)
            .into_iter()
            .find(|m| addr >= m.start && addr < m.end)?;
        let root = PathBuf::from(format!("/proc/{pid}/root"));
        let path = root.join(m.path.strip_prefix("/").unwrap_or(&m.path));
        let path = if path.exists() { path } else { m.path.clone() };
        self.file_symbol(&path, addr - m.start + m.file_offset)
    }

    fn stack(&self, user: bool, limit: usize, id: i64) -> Option<Vec<u64>> {
        let map = self.stacks.get(&(user, limit))?;
        let key = u32::try_from(id).ok()?.to_le_bytes();
        let v = map.lookup_vec(&key).ok()??;
        Some(
            v.chunks_exact(8)
                .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
                .collect(),
        )
    }

    fn username(&self, uid: u64) -> Option<String> {
        self.passwd
            .get_or_init(|| {
                parse_passwd(&std::fs::read_to_string("/etc/passwd").unwrap_or_default())
            })
            .get(&uid)
            .cloned()
    }

    fn probe_name(&self, id: u64) -> Option<String> {
        self.probe_names.get(&id).cloned()
    }

    fn wall_from_boot(&self, ns: u64) -> u64 {
        let off = *self
            .boot_offset
            .get_or_init(super::cgroup::boot_to_wall_offset_ns);
        (ns as i128 + off).clamp(0, u64::MAX as i128) as u64
    }

    fn cgroup_path(&self, id: u64, filter: &str) -> Option<String> {
        Some(self.cgroups.borrow_mut().resolve(id, filter))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parse_maps_keeps_executable_file_mappings_only() {
        let text = "\
55d0c0000000-55d0c0001000 r--p 00000000 08:01 123 /usr/bin/cat
55d0c0001000-55d0c0005000 r-xp 00001000 08:01 123 /usr/bin/cat
7ffd1000-7ffd2000 r-xp 00000000 00:00 0 [vdso]
7f0000000000-7f0000001000 rw-p 00000000 00:00 0
";
        assert_eq!(
            parse_maps(text),
            vec![Mapping {
                start: 0x55d0c0001000,
                end: 0x55d0c0005000,
                file_offset: 0x1000,
                path: "/usr/bin/cat".into()
            }]
        );
    }

    #[test]
    fn parse_passwd_maps_uids_to_names() {
        let m = parse_passwd(
            "root:x:0:0:root:/root:/bin/bash\nnobody:x:65534:65534::/:/bin/false\nbroken\n",
        );
        assert_eq!(m.get(&0).map(String::as_str), Some("root"));
        assert_eq!(m.get(&65534).map(String::as_str), Some("nobody"));
        assert_eq!(m.len(), 2);
    }

    #[test]
    fn usym_resolves_a_function_of_this_test_process() {
        let s = Symbolizer::default();
        let addr = parse_passwd as *const () as usize as u64;
        let sym = s.usym(std::process::id() as i32, addr);
        // Release test builds may strip symbols; a debug build has them.
        if cfg!(debug_assertions) {
            let sym = sym.expect("this test binary has a symbol table");
            assert!(sym.name.contains("parse_passwd"), "{}", sym.name);
            assert_eq!(sym.offset, 0);
        }
    }
}
