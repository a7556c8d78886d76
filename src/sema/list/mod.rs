//! `strobe -l [PATTERN]` and `-lv`: the probes a pattern names, one per line, in bpftrace's
//! spelling (`fentry:vmlinux:vfs_read`, `tracepoint:syscalls:sys_enter_read`,
//! `rawtracepoint:vmlinux:sched_switch`, `kprobe:vfs_read`), and with `-lv` their arguments
//! indented by four spaces (`    struct file * file`, fexit/fentry also `    ssize_t retval`).
//!
//! Uses the same expansion as attaching ([`super::expand`]), so what `-l` shows is what a
//! probe with that pattern would attach to. `kfunc`/`kretfunc` are accepted and listed under
//! their current names `fentry`/`fexit`.

crate::kinds::kind_modules!();

use super::expand::{expand, Target};
use crate::kernel::info::KernelInfo;
use crate::syntax::ast::ProbeKind;
use crate::syntax::attach::{glob_match, parse_attach_point};

/// How `-l` lists a kind, from the kind's file here.
struct Hooks {
    /// The kinds it is for (none: [`PLAIN`]).
    kinds: &'static [ProbeKind],
    /// Lists the kind itself, not through expansion (names that are not targets: software
    /// and hardware events, iterators): `(kind, rest of the pattern, verbose, kernel, lines,
    /// problems)`.
    own: Option<OwnListing>,
    /// The attach-point text after `kind:` to expand for the rest of the pattern, given
    /// whether the kind was written `*`.
    pattern: fn(ProbeKind, &str, bool) -> String,
    /// One line per target name however many targets share it (usdt sites), sorted.
    once_per_name: bool,
    /// `-lv` lines for one target.
    arg_lines: fn(ProbeKind, &Target, &dyn KernelInfo) -> Vec<String>,
}

type OwnListing = fn(ProbeKind, &str, bool, &dyn KernelInfo, &mut Vec<String>, &mut Vec<String>);

/// Kinds listed by expanding their pattern as written, without argument lines.
const PLAIN: Hooks = Hooks {
    kinds: &[],
    own: None,
    pattern: |_, rest, _| rest.to_string(),
    once_per_name: false,
    arg_lines: |_, _, _| Vec::new(),
};

/// The listers, one per kind in [`crate::kinds::KINDS`]' order.
const LISTERS: [&Hooks; crate::kinds::KINDS.len()] = crate::kinds::kind_table!();

fn hooks(kind: ProbeKind) -> &'static Hooks {
    let h = LISTERS[kind as usize];
    debug_assert!(h.kinds.is_empty() || h.kinds.contains(&kind));
    h
}

/// `*:rest` when the rest names no binary or category (`uprobe:PATTERN`, `usdt:PATTERN`:
/// the function in every binary; with `-p`, every object of the process).
fn in_every_file(rest: &str) -> String {
    if rest.contains(':') {
        rest.to_string()
    } else {
        format!("*:{rest}")
    }
}

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
        let h = hooks(kind);
        match h.own {
            Some(own) => own(kind, rest, verbose, k, &mut out, &mut problems),
            None => list_kind(
                kind,
                &(h.pattern)(kind, rest, kind_pat == "*"),
                verbose,
                k,
                &mut out,
                &mut problems,
            ),
        }
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
        if hooks(kind).once_per_name {
            targets.sort_by(|a, b| a.name.cmp(&b.name));
            targets.dedup_by(|a, b| a.name == b.name);
        }
        for t in &targets {
            out.push(t.name.clone());
            if verbose {
                out.extend((hooks(kind).arg_lines)(kind, t, k));
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::{list_probes, LISTERS};
    use crate::kernel::info::MockKernel;

    #[test]
    fn the_lister_table_has_one_entry_per_kind_in_order() {
        for (i, k) in crate::kinds::KINDS.iter().enumerate() {
            let h = LISTERS[i];
            assert!(
                h.kinds.is_empty() || h.kinds.contains(&k.kind),
                "{} is out of place",
                k.name
            );
        }
    }

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
