//! `rawtracepoint:NAME`: a plain `BPF_PROG_TYPE_RAW_TRACEPOINT` program attached with
//! BPF_RAW_TRACEPOINT_OPEN (4.17). Works on kernels that refuse BTF-enabled tracing programs
//! (this project's hosts, under lockdown); `args` are read by the program itself.

use super::{load_program, sys_err, AttachContext, Attachment, ProbeError};
use crate::loader::KernelObject;
use crate::plan::ProbeSpec;
use crate::sys::Link;

pub fn attach(
    probe: &ProbeSpec,
    targets: &[String],
    ctx: &AttachContext<'_>,
) -> Result<Attachment, ProbeError> {
    let mut out = Attachment::default();
    for (i, name) in targets.iter().enumerate() {
        let prog = load_program(probe, i as u32, ctx)?;
        let link = Link::raw_tracepoint_open(&prog, Some(name))
            .map_err(sys_err(probe, format!("opening raw tracepoint {name}")))?;
        out.objects.push(KernelObject::Link(link));
        out.objects.push(KernelObject::Prog(prog));
        out.attached += 1;
    }
    Ok(out)
}
