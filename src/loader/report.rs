//! What a mass attach produced: the attached clones, the refused targets with their reasons,
//! and the one-line summary users see.

use std::os::fd::{AsRawFd, OwnedFd, RawFd};
use std::time::Duration;

use crate::sys::{Errno, Link, PerfEvent, Prog, SysError};
use crate::template::{AttachKind, InstantiateError};

/// The step at which a target was refused.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Stage {
    /// The kernel's verifier or load checks (BPF_PROG_LOAD).
    Load,
    /// BPF_LINK_CREATE / BPF_RAW_TRACEPOINT_OPEN / perf_event_open.
    Attach,
}

/// One target the kernel refused; the run goes on without it unless `--strict`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Refusal {
    /// Index in the target table.
    pub index: usize,
    pub name: String,
    pub stage: Stage,
    pub errno: Errno,
    /// The kernel's reason in words (errno meaning, cause, verifier summary).
    pub reason: String,
}

impl std::fmt::Display for Refusal {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        let stage = match self.stage {
            Stage::Load => "load",
            Stage::Attach => "attach",
        };
        write!(f, "{}: {stage} refused: {}", self.name, self.reason)
    }
}

/// One attached clone: its program and link, owned.
#[derive(Debug)]
pub struct AttachedClone {
    pub index: usize,
    pub name: String,
    pub prog: Prog,
    pub link: Link,
}

/// Everything one attach produced. Dropping it detaches everything (in this thread; see
/// [`super::detach`] for faster ways).
#[derive(Debug, Default)]
pub struct Attached {
    pub kind: Option<AttachKind>,
    /// Number of targets asked for.
    pub total: usize,
    /// Clone-per-target programs (fentry/fexit/raw tracepoints), in target order.
    pub clones: Vec<AttachedClone>,
    /// A shared program (kprobe/uprobe wildcards) with its links and perf events.
    pub shared_prog: Option<Prog>,
    pub links: Vec<Link>,
    pub events: Vec<PerfEvent>,
    /// Number of targets attached through `shared_prog`.
    pub shared_attached: usize,
    /// In target order.
    pub refused: Vec<Refusal>,
    /// Wall time of load + attach.
    pub elapsed: Duration,
    /// Time spent in BPF_PROG_LOAD and in attaching, summed over all loader threads (shows
    /// which kernel step dominates).
    pub load_time: Duration,
    pub attach_time: Duration,
}

impl Attached {
    pub fn attached(&self) -> usize {
        self.clones.len() + self.shared_attached
    }

    /// `Attached 71/75 fentry probes (4 refused; -v lists them)`.
    pub fn summary_line(&self) -> String {
        let kind = self.kind.map_or("", |k| k.name());
        let mut s = format!(
            "Attached {}/{} {kind} probe{}",
            self.attached(),
            self.total,
            if self.total == 1 { "" } else { "s" }
        );
        if !self.refused.is_empty() {
            s += &format!(" ({} refused; -v lists them)", self.refused.len());
        }
        s
    }

    /// Every owned kernel object (links first, so that a sequential close detaches before it
    /// frees programs), consuming the set: for [`super::detach`].
    pub fn into_objects(self) -> Vec<KernelObject> {
        let mut out = Vec::with_capacity(2 * self.clones.len() + self.links.len() + 1);
        let mut progs = Vec::with_capacity(self.clones.len() + 1);
        for c in self.clones {
            out.push(KernelObject::Link(c.link));
            progs.push(KernelObject::Prog(c.prog));
        }
        out.extend(self.links.into_iter().map(KernelObject::Link));
        out.extend(self.events.into_iter().map(KernelObject::Event));
        progs.extend(self.shared_prog.map(KernelObject::Prog));
        out.extend(progs);
        out
    }
}

/// Any owned kernel object the loader holds; closing it is what detaching means.
#[derive(Debug)]
pub enum KernelObject {
    Link(Link),
    Prog(Prog),
    Event(PerfEvent),
    Fd(OwnedFd),
}

impl KernelObject {
    /// A link or perf event: closing it detaches a program, which may wait in the kernel.
    pub fn is_attachment(&self) -> bool {
        matches!(self, KernelObject::Link(_) | KernelObject::Event(_))
    }
}

impl AsRawFd for KernelObject {
    fn as_raw_fd(&self) -> RawFd {
        match self {
            KernelObject::Link(l) => l.as_raw_fd(),
            KernelObject::Prog(p) => p.as_raw_fd(),
            KernelObject::Event(e) => e.as_raw_fd(),
            KernelObject::Fd(f) => f.as_raw_fd(),
        }
    }
}

/// Why a mass attach failed as a whole.
#[derive(Debug, thiserror::Error)]
pub enum LoaderError {
    /// `--strict` and a target was refused.
    #[error("{refusal} (--strict: refusing to go on)")]
    Strict { refusal: Refusal },
    /// A template relocation could not be applied: a code generator bug, not a kernel refusal.
    #[error("internal error: template does not instantiate for {target}: {source}")]
    Instantiate {
        target: String,
        source: InstantiateError,
    },
    #[error("the template refers to map `{0}`, which the loader was not given")]
    UnknownMap(String),
    #[error("no target was attached: {}", .refused.first().map_or_else(|| "no targets".to_string(), |r| r.to_string()))]
    NothingAttached { refused: Vec<Refusal> },
    #[error("{0}")]
    Sys(#[from] SysError),
    #[error("cannot read symbols of {path}: {reason}")]
    Symbols { path: String, reason: String },
}
