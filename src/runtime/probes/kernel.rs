//! `kprobe:`/`kretprobe:` and `fentry:`/`fexit:`: delegated to the clone loader (kprobe_multi
//! or perf kprobes; fentry/fexit through kprobe_multi groups or one trampoline clone per BTF
//! target, loaded in parallel: `loader::attach_fentry` decides). On this project's
//! hosts both are refused (no kprobes; tracing programs EPERM under lockdown): the VM harness
//! runs them.

use super::{map_fds, AttachContext, Attachment, ProbeError};
use crate::loader::{
    attach_fentry, attach_multi, CloneTarget, FentryOptions, KernelObject, LoadOptions,
    MultiOptions, MultiTargets,
};
use crate::plan::ProbeSpec;
use crate::template::{AttachKind, Template};

pub fn kprobe(
    probe: &ProbeSpec,
    funcs: &[String],
    retprobe: bool,
    ctx: &AttachContext<'_>,
) -> Result<Attachment, ProbeError> {
    // The kind decides entry or return, whatever the template was generated with.
    let mut template = probe.template.clone();
    template.attach = AttachKind::Kprobe { retprobe };
    let fds = map_fds(probe, &template, ctx)?;
    let (funcs, not_injectable) = error_injection_filter(&template, funcs);
    let targets = MultiTargets::Kernel { funcs };
    let multi = MultiOptions {
        use_multi: ctx.disabled.use_multi(false),
        log_size: ctx.log_size,
        ..Default::default()
    };
    let (a, via) =
        attach_multi(&template, &fds, &targets, &multi).map_err(|source| ProbeError::Loader {
            probe: probe.name.clone(),
            source: Box::new(source),
        })?;
    let mut refused: Vec<String> = a.refused.iter().map(|r| r.to_string()).collect();
    refused.extend(not_injectable);
    Ok(Attachment {
        attached: a.attached(),
        refused,
        objects: a.into_objects(),
        via: Some(format!("{via:?}")),
        target_names: None,
        notes: Vec::new(),
    })
}

/// `bpf_override_return` (`override()`): the kernel attaches such a program only to
/// functions on its error-injection list (`ALLOW_ERROR_INJECTION`;
/// kernel/trace/bpf_trace.c refuses others with EINVAL). When the list is readable
/// (`/sys/kernel/debug/error_injection/list`, debugfs), functions not on it are refused here
/// with that reason instead of a bare EINVAL.
fn error_injection_filter(
    template: &crate::template::Template,
    funcs: &[String],
) -> (Vec<String>, Vec<String>) {
    use crate::asm::isa::{CallKind, Helper, CODE_CALL};
    let override_return = Helper::OverrideReturn.id() as i32;
    let overrides = template.insns.iter().any(|i| {
        i.code == CODE_CALL && i.src() == CallKind::Helper.value() && i.imm == override_return
    });
    let list = if overrides {
        std::fs::read_to_string("/sys/kernel/debug/error_injection/list").ok()
    } else {
        None
    };
    let Some(list) = list else {
        return (funcs.to_vec(), Vec::new());
    };
    let (ok, bad): (Vec<String>, Vec<String>) = funcs
        .iter()
        .cloned()
        .partition(|f| error_injectable(&list, f));
    let bad = bad
        .into_iter()
        .map(|f| {
            format!(
                "{f}: override() needs a function on the kernel's error-injection list \
                 (/sys/kernel/debug/error_injection/list)"
            )
        })
        .collect();
    (ok, bad)
}

/// Whether `func` is on an `error_injection/list` text (`name\tTYPE` lines).
pub fn error_injectable(list: &str, func: &str) -> bool {
    list.lines()
        .any(|l| l.split_whitespace().next() == Some(func))
}

pub fn fentry(
    probe: &ProbeSpec,
    targets: &[CloneTarget],
    multi_template: Option<&Template>,
    session_kfuncs: Option<&Result<(u32, u32), String>>,
    ctx: &AttachContext<'_>,
) -> Result<Attachment, ProbeError> {
    let fds = map_fds(probe, &probe.template, ctx)?;
    let multi_fds = match multi_template {
        Some(t) => Some(map_fds(probe, t, ctx)?),
        None => None,
    };
    let shared = multi_template.zip(multi_fds.as_deref());
    // Functions of loaded BPF programs (`fentry:bpf:`) are reached through trampolines only.
    let targets = with_target_progs(probe, targets)?;
    let bpf_progs = targets.iter().any(|t| t.prog.is_some());
    let opts = FentryOptions {
        via: if bpf_progs || ctx.disabled.kprobe_multi {
            crate::loader::FentryVia::Trampoline
        } else {
            ctx.fentry_via
        },
        load: LoadOptions {
            log_size: ctx.log_size,
            ..Default::default()
        },
        session: if reads_args_at_exit(&probe.template) {
            session_support(ctx, session_kfuncs)
        } else {
            Default::default()
        },
        session_entries: ctx.session_entries,
    };
    let filter_functions = crate::kernel::ftrace_filter::filter_functions;
    let a = crate::timings::time("attach_fentry", || {
        attach_fentry(
            &probe.template,
            &fds,
            shared,
            &targets,
            &opts,
            &filter_functions,
        )
    })
    .map_err(|source| ProbeError::Loader {
        probe: probe.name.clone(),
        source: Box::new(source),
    })?;
    let attached = a.attached();
    let notes = a.groups.iter().map(|g| g.to_string()).collect();
    let via = match (a.multi.is_empty(), a.clones.is_none()) {
        (true, _) => None,
        (false, true) => Some("KprobeMulti".to_string()),
        (false, false) => Some("KprobeMulti and trampolines".to_string()),
    };
    let mut objects = Vec::new();
    let mut refused = Vec::new();
    for (prog, link, _) in a.multi {
        objects.push(KernelObject::Link(link));
        objects.push(KernelObject::Prog(prog));
    }
    if let Some(c) = a.clones {
        refused = c.refused.iter().map(|r| r.to_string()).collect();
        objects.extend(c.into_objects());
    }
    Ok(Attachment {
        attached,
        refused,
        objects,
        via,
        target_names: None,
        notes,
    })
}

/// An fexit program reading `args`.
fn reads_args_at_exit(t: &Template) -> bool {
    t.attach == crate::template::AttachKind::Fexit
        && t.relocs
            .iter()
            .any(|r| matches!(r.kind, crate::template::RelocKind::ArgSlot { .. }))
}

/// Whether fexit groups reading arguments may load as kprobe.session programs: the session
/// kfuncs the checker found in vmlinux BTF (6.10+), unless `--no-feature kprobe_session`. A
/// kernel that has them but refuses the program or its link sends the group to trampolines
/// with the reason.
fn session_support(
    ctx: &AttachContext<'_>,
    kfuncs: Option<&Result<(u32, u32), String>>,
) -> crate::loader::SessionSupport {
    use crate::loader::{SessionKfuncs, SessionSupport};
    if ctx.disabled.kprobe_session {
        return SessionSupport::No("--no-feature kprobe_session".into());
    }
    match kfuncs {
        Some(Ok((is_return, cookie))) => SessionSupport::Yes(SessionKfuncs {
            is_return: *is_return,
            cookie: *cookie,
        }),
        Some(Err(why)) => SessionSupport::No(why.clone()),
        None => SessionSupport::default(),
    }
}

/// `fentry:bpf:` targets get an fd of the program they trace. `union bpf_attr` keeps
/// `attach_prog_fd` and `attach_btf_obj_fd` in one field and the kernel tries a program fd
/// there first (kernel/bpf/syscall.c, `bpf_prog_load`), so the fd goes where a module's BTF
/// object would.
fn with_target_progs<'a>(
    probe: &ProbeSpec,
    targets: &'a [CloneTarget],
) -> Result<std::borrow::Cow<'a, [CloneTarget]>, ProbeError> {
    if targets.iter().all(|t| t.prog.is_none()) {
        return Ok(std::borrow::Cow::Borrowed(targets));
    }
    let mut out = targets.to_vec();
    for t in out.iter_mut() {
        let Some(id) = t.prog else { continue };
        match crate::sys::info::prog_fd_by_id(id) {
            Ok(Some(fd)) => t.btf_obj = Some(std::sync::Arc::new(fd)),
            Ok(None) => {
                return Err(ProbeError::NoTarget {
                    probe: probe.name.clone(),
                    reason: format!("BPF program {id} ({}) is no longer loaded", t.name),
                })
            }
            Err(e) => {
                return Err(ProbeError::NoTarget {
                    probe: probe.name.clone(),
                    reason: format!("cannot open BPF program {id} ({}): {e}", t.name),
                })
            }
        }
    }
    Ok(std::borrow::Cow::Owned(out))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn error_injection_list_is_matched_by_function_name() {
        let list = "should_failslab\tERRNO\n__x64_sys_open\tERRNO\nopen_ctree\tERRNO\n";
        assert!(error_injectable(list, "should_failslab"));
        assert!(error_injectable(list, "open_ctree"));
        assert!(!error_injectable(list, "should_fail"));
        assert!(!error_injectable(list, "vfs_read"));
    }
}
