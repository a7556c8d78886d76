//! `iter:NAME`: a BPF iterator. The program is BPF_PROG_TYPE_TRACING with expected
//! attach type BPF_TRACE_ITER, loaded against the kernel's `bpf_iter_NAME` BTF function
//! (kernel/bpf/bpf_iter.c, `DEFINE_BPF_ITER_FUNC`), and attached by a BPF_TRACE_ITER link
//! (5.8+; `-p` limits task iterators to one process from 6.1). Nothing runs until the
//! runtime creates an iterator from the link (BPF_ITER_CREATE) and reads it: [`run`] reads it
//! to the end, which runs the program once per object. (`iter:NAME:PIN` is refused when
//! lowering: a pinned iterator's readers see only what the program writes to its seq file.)
//!
//! Kernels that refuse tracing programs (this project's hosts, under lockdown) refuse the
//! load; the error says so.

use std::io::Read;

use super::{AttachContext, Attachment, ProbeError};
use crate::loader::KernelObject;
use crate::plan::ProbeSpec;
use crate::sys::{Link, LinkTarget};

/// Loads the iterator program for `bpf_iter_NAME` (BTF id `btf_id` in vmlinux) and creates
/// its link; the link is the attachment's first object.
pub fn attach(
    probe: &ProbeSpec,
    btf_id: u32,
    ctx: &AttachContext<'_>,
) -> Result<Attachment, ProbeError> {
    // Before 6.1 the kernel takes the pid in the link's iterator info and ignores it
    // (kernel/bpf/task_iter.c gained `bpf_iter_attach_task` in 6.1): every task would be
    // visited, so `-p` is refused there rather than quietly ignored.
    if ctx.pid.is_some() {
        let release = crate::sys::env::kernel_release();
        if crate::sys::env::parse_version(&release) < (6, 1, 0) {
            return Err(ProbeError::NoTarget {
                probe: probe.name.clone(),
                reason: format!(
                    "iterators limited to one process (-p) need Linux 6.1 (the task iterator's \
                     pid filter); this kernel is {release}"
                ),
            });
        }
    }
    let prog = super::load_program_with(probe, 0, ctx, |o| {
        o.expected_attach_type = probe.id.load_types().1;
        o.attach_btf_id = btf_id;
    })?;
    let link = Link::create(
        &prog,
        &LinkTarget::Iter {
            pid: ctx.pid.map(|p| p as u32),
        },
    )
    .map_err(super::sys_err(probe, "creating the iterator link"))?;
    Ok(Attachment {
        objects: vec![KernelObject::Link(link), KernelObject::Prog(prog)],
        attached: 1,
        ..Attachment::default()
    })
}

/// Runs the iterator of `link` once: reads it to the end. Strobe's programs write their
/// output to the ring buffer, not to the iterator's seq file, so what is read is normally
/// empty; it is returned anyway.
pub fn run(probe: &str, link: &Link) -> Result<Vec<u8>, ProbeError> {
    let mut file = link.iter_create().map_err(|source| ProbeError::Sys {
        probe: probe.to_string(),
        what: "creating the iterator (BPF_ITER_CREATE)".into(),
        source,
    })?;
    let mut text = Vec::new();
    file.read_to_end(&mut text).map_err(|e| ProbeError::Sys {
        probe: probe.to_string(),
        what: "reading the iterator".into(),
        source: crate::sys::SysError::bare(
            "read",
            crate::sys::Errno(e.raw_os_error().unwrap_or(libc::EIO)),
        ),
    })?;
    Ok(text)
}
