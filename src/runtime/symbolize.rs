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
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::OnceLock;

use crate::dwarf::symbolize::{LineInfo, SourceFrame};
use crate::kernel::kallsyms::Kallsyms;
use crate::runtime::format::stack::{InlinedCall, SourceLine, Sym};
use crate::runtime::format::Resolver;

/// A function symbol of a file: (file offset, size, name).
type FileSym = (u64, u64, String);

/// What the runtime keeps of an ELF file to resolve its addresses.
#[derive(Debug, Default)]
struct ElfFile {
    /// Function symbols, sorted by file offset.
    syms: Vec<FileSym>,
    /// Loadable segments: (file offset, virtual address, size in the file).
    loads: Vec<(u64, u64, u64)>,
    /// `ET_EXEC`: loaded at its link-time addresses, so a process's addresses in it are its
    /// virtual addresses even when the process is gone.
    fixed: bool,
}

impl ElfFile {
    fn vaddr(&self, file_off: u64) -> Option<u64> {
        self.loads
            .iter()
            .find(|(off, _, size)| file_off >= *off && file_off < off + size)
            .map(|(off, va, _)| file_off - off + va)
    }

    fn file_off(&self, vaddr: u64) -> Option<u64> {
        self.loads
            .iter()
            .find(|(_, va, size)| vaddr >= *va && vaddr < va + size)
            .map(|(off, va, _)| vaddr - va + off)
    }

    fn symbol(&self, file_off: u64) -> Option<Sym> {
        let i = self
            .syms
            .partition_point(|s| s.0 <= file_off)
            .checked_sub(1)?;
        let (start, size, name) = &self.syms[i];
        if *size != 0 && file_off >= start + size {
            return None;
        }
        Some(Sym {
            name: name.clone(),
            offset: file_off - start,
            ..Default::default()
        })
    }
}

/// The runtime's resolver. Not `Sync`: the event loop owns it.
#[derive(Default)]
pub struct Symbolizer {
    kallsyms: OnceLock<Option<Kallsyms>>,
    passwd: OnceLock<HashMap<u64, String>>,
    /// ELF symbols and segments per file.
    elf: RefCell<HashMap<PathBuf, Option<Arc<ElfFile>>>>,
    /// DWARF line tables per file, opened when a stack frame in it is first printed.
    dwarf: RefCell<HashMap<PathBuf, Option<LineInfo>>>,
    /// Executable mappings per pid, kept from the first time the pid was seen so that a
    /// process that has exited since still resolves (re-read when an address misses them).
    maps: RefCell<HashMap<i32, Vec<Mapping>>>,
    /// `probe_index` → the one binary a uprobe/usdt probe is in: the fallback for a process
    /// whose mappings are unknown (it exited before its first record was printed).
    probe_binaries: HashMap<u32, PathBuf>,
    /// Whether the pids BPF reports (init namespace) are this process's /proc's pids.
    init_pid_ns: OnceLock<bool>,
    /// `show_debug_info = 0`: user stack frames without file:line and inlined calls.
    pub no_debug_info: bool,
    /// `cpp_demangle = 0`: C++ function names stay mangled.
    pub no_cpp_demangle: bool,
    /// `probe_index << 32 | target_index` → full probe name.
    pub probe_names: HashMap<u64, String>,
    /// The script's stack-trace maps by (user, limit): stack ids → frame addresses.
    stacks: HashMap<(bool, usize), crate::sys::Map>,
    /// The `ustack(build_id)` stack-trace maps by limit.
    build_id_stacks: HashMap<usize, crate::sys::Map>,
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

fn read_elf(path: &Path) -> Option<ElfFile> {
    let data = std::fs::read(path).ok()?;
    let elf = goblin::elf::Elf::parse(&data).ok()?;
    let loads: Vec<(u64, u64, u64)> = elf
        .program_headers
        .iter()
        .filter(|ph| ph.p_type == goblin::elf::program_header::PT_LOAD)
        .map(|ph| (ph.p_offset, ph.p_vaddr, ph.p_filesz))
        .collect();
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
    Some(ElfFile {
        syms: out,
        loads,
        fixed: elf.header.e_type == goblin::elf::header::ET_EXEC,
    })
}

/// Whether this process's pid namespace is the initial one (whose pids BPF helpers report):
/// its inode is `PROC_PID_INIT_INO` (include/linux/proc_ns.h).
fn in_init_pid_ns() -> bool {
    use std::os::unix::fs::MetadataExt;
    const PROC_PID_INIT_INO: u64 = 0xEFFF_FFFC;
    std::fs::metadata("/proc/self/ns/pid").map_or(true, |m| m.ino() == PROC_PID_INIT_INO)
}

/// Where a user address was found: the file (as this process can open it), the name to show
/// for it (`perf` mode's module) and the offset in the file.
struct Located {
    file: PathBuf,
    module: PathBuf,
    file_off: u64,
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

    /// Resolves `ustack(build_id)` stack ids of depth `limit` through `map`
    /// (`plan::build_id_stack_map_name`).
    pub fn add_build_id_stack_map(&mut self, limit: usize, map: crate::sys::Map) {
        self.build_id_stacks.insert(limit, map);
    }

    /// Probe `index` is a uprobe or usdt probe in `binary` alone: its records' addresses may
    /// be resolved in that file when their process is gone.
    pub fn add_probe_binary(&mut self, index: u32, binary: &Path) {
        let b = binary
            .canonicalize()
            .unwrap_or_else(|_| binary.to_path_buf());
        self.probe_binaries.insert(index, b);
    }

    fn elf_file(&self, path: &Path) -> Option<Arc<ElfFile>> {
        self.elf
            .borrow_mut()
            .entry(path.to_path_buf())
            .or_insert_with(|| read_elf(path).map(Arc::new))
            .clone()
    }

    /// The source frames at `vaddr` of `path` (its DWARF opened on first use).
    fn source_frames(&self, path: &Path, vaddr: u64) -> Vec<SourceFrame> {
        self.dwarf
            .borrow_mut()
            .entry(path.to_path_buf())
            .or_insert_with(|| LineInfo::open(path, &crate::dwarf::search_dirs_now()).ok())
            .as_ref()
            .map(|info| info.frames(vaddr))
            .unwrap_or_default()
    }

    /// The mapping of `pid` holding `addr`: from the cache, else from /proc/PID/maps now
    /// (when the pid is this /proc's and the process is still there).
    fn mapping(&self, pid: i32, addr: u64) -> Option<Mapping> {
        let find = |ms: &[Mapping]| ms.iter().find(|m| addr >= m.start && addr < m.end).cloned();
        if let Some(m) = self.maps.borrow().get(&pid).and_then(|ms| find(ms)) {
            return Some(m);
        }
        if pid <= 0 || !*self.init_pid_ns.get_or_init(in_init_pid_ns) {
            return None;
        }
        let text = std::fs::read_to_string(format!("/proc/{pid}/maps")).ok()?;
        let ms = parse_maps(&text);
        if ms.is_empty() {
            // A zombie's maps are empty: keep what was known of it.
            return None;
        }
        let m = find(&ms);
        self.maps.borrow_mut().insert(pid, ms);
        m
    }

    fn locate(&self, pid: i32, probe: i32, addr: u64) -> Option<Located> {
        if let Some(m) = self.mapping(pid, addr) {
            let root = PathBuf::from(format!("/proc/{pid}/root"));
            let path = root.join(m.path.strip_prefix("/").unwrap_or(&m.path));
            let file = if path.exists() { path } else { m.path.clone() };
            return Some(Located {
                file,
                file_off: addr - m.start + m.file_offset,
                module: m.path,
            });
        }
        // The process is unknown here: a binary loaded at its link-time addresses resolves
        // them all the same.
        let bin = self.probe_binaries.get(&u32::try_from(probe).ok()?)?;
        let elf = self.elf_file(bin)?;
        if !elf.fixed {
            return None;
        }
        Some(Located {
            file: bin.clone(),
            file_off: elf.file_off(addr)?,
            module: bin.clone(),
        })
    }

    /// Adds file:line and inlined calls from the file's DWARF to `sym`. `ret`: the address is
    /// a return address, so the call before it is what the frame is executing.
    fn add_source(&self, sym: &mut Sym, file: &Path, elf: &ElfFile, file_off: u64, ret: bool) {
        let Some(vaddr) = elf.vaddr(file_off) else {
            return;
        };
        let mut frames =
            self.source_frames(file, if ret { vaddr.saturating_sub(1) } else { vaddr });
        let Some(outer) = frames.pop() else {
            return;
        };
        let line = |f: Option<String>, l: Option<u32>| Some(SourceLine { file: f?, line: l? });
        sym.source = line(outer.file, outer.line);
        sym.inlined = frames
            .into_iter()
            .filter_map(|f| {
                Some(InlinedCall {
                    name: f.function?,
                    source: line(f.file, f.line),
                })
            })
            .collect();
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
            ..Default::default()
        })
    }

    fn usym(&self, pid: i32, probe: i32, addr: u64, frame: Option<usize>) -> Option<Sym> {
        let at = self.locate(pid, probe, addr)?;
        let elf = self.elf_file(&at.file)?;
        let mut sym = elf.symbol(at.file_off)?;
        // bpftrace shows C++ frames demangled, parameters included (`cpp_demangle`, on by
        // default).
        if !self.no_cpp_demangle {
            if let Some(d) = crate::elf::cpp::demangle(&sym.name) {
                sym.name = d;
            }
        }
        sym.module = Some(at.module.display().to_string());
        if let Some(i) = frame.filter(|_| !self.no_debug_info) {
            self.add_source(&mut sym, &at.file, &elf, at.file_off, i > 0);
        }
        Some(sym)
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

    fn build_id_stack(&self, limit: usize, id: i64) -> Option<Vec<u8>> {
        let map = self.build_id_stacks.get(&limit)?;
        let key = u32::try_from(id).ok()?.to_le_bytes();
        map.lookup_vec(&key).ok()?
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
        let sym = s.usym(std::process::id() as i32, -1, addr, None);
        // Release test builds may strip symbols; a debug build has them.
        if cfg!(debug_assertions) {
            let sym = sym.expect("this test binary has a symbol table");
            assert!(sym.name.contains("parse_passwd"), "{}", sym.name);
            assert_eq!(sym.offset, 0);
        }
    }
}
