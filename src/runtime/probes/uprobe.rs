//! `uprobe:BINARY:FUNC` / `uretprobe:`: the function glob resolved against the ELF's
//! `.symtab`/`.dynsym`, then one program for all of them through the loader (uprobe_multi on
//! 6.6+, else one perf uprobe per function). With `-p PID` the binary is opened through
//! `/proc/PID/root` (the process's mount namespace) and the probes fire in that process only.

use std::path::{Path, PathBuf};

use super::{map_fds, AttachContext, Attachment, ProbeError};
use crate::loader::{attach_multi, symbols::elf_functions, MultiOptions, MultiTargets};
use crate::plan::ProbeSpec;
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

/// Where a uprobe attach point goes: a function glob, a function and an offset in it, or a
/// link-time address.
pub struct Site<'a> {
    pub binary: &'a Path,
    pub func: &'a str,
    pub offset: u64,
    pub address: Option<u64>,
}

const HINT_UNSAFE: &str = "\nUse --unsafe to force attachment. WARNING: This option could lead \
                           to data corruption in the target process.";

/// The targets of `site`, checked as bpftrace checks them: an address is named by the
/// function holding it; an offset must lie inside the function, and a uretprobe takes none.
/// strobe has no x86 disassembler, so an offset past the entry cannot be shown to start an
/// instruction: refused, as bpftrace built without offset support refuses it, unless
/// `--unsafe` (then attached there with a warning).
fn resolve_site(
    site: &Site<'_>,
    path: &Path,
    retprobe: bool,
    unsafe_mode: bool,
) -> Result<Vec<crate::loader::symbols::ElfFunc>, String> {
    let all = elf_functions(
        path,
        if site.address.is_some() {
            "*"
        } else {
            site.func
        },
    )
    .map_err(|e| format!("cannot read symbols of {}: {e}", path.display()))?;
    let (mut f, off) = match site.address {
        None if site.offset == 0 => return Ok(all),
        None => match all.into_iter().find(|f| f.name == site.func) {
            Some(f) => (f, site.offset),
            None => {
                return Err(format!(
                    "Could not resolve symbol: {}:{}",
                    site.binary.display(),
                    site.func
                ))
            }
        },
        Some(a) => match all
            .into_iter()
            .find(|f| a >= f.addr && a < f.addr + f.size.max(1))
        {
            Some(f) => {
                let off = a - f.addr;
                (f, off)
            }
            None => {
                return Err(format!(
                    "Could not resolve address: {}:0x{a:x} (no function holds it)",
                    site.binary.display()
                ))
            }
        },
    };
    let kind = if retprobe { "uretprobe" } else { "uprobe" };
    if retprobe && off != 0 {
        return Err(format!(
            "uretprobes cannot be attached at function offset. (address resolved to: {}+{off})",
            f.name
        ));
    }
    if off != 0 && off >= f.size {
        return Err(format!(
            "Offset outside the function bounds ('{}' size is {})",
            f.name, f.size
        ));
    }
    if off != 0 {
        let at = format!("{}:{}+{off}", site.binary.display(), f.name);
        if !unsafe_mode {
            return Err(format!(
                "Can't check if {kind} is in proper place (compiled without (k|u)probe offset \
                 support): {at}{HINT_UNSAFE}"
            ));
        }
        eprintln!("WARNING: Unchecked {kind}: {at}");
    }
    f.offset += off;
    Ok(vec![f])
}

pub fn attach(
    probe: &ProbeSpec,
    site: &Site<'_>,
    retprobe: bool,
    ctx: &AttachContext<'_>,
) -> Result<Attachment, ProbeError> {
    let (binary, func) = (site.binary, site.func);
    let path = resolve_binary(binary, ctx.pid);
    let funcs = resolve_site(site, &path, retprobe, ctx.unsafe_mode).map_err(|reason| {
        ProbeError::NoTarget {
            probe: probe.name.clone(),
            reason,
        }
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
