//! `uprobe:BINARY:FUNC` / `uretprobe:`: the function glob resolved against the ELF's
//! `.symtab`/`.dynsym`, then one program for all of them through the loader (uprobe_multi on
//! 6.6+, else one perf uprobe per function). With `-p PID` the binary is opened through
//! `/proc/PID/root` (the process's mount namespace) and the probes fire in that process only.

use std::path::{Path, PathBuf};

use super::{map_fds, AttachContext, Attachment, ProbeError};
use crate::loader::{attach_multi, symbols::resolve_uprobe_site, MultiOptions, MultiTargets};
use crate::plan::ProbeSpec;
use crate::template::AttachKind;

/// The path to open for `binary` as seen by process `pid` (a path already under
/// `/proc/PID/root`, as target expansion gives for a process in another mount namespace, is
/// kept).
pub fn resolve_binary(binary: &Path, pid: Option<i32>) -> PathBuf {
    match pid {
        Some(pid) if binary.is_absolute() && !binary.starts_with(format!("/proc/{pid}/root")) => {
            let mut p = PathBuf::from(format!("/proc/{pid}/root"));
            p.push(binary.strip_prefix("/").unwrap_or(binary));
            p
        }
        _ => binary.to_path_buf(),
    }
}

/// Where a uprobe attach point goes: a function glob, a function and an offset in it, or a
/// link-time address.
pub struct Site<'a> {
    pub binary: &'a Path,
    pub func: &'a str,
    pub offset: u64,
    pub address: Option<u64>,
    /// `cpp:`: `func` also matches demangled C++ names.
    pub cpp: bool,
}

pub fn attach(
    probe: &ProbeSpec,
    site: &Site<'_>,
    retprobe: bool,
    ctx: &AttachContext<'_>,
) -> Result<Attachment, ProbeError> {
    let (binary, func) = (site.binary, site.func);
    let path = resolve_binary(binary, ctx.pid);
    // Checked as sema checks it (where an error names the script location); the binary may
    // have changed since, and `--unsafe` warnings are printed here, once.
    let (funcs, warning) = resolve_uprobe_site(
        &path,
        binary,
        crate::loader::symbols::FuncPattern {
            text: func,
            cpp: site.cpp,
        },
        site.offset,
        site.address,
        retprobe,
        ctx.unsafe_mode,
    )
    .map_err(|reason| ProbeError::NoTarget {
        probe: probe.name.clone(),
        reason,
    })?;
    if let Some(w) = warning {
        eprintln!("WARNING: {w}");
    }
    if funcs.is_empty() {
        return Err(ProbeError::NoTarget {
            probe: probe.name.clone(),
            reason: format!("no function matches `{func}` in {}", path.display()),
        });
    }
    // The kind decides entry or return, whatever the template was generated with.
    let mut template = probe.template.clone();
    template.attach = AttachKind::Uprobe { retprobe };
    let fds = map_fds(probe, &template, ctx)?;
    // `probe` of each target (its index is the target's cookie): bpftrace's
    // `uprobe:BINARY:FUNC` with the binary as written.
    let kind = if retprobe { "uretprobe" } else { "uprobe" };
    // bpftrace names an address probe by the address in decimal, an offset one `FUNC+OFF`.
    let target_names = if let Some(a) = site.address {
        vec![format!("{kind}:{}:{a}", binary.display())]
    } else if site.offset != 0 {
        vec![format!(
            "{kind}:{}:{func}+{}",
            binary.display(),
            site.offset
        )]
    } else {
        funcs
            .iter()
            .map(|f| format!("{kind}:{}:{}", binary.display(), f.name))
            .collect()
    };
    let targets = MultiTargets::User {
        path,
        funcs: funcs.into_iter().map(|f| (f.name, f.offset)).collect(),
        pid: ctx.pid,
    };
    // As in bpftrace, one function attaches as one perf uprobe and only several share a
    // uprobe_multi link. It also matters for `exit()`: a perf uprobe's close lets the traced
    // program run on (and be counted) until the kernel has removed it, as bpftrace's suite
    // expects (`intcast.Sum casted retval`); a uprobe_multi link's close removes the
    // breakpoints at once.
    let single = matches!(&targets, MultiTargets::User { funcs, .. } if funcs.len() == 1);
    let multi = MultiOptions {
        use_multi: match ctx.disabled.use_multi(true) {
            None if single => Some(false),
            u => u,
        },
        log_size: ctx.log_size,
        ..Default::default()
    };
    let (attached, via) =
        attach_multi(&template, &fds, &targets, &multi).map_err(|source| ProbeError::Loader {
            probe: probe.name.clone(),
            source: Box::new(source),
        })?;
    Ok(Attachment {
        attached: attached.attached(),
        refused: attached.refused.iter().map(|r| r.to_string()).collect(),
        objects: attached.into_objects(),
        via: Some(format!("{via:?}")),
        target_names: Some(target_names),
        notes: Vec::new(),
    })
}
