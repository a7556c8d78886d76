//! [`KernelInfo`]: everything the checker and the target expansion ask of the system — kernel
//! BTF (vmlinux and modules), tracepoints and their formats, the kprobe-able function list,
//! ELF symbols and USDT notes of user binaries — behind one trait, so the checker is tested
//! against [`MockKernel`] and runs against [`HostKernel`].
//!
//! Input: the running system (sysfs, tracefs, ELF files) or a mock's tables. Output: parsed
//! BTF, [`TracepointFormat`]s, function and symbol names.
//! Invariant: every method answers for the whole system it describes and never panics; a
//! missing source (no BTF, tracefs unmountable, unreadable binary) is an `Err`/`None` the
//! caller turns into a diagnostic that says what was missing.

mod elf;
mod mock;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use crate::btf::{Btf, FuncTarget, Glob, KernelBtf};
use crate::kernel::tracefs::{Tracefs, Tracepoint, TracepointFormat};

pub use elf::{find_binary, mapped_objects, pid_root, read_elf_symbols, read_usdt_notes, UsdtNote};
pub use mock::MockKernel;

/// Why the system could not answer.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum KernelInfoError {
    /// A source of information is absent (no BTF, tracefs, …): `what` names it.
    #[error("{what} is not available: {reason}")]
    Unavailable { what: String, reason: String },
    #[error("no tracepoint {category}:{name}")]
    NoTracepoint { category: String, name: String },
    #[error("cannot read {path}: {reason}")]
    Binary { path: PathBuf, reason: String },
}

/// Byte offsets of the `task_struct` members programs read straight from the current task
/// ([`KernelInfo::task_fields`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TaskFields {
    /// `char comm[16]`.
    pub comm: i16,
    /// `pid_t pid`: the thread id (`tid`).
    pub pid: i16,
    /// `pid_t tgid`: the process id (`pid`).
    pub tgid: i16,
}

/// What the checker and the expansion need from the system.
pub trait KernelInfo {
    /// BTF of vmlinux (`module` `None`) or of a kernel module, parsed on first use.
    fn btf(&self, module: Option<&str>) -> Result<Arc<Btf>, KernelInfoError>;

    /// Functions with BTF whose name matches `glob`, vmlinux first then modules by name;
    /// `module` restricts the search to one object (`"vmlinux"` is vmlinux).
    fn btf_functions(
        &self,
        module: Option<&str>,
        glob: &Glob,
    ) -> Result<Vec<FuncTarget>, KernelInfoError>;

    /// Functions kprobes can attach to (`available_filter_functions`: `(module, name)`), or
    /// `None` when that list cannot be read (EPERM under lockdown): callers fall back to BTF.
    fn kprobe_functions(&self) -> Option<Vec<(Option<String>, String)>>;

    /// Tracepoints matching `category:name` (both parts may be globs).
    fn tracepoints(&self, pattern: &str) -> Result<Vec<Tracepoint>, KernelInfoError>;

    /// The parsed `format` file of one tracepoint.
    fn tracepoint_format(
        &self,
        category: &str,
        name: &str,
    ) -> Result<TracepointFormat, KernelInfoError>;

    /// The file a uprobe/usdt target names: a path, or a bare library/program name searched
    /// like bpftrace (`$PATH` for programs; `/lib`, `/usr/lib`, the ld.so cache for libraries).
    fn find_binary(&self, target: &str) -> Option<PathBuf>;

    /// Every file a uprobe/usdt target names: a wildcard path gives each ELF file it matches,
    /// and with a process to trace ([`Self::target_pid`]) `*` or an empty target gives every
    /// object that process maps (see [`elf::find_binaries`]).
    fn find_binaries(&self, target: &str) -> Vec<PathBuf> {
        self.find_binary(target).into_iter().collect()
    }

    /// The functions of the BPF programs loaded now (`fentry:bpf:` targets).
    fn bpf_functions(&self) -> Result<Vec<crate::kernel::bpf_progs::BpfFunc>, KernelInfoError> {
        Ok(Vec::new())
    }

    /// The process `-p PID` traces, whose mapped objects and mount namespace uprobe and usdt
    /// targets are resolved in.
    fn target_pid(&self) -> Option<u32> {
        None
    }

    /// Function symbols (`.symtab` and `.dynsym`) of an ELF file, sorted and deduplicated.
    fn elf_symbols(&self, path: &Path) -> Result<Vec<String>, KernelInfoError>;

    /// The USDT probes (`.note.stapsdt`) of an ELF file.
    fn usdt_probes(&self, path: &Path) -> Result<Vec<UsdtNote>, KernelInfoError>;

    /// The address of kernel symbol `name` (`kaddr("name")`: /proc/kallsyms), `None` when it
    /// is unknown or the addresses are hidden.
    /// How many CPUs are online (`ncpus`).
    fn online_cpus(&self) -> u64 {
        // SAFETY: sysconf has no memory effects; glibc reads /sys/devices/system/cpu/online.
        let n = unsafe { libc::sysconf(libc::_SC_NPROCESSORS_ONLN) };
        n.max(1) as u64
    }

    /// The id of the cgroup directory `path` (`cgroupid("path")`, resolved when compiling as
    /// bpftrace does), or the OS error that refused it.
    fn cgroup_id(&self, path: &str) -> std::io::Result<u64> {
        crate::sys::cgroup_id::cgroup_id(path)
    }

    fn kernel_symbol_address(&self, _name: &str) -> Option<u64> {
        None
    }

    /// The address and size of symbol `name` (function or object) in ELF file `path`
    /// (`uaddr("name")`: `.symtab`, then `.dynsym`).
    fn elf_symbol_address(&self, _path: &Path, _name: &str) -> Option<(u64, u64)> {
        None
    }

    /// Whether ELF file `path` is position-independent (`ET_DYN`: PIE or shared library).
    fn elf_is_dyn(&self, _path: &Path) -> bool {
        false
    }

    /// Whether the kernel's verifier accepts ISA v4 signed division (`sdiv`/`smod`, 6.6+).
    fn signed_division(&self) -> bool {
        false
    }

    /// Why helper `h` cannot be called on this kernel, or `None` when it can (or when this
    /// kernel description does not know: a mocked kernel).
    fn helper_unavailable(&self, _h: crate::kernel::features::Helper) -> Option<String> {
        None
    }

    /// strobe's own PID namespace as `(device, inode)` of `/proc/self/ns/pid` when it is not
    /// the initial one, `None` in the initial namespace (or when it cannot be told): `pid` and
    /// `tid` are then as seen from that namespace, as bpftrace's `curr_ns` are.
    fn pid_namespace(&self) -> Option<(u64, u64)> {
        None
    }

    /// Whether programs of type `prog` may call kfunc `name` (`kfunc_allowed()`): the
    /// verifier's answer to a trial load; `false` when the kernel has no such kfunc or
    /// cannot be asked.
    fn kfunc_allowed(&self, _name: &str, _prog: crate::asm::isa::ProgType) -> bool {
        false
    }

    /// Where `task_struct`'s `comm`, `pid` and `tgid` are, when programs can read them
    /// straight through `bpf_get_current_task_btf()`'s pointer (plain loads: `comm` this way
    /// costs a fifth of the `bpf_get_current_comm` helper, which copies through
    /// `strscpy_pad`); `None` when the kernel cannot (before 5.11, no BTF) or this description
    /// does not know (a mocked kernel).
    fn task_fields(&self) -> Option<TaskFields> {
        None
    }
}

/// The inode number of the initial PID namespace (`PROC_PID_INIT_INO` in the kernel).
pub const PROC_PID_INIT_INO: u64 = 0xEFFF_FFFC;

/// `(device, inode)` of this process's PID namespace, `None` when it is the initial one.
pub fn own_pid_namespace() -> Option<(u64, u64)> {
    use std::os::unix::fs::MetadataExt;
    let m = std::fs::metadata("/proc/self/ns/pid").ok()?;
    (m.ino() != PROC_PID_INIT_INO).then(|| (m.dev(), m.ino()))
}

/// The running system. Answers are cached for the life of the value (one run of strobe):
/// BTF is parsed once, each tracepoint format and each binary's symbols read once.
#[derive(Default)]
pub struct HostKernel {
    btf: OnceLock<Result<KernelBtf, KernelInfoError>>,
    tracefs: OnceLock<Result<Tracefs, KernelInfoError>>,
    formats: Mutex<HashMap<(String, String), TracepointFormat>>,
    symbols: Mutex<HashMap<PathBuf, Vec<String>>>,
    modules: OnceLock<Vec<String>>,
    kallsyms: OnceLock<Option<crate::kernel::kallsyms::Kallsyms>>,
    /// `available_filter_functions`, read once: the kernel generates it record by record,
    /// which in a TCG guest costs more than a whole BTF parse.
    filter_functions: OnceLock<Option<Vec<ModuleFunc>>>,
    /// `-p PID`: see [`KernelInfo::target_pid`].
    pid: Option<u32>,
    /// [`KernelInfo::task_fields`], asked once.
    task_fields: OnceLock<Option<TaskFields>>,
}

/// A traceable function: `(module, name)`, module `None` for vmlinux.
type ModuleFunc = (Option<String>, String);

impl HostKernel {
    fn read_filter_functions(&self) -> Option<Vec<ModuleFunc>> {
        let path = self
            .tracefs()
            .ok()?
            .root()
            .join("available_filter_functions");
        let text =
            crate::timings::time("filter_functions", || std::fs::read_to_string(path)).ok()?;
        Some(parse_filter_functions(&text))
    }

    /// Reads the traceable kernel functions from `path` (`--traceable-functions`, in the
    /// format of `available_filter_functions`: `name` or `name [module]` per line) instead of
    /// tracefs; a file that cannot be read is an error naming it.
    pub fn with_traceable_functions(self, path: &Path) -> Result<HostKernel, String> {
        let text = std::fs::read_to_string(path).map_err(|e| {
            format!(
                "cannot read the traceable functions from '{}': {}",
                path.display(),
                crate::sys::Errno(e.raw_os_error().unwrap_or(libc::EIO)).meaning()
            )
        })?;
        let _ = self
            .filter_functions
            .set(Some(parse_filter_functions(&text)));
        Ok(self)
    }

    pub fn new() -> HostKernel {
        HostKernel::default()
    }
}

/// The text of tracefs' `available_filter_functions` (`name` or `name [module]` per line),
/// `None` when tracefs or the file cannot be read (lockdown). Read once per process: in a TCG
/// guest one read costs 0.2-0.4 s (the kernel restarts its walk of the ftrace records at every
/// page of output: kernel/trace/ftrace.c, `t_start`). fentry/fexit wildcards going through
/// kprobe_multi read only the lines they need when they can ([`super::ftrace_filter`]) and this
/// whole list otherwise.
pub fn filter_functions_text() -> Option<&'static str> {
    static TEXT: OnceLock<Option<String>> = OnceLock::new();
    TEXT.get_or_init(|| {
        let path = Tracefs::open()
            .ok()?
            .root()
            .join("available_filter_functions");
        std::fs::read_to_string(path).ok()
    })
    .as_deref()
}

/// `available_filter_functions` lines (`name` or `name [module]`) as `(module, name)`.
fn parse_filter_functions(text: &str) -> Vec<ModuleFunc> {
    text.lines()
        .filter_map(|l| {
            let mut parts = l.split_whitespace();
            let name = parts.next()?.to_string();
            let module = parts
                .next()
                .map(|m| m.trim_start_matches('[').trim_end_matches(']').to_string());
            Some((module, name))
        })
        .collect()
}

impl HostKernel {
    /// The running system as seen by process `pid` (`-p PID`): uprobe and usdt targets are
    /// resolved among its objects and in its mount namespace.
    pub fn for_pid(pid: Option<u32>) -> HostKernel {
        HostKernel {
            pid,
            ..HostKernel::default()
        }
    }

    /// Kernel BTF, loaded once (the first BTF question pays for the parse: ~5-12 ms).
    pub fn kernel_btf(&self) -> Result<&KernelBtf, KernelInfoError> {
        self.btf
            .get_or_init(|| {
                KernelBtf::load().map_err(|e| KernelInfoError::Unavailable {
                    what: "kernel BTF (/sys/kernel/btf/vmlinux)".into(),
                    reason: e.to_string(),
                })
            })
            .as_ref()
            .map_err(Clone::clone)
    }

    fn tracefs(&self) -> Result<&Tracefs, KernelInfoError> {
        self.tracefs
            .get_or_init(|| {
                Tracefs::open().map_err(|e| KernelInfoError::Unavailable {
                    what: "tracefs".into(),
                    reason: e.to_string(),
                })
            })
            .as_ref()
            .map_err(Clone::clone)
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

fn unavailable(what: &str, e: impl std::fmt::Display) -> KernelInfoError {
    KernelInfoError::Unavailable {
        what: what.to_string(),
        reason: e.to_string(),
    }
}

impl KernelInfo for HostKernel {
    fn bpf_functions(&self) -> Result<Vec<crate::kernel::bpf_progs::BpfFunc>, KernelInfoError> {
        crate::kernel::bpf_progs::bpf_functions().map_err(|e| KernelInfoError::Unavailable {
            what: "the list of loaded BPF programs".into(),
            reason: e.to_string(),
        })
    }

    fn btf(&self, module: Option<&str>) -> Result<Arc<Btf>, KernelInfoError> {
        if let Some(r) = module.and_then(crate::dwarf::module_btf) {
            return r.map_err(|e| unavailable("DWARF", e));
        }
        let k = self.kernel_btf()?;
        match module {
            None | Some("vmlinux") => Ok(k.vmlinux().clone()),
            Some(m) => k
                .module(m)
                .map_err(|e| unavailable(&format!("BTF of module {m}"), e)),
        }
    }

    fn btf_functions(
        &self,
        module: Option<&str>,
        glob: &Glob,
    ) -> Result<Vec<FuncTarget>, KernelInfoError> {
        let k = self.kernel_btf()?;
        let own = |btf: &Btf, module: Option<String>| -> Vec<FuncTarget> {
            btf.funcs_matching(glob)
                .map(|(name, btf_id)| FuncTarget {
                    module: module.clone(),
                    name: name.to_string(),
                    btf_id,
                })
                .collect()
        };
        match module {
            None => {
                // vmlinux, then every module with BTF (the list is read once per run); an exact
                // name found in vmlinux needs no module parsed.
                let mut out = own(k.vmlinux(), None);
                if glob.is_literal() && !out.is_empty() {
                    return Ok(out);
                }
                let modules = self
                    .modules
                    .get_or_init(|| crate::btf::kernel_btf_modules().unwrap_or_default());
                for m in modules {
                    if let Ok(btf) = k.module(m) {
                        out.extend(own(&btf, Some(m.clone())));
                    }
                }
                Ok(out)
            }
            Some("vmlinux") => Ok(own(k.vmlinux(), None)),
            // `fentry:vmlinu*:f`, `fentry:nf_*:f`: every object whose name matches.
            // The attach-point wildcards (`btf::glob::has_wildcard`).
            Some(m) if m.contains(['*', '?', '[']) => {
                let mg =
                    Glob::new(m).map_err(|e| unavailable(&format!("module pattern {m}"), e))?;
                let mut out = Vec::new();
                if mg.matches("vmlinux") {
                    out.extend(own(k.vmlinux(), None));
                }
                let modules = self
                    .modules
                    .get_or_init(|| crate::btf::kernel_btf_modules().unwrap_or_default());
                for m in modules.iter().filter(|m| mg.matches(m)) {
                    if let Ok(btf) = k.module(m) {
                        out.extend(own(&btf, Some(m.clone())));
                    }
                }
                Ok(out)
            }
            Some(m) => {
                let btf = k
                    .module(m)
                    .map_err(|e| unavailable(&format!("BTF of module {m}"), e))?;
                Ok(own(&btf, Some(m.to_string())))
            }
        }
    }

    fn kprobe_functions(&self) -> Option<Vec<(Option<String>, String)>> {
        self.filter_functions
            .get_or_init(|| self.read_filter_functions())
            .clone()
    }
    fn tracepoints(&self, pattern: &str) -> Result<Vec<Tracepoint>, KernelInfoError> {
        self.tracefs()?
            .tracepoints_matching(pattern)
            .map_err(|e| unavailable("tracefs", e))
    }

    fn tracepoint_format(
        &self,
        category: &str,
        name: &str,
    ) -> Result<TracepointFormat, KernelInfoError> {
        let key = (category.to_string(), name.to_string());
        if let Some(f) = lock(&self.formats).get(&key) {
            return Ok(f.clone());
        }
        let f =
            self.tracefs()?
                .format(category, name)
                .map_err(|_| KernelInfoError::NoTracepoint {
                    category: category.into(),
                    name: name.into(),
                })?;
        lock(&self.formats).insert(key, f.clone());
        Ok(f)
    }

    fn find_binary(&self, target: &str) -> Option<PathBuf> {
        find_binary(target)
    }

    fn find_binaries(&self, target: &str) -> Vec<PathBuf> {
        elf::find_binaries(target, self.pid)
    }

    fn target_pid(&self) -> Option<u32> {
        self.pid
    }

    fn elf_symbols(&self, path: &Path) -> Result<Vec<String>, KernelInfoError> {
        if let Some(s) = lock(&self.symbols).get(path) {
            return Ok(s.clone());
        }
        let s = read_elf_symbols(path)?;
        lock(&self.symbols).insert(path.to_path_buf(), s.clone());
        Ok(s)
    }

    fn usdt_probes(&self, path: &Path) -> Result<Vec<UsdtNote>, KernelInfoError> {
        read_usdt_notes(path)
    }

    fn kernel_symbol_address(&self, name: &str) -> Option<u64> {
        let k = self
            .kallsyms
            .get_or_init(|| crate::kernel::kallsyms::Kallsyms::load().ok());
        k.as_ref()
            .filter(|k| !k.addresses_hidden())
            .and_then(|k| k.address_of(name))
    }

    fn elf_symbol_address(&self, path: &Path, name: &str) -> Option<(u64, u64)> {
        elf::elf_symbol_address(path, name)
    }

    fn elf_is_dyn(&self, path: &Path) -> bool {
        elf::elf_is_dyn(path)
    }

    fn signed_division(&self) -> bool {
        crate::kernel::features::signed_division()
    }

    fn helper_unavailable(&self, h: crate::kernel::features::Helper) -> Option<String> {
        match crate::kernel::features::helper_support(h) {
            crate::kernel::features::Support::No(why) => Some(why),
            _ => None,
        }
    }

    fn pid_namespace(&self) -> Option<(u64, u64)> {
        own_pid_namespace()
    }

    fn kfunc_allowed(&self, name: &str, prog: crate::asm::isa::ProgType) -> bool {
        let Ok(btf) = self.btf(None) else {
            return false;
        };
        btf.find_func(name)
            .is_some_and(|id| crate::kernel::features::trial::kfunc_allowed(name, id, prog))
    }

    fn task_fields(&self) -> Option<TaskFields> {
        *self.task_fields.get_or_init(|| {
            let btf = self.btf(None).ok()?;
            let task = btf.find_struct("task_struct")?;
            // (name, size): `char comm[16]`, `pid_t pid`, `pid_t tgid`.
            let off = |name: &str, size: u32| -> Option<i16> {
                let m = btf.find_member(task, name).ok()??;
                if m.bitfield_size != 0 || btf.size_of(m.type_id).ok()? != size {
                    return None;
                }
                i16::try_from(m.byte_offset())
                    .ok()
                    .filter(|o| *o <= i16::MAX - 16)
            };
            let fields = TaskFields {
                comm: off("comm", 16)?,
                pid: off("pid", 4)?,
                tgid: off("tgid", 4)?,
            };
            crate::kernel::features::reads_task_fields(fields).then_some(fields)
        })
    }
}
