//! What the checked program assumes about the system it runs on: the kernel facts the code
//! generator needs (helper availability, `task_struct` layouts, struct member offsets, kernel
//! and user symbol addresses, cgroup ids, kfuncs), asked once by the checker through
//! [`KernelInfo`] and carried in [`CheckedProgram::env`](super::CheckedProgram::env), so that
//! lowering never asks the kernel itself.
//!
//! Input: the checker's calls ([`Checker::note_call`], per call site while it reports) and,
//! when checking is done, its builtin ids and the checked probes ([`finish`]). Output: an
//! [`Environment`]. Invariant: a fact the lowering of some construct reads was asked for
//! whenever the script has that construct; a failed lookup is kept as the answer (the code
//! generator reports it where it lowers the construct, with the words it always used), never
//! turned into a diagnostic here. Only what the script needs is asked (each question may be a
//! trial load or a file read).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::path::PathBuf;

use super::expand::TargetKind;
use super::resolve::Checker;
use super::CheckedProbe;
use crate::asm::isa::{Helper, ProgType};
use crate::builtins::{BuiltinId, FuncId, ValueId};
use crate::kernel::info::KernelInfo;
use crate::syntax::ast::{Expr, ExprId, ExprKind};

/// Byte offsets of `task_struct`'s `comm`, `pid` and `tgid`, when programs may read them
/// through `bpf_get_current_task_btf()` (see [`KernelInfo::task_fields`]).
pub use crate::kernel::info::TaskFields;

/// Where a BTF struct member is: its offset in bits and, for a bitfield, its width (0 for an
/// ordinary member).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemberLayout {
    pub bit_offset: u32,
    pub bitfield_size: u32,
}

/// A user symbol `uaddr()` names, as the binary's ELF file says.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UserSymbol {
    /// The link-time address.
    pub address: u64,
    /// Whether the binary is position-independent (`ET_DYN`), so the address moves.
    pub relocatable: bool,
}

/// What the kernel said about a kfunc for one program type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kfunc {
    /// The kernel's BTF has no such function.
    Missing,
    /// It exists (BTF id) but the verifier refuses it in programs of this type.
    Refused(u32),
    /// Programs of this type may call it (BTF id).
    Allowed(u32),
}

/// The kernel facts a checked program's code generation depends on (see the module doc).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Environment {
    /// The verifier accepts ISA v4 signed division (`sdiv`/`smod`).
    pub signed_division: bool,
    /// `task_struct`'s `comm`/`pid`/`tgid`, when programs read them straight from the task.
    pub task_fields: Option<TaskFields>,
    /// strobe's own PID namespace `(device, inode)`, `None` in the initial one.
    pub pid_namespace: Option<(u64, u64)>,
    /// Helpers the script calls that this kernel lacks, with why.
    pub unavailable_helpers: HashMap<Helper, String>,
    /// `task_struct` members by name → byte offset (those the script's builtins read);
    /// `None` when the kernel's BTF or `struct task_struct` is missing.
    pub task_struct: Option<BTreeMap<String, i32>>,
    /// BTF struct members the script reads: `(module, struct id, member)` → layout.
    pub members: HashMap<(Option<String>, u32, String), MemberLayout>,
    /// `kaddr("name")`: the kernel symbol's address, `None` when unknown or hidden.
    pub kernel_symbols: HashMap<String, Option<u64>>,
    /// `percpu_kaddr("name")`: the vmlinux variable's BTF id, `None` when BTF lacks it.
    pub percpu_vars: HashMap<String, Option<u32>>,
    /// `cgroupid("path")`: the id, or the OS error number that refused it.
    pub cgroup_ids: HashMap<String, Result<u64, i32>>,
    /// `uaddr("name")` in each uprobe/usdt binary of the script: `None` when the binary has no
    /// such symbol.
    pub user_symbols: HashMap<(PathBuf, String), Option<UserSymbol>>,
    /// kfuncs by `(name, program type)`.
    pub kfuncs: HashMap<(String, ProgType), Kfunc>,
    /// Whether kprobe programs may call bpf_get_func_ip (5.15+; `func` in kprobes): the
    /// kernel's BTF answers without a syscall, since the helper's implementation
    /// `bpf_get_func_ip_kprobe` is a BTF function exactly on the kernels that have it.
    /// Without BTF, a current kernel is assumed.
    pub kprobe_get_func_ip: bool,
    /// fexit probes: the BTF ids of `bpf_session_is_return` and `bpf_session_cookie` (6.10+),
    /// through which a kprobe.session program saves the arguments at entry, or why the kernel
    /// has none; `None` without fexit probes.
    pub session_kfuncs: Option<Result<(u32, u32), String>>,
}

impl Default for Environment {
    fn default() -> Environment {
        Environment {
            signed_division: false,
            task_fields: None,
            pid_namespace: None,
            unavailable_helpers: HashMap::new(),
            task_struct: None,
            members: HashMap::new(),
            kernel_symbols: HashMap::new(),
            percpu_vars: HashMap::new(),
            cgroup_ids: HashMap::new(),
            user_symbols: HashMap::new(),
            kfuncs: HashMap::new(),
            session_kfuncs: None,
            kprobe_get_func_ip: true,
        }
    }
}

impl Environment {
    /// Why `h` cannot be called on this kernel, `None` when it can.
    pub fn helper_unavailable(&self, h: Helper) -> Option<&str> {
        self.unavailable_helpers.get(&h).map(String::as_str)
    }

    /// The layout of member `name` of BTF struct `id` (of `module`, `None` for vmlinux).
    pub fn member(&self, module: Option<&str>, id: u32, name: &str) -> Option<MemberLayout> {
        self.members
            .get(&(module.map(str::to_string), id, name.to_string()))
            .copied()
    }
}

/// The kernel's description of helper `h` (those the code generator asks about).
fn kernel_helper(h: Helper) -> Option<crate::kernel::features::Helper> {
    use crate::kernel::features::Helper as K;
    Some(match h {
        Helper::SendSignal => K::SendSignal,
        Helper::SendSignalThread => K::SendSignalThread,
        Helper::OverrideReturn => K::OverrideReturn,
        Helper::ProbeWriteUser => K::ProbeWriteUser,
        Helper::DPath => K::DPath,
        Helper::GetNsCurrentPidTgid => K::GetNsCurrentPidTgid,
        Helper::GetAttachCookie => K::GetAttachCookie,
        _ => return None,
    })
}

/// Asks whether helper `h` is there, once.
fn ask_helper(env: &mut Environment, asked: &mut BTreeSet<Helper>, k: &dyn KernelInfo, h: Helper) {
    if !asked.insert(h) {
        return;
    }
    if let Some(why) = kernel_helper(h).and_then(|kh| k.helper_unavailable(kh)) {
        env.unavailable_helpers.insert(h, why);
    }
}

/// The `task_struct` members `names` (added to what was asked before), or no table when the
/// kernel's BTF or its `struct task_struct` is missing.
fn ask_task_struct(env: &mut Environment, k: &dyn KernelInfo, names: &[&str]) {
    let btf = k.btf(None).ok();
    let Some((btf, id)) = btf.and_then(|b| b.find_struct("task_struct").map(|id| (b, id))) else {
        env.task_struct = None;
        return;
    };
    let table = env.task_struct.get_or_insert_with(BTreeMap::new);
    for name in names {
        if let Ok(Some(m)) = btf.find_member(id, name) {
            table.insert(name.to_string(), (m.bit_offset / 8) as i32);
        }
    }
}

/// What the checker gathers while it checks (round 2), finished by [`finish`].
#[derive(Debug, Default)]
pub(super) struct Gathered {
    pub env: Environment,
    helpers: BTreeSet<Helper>,
    /// Symbols `uaddr()` names, resolved in every user binary by [`finish`].
    uaddr_symbols: BTreeSet<String>,
    /// The script calls `comm(pid)` (the kfuncs are asked by [`finish`]).
    comm_of_pid: bool,
}

impl Checker<'_> {
    /// A string argument the checker knows: a literal, or a constant (`str($1)`, a macro's
    /// string parameter), as the code generator reads it.
    fn known_str(&self, a: &Expr) -> String {
        match &a.kind {
            ExprKind::Str(s) => String::from_utf8_lossy(s).into_owned(),
            _ => self
                .str_consts
                .get(&a.id)
                .map(|s| String::from_utf8_lossy(s).into_owned())
                .unwrap_or_default(),
        }
    }

    /// Asks what lowering the checked call `f(args)` will need to know of the kernel.
    pub(super) fn note_call(&mut self, f: FuncId, args: &[Expr]) {
        if !self.report {
            return;
        }
        let k = self.kernel;
        let g = &mut self.gathered;
        let mut helper = |h: Helper| ask_helper(&mut g.env, &mut g.helpers, k, h);
        match f {
            FuncId::Signal => return helper(Helper::SendSignal),
            FuncId::SignalThread => return helper(Helper::SendSignalThread),
            FuncId::Override => return helper(Helper::OverrideReturn),
            FuncId::WriteUser => return helper(Helper::ProbeWriteUser),
            FuncId::Path => return helper(Helper::DPath),
            _ => {}
        }
        match f {
            FuncId::Kaddr => {
                let sym = self.known_str(&args[0]);
                let symbols = &mut self.gathered.env.kernel_symbols;
                symbols
                    .entry(sym)
                    .or_insert_with_key(|s| k.kernel_symbol_address(s));
            }
            FuncId::PercpuKaddr => {
                let sym = self.known_str(&args[0]);
                let vars = &mut self.gathered.env.percpu_vars;
                vars.entry(sym).or_insert_with_key(|s| {
                    let btf = k.btf(None).ok()?;
                    btf.find_type(crate::btf::Kind::Var, s)
                });
            }
            FuncId::Cgroupid => {
                let path = self.known_str(&args[0]);
                let ids = &mut self.gathered.env.cgroup_ids;
                ids.entry(path).or_insert_with_key(|p| {
                    k.cgroup_id(p).map_err(|e| e.raw_os_error().unwrap_or(0))
                });
            }
            FuncId::Uaddr => {
                let sym = self.known_str(&args[0]);
                self.gathered.uaddr_symbols.insert(sym);
            }
            FuncId::Comm if !args.is_empty() => {
                // `comm(pid)`: two kfuncs, asked by [`finish`] for every program type of the
                // script (a `fn` is checked once, outside any probe, and inlined in each).
                self.gathered.comm_of_pid = true;
                ask_task_struct(&mut self.gathered.env, k, &["comm", "pid"]);
            }
            _ => {}
        }
    }

    /// Records where BTF struct `id`'s member `name` is (the code generator reads it there).
    pub(super) fn note_member(&mut self, module: Option<&str>, id: u32, name: &str) {
        let key = (module.map(str::to_string), id, name.to_string());
        if self.gathered.env.members.contains_key(&key) {
            return;
        }
        let Ok(btf) = self.kernel.btf(module) else {
            return;
        };
        if let Ok(Some(m)) = btf.find_member(id, name) {
            let layout = MemberLayout {
                bit_offset: m.bit_offset,
                bitfield_size: m.bitfield_size,
            };
            self.gathered.env.members.insert(key, layout);
        }
    }
}

/// The builtins that read the parent or leader task, with the members they read.
fn task_members(b: BuiltinId) -> Option<[&'static str; 2]> {
    use BuiltinId::{Func, Value};
    Some(match b {
        Value(ValueId::Ppid) | Func(FuncId::Ppid) => ["real_parent", "pid"],
        Value(ValueId::Pcomm) | Func(FuncId::Pcomm) => ["real_parent", "comm"],
        Value(ValueId::LeaderTid) | Func(FuncId::LeaderTid) => ["group_leader", "pid"],
        Value(ValueId::LeaderComm) | Func(FuncId::LeaderComm) => ["group_leader", "comm"],
        _ => return None,
    })
}

/// Completes the environment once checking is done: the facts every probe's lowering reads
/// (signed division, the pid filter's and `comm`'s task fields, `pid`/`tid` in a PID namespace,
/// `probe` in programs shared by several targets, the parent task's members) and `uaddr()`'s
/// symbols in every user binary.
pub(super) fn finish(
    mut g: Gathered,
    builtins: &HashMap<ExprId, BuiltinId>,
    probes: &[CheckedProbe],
    kernel: &dyn KernelInfo,
    opts: &super::CheckOptions,
) -> Environment {
    let used: BTreeSet<BuiltinId> = builtins.values().copied().collect();
    let points = || probes.iter().flat_map(|p| &p.attach);
    // Every program's builder asks (division of signed values anywhere in it).
    if points().next().is_some() {
        g.env.signed_division = kernel.signed_division();
    }
    let filtered = points().any(|at| {
        let f = at.kind.info().pid_filter;
        f != crate::kinds::PidFilter::Never
            && (opts.pid_filter || f == crate::kinds::PidFilter::Always)
    });
    let comm = used.contains(&BuiltinId::Value(ValueId::Comm))
        || used.contains(&BuiltinId::Func(FuncId::Comm));
    if filtered || comm {
        g.env.task_fields = kernel.task_fields();
    }
    g.env.pid_namespace = kernel.pid_namespace();
    let pid_tid = [
        BuiltinId::Value(ValueId::Pid),
        BuiltinId::Value(ValueId::Tid),
        BuiltinId::Func(FuncId::Pid),
        BuiltinId::Func(FuncId::Tid),
    ];
    if g.env.pid_namespace.is_some() && pid_tid.iter().any(|b| used.contains(b)) {
        ask_helper(
            &mut g.env,
            &mut g.helpers,
            kernel,
            Helper::GetNsCurrentPidTgid,
        );
    }
    // `probe` tells the targets of a shared program apart by the BPF cookie.
    let shared = points().any(|at| {
        let i = at.kind.info();
        i.one_program_for_targets() || (i.facts.btf_func && at.targets.len() > 1)
    });
    if shared && used.contains(&BuiltinId::Value(ValueId::Probe)) {
        ask_helper(&mut g.env, &mut g.helpers, kernel, Helper::GetAttachCookie);
    }
    let kprobes = points().any(|at| at.kind.info().kernel_entry_regs());
    if kprobes && used.contains(&BuiltinId::Value(ValueId::Func)) {
        g.env.kprobe_get_func_ip = kernel
            .btf(None)
            .map_or(true, |b| b.find_func("bpf_get_func_ip_kprobe").is_some());
    }
    if points().any(|at| at.kind.info().facts.btf_func && at.kind.info().facts.retprobe) {
        g.env.session_kfuncs = Some(match kernel.btf(None) {
            Ok(btf) => session_kfuncs(&btf),
            Err(e) => Err(format!("vmlinux BTF is unreadable: {e}")),
        });
    }
    if g.comm_of_pid {
        let progs: BTreeSet<ProgType> = points().map(|at| at.kind.prog_type()).collect();
        let vmlinux = kernel.btf(None).ok();
        for prog in progs {
            for name in ["bpf_task_from_pid", "bpf_task_release"] {
                let id = vmlinux.as_ref().and_then(|btf| btf.find_func(name));
                let fact = match id {
                    None => Kfunc::Missing,
                    Some(id) if kernel.kfunc_allowed(name, prog) => Kfunc::Allowed(id),
                    Some(id) => Kfunc::Refused(id),
                };
                g.env.kfuncs.insert((name.to_string(), prog), fact);
            }
        }
    }
    let members: BTreeSet<&str> = used
        .iter()
        .filter_map(|b| task_members(*b))
        .flatten()
        .collect();
    if !members.is_empty() {
        let names: Vec<&str> = members.into_iter().collect();
        ask_task_struct(&mut g.env, kernel, &names);
    }
    if !g.uaddr_symbols.is_empty() {
        let binaries: BTreeSet<&PathBuf> = points()
            .flat_map(|at| &at.targets)
            .filter_map(|t| match &t.kind {
                TargetKind::User { path, .. } | TargetKind::Usdt { path, .. } => Some(path),
                _ => None,
            })
            .collect();
        for path in binaries {
            let relocatable = kernel.elf_is_dyn(path);
            for sym in &g.uaddr_symbols {
                let s = kernel
                    .elf_symbol_address(path, sym)
                    .map(|(address, _)| UserSymbol {
                        address,
                        relocatable,
                    });
                g.env.user_symbols.insert((path.clone(), sym.clone()), s);
            }
        }
    }
    g.env
}

/// The BTF ids of the kprobe.session kfuncs `(bpf_session_is_return, bpf_session_cookie)` in
/// vmlinux BTF `btf`, or why the kernel has no kprobe.session.
pub fn session_kfuncs(btf: &crate::btf::Btf) -> Result<(u32, u32), String> {
    let id = |name: &str| {
        btf.find_func(name).ok_or_else(|| {
            format!("kprobe.session needs kernel 6.10+ (no {name} kfunc in vmlinux BTF)")
        })
    };
    Ok((id("bpf_session_is_return")?, id("bpf_session_cookie")?))
}

#[cfg(test)]
pub(crate) mod tests {
    use std::path::{Path, PathBuf};
    use std::sync::Arc;

    use super::*;
    use crate::btf::{Btf, FuncTarget, Glob};
    use crate::diag::SourceFile;
    use crate::kernel::info::{KernelInfoError, MockKernel, UsdtNote};
    use crate::kernel::tracefs::{Tracepoint, TracepointFormat};
    use crate::sema::{check, CheckOptions, CheckedProgram};

    /// The mock kernel with answers to the questions it leaves at their defaults: `vfs_read`
    /// has an address, bpf_send_signal is missing, cgroups do not exist, ISA v4 division and
    /// direct `task_struct` reads work.
    pub(crate) struct Answering(pub MockKernel);

    impl KernelInfo for Answering {
        fn btf(&self, module: Option<&str>) -> Result<Arc<Btf>, KernelInfoError> {
            self.0.btf(module)
        }
        fn btf_functions(
            &self,
            module: Option<&str>,
            glob: &Glob,
        ) -> Result<Vec<FuncTarget>, KernelInfoError> {
            self.0.btf_functions(module, glob)
        }
        fn kprobe_functions(&self) -> Option<Vec<(Option<String>, String)>> {
            self.0.kprobe_functions()
        }
        fn tracepoints(&self, pattern: &str) -> Result<Vec<Tracepoint>, KernelInfoError> {
            self.0.tracepoints(pattern)
        }
        fn tracepoint_format(
            &self,
            category: &str,
            name: &str,
        ) -> Result<TracepointFormat, KernelInfoError> {
            self.0.tracepoint_format(category, name)
        }
        fn find_binary(&self, target: &str) -> Option<PathBuf> {
            self.0.find_binary(target)
        }
        fn elf_symbols(&self, path: &Path) -> Result<Vec<String>, KernelInfoError> {
            self.0.elf_symbols(path)
        }
        fn usdt_probes(&self, path: &Path) -> Result<Vec<UsdtNote>, KernelInfoError> {
            self.0.usdt_probes(path)
        }
        fn kernel_symbol_address(&self, name: &str) -> Option<u64> {
            (name == "vfs_read").then_some(0xffff_ffff_8100_0000)
        }
        fn cgroup_id(&self, _path: &str) -> std::io::Result<u64> {
            Err(std::io::Error::from_raw_os_error(libc::ENOENT))
        }
        fn signed_division(&self) -> bool {
            true
        }
        fn helper_unavailable(&self, h: crate::kernel::features::Helper) -> Option<String> {
            (h == crate::kernel::features::Helper::SendSignal).then(|| "not in this kernel".into())
        }
        fn task_fields(&self) -> Option<TaskFields> {
            Some(TaskFields {
                comm: 8,
                pid: 0,
                tgid: 4,
            })
        }
    }

    fn checked(text: &str) -> CheckedProgram {
        let src = SourceFile::new("t.bt", text);
        let program = crate::syntax::parse_ok(&src).expect("parses");
        let opts = CheckOptions {
            unsafe_mode: true,
            ..CheckOptions::default()
        };
        let out = check(&program, &Answering(MockKernel::fixture()), &opts);
        out.program
            .unwrap_or_else(|| panic!("{text}: {:?}", out.diagnostics))
    }

    #[test]
    fn the_checked_program_carries_what_lowering_asks_of_the_kernel() {
        let cp = checked(
            "kprobe:vfs_read { signal(\"KILL\"); @a = kaddr(\"vfs_read\"); \
             @b = kaddr(\"nope\"); @c = cgroupid(\"/nope\"); @d[comm] = count(); \
             @e = curtask->real_parent->pid; @f = ppid; }",
        );
        let env = &cp.env;
        assert!(env.signed_division);
        assert_eq!(env.task_fields.map(|f| f.comm), Some(8));
        assert_eq!(
            env.helper_unavailable(Helper::SendSignal),
            Some("not in this kernel")
        );
        assert_eq!(env.kernel_symbols["vfs_read"], Some(0xffff_ffff_8100_0000));
        assert_eq!(env.kernel_symbols["nope"], None);
        assert_eq!(env.cgroup_ids["/nope"], Err(libc::ENOENT));
        // Members the script reads, at their BTF offsets (fixture: real_parent at 32).
        let fixture = MockKernel::fixture();
        let vmlinux = fixture.btf(None).unwrap();
        let task = vmlinux.find_struct("task_struct").unwrap();
        let m = env.member(None, task, "real_parent").expect("recorded");
        assert_eq!((m.bit_offset, m.bitfield_size), (32 * 8, 0));
        // `ppid`: task_struct.real_parent and .pid.
        let t = env.task_struct.as_ref().expect("task_struct");
        assert_eq!((t["real_parent"], t["pid"]), (32, 0));
    }

    #[test]
    fn only_what_the_script_needs_is_asked() {
        let cp = checked("BEGIN { @ = 1 / 2; }");
        let env = &cp.env;
        assert!(env.unavailable_helpers.is_empty());
        assert_eq!(env.task_fields, None, "no comm and no pid filter");
        assert!(env.kernel_symbols.is_empty() && env.members.is_empty());
        assert_eq!(env.task_struct, None);
        assert!(env.kfuncs.is_empty());
    }

    #[test]
    fn comm_of_pid_in_a_function_asks_for_the_kfuncs_of_every_program_type() {
        let cp = checked(
            "fn name($p: int32) : string { return comm($p); } \
             kprobe:vfs_read { print(name(1)); }",
        );
        // The fixture has no such kfunc: the code generator reports it missing.
        let k = cp.env.kfuncs[&("bpf_task_from_pid".to_string(), ProgType::Kprobe)];
        assert_eq!(k, Kfunc::Missing);
    }
}
