//! BPF_PROG_LOAD: program types, attach types, and loading with the verifier log.
//!
//! A load is first tried without a log (fast, and its errno is the real one: a truncated log
//! turns the errno into ENOSPC on 6.4+ kernels). On failure it is retried with log level 2,
//! growing the buffer on ENOSPC (to the kernel's `log_true_size` when it reports one) up to
//! [`LOG_CAP`]; when level 2 does not fit, level 1. The [`LoadError`] carries the log, the
//! failing instruction and the verifier's reason.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};

use super::attr::{obj_name, str_until_nul, ProgLoadAttr};
use super::call::{bpf_fd, ptr, Cmd};
use super::diagnose::{sys_error, Op};
use super::error::{Errno, SysError};
use super::verifier_log::{summarize, VerifierSummary};
use crate::asm::Insn;

/// `enum bpf_prog_type`: the generated table of isa/prog_types.txt.
pub use crate::asm::isa::ProgType;

impl ProgType {
    /// The program type of a kernel value (`bpf_prog_info.type`), if isa/prog_types.txt
    /// names it.
    pub fn from_raw(v: u32) -> Option<ProgType> {
        ProgType::from_value(v)
    }

    /// Tracing program types need CAP_PERFMON on top of CAP_BPF (kernel/bpf/syscall.c
    /// `bpf_prog_load` → `is_perfmon_prog_type`).
    pub fn needs_perfmon(self) -> bool {
        matches!(
            self,
            ProgType::Kprobe
                | ProgType::Tracepoint
                | ProgType::PerfEvent
                | ProgType::RawTracepoint
                | ProgType::RawTracepointWritable
                | ProgType::Tracing
                | ProgType::Ext
                | ProgType::Lsm
        )
    }

    /// How a lockdown refusal of this type reads in an error message.
    pub fn lockdown_description(self) -> &'static str {
        match self {
            ProgType::Tracing => "BPF tracing programs (fentry/fexit/fmod_ret/tp_btf)",
            ProgType::Lsm => "BPF LSM programs",
            ProgType::Kprobe => "kprobe programs",
            _ => "this BPF program type",
        }
    }
}

/// `enum bpf_attach_type` (the ones tracing uses), beside the program types.
pub use crate::asm::isa::AttachType;

bitflags::bitflags! {
    /// `prog_flags` of BPF_PROG_LOAD.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct ProgLoadFlags: u32 {
        #[doc(alias = "BPF_F_STRICT_ALIGNMENT")]
        const STRICT_ALIGNMENT = 1 << 0;
        #[doc(alias = "BPF_F_ANY_ALIGNMENT")]
        const ANY_ALIGNMENT = 1 << 1;
        #[doc(alias = "BPF_F_TEST_RND_HI32")]
        const TEST_RND_HI32 = 1 << 2;
        #[doc(alias = "BPF_F_SLEEPABLE")]
        const SLEEPABLE = 1 << 4;
    }
}

bitflags::bitflags! {
    /// `log_level` of BPF_PROG_LOAD / BPF_BTF_LOAD.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct LogLevel: u32 {
        #[doc(alias = "BPF_LOG_LEVEL1")]
        const LEVEL1 = 1;
        #[doc(alias = "BPF_LOG_LEVEL2")]
        const LEVEL2 = 2;
        #[doc(alias = "BPF_LOG_STATS")]
        const STATS = 4;
        /// 6.4+: keep the head of the log instead of rotating to keep its tail.
        #[doc(alias = "BPF_LOG_FIXED")]
        const FIXED = 8;
    }
}

/// Largest verifier log buffer strobe allocates (older kernels refuse ≥ 16 MiB… for level 1
/// and UINT_MAX>>2 later; 16 MiB holds level-2 logs of programs strobe generates).
pub const LOG_CAP: usize = 16 << 20;
const LOG_START: usize = 64 << 10;

/// What BPF_PROG_LOAD needs.
#[derive(Clone, Debug)]
pub struct ProgLoadOptions<'a> {
    pub prog_type: ProgType,
    pub insns: &'a [Insn],
    pub license: &'a str,
    pub name: &'a str,
    pub expected_attach_type: Option<AttachType>,
    /// BTF type id of the attach target (fentry/fexit/tp_btf: a FUNC or `btf_trace_*`).
    pub attach_btf_id: u32,
    /// The module BTF object holding `attach_btf_id` (`None` = vmlinux).
    pub attach_btf_obj_fd: Option<BorrowedFd<'a>>,
    pub prog_btf_fd: Option<BorrowedFd<'a>>,
    pub flags: ProgLoadFlags,
    pub kern_version: u32,
    /// Map fds referenced by `BPF_PSEUDO_MAP_IDX` loads.
    pub fd_array: &'a [RawFd],
    /// `struct bpf_func_info` records (first instruction, BTF `FUNC` id in `prog_btf_fd`),
    /// one per function; needed by programs with subprograms.
    pub func_info: &'a [[u32; 2]],
    /// `log_size` (bpftrace's config): load with a level-1 verifier log of exactly this many
    /// bytes from the first attempt, as bpftrace does; a log that does not fit fails the
    /// load with ENOSPC. `None`: no log unless the load fails, then one as large as needed.
    pub log_size: Option<u32>,
}

impl<'a> ProgLoadOptions<'a> {
    /// GPL-licensed options for `prog_type` with everything else empty.
    pub fn new(prog_type: ProgType, insns: &'a [Insn]) -> ProgLoadOptions<'a> {
        ProgLoadOptions {
            prog_type,
            insns,
            license: "GPL",
            name: "",
            expected_attach_type: None,
            attach_btf_id: 0,
            attach_btf_obj_fd: None,
            prog_btf_fd: None,
            flags: ProgLoadFlags::empty(),
            kern_version: 0,
            fd_array: &[],
            func_info: &[],
            log_size: None,
        }
    }
}

/// A refused program load.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{sys}{}", describe(.summary))]
pub struct LoadError {
    /// The call, errno of the first (log-less) attempt, and cause.
    pub sys: SysError,
    /// The whole verifier log (empty when the refusal came before verification).
    pub log: String,
    /// The failing instruction and reason parsed out of `log` (boxed to keep `Result`s small).
    pub summary: Box<VerifierSummary>,
    /// The log did not fit in [`LOG_CAP`] bytes even at level 1.
    pub log_truncated: bool,
}

fn describe(s: &VerifierSummary) -> String {
    match (&s.reason, s.insn) {
        (Some(r), Some(i)) => format!(": verifier: {r} (insn {i})"),
        (Some(r), None) => format!(": verifier: {r}"),
        _ => String::new(),
    }
}

impl LoadError {
    pub fn errno(&self) -> Errno {
        self.sys.errno
    }
    /// Index of the instruction the verifier rejected.
    pub fn insn(&self) -> Option<usize> {
        self.summary.insn
    }
    pub fn reason(&self) -> Option<&str> {
        self.summary.reason.as_deref()
    }
}

/// A loaded program, owned; closed on drop.
#[derive(Debug)]
pub struct Prog {
    fd: OwnedFd,
    prog_type: ProgType,
}

impl Prog {
    /// BPF_PROG_LOAD, with the verifier log collected on failure.
    pub fn load(opts: &ProgLoadOptions<'_>) -> Result<Prog, LoadError> {
        if let Some(size) = opts.log_size {
            return load_sized_log(opts, size);
        }
        let first = load_once(opts, LogLevel::empty(), &mut []);
        let errno = match first {
            Ok((fd, _)) => return Ok(Prog::from_parts(fd, opts.prog_type)),
            Err(e) => e,
        };
        let (log, truncated) = match collect_log(opts) {
            LogOutcome::Loaded(fd) => return Ok(Prog::from_parts(fd, opts.prog_type)),
            LogOutcome::Log { log, truncated } => (log, truncated),
        };
        let summary = Box::new(summarize(&log));
        let op = Op::ProgLoad {
            prog_type: opts.prog_type,
            log_empty: log.trim().is_empty(),
        };
        Err(LoadError {
            sys: sys_error(Cmd::ProgLoad.name(), errno, op),
            log,
            summary,
            log_truncated: truncated,
        })
    }

    /// BPF_PROG_LOAD with a log at `level` on success too (e.g. `LogLevel::STATS`).
    pub fn load_with_log(
        opts: &ProgLoadOptions<'_>,
        level: LogLevel,
    ) -> Result<(Prog, String), LoadError> {
        let mut buf = vec![0u8; LOG_START];
        loop {
            match load_once(opts, level, &mut buf) {
                Ok((fd, _)) => {
                    return Ok((Prog::from_parts(fd, opts.prog_type), str_until_nul(&buf)))
                }
                Err(Errno::ENOSPC) if buf.len() < LOG_CAP => {
                    let n = (buf.len() * 4).min(LOG_CAP);
                    buf = vec![0u8; n];
                }
                Err(_) => return Prog::load(opts).map(|p| (p, String::new())),
            }
        }
    }

    /// Wraps a program fd obtained elsewhere (e.g. [`crate::sys::info::prog_fd_by_id`]).
    pub fn from_parts(fd: OwnedFd, prog_type: ProgType) -> Prog {
        Prog { fd, prog_type }
    }

    pub fn prog_type(&self) -> ProgType {
        self.prog_type
    }
}

impl AsFd for Prog {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl AsRawFd for Prog {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

impl From<Prog> for OwnedFd {
    fn from(p: Prog) -> OwnedFd {
        p.fd
    }
}

/// One load with a level-1 log of `size` bytes ([`ProgLoadOptions::log_size`]).
fn load_sized_log(opts: &ProgLoadOptions<'_>, size: u32) -> Result<Prog, LoadError> {
    let mut buf = vec![0u8; size.max(1) as usize];
    let errno = match load_once(opts, LogLevel::LEVEL1, &mut buf) {
        Ok((fd, _)) => return Ok(Prog::from_parts(fd, opts.prog_type)),
        Err(e) => e,
    };
    let log = str_until_nul(&buf);
    let op = Op::ProgLoad {
        prog_type: opts.prog_type,
        log_empty: log.trim().is_empty(),
    };
    Err(LoadError {
        sys: sys_error(Cmd::ProgLoad.name(), errno, op),
        summary: Box::new(summarize(&log)),
        log,
        log_truncated: errno == Errno::ENOSPC,
    })
}

enum LogOutcome {
    Loaded(OwnedFd),
    Log { log: String, truncated: bool },
}

/// Retries the load for its log: level 2, then level 1 if level 2 does not fit.
fn collect_log(opts: &ProgLoadOptions<'_>) -> LogOutcome {
    let mut last = String::new();
    for level in [LogLevel::LEVEL2, LogLevel::LEVEL1] {
        let mut size = LOG_START;
        loop {
            let mut buf = vec![0u8; size];
            match load_once(opts, level, &mut buf) {
                Ok((fd, _)) => return LogOutcome::Loaded(fd),
                Err(Errno::ENOSPC) => {
                    last = str_until_nul(&buf);
                    if size >= LOG_CAP {
                        break;
                    }
                    let true_size = LAST_TRUE_SIZE.with(|c| c.get()) as usize;
                    size = true_size.max(size * 4).min(LOG_CAP);
                }
                Err(_) => {
                    return LogOutcome::Log {
                        log: str_until_nul(&buf),
                        truncated: false,
                    }
                }
            }
        }
    }
    LogOutcome::Log {
        log: last,
        truncated: true,
    }
}

thread_local! {
    /// `log_true_size` of the last load on this thread (0 on kernels before 6.4).
    static LAST_TRUE_SIZE: std::cell::Cell<u32> = const { std::cell::Cell::new(0) };
}

/// One BPF_PROG_LOAD. A log buffer is passed only with a non-zero level (a buffer with level
/// 0 is EINVAL). EAGAIN is retried a few times as libbpf does (the verifier may return it
/// when interrupted by a signal).
fn load_once(
    opts: &ProgLoadOptions<'_>,
    level: LogLevel,
    log: &mut [u8],
) -> Result<(OwnedFd, u32), Errno> {
    let license = std::ffi::CString::new(opts.license.replace('\0', "")).unwrap_or_default();
    let with_log = !level.is_empty() && !log.is_empty();
    let mut a = ProgLoadAttr {
        prog_type: opts.prog_type as u32,
        insn_cnt: opts.insns.len() as u32,
        insns: ptr(opts.insns.as_ptr()),
        license: ptr(license.as_ptr()),
        log_level: if with_log { level.bits() } else { 0 },
        log_size: if with_log { log.len() as u32 } else { 0 },
        log_buf: if with_log { ptr(log.as_ptr()) } else { 0 },
        kern_version: opts.kern_version,
        prog_flags: opts.flags.bits(),
        prog_name: obj_name(opts.name),
        expected_attach_type: opts.expected_attach_type.map_or(0, |t| t as u32),
        prog_btf_fd: opts.prog_btf_fd.map_or(0, |f| f.as_raw_fd() as u32),
        attach_btf_id: opts.attach_btf_id,
        attach_btf_obj_fd: opts.attach_btf_obj_fd.map_or(0, |f| f.as_raw_fd() as u32),
        fd_array: if opts.fd_array.is_empty() {
            0
        } else {
            ptr(opts.fd_array.as_ptr())
        },
        func_info_rec_size: if opts.func_info.is_empty() { 0 } else { 8 },
        func_info: if opts.func_info.is_empty() {
            0
        } else {
            ptr(opts.func_info.as_ptr())
        },
        func_info_cnt: opts.func_info.len() as u32,
        ..Default::default()
    };
    let mut tries = 0;
    loop {
        let r = bpf_fd(Cmd::ProgLoad, &mut a);
        LAST_TRUE_SIZE.with(|c| c.set(a.log_true_size));
        match r {
            Err(Errno::EAGAIN) if tries < 5 => tries += 1,
            r => return r.map(|fd| (fd, a.log_true_size)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::sys::call::with_hook;

    #[test]
    fn failed_load_retries_with_level2_then_grows_on_enospc() {
        let levels = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let l2 = levels.clone();
        let insns = [Insn::exit()];
        let err = with_hook(
            move |_, bytes| {
                let level = u32::from_le_bytes(bytes[24..28].try_into().unwrap());
                let size = u32::from_le_bytes(bytes[28..32].try_into().unwrap());
                l2.borrow_mut().push((level, size));
                if level == 0 {
                    // The first, log-less attempt must not pass a buffer.
                    assert_eq!(size, 0);
                    return Err(Errno::EACCES);
                }
                if size < 1 << 20 {
                    return Err(Errno::ENOSPC);
                }
                let buf = u64::from_le_bytes(bytes[32..40].try_into().unwrap()) as *mut u8;
                let msg = b"0: (95) exit\nR0 !read_ok\nprocessed 1 insns\0";
                // SAFETY: the buffer is `size` bytes, far more than `msg`.
                unsafe { std::ptr::copy_nonoverlapping(msg.as_ptr(), buf, msg.len()) };
                Err(Errno::EACCES)
            },
            || Prog::load(&ProgLoadOptions::new(ProgType::RawTracepoint, &insns)),
        )
        .unwrap_err();
        assert_eq!(err.errno(), Errno::EACCES);
        assert_eq!(err.insn(), Some(0));
        assert_eq!(err.reason(), Some("R0 !read_ok"));
        let seen = levels.borrow();
        assert_eq!(seen[0], (0, 0));
        assert!(seen[1..].iter().all(|&(l, _)| l == 2), "{seen:?}");
        assert_eq!(seen.last().unwrap().1, 1 << 20);
    }

    #[test]
    fn level1_is_tried_when_level2_never_fits() {
        let levels = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let l2 = levels.clone();
        let insns = [Insn::exit()];
        let err = with_hook(
            move |_, bytes| {
                let level = u32::from_le_bytes(bytes[24..28].try_into().unwrap());
                l2.borrow_mut().push(level);
                match level {
                    0 => Err(Errno::EINVAL),
                    2 => Err(Errno::ENOSPC),
                    _ => Err(Errno::EINVAL),
                }
            },
            || Prog::load(&ProgLoadOptions::new(ProgType::RawTracepoint, &insns)),
        )
        .unwrap_err();
        assert_eq!(err.errno(), Errno::EINVAL);
        assert!(!err.log_truncated);
        let seen = levels.borrow();
        assert_eq!(seen.last(), Some(&1), "{seen:?}");
        assert!(seen.iter().filter(|&&l| l == 2).count() >= 2);
    }
}
