//! perf_event_open(2) and the perf event ioctls strobe needs (enable, disable, set_bpf).
//! Constructors cover the event kinds strobe attaches to: tracepoints (by tracefs id),
//! software events (cpu-clock for `profile`/`interval`), uprobes and kprobes through their
//! dynamic PMUs, and the BPF output event that backs a perf event array.

use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::attr::PerfEventAttr;
use super::call::ptr;
use super::diagnose::{sys_error, Op};
use super::error::{Cause, Errno, SysError};
use super::prog::Prog;

/// `enum perf_type_id` (fixed PMUs; kprobe/uprobe types are dynamic, see [`pmu_type`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum PerfType {
    #[doc(alias = "PERF_TYPE_HARDWARE")]
    Hardware = 0,
    #[doc(alias = "PERF_TYPE_SOFTWARE")]
    Software = 1,
    #[doc(alias = "PERF_TYPE_TRACEPOINT")]
    Tracepoint = 2,
}

/// `enum perf_sw_ids`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u64)]
pub enum SoftwareEvent {
    #[doc(alias = "PERF_COUNT_SW_CPU_CLOCK")]
    CpuClock = 0,
    #[doc(alias = "PERF_COUNT_SW_TASK_CLOCK")]
    TaskClock = 1,
    #[doc(alias = "PERF_COUNT_SW_PAGE_FAULTS")]
    PageFaults = 2,
    #[doc(alias = "PERF_COUNT_SW_CONTEXT_SWITCHES")]
    ContextSwitches = 3,
    #[doc(alias = "PERF_COUNT_SW_DUMMY")]
    Dummy = 9,
    #[doc(alias = "PERF_COUNT_SW_BPF_OUTPUT")]
    BpfOutput = 10,
}

bitflags::bitflags! {
    /// The bitfield word of `perf_event_attr` (bit positions from `perf_event.h`).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct PerfFlags: u64 {
        const DISABLED = 1 << 0;
        const INHERIT = 1 << 1;
        const PINNED = 1 << 2;
        const EXCLUSIVE = 1 << 3;
        const EXCLUDE_USER = 1 << 4;
        const EXCLUDE_KERNEL = 1 << 5;
        const EXCLUDE_HV = 1 << 6;
        const EXCLUDE_IDLE = 1 << 7;
        /// `sample_period` holds a frequency.
        const FREQ = 1 << 10;
        /// `wakeup_events` holds a byte watermark.
        const WATERMARK = 1 << 14;
    }
}

/// `PERF_SAMPLE_RAW`: samples carry the raw record (what bpf_perf_event_output writes).
pub const SAMPLE_RAW: u64 = 1 << 10;
/// `PERF_FLAG_FD_CLOEXEC`.
const FLAG_FD_CLOEXEC: libc::c_ulong = 1 << 3;

// include/uapi/linux/perf_event.h: _IO('$', 0), _IO('$', 1), _IOW('$', 8, __u32).
const IOC_ENABLE: libc::c_ulong = 0x2400;
const IOC_DISABLE: libc::c_ulong = 0x2401;
const IOC_SET_BPF: libc::c_ulong = 0x4004_2408;
/// `_IOW('$', 4, __u64)`.
const IOC_PERIOD: libc::c_ulong = 0x4008_2404;

/// How often a sampling event fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sampling {
    /// Every N events (for cpu-clock: every N ns).
    Period(u64),
    /// N times per second.
    Frequency(u64),
}

/// An open perf event, owned; closed on drop (which also detaches a program set on it).
#[derive(Debug)]
pub struct PerfEvent {
    fd: OwnedFd,
}

impl PerfEvent {
    /// perf_event_open(`attr`, `pid`, `cpu`, `group`, FD_CLOEXEC). `pmu` names the PMU for
    /// error diagnosis (`"kprobe"`, `"uprobe"`, `"tracepoint"`, `"software"`).
    pub fn open(
        attr: &PerfEventAttr,
        pid: i32,
        cpu: i32,
        group: Option<BorrowedFd<'_>>,
        pmu: &'static str,
    ) -> Result<PerfEvent, SysError> {
        let mut a = *attr;
        a.size = std::mem::size_of::<PerfEventAttr>() as u32;
        let group_fd = group.map_or(-1, |g| g.as_raw_fd());
        // SAFETY: `a` is a complete perf_event_attr; pointers in it (config1) are owned by
        // the caller for the duration of the call.
        let r = unsafe {
            libc::syscall(
                libc::SYS_perf_event_open,
                &a as *const PerfEventAttr,
                pid as libc::pid_t,
                cpu as libc::c_int,
                group_fd as libc::c_int,
                FLAG_FD_CLOEXEC,
            )
        };
        if r < 0 {
            return Err(sys_error(
                "perf_event_open",
                Errno::last(),
                Op::PerfEventOpen { pmu },
            ));
        }
        // SAFETY: a fresh fd from the kernel.
        Ok(PerfEvent {
            fd: unsafe { OwnedFd::from_raw_fd(r as RawFd) },
        })
    }

    /// A tracepoint event by its tracefs id (`events/<cat>/<name>/id`), for all processes
    /// on `cpu` (or for `pid` on any CPU with `cpu = -1`).
    pub fn tracepoint(id: u64, pid: i32, cpu: i32) -> Result<PerfEvent, SysError> {
        let attr = PerfEventAttr {
            type_: PerfType::Tracepoint as u32,
            config: id,
            sample_period: 1,
            wakeup_events: 1,
            ..Default::default()
        };
        PerfEvent::open(&attr, pid, cpu, None, "tracepoint")
    }

    /// A software event sampling at `sampling`.
    pub fn software(
        event: SoftwareEvent,
        sampling: Sampling,
        pid: i32,
        cpu: i32,
    ) -> Result<PerfEvent, SysError> {
        let (period, flags) = match sampling {
            Sampling::Period(p) => (p, PerfFlags::empty()),
            Sampling::Frequency(f) => (f, PerfFlags::FREQ),
        };
        let attr = PerfEventAttr {
            type_: PerfType::Software as u32,
            config: event as u64,
            sample_period: period,
            flags: flags.bits(),
            ..Default::default()
        };
        PerfEvent::open(&attr, pid, cpu, None, "software")
    }

    /// The `PERF_COUNT_SW_BPF_OUTPUT` event on `cpu` that a perf event array slot holds.
    pub fn bpf_output(cpu: i32, wakeup_events: u32) -> Result<PerfEvent, SysError> {
        let attr = PerfEventAttr {
            type_: PerfType::Software as u32,
            config: SoftwareEvent::BpfOutput as u64,
            sample_period: 1,
            sample_type: SAMPLE_RAW,
            wakeup_events: wakeup_events.max(1),
            ..Default::default()
        };
        PerfEvent::open(&attr, -1, cpu, None, "software")
    }

    /// A uprobe (or uretprobe) at file offset `offset` of `path` through the uprobe PMU.
    pub fn uprobe(
        path: &Path,
        offset: u64,
        retprobe: bool,
        pid: i32,
        cpu: i32,
    ) -> Result<PerfEvent, SysError> {
        let c_path = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| invalid("perf_event_open", "path contains NUL"))?;
        let attr = dynamic_probe_attr("uprobe", retprobe, ptr(c_path.as_ptr()), offset)?;
        PerfEvent::open(&attr, pid, cpu, None, "uprobe")
    }

    /// A uprobe at file offset `offset` of `path` whose USDT semaphore (a `u16` at file offset
    /// `ref_ctr_offset`) the kernel increments in every process that maps the file while the
    /// probe exists (Linux 4.20+, the uprobe PMU's `format/ref_ctr_offset`, `config:32-63`).
    pub fn uprobe_with_ref_ctr(
        path: &Path,
        offset: u64,
        ref_ctr_offset: u64,
        pid: i32,
        cpu: i32,
    ) -> Result<PerfEvent, SysError> {
        let c_path = CString::new(path.as_os_str().as_bytes())
            .map_err(|_| invalid("perf_event_open", "path contains NUL"))?;
        let mut attr = dynamic_probe_attr("uprobe", false, ptr(c_path.as_ptr()), offset)?;
        let shift = pmu_format_start("uprobe", "ref_ctr_offset").unwrap_or(32);
        attr.config |= ref_ctr_offset << shift;
        PerfEvent::open(&attr, pid, cpu, None, "uprobe")
    }

    /// A kprobe (or kretprobe) on `func` + `offset` through the kprobe PMU.
    pub fn kprobe(
        func: &str,
        offset: u64,
        retprobe: bool,
        pid: i32,
        cpu: i32,
    ) -> Result<PerfEvent, SysError> {
        let c_func =
            CString::new(func).map_err(|_| invalid("perf_event_open", "name contains NUL"))?;
        let attr = dynamic_probe_attr("kprobe", retprobe, ptr(c_func.as_ptr()), offset)?;
        PerfEvent::open(&attr, pid, cpu, None, "kprobe")
    }

    /// PERF_EVENT_IOC_ENABLE.
    pub fn enable(&self) -> Result<(), SysError> {
        self.ioctl("ioctl(PERF_EVENT_IOC_ENABLE)", IOC_ENABLE, 0)
    }

    /// PERF_EVENT_IOC_PERIOD: sets the sample period and restarts the count, so the next
    /// sample of a cpu-clock event comes one whole period from now (kernel/events/core.c
    /// `__perf_event_period` clears `period_left`).
    #[doc(alias = "PERF_EVENT_IOC_PERIOD")]
    pub fn set_period(&self, period: u64) -> Result<(), SysError> {
        let p: u64 = period;
        self.ioctl(
            "ioctl(PERF_EVENT_IOC_PERIOD)",
            IOC_PERIOD,
            &p as *const u64 as libc::c_ulong,
        )
    }

    /// PERF_EVENT_IOC_DISABLE.
    pub fn disable(&self) -> Result<(), SysError> {
        self.ioctl("ioctl(PERF_EVENT_IOC_DISABLE)", IOC_DISABLE, 0)
    }

    /// PERF_EVENT_IOC_DISABLE on a perf event open elsewhere (`unwatch()` turns off the
    /// watchpoint events the driver holds).
    pub fn disable_fd(fd: std::os::fd::BorrowedFd<'_>) -> Result<(), SysError> {
        // SAFETY: a perf ioctl without an argument on a descriptor the caller keeps open.
        let r = unsafe { libc::ioctl(fd.as_raw_fd(), IOC_DISABLE as _, 0) };
        if r < 0 {
            return Err(SysError::bare(
                "ioctl(PERF_EVENT_IOC_DISABLE)",
                Errno::last(),
            ));
        }
        Ok(())
    }

    /// PERF_EVENT_IOC_SET_BPF: runs `prog` on each event (kprobe, uprobe, tracepoint or
    /// perf_event program types). Kernels with perf_event links may use
    /// [`crate::sys::link::LinkTarget::PerfEvent`] instead.
    pub fn set_bpf(&self, prog: &Prog) -> Result<(), SysError> {
        self.ioctl(
            "ioctl(PERF_EVENT_IOC_SET_BPF)",
            IOC_SET_BPF,
            prog.as_raw_fd() as libc::c_ulong,
        )
    }

    fn ioctl(
        &self,
        call: &'static str,
        req: libc::c_ulong,
        arg: libc::c_ulong,
    ) -> Result<(), SysError> {
        // SAFETY: perf ioctls with integer arguments.
        let r = unsafe { libc::ioctl(self.fd.as_raw_fd(), req as _, arg) };
        if r < 0 {
            return Err(SysError::bare(call, Errno::last()));
        }
        Ok(())
    }
}

impl AsFd for PerfEvent {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl AsRawFd for PerfEvent {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

fn dynamic_probe_attr(
    pmu: &'static str,
    retprobe: bool,
    name_ptr: u64,
    offset: u64,
) -> Result<PerfEventAttr, SysError> {
    let Some(type_) = pmu_type(pmu) else {
        return Err(sys_error(
            "perf_event_open",
            Errno::ENOENT,
            Op::PerfEventOpen { pmu },
        ));
    };
    let config = if retprobe {
        // The retprobe bit is advertised in format/retprobe (`config:0` on all kernels so far).
        1u64 << pmu_retprobe_bit(pmu).unwrap_or(0)
    } else {
        0
    };
    Ok(PerfEventAttr {
        type_,
        config,
        config1: name_ptr,
        config2: offset,
        sample_period: 1,
        wakeup_events: 1,
        ..Default::default()
    })
}

/// A dynamic PMU's type (`/sys/bus/event_source/devices/<name>/type`).
pub fn pmu_type(name: &str) -> Option<u32> {
    std::fs::read_to_string(format!("/sys/bus/event_source/devices/{name}/type"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

/// The first config bit of a probe PMU's format field `field` (`config:32-63` → 32).
pub fn pmu_format_start(pmu: &str, field: &str) -> Option<u32> {
    let s = std::fs::read_to_string(format!(
        "/sys/bus/event_source/devices/{pmu}/format/{field}"
    ))
    .ok()?;
    let bits = s.trim().strip_prefix("config:")?;
    bits.split('-').next()?.parse().ok()
}

/// The config bit of a probe PMU's `retprobe` format (`config:N`).
pub fn pmu_retprobe_bit(name: &str) -> Option<u32> {
    let s = std::fs::read_to_string(format!(
        "/sys/bus/event_source/devices/{name}/format/retprobe"
    ))
    .ok()?;
    s.trim().strip_prefix("config:")?.parse().ok()
}

fn invalid(call: &'static str, why: &str) -> SysError {
    SysError {
        call,
        errno: Errno::EINVAL,
        cause: Some(Cause::Other(why.to_string())),
    }
}
