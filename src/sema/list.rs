//! `strobe -l [PATTERN]` and `-lv`: the probes a pattern names, one per line, in bpftrace's
//! spelling (`fentry:vmlinux:vfs_read`, `tracepoint:syscalls:sys_enter_read`,
//! `rawtracepoint:vmlinux:sched_switch`, `kprobe:vfs_read`), and with `-lv` their arguments
//! indented by four spaces (`    struct file * file`, fexit/fentry also `    ssize_t retval`).
//!
//! Uses the same expansion as attaching ([`super::expand`]), so what `-l` shows is what a
//! probe with that pattern would attach to. `kfunc`/`kretfunc` are accepted and listed under
//! their current names `fentry`/`fexit`.

use std::fmt::Write;

use super::expand::{expand, Target, TargetKind};
use crate::kernel::info::KernelInfo;
use crate::kernel::tracefs::FieldLayout;
use crate::syntax::ast::ProbeKind;
use crate::syntax::attach::{glob_match, parse_attach_point};

const SOFTWARE: &[&str] = &[
    "alignment-faults",
    "bpf-output",
    "context-switches",
    "cpu-clock",
    "cpu-migrations",
    "dummy",
    "emulation-faults",
    "major-faults",
    "minor-faults",
    "page-faults",
    "task-clock",
];

const HARDWARE: &[&str] = &[
    "backend-stalls",
    "branch-instructions",
    "branch-misses",
    "bus-cycles",
    "cache-misses",
    "cache-references",
    "cpu-cycles",
    "frontend-stalls",
    "instructions",
    "ref-cycles",
];

/// Why listing failed.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ListError {
    #[error("invalid probe pattern '{pattern}': {reason}")]
    Pattern { pattern: String, reason: String },
    /// Nothing matched because the probes' sources could not be read (tracefs unreadable
    /// without privileges, …): saying so beats an empty list.
    #[error("cannot list probes: {0}")]
    Unavailable(String),
}

/// What `-l` found: the lines to print, and why some kinds could not be listed.
#[derive(Debug, Default)]
pub struct Listing {
    pub lines: Vec<String>,
    /// One message per attach point whose source could not be read.
    pub problems: Vec<String>,
}

/// The lines `strobe -l PATTERN` (`-lv` with `verbose`) prints, without trailing newlines
/// (argument lines included in `-lv`). Kinds whose source is unavailable are skipped; when
/// nothing at all was listed for that reason, that is the error.
pub fn list_probes(
    pattern: Option<&str>,
    verbose: bool,
    k: &dyn KernelInfo,
) -> Result<Vec<String>, ListError> {
    list_probes_reporting(pattern, verbose, k).map(|l| l.lines)
}

/// [`list_probes`] with the reasons kinds were skipped, for the CLI to warn about.
pub fn list_probes_reporting(
    pattern: Option<&str>,
    verbose: bool,
    k: &dyn KernelInfo,
) -> Result<Listing, ListError> {
    let pattern = pattern.unwrap_or("*");
    let (kind_pat, rest) = match pattern.split_once(':') {
        Some((kp, r)) => (kp, r),
        None => ("*", pattern),
    };
    // As in bpftrace, a wildcard kind takes in user-space probes only when something scopes
    // them: a process (`-p`) or one existing file (`*:./bin:*`); all binaries are too many.
    let first = rest.split(':').next().unwrap_or("");
    let scoped = k.target_pid().is_some()
        || (rest.contains(':')
            && !first.is_empty()
            && !crate::syntax::attach::has_wildcard(first)
            && std::path::Path::new(first).exists());
    // The kinds `-l` without a kind (or with a wildcard kind) lists, in bpftrace's order.
    let user = if scoped {
        crate::kinds::listed(crate::kinds::Space::User)
    } else {
        Vec::new()
    };
    let kinds: Vec<ProbeKind> = match ProbeKind::from_name(kind_pat) {
        Some(k) => vec![k],
        None if kind_pat.contains(['*', '?', '[']) => {
            crate::kinds::listed(crate::kinds::Space::Kernel)
                .into_iter()
                .chain(user)
                .filter(|k| glob_match(kind_pat, k.name()))
                .collect()
        }
        None => {
            return Err(ListError::Pattern {
                pattern: pattern.to_string(),
                reason: format!("unknown probe type '{kind_pat}'"),
            })
        }
    };
    let mut out = Vec::new();
    let mut problems = Vec::new();
    for kind in kinds {
        let rest = if rest.is_empty() { "*" } else { rest };
        match kind {
            ProbeKind::Software | ProbeKind::Hardware => {
                let (names, kn) = if kind == ProbeKind::Software {
                    (SOFTWARE, "software")
                } else {
                    (HARDWARE, "hardware")
                };
                let name_pat = rest.split(':').next().unwrap_or("*");
                out.extend(
                    names
                        .iter()
                        .filter(|n| glob_match(name_pat, n))
                        .map(|n| format!("{kn}:{n}:")),
                );
                continue;
            }
            ProbeKind::Iter => {
                let name_pat = rest.split(':').next().unwrap_or("*");
                match k.btf(None) {
                    Ok(btf) => out.extend(iter_lines(&btf, name_pat, verbose)),
                    Err(e) => problems.push(format!("iter: {e}")),
                }
                continue;
            }
            // `uprobe:PATTERN`, `usdt:PATTERN`: the pattern is the function, in every
            // binary (with `-p`, every object of the process).
            ProbeKind::Uprobe | ProbeKind::Usdt if !rest.contains(':') => {
                list_kind(
                    kind,
                    &format!("*:{rest}"),
                    verbose,
                    k,
                    &mut out,
                    &mut problems,
                );
                continue;
            }
            ProbeKind::Tracepoint if !rest.contains(':') && kind_pat == "*" => {
                list_kind(
                    kind,
                    &format!("*:{rest}"),
                    verbose,
                    k,
                    &mut out,
                    &mut problems,
                );
                continue;
            }
            _ => {}
        }
        list_kind(kind, rest, verbose, k, &mut out, &mut problems);
    }
    if out.is_empty() && !problems.is_empty() {
        return Err(ListError::Unavailable(problems.join("; ")));
    }
    Ok(Listing {
        lines: out,
        problems,
    })
}

fn list_kind(
    kind: ProbeKind,
    rest: &str,
    verbose: bool,
    k: &dyn KernelInfo,
    out: &mut Vec<String>,
    problems: &mut Vec<String>,
) {
    let text = format!("{}:{rest}", kind.name());
    let Ok(points) = parse_attach_point(&text, 0) else {
        return;
    };
    for ap in points {
        let mut targets = match expand(&ap, k) {
            Ok(t) => t,
            Err(e) if e.is_unavailable() => {
                problems.push(e.to_string());
                continue;
            }
            Err(_) => continue,
        };
        if kind == ProbeKind::Usdt {
            // bpftrace lists USDT probes sorted, once however many sites a probe has.
            targets.sort_by(|a, b| a.name.cmp(&b.name));
            targets.dedup_by(|a, b| a.name == b.name);
        }
        for t in &targets {
            out.push(t.name.clone());
            if verbose {
                out.extend(arg_lines(kind, t, k));
            }
        }
    }
}

/// `-lv` lines of a kprobe (`    struct file * arg0`: the BTF prototype's parameters as the
/// `argN` builtins number them; floating-point ones travel in other registers and have no
/// `argN`) or a kretprobe (`    ssize_t retval`, `    void`), as bpftrace lists them. A
/// function without BTF (kprobes reach more functions than BTF describes) lists nothing.
fn kprobe_arg_lines(
    retprobe: bool,
    module: &Option<String>,
    func: &str,
    btf_id: Option<u32>,
    k: &dyn KernelInfo,
) -> Vec<String> {
    let Ok(btf) = k.btf(module.as_deref()) else {
        return Vec::new();
    };
    let Some(proto) = btf_id
        .or_else(|| btf.find_func(func))
        .and_then(|id| btf.func_proto(id).ok())
    else {
        return Vec::new();
    };
    if retprobe {
        return vec![if proto.ret == 0 {
            "    void".to_string()
        } else {
            format!("    {} retval", btf.type_to_string(proto.ret))
        }];
    }
    proto
        .params()
        .filter(|prm| {
            !matches!(
                btf.classify(prm.type_id),
                Ok(crate::btf::TypeClass::Float { .. })
            )
        })
        .enumerate()
        .map(|(n, prm)| format!("    {} arg{n}", btf.type_to_string(prm.type_id)))
        .collect()
}

/// `iter:NAME` for every iterator the kernel's BTF defines (a `struct bpf_iter__NAME` context;
/// the `__safe_trusted` variants 6.4 added are not iterators) whose name matches `pattern`,
/// sorted; with `verbose` each one's context fields (the `bpf_iter_NAME` prototype's
/// parameters after `meta`), as bpftrace lists them.
fn iter_lines(btf: &crate::btf::Btf, pattern: &str, verbose: bool) -> Vec<String> {
    let mut names: Vec<&str> = btf
        .types()
        .filter(|t| matches!(t.kind, crate::btf::TypeKind::Struct(_)))
        .filter_map(|t| t.name.strip_prefix("bpf_iter__"))
        .filter(|n| !n.ends_with("__safe_trusted") && glob_match(pattern, n))
        .collect();
    names.sort_unstable();
    names.dedup();
    let mut lines = Vec::new();
    for n in names {
        lines.push(format!("iter:{n}"));
        if !verbose {
            continue;
        }
        let proto = btf
            .find_func(&format!("bpf_iter_{n}"))
            .and_then(|id| btf.func_proto(id).ok());
        for p in proto.iter().flat_map(|p| p.params().skip(1)) {
            lines.push(format!("    {} {}", btf.type_to_string(p.type_id), p.name));
        }
    }
    lines
}

/// `-lv` lines for one target.
pub fn arg_lines(kind: ProbeKind, t: &Target, k: &dyn KernelInfo) -> Vec<String> {
    let mut lines = Vec::new();
    match &t.kind {
        TargetKind::Tracepoint { category, name } => {
            if let Ok(f) = k.tracepoint_format(category, name) {
                for fl in &f.fields {
                    let mut s = String::from("    ");
                    match fl.layout {
                        FieldLayout::Scalar => {
                            let _ = write!(s, "{} {}", fl.type_text, fl.name);
                        }
                        FieldLayout::Array { len } => {
                            let _ = write!(s, "{} {}[{len}]", fl.type_text, fl.name);
                        }
                        FieldLayout::FlexibleArray => {
                            let _ = write!(s, "{} {}[]", fl.type_text, fl.name);
                        }
                        FieldLayout::DataLoc | FieldLayout::RelLoc => {
                            let _ = write!(s, "__data_loc {}[] {}", fl.type_text, fl.name);
                        }
                    }
                    lines.push(s);
                }
            }
        }
        TargetKind::KernelFunc {
            module,
            func,
            btf_id,
            ..
        } if matches!(kind, ProbeKind::Fentry | ProbeKind::Fexit) => {
            let Ok(btf) = k.btf(module.as_deref()) else {
                return lines;
            };
            let Some(id) = btf_id.or_else(|| btf.find_func(func)) else {
                return lines;
            };
            if let Ok(p) = btf.func_proto(id) {
                for prm in p.params() {
                    lines.push(format!(
                        "    {} {}",
                        btf.type_to_string(prm.type_id),
                        prm.name
                    ));
                }
                // A void function has no return value to list (bpftrace's rule).
                if p.ret != 0 {
                    lines.push(format!("    {} retval", btf.type_to_string(p.ret)));
                }
            }
        }
        TargetKind::KernelFunc {
            module,
            func,
            btf_id,
            ..
        } if matches!(kind, ProbeKind::Kprobe | ProbeKind::Kretprobe) => {
            lines.extend(kprobe_arg_lines(
                kind == ProbeKind::Kretprobe,
                module,
                func,
                *btf_id,
                k,
            ));
        }
        TargetKind::RawTracepoint { module, name } => {
            let Ok(btf) = k.btf(module.as_deref()) else {
                return lines;
            };
            if let Ok(params) = btf.raw_tracepoint_args(name) {
                for prm in params {
                    lines.push(format!(
                        "    {} {}",
                        btf.type_to_string(prm.type_id),
                        prm.name
                    ));
                }
            }
        }
        TargetKind::User { path, func, .. } if kind == ProbeKind::Uprobe && !func.is_empty() => {
            // The function's DWARF parameters, as bpftrace lists them (`    int* n`).
            let f = crate::dwarf::for_binary(path)
                .ok()
                .and_then(|d| d.function(func).ok().flatten());
            for p in f.iter().flat_map(|f| &f.params) {
                lines.push(format!("    {} {}", p.type_name, p.name));
            }
        }
        TargetKind::Usdt { note, .. } => {
            for (i, a) in note.args.split_whitespace().enumerate() {
                lines.push(format!("    arg{i}: {a}"));
            }
        }
        _ => {}
    }
    lines
}

#[cfg(test)]
mod tests {
    use super::list_probes;
    use crate::kernel::info::MockKernel;

    fn list(pattern: &str) -> Vec<String> {
        list_probes(Some(pattern), true, &MockKernel::fixture()).expect("lists")
    }

    #[test]
    fn verbose_kprobes_list_btf_parameters_as_argn() {
        assert_eq!(
            list("kprobe:vfs_write"),
            [
                "kprobe:vfs_write",
                "    struct file * arg0",
                "    const char * arg1",
                "    size_t arg2",
                "    loff_t * arg3"
            ]
        );
    }

    #[test]
    fn verbose_kretprobes_list_the_return_type_or_void() {
        assert_eq!(
            list("kretprobe:vfs_write"),
            ["kretprobe:vfs_write", "    ssize_t retval"]
        );
        assert_eq!(
            list("kretprobe:wake_up_new_task"),
            ["kretprobe:wake_up_new_task", "    void"]
        );
    }

    #[test]
    fn verbose_fentry_of_a_void_function_lists_no_retval() {
        assert_eq!(
            list("fexit:wake_up_new_task"),
            [
                "fexit:vmlinux:wake_up_new_task",
                "    struct task_struct * p"
            ]
        );
    }
}
