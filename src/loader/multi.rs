//! kprobe and uprobe wildcards without cloning: one program for every target, attached by one
//! kprobe_multi / uprobe_multi link where the kernel has them (kprobe_multi 5.18 with
//! CONFIG_FPROBE: 6.12 yes, 6.1 no; uprobe_multi 6.6), else by one perf kprobe/uprobe event per
//! target carrying the same program fd.
//!
//! Which target fired: each target's index in the target table is its BPF cookie (multi links
//! and perf_event links, 5.15+: `bpf_get_attach_cookie`), and for kprobes `bpf_get_func_ip`
//! maps back to the function through [`super::symbols::Kallsyms`]. The template therefore must
//! not have per-target relocations; it is instantiated once with index 0.

use std::os::fd::{AsFd, RawFd};
use std::path::PathBuf;
use std::sync::Mutex;
use std::time::Instant;

use super::report::{Attached, LoaderError, Refusal, Stage};
use crate::sys::{AttachType, Errno, Link, LinkTarget, PerfEvent, Prog, ProgLoadOptions, SysError};
use crate::template::{instantiate, AttachKind, RelocKind, TargetValues, Template};

/// The targets of one shared program.
#[derive(Clone, Debug)]
pub enum MultiTargets {
    /// Kernel function names (kprobe/kretprobe).
    Kernel { funcs: Vec<String> },
    /// Functions of one ELF file: (name, file offset); optionally only in process `pid`.
    User {
        path: PathBuf,
        funcs: Vec<(String, u64)>,
        pid: Option<i32>,
    },
}

impl MultiTargets {
    pub fn len(&self) -> usize {
        match self {
            MultiTargets::Kernel { funcs } => funcs.len(),
            MultiTargets::User { funcs, .. } => funcs.len(),
        }
    }

    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    fn name(&self, i: usize) -> String {
        match self {
            MultiTargets::Kernel { funcs } => funcs[i].clone(),
            MultiTargets::User { funcs, .. } => funcs[i].0.clone(),
        }
    }
}

/// How the shared program was attached.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum MultiVia {
    KprobeMulti,
    UprobeMulti,
    /// One perf event per target (a BPF perf_event link each where the kernel has them, else
    /// PERF_EVENT_IOC_SET_BPF without cookies).
    PerfEvents,
}

#[derive(Clone, Debug, Default)]
pub struct MultiOptions {
    /// `Some(false)` forces the per-event fallback (tests, benchmarks); `None` tries the multi
    /// link first and falls back when the kernel refuses it.
    pub use_multi: Option<bool>,
    pub strict: bool,
    /// Worker threads opening perf events; 0 = one per CPU.
    pub threads: usize,
    /// `log_size`: the program loads with a verifier log of this many bytes.
    pub log_size: Option<u32>,
}

/// Loads `template` once and attaches it to every target.
pub fn attach_multi(
    template: &Template,
    map_fds: &[RawFd],
    targets: &MultiTargets,
    opts: &MultiOptions,
) -> Result<(Attached, MultiVia), LoaderError> {
    let start = Instant::now();
    let retprobe = match template.attach {
        AttachKind::Kprobe { retprobe } | AttachKind::Uprobe { retprobe } => retprobe,
        other => panic!("internal error: attach_multi called for {}", other.name()),
    };
    if let Some(r) = template.relocs.iter().find(|r| per_target(r.kind)) {
        panic!(
            "internal error: shared-program template has a per-target relocation at insn {}",
            r.insn
        );
    }
    let insns = instantiate(
        template,
        &TargetValues {
            map_fds,
            ..Default::default()
        },
    )
    .map_err(|source| LoaderError::Instantiate {
        target: template.name.clone(),
        source,
    })?;
    let mut res = Attached {
        kind: Some(template.attach),
        total: targets.len(),
        ..Default::default()
    };
    let load = |expected: Option<AttachType>| -> Result<Prog, LoaderError> {
        let mut o = ProgLoadOptions::new(template.prog_type(), &insns);
        o.name = &template.name;
        o.license = &template.license;
        o.expected_attach_type = expected;
        o.log_size = opts.log_size;
        let funcs = super::subprogs::FuncBtfObj::load(template);
        if let Some(f) = &funcs {
            f.apply(&mut o);
        }
        Prog::load(&o).map_err(|e| LoaderError::Sys(e.sys))
    };
    if opts.use_multi != Some(false) && !targets.is_empty() {
        // kprobe_multi or uprobe_multi, as the kind table says for the template's kind.
        let expected = template.attach.kind().info().multi_attach;
        if let Ok(prog) = load(expected) {
            if let Ok((link, via)) = multi_link(&prog, targets, retprobe) {
                res.links.push(link);
                res.shared_prog = Some(prog);
                res.shared_attached = targets.len();
                res.elapsed = start.elapsed();
                return Ok((res, via));
            }
        }
        if opts.use_multi == Some(true) {
            return Err(LoaderError::NothingAttached {
                refused: vec![Refusal {
                    index: 0,
                    name: template.name.clone(),
                    stage: Stage::Attach,
                    errno: Errno::EOPNOTSUPP,
                    reason: "the kernel refused the multi link".into(),
                }],
            });
        }
    }
    let prog = load(None)?;
    per_event(&prog, targets, retprobe, opts, &mut res)?;
    res.shared_prog = Some(prog);
    res.elapsed = start.elapsed();
    if res.shared_attached == 0 && !targets.is_empty() {
        return Err(LoaderError::NothingAttached {
            refused: res.refused,
        });
    }
    Ok((res, MultiVia::PerfEvents))
}

fn per_target(k: RelocKind) -> bool {
    matches!(
        k,
        RelocKind::TargetIndex | RelocKind::ArgSlot { .. } | RelocKind::RetSlot
    )
}

fn multi_link(
    prog: &Prog,
    targets: &MultiTargets,
    retprobe: bool,
) -> Result<(Link, MultiVia), SysError> {
    let cookies: Vec<u64> = (0..targets.len() as u64).collect();
    match targets {
        MultiTargets::Kernel { funcs } => {
            let syms: Vec<&str> = funcs.iter().map(String::as_str).collect();
            let link = Link::create(
                prog,
                &LinkTarget::KprobeMulti {
                    retprobe,
                    session: false,
                    syms: &syms,
                    addrs: &[],
                    cookies: &cookies,
                },
            )?;
            Ok((link, MultiVia::KprobeMulti))
        }
        MultiTargets::User { path, funcs, pid } => {
            let offsets: Vec<u64> = funcs.iter().map(|f| f.1).collect();
            let link = Link::create(
                prog,
                &LinkTarget::UprobeMulti {
                    retprobe,
                    path,
                    offsets: &offsets,
                    ref_ctr_offsets: &[],
                    cookies: &cookies,
                    pid: pid.map(|p| p as u32),
                },
            )?;
            Ok((link, MultiVia::UprobeMulti))
        }
    }
}

enum EventOutcome {
    Linked(PerfEvent, Link),
    Ioctl(PerfEvent),
    Refused(Refusal),
}

/// One perf event per target, opened and attached on worker threads.
fn per_event(
    prog: &Prog,
    targets: &MultiTargets,
    retprobe: bool,
    opts: &MultiOptions,
    res: &mut Attached,
) -> Result<(), LoaderError> {
    let n = match opts.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .min(targets.len().max(1));
    let next = std::sync::atomic::AtomicUsize::new(0);
    let results = Mutex::new(Vec::with_capacity(targets.len()));
    std::thread::scope(|s| {
        for _ in 0..n {
            s.spawn(|| loop {
                let i = next.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
                if i >= targets.len() {
                    break;
                }
                let o = one_event(prog, targets, i, retprobe);
                results
                    .lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .push((i, o));
            });
        }
    });
    let mut results = results.into_inner().unwrap_or_else(|p| p.into_inner());
    results.sort_by_key(|(i, _)| *i);
    for (_, o) in results {
        match o {
            EventOutcome::Linked(ev, link) => {
                res.events.push(ev);
                res.links.push(link);
                res.shared_attached += 1;
            }
            EventOutcome::Ioctl(ev) => {
                res.events.push(ev);
                res.shared_attached += 1;
            }
            EventOutcome::Refused(r) if opts.strict => {
                return Err(LoaderError::Strict { refusal: r })
            }
            EventOutcome::Refused(r) => res.refused.push(r),
        }
    }
    Ok(())
}

fn one_event(prog: &Prog, targets: &MultiTargets, i: usize, retprobe: bool) -> EventOutcome {
    let refused = |stage, e: SysError| {
        EventOutcome::Refused(Refusal {
            index: i,
            name: targets.name(i),
            stage,
            errno: e.errno,
            reason: e.to_string(),
        })
    };
    // Probe events are system-wide for BPF whatever the cpu argument; pid -1 needs a cpu.
    let ev = match targets {
        MultiTargets::Kernel { funcs } => PerfEvent::kprobe(&funcs[i], 0, retprobe, -1, 0),
        MultiTargets::User { path, funcs, pid } => match pid {
            Some(p) => PerfEvent::uprobe(path, funcs[i].1, retprobe, *p, -1),
            None => PerfEvent::uprobe(path, funcs[i].1, retprobe, -1, 0),
        },
    };
    let ev = match ev {
        Ok(ev) => ev,
        Err(e) => return refused(Stage::Attach, e),
    };
    let link = Link::create(
        prog,
        &LinkTarget::PerfEvent {
            event: ev.as_fd(),
            cookie: i as u64,
        },
    );
    match link {
        Ok(l) => EventOutcome::Linked(ev, l),
        // Kernels before 5.15 have no perf_event links: attach by ioctl (no cookie).
        Err(_) => match ev.set_bpf(prog) {
            Ok(()) => EventOutcome::Ioctl(ev),
            Err(e) => refused(Stage::Attach, e),
        },
    }
}
