//! Attaching one probe of a [`CompiledScript`](crate::plan::CompiledScript): one small file per
//! attach kind the runtime attaches itself (interval, profile, tracepoint, rawtracepoint,
//! uprobe, software/hardware perf events); fentry/fexit/kprobe go through the clone loader
//! (`kernel.rs`). BEGIN/END are loaded here but run by the driver (`special.rs`).
//!
//! Input: a [`ProbeSpec`], the fds of the script's maps by name, and the `-p` pid.
//! Output: an [`Attachment`] owning every kernel object (programs, links, perf events); dropping
//! it detaches. Invariant: nothing is left attached when a function here returns an error
//! (everything opened so far is owned by locals and dropped).

pub mod iter;
mod kernel;
mod perf;
mod rawtracepoint;
mod special;
mod tracepoint;
mod uprobe;
mod usdt;
mod watchpoint;

use std::os::fd::{AsFd, RawFd};

pub use special::SpecialProg;

use crate::loader::{KernelObject, LoaderError};
use crate::plan::{ProbeKind, ProbeSpec};
use crate::sys::{Link, LinkTarget, LoadError, PerfEvent, Prog, ProgLoadOptions, SysError};
use crate::template::{instantiate, InstantiateError, TargetValues, Template};

/// Where the probe runs and what it sees.
#[derive(Clone, Copy, Debug)]
pub struct AttachContext<'a> {
    /// Every map's fd by its template name (the arming map included).
    pub maps: &'a [(&'a str, RawFd)],
    /// `-p PID`: uprobe paths resolve through `/proc/PID/root`.
    pub pid: Option<i32>,
    /// `--unsafe`: uprobes inside a function attach where strobe cannot check that the
    /// offset starts an instruction.
    pub unsafe_mode: bool,
    /// `--no-feature`: attach mechanisms not to use even where the kernel has them.
    pub disabled: DisabledFeatures,
    /// `log_size`: programs load with a verifier log of this many bytes.
    pub log_size: Option<u32>,
    /// `--fentry-via`: kprobe_multi groups or trampolines for fentry/fexit.
    pub fentry_via: crate::loader::FentryVia,
    /// Calls in flight at once for kprobe.session fexit programs (0: the default).
    pub session_entries: u32,
}

/// Kernel features `--no-feature` turns off (bpftrace's names): a probe that would use one
/// takes its fallback, as on a kernel without it.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct DisabledFeatures {
    /// `kprobe_multi`: kprobes attach with one perf event per function.
    pub kprobe_multi: bool,
    /// `uprobe_multi`: uprobes attach with one perf event per function.
    pub uprobe_multi: bool,
    /// `kprobe_session`: fexit wildcards that read arguments go through trampolines instead
    /// of kprobe.session programs (`loader::attach_fentry`). strobe never merges a kprobe and
    /// a kretprobe into a session.
    pub kprobe_session: bool,
}

impl DisabledFeatures {
    /// The names `--no-feature` takes, comma-separated.
    pub const NAMES: &'static str = "kprobe_multi,kprobe_session,uprobe_multi";

    /// Adds the features of a `--no-feature` value (`kprobe_multi,uprobe_multi`); an unknown
    /// name is an error naming it.
    pub fn parse(&mut self, list: &str) -> Result<(), String> {
        for name in list.split(',').map(str::trim).filter(|n| !n.is_empty()) {
            match name {
                "kprobe_multi" => self.kprobe_multi = true,
                "uprobe_multi" => self.uprobe_multi = true,
                "kprobe_session" => self.kprobe_session = true,
                other => return Err(other.to_string()),
            }
        }
        Ok(())
    }

    /// The loader's choice for a probe of this kind: `Some(false)` forces the per-event
    /// fallback, `None` tries the multi link first.
    pub fn use_multi(&self, user: bool) -> Option<bool> {
        let off = if user {
            self.uprobe_multi
        } else {
            self.kprobe_multi
        };
        if off {
            Some(false)
        } else {
            None
        }
    }
}

/// The kernel objects of one attached probe.
#[derive(Debug, Default)]
pub struct Attachment {
    pub objects: Vec<KernelObject>,
    /// Attach points that took the program.
    pub attached: usize,
    /// Attach points the kernel refused, with the reason (the probe still runs elsewhere).
    pub refused: Vec<String>,
    /// How a shared program reached its targets (`KprobeMulti`, `PerfEvents`, …) when the
    /// loader chose among mechanisms; `-v` prints it so tests can check the fallback taken.
    pub via: Option<String>,
    /// What `probe` prints for each target index, when only attaching found the targets
    /// (a uprobe's function glob is matched against the binary then).
    pub target_names: Option<Vec<String>>,
    /// How each group of targets was attached (fentry/fexit: kprobe_multi or trampolines,
    /// with the reason), for `-v`.
    pub notes: Vec<String>,
}

/// Why a probe could not be attached.
#[derive(Debug, thiserror::Error)]
pub enum ProbeError {
    #[error("{probe}: the kernel refused the program: {source}")]
    Load {
        probe: String,
        #[source]
        source: Box<LoadError>,
    },
    #[error("{probe}: {what}: {source}")]
    Sys {
        probe: String,
        what: String,
        #[source]
        source: SysError,
    },
    #[error("{probe}: internal error: template does not instantiate: {source}")]
    Instantiate {
        probe: String,
        #[source]
        source: InstantiateError,
    },
    #[error("{probe}: {source}")]
    Loader {
        probe: String,
        #[source]
        source: Box<LoaderError>,
    },
    #[error("{probe}: {reason}")]
    NoTarget { probe: String, reason: String },
    #[error("{probe}: {what} probes are not supported yet")]
    Unsupported { probe: String, what: String },
}

impl ProbeError {
    /// The message bpftrace prints for this refusal as `ERROR: …` (a target that cannot be
    /// resolved or attached where asked: its reason names the target), if it is one.
    pub fn bpftrace_message(&self) -> Option<&str> {
        match self {
            ProbeError::NoTarget { reason, .. } => Some(reason),
            _ => None,
        }
    }

    /// Whether this is the kernel saying no (exit code 3) rather than a bad script (1).
    pub fn is_kernel_refusal(&self) -> bool {
        !matches!(
            self,
            ProbeError::NoTarget { .. } | ProbeError::Instantiate { .. }
        )
    }
}

/// Attaches `probe` (not BEGIN/END: see [`SpecialProg::load`]).
pub fn attach(probe: &ProbeSpec, ctx: &AttachContext<'_>) -> Result<Attachment, ProbeError> {
    match &probe.kind {
        ProbeKind::Begin
        | ProbeKind::End
        | ProbeKind::Signal { .. }
        | ProbeKind::Test { .. }
        | ProbeKind::Bench { .. } => {
            panic!("internal error: probes::attach called for {}", probe.name)
        }
        ProbeKind::Interval { period_ns } => perf::interval(probe, *period_ns, ctx),
        ProbeKind::Profile { sampling } => perf::profile(probe, *sampling, ctx),
        ProbeKind::Software { config, sampling } => {
            perf::on_every_cpu(probe, perf::EventKind::Software(*config), *sampling, ctx)
        }
        ProbeKind::Hardware { config, sampling } => {
            perf::on_every_cpu(probe, perf::EventKind::Hardware(*config), *sampling, ctx)
        }
        ProbeKind::Tracepoint { targets } => tracepoint::attach(probe, targets, ctx),
        ProbeKind::RawTracepoint { targets } => rawtracepoint::attach(probe, targets, ctx),
        ProbeKind::Uprobe {
            binary,
            func,
            retprobe,
            offset,
            address,
            cpp,
        } => uprobe::attach(
            probe,
            &uprobe::Site {
                binary,
                func,
                offset: *offset,
                address: *address,
                cpp: *cpp,
            },
            *retprobe,
            ctx,
        ),
        ProbeKind::Usdt { binary, note } => usdt::attach(probe, binary, note, ctx),
        ProbeKind::Watchpoint {
            address,
            len,
            bp_type,
        } => watchpoint::attach(probe, *address, *len, *bp_type, ctx),
        ProbeKind::Kprobe { funcs, retprobe } => kernel::kprobe(probe, funcs, *retprobe, ctx),
        ProbeKind::Fentry {
            targets,
            session_kfuncs,
            ..
        } => kernel::fentry(
            probe,
            targets,
            probe.multi_template.as_deref(),
            session_kfuncs.as_ref(),
            ctx,
        ),
        ProbeKind::Iter { btf_id, .. } => iter::attach(probe, *btf_id, ctx),
        ProbeKind::Unsupported { what } => Err(ProbeError::Unsupported {
            probe: probe.name.clone(),
            what: what.clone(),
        }),
    }
}

/// The map fds `template` needs, in its `maps` order.
pub(crate) fn map_fds(
    probe: &ProbeSpec,
    template: &Template,
    ctx: &AttachContext<'_>,
) -> Result<Vec<RawFd>, ProbeError> {
    crate::loader::map_fds_for(template, ctx.maps).map_err(|source| ProbeError::Loader {
        probe: probe.name.clone(),
        source: Box::new(source),
    })
}

/// Instantiates `probe`'s template for target `index` and loads it as the kind's program type.
pub(crate) fn load_program(
    probe: &ProbeSpec,
    index: u32,
    ctx: &AttachContext<'_>,
) -> Result<Prog, ProbeError> {
    load_program_with(probe, index, ctx, |_| {})
}

/// [`load_program`], with `tune` setting what the kind adds to the load (an attach type, a BTF
/// id).
pub(crate) fn load_program_with(
    probe: &ProbeSpec,
    index: u32,
    ctx: &AttachContext<'_>,
    tune: impl FnOnce(&mut ProgLoadOptions<'_>),
) -> Result<Prog, ProbeError> {
    let fds = map_fds(probe, &probe.template, ctx)?;
    let insns = instantiate(
        &probe.template,
        &TargetValues {
            index,
            map_fds: &fds,
            ..Default::default()
        },
    )
    .map_err(|source| ProbeError::Instantiate {
        probe: probe.name.clone(),
        source,
    })?;
    let mut o = ProgLoadOptions::new(probe.prog_type(), &insns);
    o.name = &probe.template.name;
    o.license = &probe.template.license;
    o.log_size = ctx.log_size;
    tune(&mut o);
    let funcs = crate::loader::subprogs::FuncBtfObj::load(&probe.template);
    if let Some(f) = &funcs {
        f.apply(&mut o);
    }
    Prog::load(&o).map_err(|source| ProbeError::Load {
        probe: probe.name.clone(),
        source: Box::new(source),
    })
}

/// Runs `prog` on every `event`: a BPF perf_event link where the kernel has them (5.15+),
/// else PERF_EVENT_IOC_SET_BPF. The events are owned by the returned objects.
pub(crate) fn attach_perf_events(
    probe: &ProbeSpec,
    prog: Prog,
    events: Vec<PerfEvent>,
) -> Result<Attachment, ProbeError> {
    let mut out = Attachment::default();
    for ev in events {
        match Link::create(
            &prog,
            &LinkTarget::PerfEvent {
                event: ev.as_fd(),
                cookie: 0,
            },
        ) {
            Ok(link) => out.objects.push(KernelObject::Link(link)),
            Err(_) => ev.set_bpf(&prog).map_err(|source| ProbeError::Sys {
                probe: probe.name.clone(),
                what: "attaching to a perf event".into(),
                source,
            })?,
        }
        out.objects.push(KernelObject::Event(ev));
        out.attached += 1;
    }
    out.objects.push(KernelObject::Prog(prog));
    Ok(out)
}

pub(crate) fn sys_err(
    probe: &ProbeSpec,
    what: impl Into<String>,
) -> impl FnOnce(SysError) -> ProbeError {
    let probe = probe.name.clone();
    let what = what.into();
    move |source| ProbeError::Sys {
        probe,
        what,
        source,
    }
}
