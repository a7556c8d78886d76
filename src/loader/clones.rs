//! Parallel load and attach of one clone per target (fentry, fexit, raw tracepoints).
//!
//! Workers (scoped threads, one per CPU by default) take the next target index from a shared
//! counter, instantiate the template into their own buffer, load it (BPF_PROG_LOAD with the
//! target's BTF id: the verifier is the expensive part, which is why this is parallel) and
//! attach it. Results are merged in target order, so output does not depend on scheduling.

use std::collections::HashMap;
use std::os::fd::{AsFd, OwnedFd, RawFd};
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

use super::progress::Progress;
use super::report::{Attached, AttachedClone, LoaderError, Refusal, Stage};
pub use crate::plan::target::CloneTarget;
use crate::sys::{AttachType, Errno, Link, LinkTarget, Prog, ProgLoadOptions, SysError};
use crate::template::{instantiate_into, AttachKind, TargetValues, Template};

/// How to load and attach.
#[derive(Clone, Debug, Default)]
pub struct LoadOptions {
    /// Worker threads; 0 = one per CPU.
    pub threads: usize,
    /// Any refusal fails the whole attach.
    pub strict: bool,
    /// Show a progress line on stderr (the caller decides: a terminal and > ~100 targets).
    pub progress: bool,
    /// `log_size`: every clone loads with a verifier log of this many bytes (`-v`).
    pub log_size: Option<u32>,
}

/// The fds of `template.maps`, in order, looked up by name in `maps`.
pub fn map_fds_for(template: &Template, maps: &[(&str, RawFd)]) -> Result<Vec<RawFd>, LoaderError> {
    template
        .maps
        .iter()
        .map(|name| {
            maps.iter()
                .find(|(n, _)| n == name)
                .map(|&(_, fd)| fd)
                .ok_or_else(|| LoaderError::UnknownMap(name.clone()))
        })
        .collect()
}

enum Outcome {
    Attached(AttachedClone),
    Refused(Refusal),
}

/// Loads and attaches one clone of `template` per target. `map_fds` follows `template.maps`.
/// Refused targets are listed in the result; the call fails only for template bugs, with
/// `opts.strict` on the first refusal, or when nothing at all could be attached.
///
/// Loading (the verifier: CPU work that scales) runs on `opts.threads` workers; attaching runs
/// on the calling thread alone, in the order loads complete. The kernel serialises trampoline
/// and ftrace updates under global locks, so attaching from several threads gains nothing and
/// costs a lot: measured in a 2-vCPU guest (6.1, `fentry:vfs_*`), two attaching threads spent
/// 7.0 s in attach calls against 1.5 s for one, and took 3.9 s start → armed against 2.0 s.
/// With one thread, load and attach alternate on the caller, as a minimal loader does.
pub fn load_clones(
    template: &Template,
    map_fds: &[RawFd],
    targets: &[CloneTarget],
    opts: &LoadOptions,
) -> Result<Attached, LoaderError> {
    let start = Instant::now();
    let threads = match opts.threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .min(targets.len().max(1));
    let next = AtomicUsize::new(0);
    let stop = AtomicBool::new(false);
    let fatal: Mutex<Option<LoaderError>> = Mutex::new(None);
    let (clone_ns, load_ns, attach_ns) = (AtomicU64::new(0), AtomicU64::new(0), AtomicU64::new(0));
    let mut progress = Progress::new(opts.progress, targets.len(), template.attach.name());
    let module_objs = module_objs(targets);
    // Programs with loop callbacks: one function BTF object shared by every clone's load.
    let funcs = super::subprogs::FuncBtfObj::load(template);
    let shared = Shared {
        map_fds,
        funcs: funcs.as_ref(),
        module_objs: &module_objs,
        log_size: opts.log_size,
    };
    let mut outcomes: Vec<(usize, Outcome)> = Vec::with_capacity(targets.len());

    // Worker loop: load targets until none is left (or a stop), handing each result to `sink`.
    let work = |sink: &mut dyn FnMut(usize, Result<Prog, Refusal>)| {
        let mut buf = Vec::with_capacity(template.insns.len());
        while !stop.load(Ordering::Relaxed) {
            let i = next.fetch_add(1, Ordering::Relaxed);
            let Some(t) = targets.get(i) else { break };
            let ns = (&clone_ns, &load_ns);
            match load_one(template, &shared, i, t, &mut buf, ns) {
                Ok(r) => {
                    if opts.strict && r.is_err() {
                        stop.store(true, Ordering::Relaxed);
                    }
                    sink(i, r);
                }
                Err(e) => {
                    stop.store(true, Ordering::Relaxed);
                    *fatal.lock().unwrap_or_else(|p| p.into_inner()) = Some(e);
                }
            }
        }
    };
    // Attach step, on the calling thread only.
    let mut attach_loaded = |i: usize, r: Result<Prog, Refusal>| {
        let o = match r {
            Err(refusal) => Outcome::Refused(refusal),
            Ok(prog) => {
                let t0 = Instant::now();
                let o = attach_one(template.attach, i, &targets[i], prog);
                attach_ns.fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
                if opts.strict && matches!(o, Outcome::Refused(_)) {
                    stop.store(true, Ordering::Relaxed);
                }
                o
            }
        };
        outcomes.push((i, o));
        progress.show(outcomes.len());
    };

    if threads <= 1 {
        work(&mut attach_loaded);
    } else {
        std::thread::scope(|s| {
            let (tx, rx) = std::sync::mpsc::channel();
            let workers: Vec<_> = (0..threads)
                .map(|_| {
                    let tx = tx.clone();
                    let work = &work;
                    s.spawn(move || work(&mut |i, r| drop(tx.send((i, r)))))
                })
                .collect();
            drop(tx);
            // Ends when every worker has finished and dropped its sender.
            for (i, r) in rx {
                attach_loaded(i, r);
            }
            for w in workers {
                if let Err(p) = w.join() {
                    std::panic::resume_unwind(p);
                }
            }
        });
    }
    progress.finish();
    if let Some(e) = fatal.into_inner().unwrap_or_else(|p| p.into_inner()) {
        return Err(e);
    }
    outcomes.sort_by_key(|(i, _)| *i);
    let mut res = Attached {
        kind: Some(template.attach),
        total: targets.len(),
        ..Default::default()
    };
    for (_, o) in outcomes {
        match o {
            Outcome::Attached(c) => res.clones.push(c),
            Outcome::Refused(r) if opts.strict => return Err(LoaderError::Strict { refusal: r }),
            Outcome::Refused(r) => res.refused.push(r),
        }
    }
    if res.clones.is_empty() && !targets.is_empty() {
        return Err(LoaderError::NothingAttached {
            refused: res.refused,
        });
    }
    res.elapsed = start.elapsed();
    res.load_time = Duration::from_nanos(load_ns.into_inner());
    res.attach_time = Duration::from_nanos(attach_ns.into_inner());
    let n = targets.len() as u64;
    crate::timings::record_n("clone", Duration::from_nanos(clone_ns.into_inner()), n);
    crate::timings::record_n("load", res.load_time, n);
    crate::timings::record_n("attach", res.attach_time, res.attached() as u64);
    crate::timings::record("load_attach_wall", res.elapsed);
    Ok(res)
}

/// What every clone's load uses alike.
struct Shared<'a> {
    map_fds: &'a [RawFd],
    /// The function BTF object of a template with subprograms (loop callbacks).
    funcs: Option<&'a super::subprogs::FuncBtfObj>,
    module_objs: &'a ModuleObjs,
    log_size: Option<u32>,
}

/// Instantiate and load target `i`: its program, or the kernel's refusal.
fn load_one(
    t: &Template,
    shared: &Shared<'_>,
    i: usize,
    target: &CloneTarget,
    buf: &mut Vec<crate::asm::Insn>,
    (clone_ns, load_ns): (&AtomicU64, &AtomicU64),
) -> Result<Result<Prog, Refusal>, LoaderError> {
    let t0 = Instant::now();
    let values = TargetValues {
        index: target.index.unwrap_or(i as u32),
        map_fds: shared.map_fds,
        arg_slots: &target.arg_slots,
        ret_slot: target.ret_slot,
        btf_ids: &target.btf_ids,
        consts: &target.consts,
    };
    instantiate_into(t, &values, buf).map_err(|source| LoaderError::Instantiate {
        target: target.name.clone(),
        source,
    })?;
    clone_ns.fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
    let refused = |errno, reason| Refusal {
        index: i,
        name: target.name.clone(),
        stage: Stage::Load,
        errno,
        reason,
    };
    let mut o = ProgLoadOptions::new(t.prog_type(), buf);
    o.name = &t.name;
    o.license = &t.license;
    o.log_size = shared.log_size;
    if let Some(f) = shared.funcs {
        f.apply(&mut o);
    }
    match t.attach {
        AttachKind::Fentry | AttachKind::Fexit => {
            o.expected_attach_type = Some(tracing_attach_type(t.attach));
            o.attach_btf_id = target.btf_id;
            o.attach_btf_obj_fd = match (&target.btf_obj, &target.module) {
                (Some(fd), _) => Some(fd.as_fd()),
                (None, Some(m)) => match shared.module_objs.get(m) {
                    Some(Ok(fd)) => Some(fd.as_fd()),
                    Some(Err(why)) => return Ok(Err(refused(Errno::ENOENT, why.clone()))),
                    None => panic!("internal error: module {m} missing from the BTF object table"),
                },
                (None, None) => None,
            };
        }
        AttachKind::RawTracepoint => {}
        AttachKind::Kprobe { .. } | AttachKind::Uprobe { .. } | AttachKind::Runtime(_) => {
            panic!("internal error: load_clones called for a shared-program or runtime attach kind")
        }
    }
    let t0 = Instant::now();
    let loaded = Prog::load(&o);
    load_ns.fetch_add(t0.elapsed().as_nanos() as u64, Ordering::Relaxed);
    Ok(loaded.map_err(|e| {
        let help = crate::plan::requires::kernel_requirement(t, e.insn(), e.reason().unwrap_or(""));
        match help {
            Some((_, help)) => refused(e.errno(), format!("{e}; {help}")),
            None => refused(e.errno(), e.to_string()),
        }
    }))
}

/// Attach loaded target `i`.
fn attach_one(kind: AttachKind, i: usize, target: &CloneTarget, prog: Prog) -> Outcome {
    match attach(kind, &prog, &target.name) {
        Ok(link) => Outcome::Attached(AttachedClone {
            index: i,
            name: target.name.clone(),
            prog,
            link,
        }),
        Err(e) => Outcome::Refused(Refusal {
            index: i,
            name: target.name.clone(),
            stage: Stage::Attach,
            errno: e.errno,
            reason: e.to_string(),
        }),
    }
}

/// Module name → its kernel BTF object, or why there is none.
type ModuleObjs = HashMap<String, Result<Arc<OwnedFd>, String>>;

/// The BTF objects of the modules `targets` name without one, looked up once per module.
fn module_objs(targets: &[CloneTarget]) -> ModuleObjs {
    let mut objs = ModuleObjs::new();
    for t in targets.iter().filter(|t| t.btf_obj.is_none()) {
        if let Some(m) = &t.module {
            if !objs.contains_key(m) {
                objs.insert(m.clone(), module_btf_obj(m));
            }
        }
    }
    objs
}

/// The kernel BTF object of module `m`, for `attach_btf_obj_fd`.
pub fn module_btf_obj(m: &str) -> Result<Arc<OwnedFd>, String> {
    match crate::sys::info::module_btf_fd(m) {
        Ok(Some(fd)) => Ok(Arc::new(fd)),
        Ok(None) => Err(format!(
            "no kernel BTF object named `{m}` (module not loaded, or a kernel before 5.11, which names no module BTF)"
        )),
        Err(e) => Err(format!("cannot look up the BTF object of module {m}: {e}")),
    }
}

/// The expected attach type of a tracing clone: the kind table's decision.
fn tracing_attach_type(kind: AttachKind) -> AttachType {
    kind.kind().load_types().1.unwrap_or_else(|| {
        panic!(
            "internal error: {} clones have no expected attach type",
            kind.name()
        )
    })
}

/// fentry/fexit: a tracing link (5.8+), falling back to BPF_RAW_TRACEPOINT_OPEN (which
/// attaches tracing programs to their trampoline on 5.5+) when BPF_LINK_CREATE is not there.
fn attach(kind: AttachKind, prog: &Prog, name: &str) -> Result<Link, SysError> {
    match kind {
        AttachKind::RawTracepoint => Link::raw_tracepoint_open(prog, Some(name)),
        _ => {
            let link = Link::create(
                prog,
                &LinkTarget::Tracing {
                    attach_type: tracing_attach_type(kind),
                    target_btf_id: 0,
                    cookie: 0,
                },
            );
            match link {
                Err(e) if e.errno == Errno::EINVAL => {
                    Link::raw_tracepoint_open(prog, None).map_err(|_| e)
                }
                other => other,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::{TargetProto, TypeClass};

    #[test]
    fn clone_target_from_proto_computes_slots_and_names_a_missing_param() {
        let mut t = Template::new("t", AttachKind::Fexit, vec![]);
        t.param_index("count");
        let int = TypeClass::Int {
            size: 8,
            signed: false,
        };
        let proto = TargetProto {
            name: "vfs_write".into(),
            params: vec![("file".into(), TypeClass::Pointer), ("count".into(), int)].into(),
            ret: int,
        };
        let c = CloneTarget::from_proto(&t, &proto, 42).unwrap();
        assert_eq!((c.btf_id, c.arg_slots, c.ret_slot), (42, vec![8], Some(16)));
        t.param_index("pos");
        assert_eq!(
            CloneTarget::from_proto(&t, &proto, 42).unwrap_err(),
            "pos".to_string()
        );
    }
}
