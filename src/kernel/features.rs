//! What the running kernel supports, probed once and cached: kernel version, lockdown, BTF,
//! map types, attach kinds (fentry/fexit by a real trial load, kprobes, kprobe_multi,
//! uprobes, uprobe_multi, tracepoints, perf events), BPF_PROG_TEST_RUN, ISA levels and the
//! helpers strobe's code generator emits. Every missing feature carries the reason (errno and
//! its meaning, lockdown, missing PMU …).
//!
//! Input: the kernel (trial loads and attaches, sysfs/procfs reads) and a [`FuncIdSource`]
//! for fentry targets. Output: [`Features`], rendered by `strobe info`.
//! Invariant: probing leaves nothing behind (every trial object is dropped at once).

pub(crate) mod trial;

use std::path::Path;
use std::sync::OnceLock;

use crate::asm::isa::{AluOp, JmpOp, MovsxWidth};
use crate::asm::{Insn, Reg};
use crate::sys::env::{self, Lockdown};
use crate::sys::{AttachType, Capability, MapType, ProgType};

/// Whether a feature is there; a "no" says why.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Support {
    Yes,
    No(String),
}

impl Support {
    pub fn is_yes(&self) -> bool {
        matches!(self, Support::Yes)
    }

    /// `yes` or `no (reason)`.
    pub fn render(&self) -> String {
        match self {
            Support::Yes => "yes".into(),
            Support::No(r) => format!("no ({r})"),
        }
    }
}

/// Where the fentry/fexit probe gets the BTF id of a kernel function: the vmlinux
/// [`Btf`](crate::btf::Btf) index, or a fixed table in tests.
pub trait FuncIdSource {
    fn func_id(&self, name: &str) -> Option<u32>;
}

impl FuncIdSource for crate::btf::Btf {
    fn func_id(&self, name: &str) -> Option<u32> {
        self.find_func(name)
    }
}

/// No BTF: the fentry/fexit probes report that there is no target to try.
pub struct NoBtf;

impl FuncIdSource for NoBtf {
    fn func_id(&self, _: &str) -> Option<u32> {
        None
    }
}

fn probe_with_vmlinux() -> Features {
    match crate::btf::Btf::from_vmlinux() {
        Ok(btf) => probe(&btf),
        Err(_) => probe(&NoBtf),
    }
}

/// Helpers strobe's code generator may call, with their uapi ids.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Helper {
    #[doc(alias = "BPF_FUNC_probe_read")]
    ProbeRead,
    #[doc(alias = "BPF_FUNC_probe_read_kernel")]
    ProbeReadKernel,
    #[doc(alias = "BPF_FUNC_probe_read_user")]
    ProbeReadUser,
    #[doc(alias = "BPF_FUNC_probe_read_kernel_str")]
    ProbeReadKernelStr,
    #[doc(alias = "BPF_FUNC_probe_read_user_str")]
    ProbeReadUserStr,
    #[doc(alias = "BPF_FUNC_ringbuf_output")]
    RingbufOutput,
    #[doc(alias = "BPF_FUNC_ringbuf_reserve")]
    RingbufReserve,
    #[doc(alias = "BPF_FUNC_ringbuf_submit")]
    RingbufSubmit,
    #[doc(alias = "BPF_FUNC_perf_event_output")]
    PerfEventOutput,
    #[doc(alias = "BPF_FUNC_get_current_pid_tgid")]
    GetCurrentPidTgid,
    #[doc(alias = "BPF_FUNC_get_current_uid_gid")]
    GetCurrentUidGid,
    #[doc(alias = "BPF_FUNC_get_current_comm")]
    GetCurrentComm,
    #[doc(alias = "BPF_FUNC_get_stack")]
    GetStack,
    #[doc(alias = "BPF_FUNC_get_stackid")]
    GetStackid,
    #[doc(alias = "BPF_FUNC_get_func_ip")]
    GetFuncIp,
    #[doc(alias = "BPF_FUNC_ktime_get_ns")]
    KtimeGetNs,
    #[doc(alias = "BPF_FUNC_ktime_get_boot_ns")]
    KtimeGetBootNs,
    #[doc(alias = "BPF_FUNC_get_current_task")]
    GetCurrentTask,
    #[doc(alias = "BPF_FUNC_get_current_task_btf")]
    GetCurrentTaskBtf,
    #[doc(alias = "BPF_FUNC_send_signal")]
    SendSignal,
    #[doc(alias = "BPF_FUNC_override_return")]
    OverrideReturn,
    #[doc(alias = "BPF_FUNC_loop")]
    Loop,
    #[doc(alias = "BPF_FUNC_get_current_cgroup_id")]
    GetCurrentCgroupId,
    #[doc(alias = "BPF_FUNC_jiffies64")]
    Jiffies64,
    #[doc(alias = "BPF_FUNC_get_prandom_u32")]
    GetPrandomU32,
    #[doc(alias = "BPF_FUNC_get_smp_processor_id")]
    GetSmpProcessorId,
    #[doc(alias = "BPF_FUNC_d_path")]
    DPath,
    #[doc(alias = "BPF_FUNC_snprintf")]
    Snprintf,
    #[doc(alias = "BPF_FUNC_get_func_arg")]
    GetFuncArg,
    #[doc(alias = "BPF_FUNC_get_func_ret")]
    GetFuncRet,
    #[doc(alias = "BPF_FUNC_get_attach_cookie")]
    GetAttachCookie,
    #[doc(alias = "BPF_FUNC_map_lookup_percpu_elem")]
    MapLookupPercpuElem,
    #[doc(alias = "BPF_FUNC_ktime_get_tai_ns")]
    KtimeGetTaiNs,
    #[doc(alias = "BPF_FUNC_get_ns_current_pid_tgid")]
    GetNsCurrentPidTgid,
    #[doc(alias = "BPF_FUNC_send_signal_thread")]
    SendSignalThread,
    /// Not in [`Helper::ALL`]: the verifier logs a warning to the kernel log each time a
    /// program uses it, so it is probed only for a script that calls `write_user`.
    #[doc(alias = "BPF_FUNC_probe_write_user")]
    ProbeWriteUser,
}

/// The program context a helper is probed in.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum ProbeCtx {
    RawTp,
    Kprobe,
    Fentry,
}

impl Helper {
    pub const ALL: [Helper; 35] = {
        use Helper::*;
        [
            ProbeRead,
            ProbeReadKernel,
            ProbeReadUser,
            ProbeReadKernelStr,
            ProbeReadUserStr,
            RingbufOutput,
            RingbufReserve,
            RingbufSubmit,
            PerfEventOutput,
            GetCurrentPidTgid,
            GetCurrentUidGid,
            GetCurrentComm,
            GetStack,
            GetStackid,
            GetFuncIp,
            KtimeGetNs,
            KtimeGetBootNs,
            GetCurrentTask,
            GetCurrentTaskBtf,
            SendSignal,
            OverrideReturn,
            Loop,
            GetCurrentCgroupId,
            Jiffies64,
            GetPrandomU32,
            GetSmpProcessorId,
            DPath,
            Snprintf,
            GetFuncArg,
            GetFuncRet,
            GetAttachCookie,
            MapLookupPercpuElem,
            KtimeGetTaiNs,
            GetNsCurrentPidTgid,
            SendSignalThread,
        ]
    };

    /// `(uapi id, name)` from `include/uapi/linux/bpf.h`'s `__BPF_FUNC_MAPPER`.
    fn entry(self) -> (i32, &'static str, ProbeCtx) {
        use Helper::*;
        use ProbeCtx::*;
        match self {
            ProbeRead => (4, "probe_read", RawTp),
            KtimeGetNs => (5, "ktime_get_ns", RawTp),
            GetPrandomU32 => (7, "get_prandom_u32", RawTp),
            GetSmpProcessorId => (8, "get_smp_processor_id", RawTp),
            GetCurrentPidTgid => (14, "get_current_pid_tgid", RawTp),
            GetCurrentUidGid => (15, "get_current_uid_gid", RawTp),
            GetCurrentComm => (16, "get_current_comm", RawTp),
            PerfEventOutput => (25, "perf_event_output", RawTp),
            GetStackid => (27, "get_stackid", RawTp),
            GetCurrentTask => (35, "get_current_task", RawTp),
            OverrideReturn => (58, "override_return", Kprobe),
            GetStack => (67, "get_stack", RawTp),
            GetCurrentCgroupId => (80, "get_current_cgroup_id", RawTp),
            SendSignal => (109, "send_signal", RawTp),
            ProbeReadUser => (112, "probe_read_user", RawTp),
            ProbeReadKernel => (113, "probe_read_kernel", RawTp),
            ProbeReadUserStr => (114, "probe_read_user_str", RawTp),
            ProbeReadKernelStr => (115, "probe_read_kernel_str", RawTp),
            Jiffies64 => (118, "jiffies64", RawTp),
            KtimeGetBootNs => (125, "ktime_get_boot_ns", RawTp),
            RingbufOutput => (130, "ringbuf_output", RawTp),
            RingbufReserve => (131, "ringbuf_reserve", RawTp),
            RingbufSubmit => (132, "ringbuf_submit", RawTp),
            DPath => (147, "d_path", Fentry),
            GetCurrentTaskBtf => (158, "get_current_task_btf", RawTp),
            Snprintf => (165, "snprintf", RawTp),
            GetFuncIp => (173, "get_func_ip", Kprobe),
            GetAttachCookie => (174, "get_attach_cookie", Kprobe),
            Loop => (181, "loop", RawTp),
            GetFuncArg => (183, "get_func_arg", Fentry),
            GetFuncRet => (184, "get_func_ret", Fentry),
            MapLookupPercpuElem => (195, "map_lookup_percpu_elem", RawTp),
            KtimeGetTaiNs => (208, "ktime_get_tai_ns", RawTp),
            GetNsCurrentPidTgid => (120, "get_ns_current_pid_tgid", RawTp),
            SendSignalThread => (117, "send_signal_thread", RawTp),
            ProbeWriteUser => (36, "probe_write_user", RawTp),
        }
    }

    pub fn id(self) -> i32 {
        self.entry().0
    }

    pub fn name(self) -> &'static str {
        self.entry().1
    }
}

/// Everything probed about the running kernel.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Features {
    pub kernel_release: String,
    pub kernel_version: (u32, u32, u32),
    /// Which of CAP_BPF, CAP_PERFMON, CAP_SYS_ADMIN this process has (effective set).
    pub capabilities: Vec<(Capability, bool)>,
    /// `None` when the kernel has no lockdown LSM or securityfs could not be read.
    pub lockdown: Option<Lockdown>,
    /// `kernel.unprivileged_bpf_disabled`.
    pub unprivileged_bpf_disabled: Option<u32>,
    /// `net.core.bpf_jit_enable`.
    pub jit: Support,
    pub btf_vmlinux: Support,
    /// Number of modules with their own BTF under /sys/kernel/btf.
    pub btf_modules: usize,
    pub hash_map: Support,
    pub percpu_array: Support,
    pub ringbuf: Support,
    pub perf_event_array: Support,
    pub stack_trace_map: Support,
    pub map_batch: Support,
    pub fentry: Support,
    /// A BPF_TRACE_ITER program for `bpf_iter_task` loads (`iter:` probes). Lockdown may
    /// refuse fentry (trampolines) and still allow iterators.
    pub iter: Support,
    pub fexit: Support,
    pub kprobes: Support,
    pub kprobe_multi: Support,
    /// kprobe.session programs (6.10+): fexit wildcards reading `args` through kprobe_multi
    /// links (`loader::session`).
    pub kprobe_session: Support,
    pub uprobes: Support,
    pub uprobe_multi: Support,
    pub tracepoints: Support,
    pub raw_tracepoints: Support,
    pub perf_events: Support,
    pub perf_event_link: Support,
    pub raw_tp_test_run: Support,
    pub isa_v2: Support,
    pub isa_v3: Support,
    pub isa_v4: Support,
    pub bounded_loops: Support,
    pub helpers: Vec<(Helper, Support)>,
}

/// A titled group of `name: yes/no (reason)` lines, as `strobe info` prints them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Section {
    pub title: &'static str,
    pub lines: Vec<(String, String)>,
}

/// Kernel functions tried as fentry/kprobe targets, most likely first.
const PROBE_TARGETS: [&str; 4] = ["bpf_fentry_test1", "vfs_read", "do_sys_openat2", "schedule"];

static CACHE: OnceLock<Features> = OnceLock::new();

/// The features of the running kernel, probed on first use (fentry targets' ids from the
/// vmlinux BTF, unless [`init_features`] ran first).
pub fn features() -> &'static Features {
    CACHE.get_or_init(probe_with_vmlinux)
}

/// Whether the verifier accepts ISA v4 signed division and modulo (`sdiv`/`smod`, 6.6+):
/// one trial load, cached for the process (the code generator asks once per run, and only
/// needs this fact, not the whole [`features`] report).
pub fn signed_division() -> bool {
    static SDIV: OnceLock<bool> = OnceLock::new();
    *SDIV.get_or_init(|| {
        let _ = crate::sys::raise_memlock_rlimit();
        trial::accepts(&[
            Insn::mov64_imm(Reg::R0, 7),
            Insn::mov64_imm(Reg::R1, -2),
            Insn::alu64_reg(AluOp::Sdiv, Reg::R0, Reg::R1),
            Insn::alu64_reg(AluOp::Smod, Reg::R0, Reg::R1),
            Insn::exit(),
        ])
        .is_yes()
    })
}

/// Whether a program may read the current task's `comm`, `pid` and `tgid` straight from
/// `task_struct` at `fields` through the trusted pointer `bpf_get_current_task_btf()` returns
/// (kernel 5.11+ with BTF; the verifier checks the offsets against the kernel's own BTF): one
/// trial load of exactly those reads. Uncached: [`crate::kernel::HostKernel`] asks once a run.
pub fn reads_task_fields(fields: crate::kernel::info::TaskFields) -> bool {
    use crate::asm::isa::Size;
    let _ = crate::sys::raise_memlock_rlimit();
    trial::accepts(&[
        Insn::call_helper_id(Helper::GetCurrentTaskBtf.id()),
        Insn::load(Size::Dw, Reg::R1, Reg::R0, fields.comm),
        Insn::load(Size::Dw, Reg::R1, Reg::R0, fields.comm + 8),
        Insn::load(Size::W, Reg::R1, Reg::R0, fields.pid),
        Insn::load(Size::W, Reg::R1, Reg::R0, fields.tgid),
        Insn::mov64_imm(Reg::R0, 0),
        Insn::exit(),
    ])
    .is_yes()
}

/// Whether the kernel knows helper `h` in the program type strobe calls it from: one trial
/// load (the full [`features`] report probes every helper; this asks about one). Helpers
/// called from fentry programs need a BTF target and are answered from [`features`].
pub fn helper_support(h: Helper) -> Support {
    let _ = crate::sys::raise_memlock_rlimit();
    let (id, _, ctx) = h.entry();
    let s = match ctx {
        ProbeCtx::RawTp => trial::helper(id, ProgType::RawTracepoint, None),
        ProbeCtx::Kprobe => trial::helper(id, ProgType::Kprobe, None),
        ProbeCtx::Fentry => features().helper(h),
    };
    // The kernel hides bpf_probe_write_user from the verifier under lockdown (integrity and
    // above: LOCKDOWN_BPF_WRITE_USER), which then reads as an unknown helper.
    match (s, h, env::lockdown()) {
        (Support::No(why), Helper::ProbeWriteUser, Some(l)) if l != env::Lockdown::None => {
            Support::No(format!(
                "the kernel is locked down ({}), which withholds it from BPF programs; {why}",
                l.name()
            ))
        }
        (s, _, _) => s,
    }
}

/// Probes with `ids` as the BTF id source, unless the cache is already filled; returns the
/// cached report either way. Call early (e.g. with `strobe::btf`'s index) to avoid a second
/// BTF read.
pub fn init_features(ids: &dyn FuncIdSource) -> &'static Features {
    CACHE.get_or_init(|| probe(ids))
}

/// Probes everything now (uncached), taking fentry targets' BTF ids from `ids`.
pub fn probe(ids: &dyn FuncIdSource) -> Features {
    // Kernels before 5.11 charge BPF objects to RLIMIT_MEMLOCK: without raising it, every trial
    // load below would fail with EPERM and report features as missing that a run (which raises
    // it too) would have. Failure to raise is not fatal here: the trial loads then say why.
    let _ = crate::sys::raise_memlock_rlimit();
    let release = env::kernel_release();
    let btf_dir = Path::new("/sys/kernel/btf");
    let btf_vmlinux = if btf_dir.join("vmlinux").exists() {
        Support::Yes
    } else {
        Support::No(
            "/sys/kernel/btf/vmlinux is absent (kernel built without CONFIG_DEBUG_INFO_BTF)".into(),
        )
    };
    let btf_modules = std::fs::read_dir(btf_dir)
        .map(|d| {
            d.filter_map(Result::ok)
                .filter(|e| e.file_name() != "vmlinux")
                .count()
        })
        .unwrap_or(0);
    let target_id = PROBE_TARGETS.iter().find_map(|n| ids.func_id(n));
    let kprobe_target = PROBE_TARGETS[1];
    let exe = std::env::current_exe().unwrap_or_default();
    let entry = trial::entry_file_offset(&exe);
    let helpers = Helper::ALL
        .iter()
        .map(|&h| {
            let (id, _, ctx) = h.entry();
            let s = match ctx {
                ProbeCtx::RawTp => trial::helper(id, ProgType::RawTracepoint, None),
                ProbeCtx::Kprobe => trial::helper(id, ProgType::Kprobe, None),
                ProbeCtx::Fentry => trial::helper(
                    id,
                    ProgType::Tracing,
                    Some((AttachType::TraceFentry, target_id)),
                ),
            };
            (h, s)
        })
        .collect();
    Features {
        kernel_version: env::parse_version(&release),
        capabilities: [Capability::Bpf, Capability::Perfmon, Capability::SysAdmin]
            .into_iter()
            .map(|c| (c, env::has_capability(c)))
            .collect(),
        kernel_release: release,
        lockdown: env::lockdown(),
        unprivileged_bpf_disabled: env::unprivileged_bpf_disabled(),
        jit: match env::bpf_jit_enable() {
            Some(0) => Support::No("net.core.bpf_jit_enable = 0: programs are interpreted".into()),
            Some(_) => Support::Yes,
            None => Support::No("/proc/sys/net/core/bpf_jit_enable is unreadable".into()),
        },
        btf_vmlinux,
        btf_modules,
        hash_map: trial::map_support(MapType::Hash, 4, 8, 1),
        percpu_array: trial::map_support(MapType::PercpuArray, 4, 8, 1),
        ringbuf: trial::map_support(MapType::Ringbuf, 0, 0, 4096),
        perf_event_array: trial::map_support(MapType::PerfEventArray, 4, 4, 1),
        stack_trace_map: trial::map_support(MapType::StackTrace, 4, 8 * 127, 1),
        map_batch: trial::map_batch(),
        fentry: trial::tracing(AttachType::TraceFentry, target_id),
        fexit: trial::tracing(AttachType::TraceFexit, target_id),
        iter: trial::tracing(AttachType::TraceIter, ids.func_id("bpf_iter_task")),
        kprobes: trial::kprobes(kprobe_target),
        kprobe_multi: trial::kprobe_multi(kprobe_target),
        kprobe_session: trial::kprobe_session(kprobe_target, ids.func_id("bpf_session_is_return")),
        uprobes: trial::uprobes(&exe, entry),
        uprobe_multi: trial::uprobe_multi(&exe, entry),
        tracepoints: trial::tracepoint_prog(),
        raw_tracepoints: trial::raw_tracepoint_attach(),
        perf_events: trial::perf_event(),
        perf_event_link: trial::perf_event_link(),
        raw_tp_test_run: trial::raw_tp_test_run(),
        // v2: `if r0 < 1 goto +0` (BPF_JLT); v3: `if w0 == 0 goto +0` (BPF_JMP32);
        // v4: `r0 = (s8)r0` (BPF_MOVSX, 6.6+).
        isa_v2: trial::accepts(&[
            Insn::mov64_imm(Reg::R0, 0),
            Insn::jmp_imm(JmpOp::Jlt, Reg::R0, 1, 0),
            Insn::exit(),
        ]),
        isa_v3: trial::accepts(&[
            Insn::mov64_imm(Reg::R0, 0),
            Insn::jmp32_imm(JmpOp::Jeq, Reg::R0, 0, 0),
            Insn::exit(),
        ]),
        isa_v4: trial::accepts(&[
            Insn::mov64_imm(Reg::R0, 0),
            Insn::movsx(true, Reg::R0, Reg::R0, MovsxWidth::S8),
            Insn::exit(),
        ]),
        // r0 = 0; r0 += 1; if r0 < 4 goto -2; exit (5.3+).
        bounded_loops: trial::accepts(&[
            Insn::mov64_imm(Reg::R0, 0),
            Insn::alu64_imm(AluOp::Add, Reg::R0, 1),
            Insn::jmp_imm(JmpOp::Jlt, Reg::R0, 4, -2),
            Insn::exit(),
        ]),
        helpers,
    }
}

impl Features {
    /// Support for helper `h` (`No` if it was not probed).
    pub fn helper(&self, h: Helper) -> Support {
        self.helpers
            .iter()
            .find(|(x, _)| *x == h)
            .map_or_else(|| Support::No("not probed".into()), |(_, s)| s.clone())
    }

    /// The report, grouped like `bpftrace --info`.
    pub fn sections(&self) -> Vec<Section> {
        let l = |n: &str, s: &Support| (n.to_string(), s.render());
        let lockdown = match self.lockdown {
            Some(m) => m.name().to_string(),
            None => "unknown (no lockdown LSM or securityfs unreadable)".into(),
        };
        let unpriv = match self.unprivileged_bpf_disabled {
            Some(0) => "allowed (0)".to_string(),
            Some(1) => "disabled (1: until reboot)".to_string(),
            Some(2) => "disabled (2: admin may re-enable)".to_string(),
            Some(n) => format!("disabled ({n})"),
            None => "unknown".into(),
        };
        let caps = self
            .capabilities
            .iter()
            .map(|(c, has)| format!("{} {}", c.name(), if *has { "yes" } else { "no" }))
            .collect::<Vec<_>>()
            .join(", ");
        let (a, b, c) = self.kernel_version;
        vec![
            Section {
                title: "System",
                lines: vec![
                    (
                        "kernel".into(),
                        format!("{} ({a}.{b}.{c})", self.kernel_release),
                    ),
                    ("capabilities".into(), caps),
                    ("lockdown".into(), lockdown),
                    ("unprivileged bpf".into(), unpriv),
                    l("jit", &self.jit),
                ],
            },
            Section {
                title: "BTF",
                lines: vec![
                    l("vmlinux btf", &self.btf_vmlinux),
                    ("module btf".into(), format!("{} modules", self.btf_modules)),
                ],
            },
            Section {
                title: "Map types",
                lines: vec![
                    l("hash", &self.hash_map),
                    l("percpu array", &self.percpu_array),
                    l("ringbuf", &self.ringbuf),
                    l("perf event array", &self.perf_event_array),
                    l("stack trace", &self.stack_trace_map),
                    l("batch operations", &self.map_batch),
                ],
            },
            Section {
                title: "Probe types",
                lines: vec![
                    l("fentry", &self.fentry),
                    l("fexit", &self.fexit),
                    l("kprobe", &self.kprobes),
                    l("kprobe_multi", &self.kprobe_multi),
                    l("uprobe", &self.uprobes),
                    l("uprobe_multi", &self.uprobe_multi),
                    l("tracepoint", &self.tracepoints),
                    l("rawtracepoint", &self.raw_tracepoints),
                    l("perf event (profile/interval)", &self.perf_events),
                    l("perf event link", &self.perf_event_link),
                    l("kprobe_session", &self.kprobe_session),
                    l("iter", &self.iter),
                ],
            },
            Section {
                title: "Kernel features",
                lines: vec![
                    l("raw_tp BPF_PROG_TEST_RUN", &self.raw_tp_test_run),
                    l("isa v2", &self.isa_v2),
                    l("isa v3", &self.isa_v3),
                    l("isa v4", &self.isa_v4),
                    l("bounded loops", &self.bounded_loops),
                    // bpftrace's names for these facts, which its test engine looks for.
                    l("Loop support", &self.bounded_loops),
                    l("btf", &self.btf_vmlinux),
                    ("Instruction limit".into(), "1000000".into()),
                ],
            },
            Section {
                title: "Kernel helpers",
                lines: self
                    .helpers
                    .iter()
                    .map(|(h, s)| (h.name().to_string(), s.render()))
                    .chain(
                        // bpftrace's short names of three of them.
                        [
                            ("dpath", Helper::DPath),
                            ("get_tai_ns", Helper::KtimeGetTaiNs),
                            ("lookup_percpu_elem", Helper::MapLookupPercpuElem),
                        ]
                        .map(|(n, h)| l(n, &self.helper(h))),
                    )
                    .collect(),
            },
        ]
    }
}
