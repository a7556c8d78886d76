//! `uprobe:BINARY:FUNC` / `uretprobe:`: the function glob resolved against the ELF's
//! `.symtab`/`.dynsym`, then one program for all of them through the loader (uprobe_multi on
//! 6.6+, else one perf uprobe per function). With `-p PID` the binary is opened through
//! `/proc/PID/root` (the process's mount namespace) and the probes fire in that process only.

use std::path::{Path, PathBuf};

use super::{map_fds, AttachContext, Attachment, ProbeError};
use crate::loader::{attach_multi, symbols::elf_functions, MultiOptions, MultiTargets};
use crate::runtime::plan::ProbeSpec;
use crate::template::AttachKind;

/// The path to open for `binary` as seen by process `pid`.
pub fn resolve_binary(binary: &Path, pid: Option<i32>) -> PathBuf {
    match pid {
        Some(pid) if binary.is_absolute() => {
            let mut p = PathBuf::from(format!("/proc/{pid}/root"));
            p.push(binary.strip_prefix("/").unwrap_or(binary));
            p
        }
        _ => binary.to_path_buf(),
    }
}

pub fn attach(
    probe: &ProbeSpec,
    binary: &Path,
    func: &str,
    retprobe: bool,
    ctx: &AttachContext<'_>,
) -> Result<Attachment, ProbeError> {
    let path = resolve_binary(binary, ctx.pid);
    let funcs = elf_functions(&path, func).map_err(|e| ProbeError::NoTarget {
        probe: probe.name.clone(),
        reason: format!("cannot read symbols of {}: {e}", path.display()),
    })?;
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
    let target_names = funcs
        .iter()
        .map(|f| format!("{kind}:{}:{}", binary.display(), f.name))
        .collect();
    let targets = MultiTargets::User {
        path,
        funcs: funcs.into_iter().map(|f| (f.name, f.offset)).collect(),
        pid: ctx.pid,
    };
    let (attached, via) = attach_multi(&template, &fds, &targets, &MultiOptions::default())
        .map_err(|source| ProbeError::Loader {
            probe: probe.name.clone(),
            source: Box::new(source),
        })?;
    Ok(Attachment {
        attached: attached.attached(),
        refused: attached.refused.iter().map(|r| r.to_string()).collect(),
        objects: attached.into_objects(),
        via: Some(format!("{via:?}")),
        target_names: Some(target_names),
    })
}
