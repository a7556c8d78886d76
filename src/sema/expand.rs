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
//! give one target named by the attach point's text.

use std::path::PathBuf;

use super::super::kernel::info::{KernelInfo, KernelInfoError, UsdtNote};
use crate::btf::{Glob, Kind, TypeKind};
use crate::syntax::ast::{AttachPoint, AttachSpec, ProbeKind};
use crate::syntax::attach::{glob_match, has_wildcard};

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

/// Functions a kretprobe must not attach to: the return trampoline takes these locks itself
/// (bpftrace's list).
const BANNED_KRETPROBES: &[&str] = &[
    "_raw_spin_lock",
    "_raw_spin_lock_irqsave",
    "_raw_spin_unlock_irqrestore",
    "queued_spin_lock_slowpath",
];

fn glob(probe: &str, p: &str) -> Result<Glob, ExpandError> {
    Glob::new(p).map_err(|e| ExpandError::Pattern {
        probe: probe.to_string(),
        reason: e.to_string(),
    })
}

/// Expands one attach point.
pub fn expand(ap: &AttachPoint, k: &dyn KernelInfo) -> Result<Vec<Target>, ExpandError> {
    let probe = ap.raw.clone();
    let kerr = |source| ExpandError::Kernel {
        probe: probe.clone(),
        source,
    };
    let none = |what: &'static str, pattern: &str| ExpandError::NoMatch {
        probe: probe.clone(),
        what,
        pattern: pattern.to_string(),
    };
    let kind_name = ap.kind.name();
    let out: Vec<Target> = match &ap.spec {
        // `fentry:bpf:[ID:]NAME`: functions of loaded BPF programs.
        AttachSpec::Fentry {
            module: Some(m),
            func,
            prog_id,
        } if m == "bpf" => {
            let g = glob(&probe, func)?;
            k.bpf_functions()
                .map_err(kerr)?
                .into_iter()
                .filter(|f| {
                    prog_id.map_or(true, |id| u64::from(f.prog_id) == id) && g.matches(&f.name)
                })
                .map(|f| Target {
                    name: format!("{kind_name}:bpf:{}:{}", f.prog_id, f.name),
                    kind: TargetKind::BpfFunc {
                        prog_id: f.prog_id,
                        func: f.name,
                        btf_id: f.btf_id,
                        params: f.params,
                    },
                })
                .collect()
        }
        AttachSpec::Fentry { module, func, .. } => {
            let m = module.as_deref();
            let g = glob(&probe, func)?;
            k.btf_functions(m, &g)
                .map_err(kerr)?
                .into_iter()
                .map(|f| Target {
                    name: format!(
                        "{kind_name}:{}:{}",
                        f.module.as_deref().unwrap_or("vmlinux"),
                        f.name
                    ),
                    kind: TargetKind::KernelFunc {
                        module: f.module,
                        func: f.name,
                        btf_id: Some(f.btf_id),
                        offset: None,
                    },
                })
                .collect()
        }
        AttachSpec::Kprobe {
            module,
            func,
            offset,
            address,
        } => {
            if let Some(addr) = address {
                vec![Target {
                    name: format!("{kind_name}:0x{addr:x}"),
                    kind: TargetKind::KernelFunc {
                        module: None,
                        func: String::new(),
                        btf_id: None,
                        offset: Some(*addr),
                    },
                }]
            } else {
                let mut ts =
                    kprobe_targets(k, kind_name, module.as_deref(), func, *offset, &probe)?;
                if ap.kind == ProbeKind::Kretprobe {
                    // A return probe on these can lock the machine up (bpftrace bans them):
                    // named alone it is an error, a wildcard leaves them out.
                    if !has_wildcard(func) && BANNED_KRETPROBES.contains(&func.as_str()) {
                        return Err(ExpandError::Banned { probe });
                    }
                    ts.retain(|t| match &t.kind {
                        TargetKind::KernelFunc { func, .. } => {
                            !BANNED_KRETPROBES.contains(&func.as_str())
                        }
                        _ => true,
                    });
                }
                ts
            }
        }
        // A literal name needs no directory listing: its (cached) format says it exists.
        AttachSpec::Tracepoint { category, name }
            if !has_wildcard(category) && !has_wildcard(name) =>
        {
            match k.tracepoint_format(category, name) {
                Ok(_) => vec![Target {
                    name: format!("tracepoint:{category}:{name}"),
                    kind: TargetKind::Tracepoint {
                        category: category.clone(),
                        name: name.clone(),
                    },
                }],
                Err(KernelInfoError::NoTracepoint { .. }) => Vec::new(),
                Err(e) => return Err(kerr(e)),
            }
        }
        AttachSpec::Tracepoint { category, name } => k
            .tracepoints(&format!("{category}:{name}"))
            .map_err(kerr)?
            .into_iter()
            .map(|t| Target {
                name: format!("tracepoint:{}:{}", t.category, t.name),
                kind: TargetKind::Tracepoint {
                    category: t.category,
                    name: t.name,
                },
            })
            .collect(),
        AttachSpec::RawTracepoint { module, name } => {
            raw_tracepoints(k, module.as_deref(), name).map_err(kerr)?
        }
        AttachSpec::Uprobe {
            target,
            lang,
            func,
            offset,
            address,
        } => {
            let paths = binaries(k, &probe, target)?;
            if let Some(addr) = address {
                paths
                    .into_iter()
                    .map(|path| Target {
                        name: format!("{kind_name}:{}:0x{addr:x}", path.display()),
                        kind: TargetKind::User {
                            path,
                            func: String::new(),
                            offset: None,
                            address: Some(*addr),
                        },
                    })
                    .collect()
            } else {
                let cpp = lang.as_deref() == Some("cpp");
                let g = glob(&probe, func)?;
                let cpp_pattern = if cpp {
                    Some(crate::elf::cpp::CppPattern::new(func).map_err(|e| {
                        ExpandError::Pattern {
                            probe: probe.clone(),
                            reason: e.to_string(),
                        }
                    })?)
                } else {
                    None
                };
                let several = paths.len() > 1 || has_wildcard(target);
                let mut out = Vec::new();
                for path in paths {
                    let syms = match k.elf_symbols(&path) {
                        Ok(s) => s,
                        // Of many files (a process's mappings, a path glob) the unreadable
                        // ones (data files, non-ELF) have no functions.
                        Err(_) if several => continue,
                        Err(e) => return Err(kerr(e)),
                    };
                    let p = path.display().to_string();
                    let matches = |s: &String| match &cpp_pattern {
                        Some(c) => c.matches(s),
                        None => g.matches(s),
                    };
                    out.extend(syms.into_iter().filter(matches).map(|s| Target {
                        // bpftrace lists a `cpp:` probe by its demangled name, quoted so the
                        // line is an attach point again.
                        name: match crate::elf::cpp::demangle(&s).filter(|_| cpp) {
                            Some(d) => format!("{kind_name}:{p}:cpp:\"{d}\""),
                            None if cpp => format!("{kind_name}:{p}:cpp:{s}"),
                            None => format!("{kind_name}:{p}:{s}"),
                        },
                        kind: TargetKind::User {
                            path: path.clone(),
                            func: s,
                            offset: *offset,
                            address: None,
                        },
                    }));
                }
                out
            }
        }
        AttachSpec::UprobeSourceLine {
            target,
            file,
            line,
            column,
        } => {
            let at = crate::dwarf::SourceLine {
                file,
                line: *line,
                column: *column,
            };
            binaries(k, &probe, target)?
                .into_iter()
                .map(|path| {
                    let addr = source_line_address(&path, target, &at)?;
                    Ok(Target {
                        name: format!("{kind_name}:{}:0x{addr:x}", path.display()),
                        kind: TargetKind::User {
                            path,
                            func: String::new(),
                            offset: None,
                            address: Some(addr),
                        },
                    })
                })
                .collect::<Result<_, _>>()
                .map_err(|reason| ExpandError::SourceLine {
                    probe: probe.clone(),
                    reason,
                })?
        }
        AttachSpec::Usdt {
            target,
            provider,
            name,
        } => {
            let paths = binaries(k, &probe, target)?;
            let several = paths.len() > 1 || has_wildcard(target);
            // An empty provider (`usdt:::name`, `usdt:PATH::name`) is any provider.
            let prov = provider.as_deref().filter(|p| !p.is_empty()).unwrap_or("*");
            let mut notes: Vec<(PathBuf, UsdtNote)> = Vec::new();
            for path in paths {
                let found = match k.usdt_probes(&path) {
                    Ok(n) => n,
                    Err(_) if several => continue,
                    Err(e) => return Err(kerr(e)),
                };
                notes.extend(
                    found
                        .into_iter()
                        .filter(|n| glob_match(prov, &n.provider) && glob_match(name, &n.name))
                        .map(|n| (path.clone(), n)),
                );
            }
            let mut providers: Vec<&str> = notes.iter().map(|(_, n)| n.provider.as_str()).collect();
            providers.sort_unstable();
            providers.dedup();
            if provider.is_none() && !has_wildcard(name) && providers.len() > 1 {
                return Err(ExpandError::AmbiguousUsdt {
                    probe,
                    count: notes.len(),
                    providers: providers.join(", "),
                });
            }
            notes
                .into_iter()
                .map(|(path, n)| Target {
                    name: format!("usdt:{}:{}:{}", path.display(), n.provider, n.name),
                    kind: TargetKind::Usdt { path, note: n },
                })
                .collect()
        }
        AttachSpec::Iter { name, .. } => {
            let btf = k.btf(None).map_err(kerr)?;
            if btf.find_struct(&format!("bpf_iter__{name}")).is_none() {
                return Err(ExpandError::NoIterator {
                    probe,
                    name: name.clone(),
                });
            }
            vec![Target {
                name: canonical_other(ap),
                kind: TargetKind::Other,
            }]
        }
        _ => vec![Target {
            name: canonical_other(ap),
            kind: TargetKind::Other,
        }],
    };
    if out.is_empty() {
        let pattern = ap.raw.split_once(':').map_or(ap.raw.as_str(), |(_, r)| r);
        return Err(none(kind_name, pattern));
    }
    Ok(out)
}

/// The link-time address of source line `at` in binary `path` (named `target` in the script),
/// through its DWARF line table.
fn source_line_address(
    path: &std::path::Path,
    target: &str,
    at: &crate::dwarf::SourceLine<'_>,
) -> Result<u64, String> {
    use crate::dwarf::DebugError;
    let info = crate::dwarf::for_binary(path).map_err(|e| match e {
        DebugError::NoDwarf { .. } => format!(
            "No DWARF debug info found for '{target}', cannot attach by source code location."
        ),
        e => format!("{e}, cannot attach by source code location."),
    })?;
    info.line_address(at).map_err(|e| e.to_string())
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
    match ap.kind {
        ProbeKind::Begin => "BEGIN".into(),
        ProbeKind::End => "END".into(),
        _ => ap.raw.clone(),
    }
}

fn kprobe_targets(
    k: &dyn KernelInfo,
    kind_name: &str,
    module: Option<&str>,
    func: &str,
    offset: Option<u64>,
    probe: &str,
) -> Result<Vec<Target>, ExpandError> {
    let g = glob(probe, func)?;
    let name = |m: &Option<String>, f: &str| match m {
        Some(m) => format!("{kind_name}:{m}:{f}"),
        None => format!("{kind_name}:{f}"),
    };
    let funcs: Vec<(Option<String>, String, Option<u32>)> = match k.kprobe_functions() {
        Some(list) => list
            .into_iter()
            .filter(|(m, f)| g.matches(f) && (module.is_none() || m.as_deref() == module))
            .map(|(m, f)| (m, f, None))
            .collect(),
        // available_filter_functions unreadable (lockdown): BTF functions are the best guess.
        None => k
            .btf_functions(module, &g)
            .map_err(|source| ExpandError::Kernel {
                probe: probe.to_string(),
                source,
            })?
            .into_iter()
            .map(|f| (f.module, f.name, Some(f.btf_id)))
            .collect(),
    };
    Ok(funcs
        .into_iter()
        .map(|(m, f, id)| Target {
            name: name(&m, &f),
            kind: TargetKind::KernelFunc {
                module: m,
                func: f,
                btf_id: id,
                offset,
            },
        })
        .collect())
}

fn raw_tracepoints(
    k: &dyn KernelInfo,
    module: Option<&str>,
    pattern: &str,
) -> Result<Vec<Target>, KernelInfoError> {
    let g = Glob::new(pattern).map_err(|e| KernelInfoError::Unavailable {
        what: "raw tracepoint pattern".into(),
        reason: e.to_string(),
    })?;
    let btf = k.btf(module)?;
    let mut names: Vec<&str> = Vec::new();
    if g.is_literal() {
        if btf
            .find_type(Kind::Typedef, &format!("btf_trace_{pattern}"))
            .is_some()
        {
            names.push(pattern);
        }
    } else {
        for t in btf.types() {
            if let TypeKind::Typedef(_) = t.kind {
                if let Some(n) = t.name.strip_prefix("btf_trace_") {
                    if g.matches(n) {
                        names.push(n);
                    }
                }
            }
        }
        names.sort_unstable();
        names.dedup();
    }
    let m = module.unwrap_or("vmlinux");
    Ok(names
        .into_iter()
        .map(|n| Target {
            name: format!("rawtracepoint:{m}:{n}"),
            kind: TargetKind::RawTracepoint {
                module: module.filter(|m| *m != "vmlinux").map(str::to_string),
                name: n.to_string(),
            },
        })
        .collect())
}
