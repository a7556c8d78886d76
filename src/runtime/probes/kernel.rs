//! `kprobe:`/`kretprobe:` and `fentry:`/`fexit:`: delegated to the clone loader (kprobe_multi
//! or perf kprobes; one fentry clone per BTF target, loaded in parallel). On this project's
//! hosts both are refused (no kprobes; tracing programs EPERM under lockdown): the VM harness
//! runs them.

use super::{map_fds, AttachContext, Attachment, ProbeError};
use crate::loader::{
    attach_multi, load_clones, CloneTarget, LoadOptions, MultiOptions, MultiTargets,
};
use crate::runtime::plan::ProbeSpec;
use crate::template::AttachKind;

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
    let targets = MultiTargets::Kernel {
        funcs: funcs.to_vec(),
    };
    let (a, via) =
        attach_multi(&template, &fds, &targets, &MultiOptions::default()).map_err(|source| {
            ProbeError::Loader {
                probe: probe.name.clone(),
                source: Box::new(source),
            }
        })?;
    Ok(Attachment {
        attached: a.attached(),
        refused: a.refused.iter().map(|r| r.to_string()).collect(),
        objects: a.into_objects(),
        via: Some(format!("{via:?}")),
    })
}

pub fn fentry(
    probe: &ProbeSpec,
    targets: &[CloneTarget],
    ctx: &AttachContext<'_>,
) -> Result<Attachment, ProbeError> {
    let fds = map_fds(probe, &probe.template, ctx)?;
    let a =
        load_clones(&probe.template, &fds, targets, &LoadOptions::default()).map_err(|source| {
            ProbeError::Loader {
                probe: probe.name.clone(),
                source: Box::new(source),
            }
        })?;
    Ok(Attachment {
        attached: a.attached(),
        refused: a.refused.iter().map(|r| r.to_string()).collect(),
        objects: a.into_objects(),
        via: None,
    })
}
