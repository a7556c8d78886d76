//! Target expansion: an attach point (possibly a wildcard) → the concrete targets it names, each
//! with the full probe name bpftrace prints (`fentry:vmlinux:vfs_read`,
//! `tracepoint:syscalls:sys_enter_read`, `uprobe:/bin/bash:readline`).
//!
//! Sources, through [`KernelInfo`]: fentry/fexit from BTF functions (vmlinux, then modules,
//! qualified by module); kprobe/kretprobe from `available_filter_functions` when readable, else
//! from BTF functions; tracepoints from tracefs; rawtracepoints from BTF `btf_trace_*` typedefs;
//! uprobes from the binary's ELF symbols (a source line through its DWARF line table); usdt from its `.note.stapsdt` notes.
//! Input: an [`AttachPoint`]. Output: [`Target`]s, or an [`ExpandError`] saying what matched
//! nothing or what could not be read. Kinds without targets to look up (begin, interval, …)
//! give one target named by the attach point's text. Each kind's lookup is in its own file
//! here, named as in [`crate::kinds`].

use std::path::PathBuf;

use super::super::kernel::info::{KernelInfo, KernelInfoError, UsdtNote};
use crate::btf::{Glob, Kind, TypeKind};
use crate::syntax::ast::{AttachPoint, AttachSpec};
use crate::syntax::attach::{glob_match, has_wildcard};

mod fentry;
mod iter;
mod kprobe;
mod rawtracepoint;
mod tracepoint;
mod uprobe;
mod usdt;

/// One concrete target of an attach point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Target {
    /// The probe's full name as bpftrace lists and prints it (`probe` builtin).
    pub name: String,
    pub kind: TargetKind,
}

/// Where a target attaches.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum TargetKind {
    /// begin/end, interval, profile, software, hardware, watchpoints, self, test, bench, iter.
    Other,
    /// fentry/fexit/kprobe/kretprobe: a kernel function (`module` `None` = vmlinux).
    KernelFunc {
        module: Option<String>,
        func: String,
        /// The function's BTF id (in its module's BTF), when known.
        btf_id: Option<u32>,
        offset: Option<u64>,
    },
    Tracepoint {
        category: String,
        name: String,
    },
    RawTracepoint {
        module: Option<String>,
        name: String,
    },
    /// uprobe/uretprobe: a function of a binary, or an address in it.
    User {
        path: PathBuf,
        func: String,
        offset: Option<u64>,
        address: Option<u64>,
    },
    Usdt {
        path: PathBuf,
        note: UsdtNote,
    },
    /// `fentry:bpf:`/`fexit:bpf:`: a function of a loaded BPF program (`btf_id` is its
    /// `FUNC` in that program's BTF; `params` its parameter count).
    BpfFunc {
        prog_id: u32,
        func: String,
        btf_id: u32,
        params: u32,
    },
}

/// Why an attach point expanded to nothing.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ExpandError {
    /// bpftrace's words: `No matches for uprobe ./bin:func3.` (`what` is the probe kind,
    /// `pattern` the attach point after it).
    #[error("No matches for {what} {pattern}.")]
    NoMatch {
        probe: String,
        what: &'static str,
        pattern: String,
    },
    #[error("{probe}: {source}")]
    Kernel {
        probe: String,
        #[source]
        source: KernelInfoError,
    },
    #[error("{probe}: cannot find binary '{target}'")]
    NoBinary { probe: String, target: String },
    /// `usdt::NAME` names the traced process's objects, so it needs `-p PID`.
    #[error("{probe}: no binary path given (an empty one means the objects of the -p process)")]
    NoTarget { probe: String },
    #[error("{probe}: invalid pattern: {reason}")]
    Pattern { probe: String, reason: String },
    #[error("{probe} can't be used as it might lock up your system.")]
    Banned { probe: String },
    /// `uprobe:BIN@FILE:LINE` that the binary's DWARF cannot place (bpftrace's words).
    #[error("{reason}")]
    SourceLine { probe: String, reason: String },
    /// `iter:NAME` without a `struct bpf_iter__NAME` in the kernel's BTF (bpftrace's words).
    #[error("iter {name} not available for your kernel version.")]
    NoIterator { probe: String, name: String },
    /// bpftrace's rule: without a provider, a probe name must be unique in the binary.
    #[error(
        "namespace for {probe} not specified, matched {count} probes ({providers}); name one \
         (usdt:PATH:PROVIDER:NAME) or use '*' to attach to all of them"
    )]
    AmbiguousUsdt {
        probe: String,
        count: usize,
        providers: String,
    },
}

impl ExpandError {
    /// Whether the kernel's list of targets could not be read at all (as opposed to a pattern
    /// that matched nothing).
    pub fn is_unavailable(&self) -> bool {
        matches!(
            self,
            ExpandError::Kernel {
                source: KernelInfoError::Unavailable { .. },
                ..
            }
        )
    }
}

fn glob(probe: &str, p: &str) -> Result<Glob, ExpandError> {
    Glob::new(p).map_err(|e| ExpandError::Pattern {
        probe: probe.to_string(),
        reason: e.to_string(),
    })
}

/// Expands one attach point.
pub fn expand(ap: &AttachPoint, k: &dyn KernelInfo) -> Result<Vec<Target>, ExpandError> {
    let cx = Cx {
        ap,
        k,
        probe: ap.raw.clone(),
        kind_name: ap.kind.name(),
    };
    let out: Vec<Target> = match &ap.spec {
        AttachSpec::Fentry {
            module,
            func,
            prog_id,
        } => fentry::expand(&cx, module.as_deref(), func, *prog_id)?,
        AttachSpec::Kprobe {
            module,
            func,
            offset,
            address,
        } => kprobe::expand(&cx, module.as_deref(), func, *offset, *address)?,
        AttachSpec::Tracepoint { category, name } => tracepoint::expand(&cx, category, name)?,
        AttachSpec::RawTracepoint { module, name } => {
            rawtracepoint::expand(&cx, module.as_deref(), name)?
        }
        AttachSpec::Uprobe {
            target,
            lang,
            func,
            offset,
            address,
        } => uprobe::expand(&cx, target, lang.as_deref(), func, *offset, *address)?,
        AttachSpec::UprobeSourceLine {
            target,
            file,
            line,
            column,
        } => uprobe::expand_source_line(&cx, target, file, *line, *column)?,
        AttachSpec::Usdt {
            target,
            provider,
            name,
        } => usdt::expand(&cx, target, provider.as_deref(), name)?,
        AttachSpec::Iter { name, .. } => iter::expand(&cx, name)?,
        // Kinds without targets to look up: one target named by the attach point.
        AttachSpec::None
        | AttachSpec::Named { .. }
        | AttachSpec::Timer { .. }
        | AttachSpec::PerfEvent { .. }
        | AttachSpec::Watchpoint { .. } => vec![Target {
            name: canonical_other(ap),
            kind: TargetKind::Other,
        }],
    };
    if out.is_empty() {
        let pattern = ap.raw.split_once(':').map_or(ap.raw.as_str(), |(_, r)| r);
        return Err(ExpandError::NoMatch {
            probe: cx.probe,
            what: cx.kind_name,
            pattern: pattern.to_string(),
        });
    }
    Ok(out)
}

/// What every kind's expansion reads: the attach point, the kernel, and the names messages
/// use.
struct Cx<'a> {
    ap: &'a AttachPoint,
    k: &'a dyn KernelInfo,
    /// The attach point as written.
    probe: String,
    /// The kind's canonical name (`kprobe`), which target names start with.
    kind_name: &'static str,
}

impl Cx<'_> {
    fn kerr(&self, source: KernelInfoError) -> ExpandError {
        ExpandError::Kernel {
            probe: self.probe.clone(),
            source,
        }
    }
}

/// The files a uprobe/usdt target names ([`KernelInfo::find_binaries`]), at least one.
fn binaries(k: &dyn KernelInfo, probe: &str, target: &str) -> Result<Vec<PathBuf>, ExpandError> {
    if target.is_empty() && k.target_pid().is_none() {
        return Err(ExpandError::NoTarget {
            probe: probe.to_string(),
        });
    }
    let paths = k.find_binaries(target);
    if paths.is_empty() {
        return Err(ExpandError::NoBinary {
            probe: probe.to_string(),
            target: target.to_string(),
        });
    }
    Ok(paths)
}

fn canonical_other(ap: &AttachPoint) -> String {
    if ap.kind.info().facts.whole_run {
        ap.kind.name().to_ascii_uppercase()
    } else {
        ap.raw.clone()
    }
}
