//! BPF links: BPF_LINK_CREATE for tracing (fentry/fexit), perf_event, kprobe_multi and
//! uprobe_multi and BPF iterators, BPF_RAW_TRACEPOINT_OPEN, and BPF_ITER_CREATE. A [`Link`]
//! detaches when dropped.
//!
//! Kernel requirements: tracing links 5.8 (raw_tracepoint_open works from 5.5), perf_event
//! links 5.15, kprobe_multi 5.18 with CONFIG_FPROBE, uprobe_multi 6.6.

use std::ffi::CString;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};
use std::os::unix::ffi::OsStrExt;
use std::path::Path;

use super::attr::{IterCreateAttr, LinkCreateAttr, RawTracepointAttr};
use super::call::{bpf_fd, ptr, Cmd};
use super::diagnose::{sys_error, Op};
use super::error::{Cause, Errno, SysError};
use super::prog::{AttachType, Prog};

/// The attach kinds of BPF_LINK_CREATE strobe uses (for diagnosis and dispatch).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttachKind {
    Tracing,
    PerfEvent,
    KprobeMulti,
    UprobeMulti,
}

/// Where to attach a program with BPF_LINK_CREATE.
#[derive(Clone, Debug)]
pub enum LinkTarget<'a> {
    /// fentry/fexit/fmod_ret: the target was given at load (`attach_btf_id`); `target_btf_id`
    /// may re-target (0 = as loaded). `cookie` is 6.5+.
    Tracing {
        attach_type: AttachType,
        target_btf_id: u32,
        cookie: u64,
    },
    /// A BPF iterator (BPF_TRACE_ITER, 5.8+): the iterator was named at load
    /// (`attach_btf_id` of `bpf_iter_NAME`); `pid` limits task iterators to one process (6.1+).
    Iter { pid: Option<u32> },
    /// A perf event (tracepoint, kprobe, uprobe, software event) opened with perf_event_open.
    PerfEvent { event: BorrowedFd<'a>, cookie: u64 },
    /// kprobe_multi: by symbol names or by addresses (exactly one non-empty), with optional
    /// per-target cookies (same length). `session`: the program was loaded as a
    /// kprobe.session program (BPF_TRACE_KPROBE_SESSION, 6.10+), run at entry and return;
    /// `retprobe` must then be false.
    KprobeMulti {
        retprobe: bool,
        session: bool,
        syms: &'a [&'a str],
        addrs: &'a [u64],
        cookies: &'a [u64],
    },
    /// uprobe_multi: file offsets in `path`, optional ref-counter offsets and cookies (same
    /// length as `offsets` when given), optionally limited to one pid.
    UprobeMulti {
        retprobe: bool,
        path: &'a Path,
        offsets: &'a [u64],
        ref_ctr_offsets: &'a [u64],
        cookies: &'a [u64],
        pid: Option<u32>,
    },
}

/// `BPF_F_KPROBE_MULTI_RETURN` / `BPF_F_UPROBE_MULTI_RETURN`.
const MULTI_RETURN: u32 = 1;

/// An attached program, owned; detached and closed on drop.
#[derive(Debug)]
pub struct Link {
    fd: OwnedFd,
    /// Whether its kind has a miss count in its info (see [`Link::may_count_misses`]).
    counts_misses: bool,
}

impl Link {
    /// BPF_LINK_CREATE.
    pub fn create(prog: &Prog, target: &LinkTarget<'_>) -> Result<Link, SysError> {
        let mut a = LinkCreateAttr {
            prog_fd: prog.as_raw_fd() as u32,
            ..Default::default()
        };
        // Buffers the attr points into; they live until the call returns.
        let c_syms: Vec<CString>;
        let sym_ptrs: Vec<u64>;
        let c_path: CString;
        // `union bpf_iter_link_info`, 16 bytes; `task { u32 tid; u32 pid; u32 pid_fd; }`.
        let mut iter_info = [0u32; 4];
        let kind = match target {
            LinkTarget::Iter { pid } => {
                a.attach_type = AttachType::TraceIter as u32;
                if let Some(pid) = pid {
                    iter_info[1] = *pid;
                    a.set_iter(ptr(iter_info.as_ptr()), 16);
                }
                AttachKind::Tracing
            }
            LinkTarget::Tracing {
                attach_type,
                target_btf_id,
                cookie,
            } => {
                a.attach_type = *attach_type as u32;
                a.set_tracing(*target_btf_id, *cookie);
                AttachKind::Tracing
            }
            LinkTarget::PerfEvent { event, cookie } => {
                a.target_fd = event.as_raw_fd() as u32;
                a.attach_type = AttachType::PerfEvent as u32;
                a.set_perf_event(*cookie);
                AttachKind::PerfEvent
            }
            LinkTarget::KprobeMulti {
                retprobe,
                session,
                syms,
                addrs,
                cookies,
            } => {
                let cnt = syms.len().max(addrs.len());
                let bad = (syms.is_empty() == addrs.is_empty())
                    || (!cookies.is_empty() && cookies.len() != cnt);
                if bad {
                    return Err(invalid(
                        "kprobe_multi needs either symbols or addresses, and one cookie per target",
                    ));
                }
                c_syms = syms
                    .iter()
                    .map(|s| CString::new(*s).map_err(|_| invalid("symbol contains NUL")))
                    .collect::<Result<_, _>>()?;
                sym_ptrs = c_syms.iter().map(|s| ptr(s.as_ptr())).collect();
                a.attach_type = if *session {
                    AttachType::TraceKprobeSession
                } else {
                    AttachType::TraceKprobeMulti
                } as u32;
                a.set_kprobe_multi(
                    if *retprobe { MULTI_RETURN } else { 0 },
                    cnt as u32,
                    slice_ptr(&sym_ptrs),
                    slice_ptr(addrs),
                    slice_ptr(cookies),
                );
                AttachKind::KprobeMulti
            }
            LinkTarget::UprobeMulti {
                retprobe,
                path,
                offsets,
                ref_ctr_offsets,
                cookies,
                pid,
            } => {
                let cnt = offsets.len();
                if cnt == 0
                    || (!ref_ctr_offsets.is_empty() && ref_ctr_offsets.len() != cnt)
                    || (!cookies.is_empty() && cookies.len() != cnt)
                {
                    return Err(invalid(
                        "uprobe_multi needs offsets, and ref counters/cookies one per offset",
                    ));
                }
                c_path = CString::new(path.as_os_str().as_bytes())
                    .map_err(|_| invalid("path contains NUL"))?;
                a.attach_type = AttachType::TraceUprobeMulti as u32;
                a.set_uprobe_multi(
                    ptr(c_path.as_ptr()),
                    slice_ptr(offsets),
                    slice_ptr(ref_ctr_offsets),
                    slice_ptr(cookies),
                    cnt as u32,
                    if *retprobe { MULTI_RETURN } else { 0 },
                    pid.unwrap_or(0),
                );
                AttachKind::UprobeMulti
            }
        };
        bpf_fd(Cmd::LinkCreate, &mut a)
            .map(|fd| Link {
                fd,
                counts_misses: matches!(kind, AttachKind::KprobeMulti | AttachKind::PerfEvent),
            })
            .map_err(|e| sys_error(Cmd::LinkCreate.name(), e, Op::LinkCreate { kind }))
    }

    /// BPF_RAW_TRACEPOINT_OPEN: attaches a raw_tp program to tracepoint `name`, or (with
    /// `None`) a tracing program to the target it was loaded for.
    pub fn raw_tracepoint_open(prog: &Prog, name: Option<&str>) -> Result<Link, SysError> {
        let c_name = match name {
            Some(n) => Some(CString::new(n).map_err(|_| invalid("name contains NUL"))?),
            None => None,
        };
        let mut a = RawTracepointAttr {
            name: c_name.as_ref().map_or(0, |n| ptr(n.as_ptr())),
            prog_fd: prog.as_raw_fd() as u32,
            ..Default::default()
        };
        bpf_fd(Cmd::RawTracepointOpen, &mut a)
            .map(|fd| Link {
                fd,
                counts_misses: false,
            })
            .map_err(|e| {
                let op = if name.is_none() {
                    Op::LinkCreate {
                        kind: AttachKind::Tracing,
                    }
                } else {
                    Op::Other
                };
                sys_error(Cmd::RawTracepointOpen.name(), e, op)
            })
    }

    /// BPF_ITER_CREATE: a new run of an iterator link, read like a file (each read runs the
    /// program over the next objects; end of file when all were seen).
    pub fn iter_create(&self) -> Result<std::fs::File, SysError> {
        let mut a = IterCreateAttr {
            link_fd: self.fd.as_raw_fd() as u32,
            flags: 0,
        };
        bpf_fd(Cmd::IterCreate, &mut a)
            .map(std::fs::File::from)
            .map_err(|e| SysError::bare(Cmd::IterCreate.name(), e))
    }

    /// Wraps a link fd obtained elsewhere (e.g. [`crate::sys::info::link_fd_by_id`]).
    pub fn from_fd(fd: OwnedFd) -> Link {
        Link {
            fd,
            counts_misses: true,
        }
    }

    /// Whether the kernel may count missed runs for this link in its info (`missed` of
    /// kprobe_multi and kprobe perf event links, see [`super::info::LinkInfo::missed`]): false
    /// for tracing (fentry/fexit, iterator), raw tracepoint and uprobe_multi links, which count
    /// none, so a walk over thousands of trampoline links need not ask; true when unknown (a
    /// link from [`Link::from_fd`]).
    pub fn may_count_misses(&self) -> bool {
        self.counts_misses
    }
}

impl AsFd for Link {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl AsRawFd for Link {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

fn slice_ptr<T>(s: &[T]) -> u64 {
    if s.is_empty() {
        0
    } else {
        ptr(s.as_ptr())
    }
}

fn invalid(why: &str) -> SysError {
    SysError {
        call: Cmd::LinkCreate.name(),
        errno: Errno::EINVAL,
        cause: Some(Cause::Other(why.to_string())),
    }
}
