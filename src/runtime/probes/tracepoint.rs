//! `tracepoint:CAT:NAME`: the tracefs id opened as a perf event, running a
//! `BPF_PROG_TYPE_TRACEPOINT` program (4.7). A tracepoint's BPF programs run for events on
//! every CPU and in every process (they hang off the tracepoint, not off the perf event), so
//! one event on one CPU is enough; `-p` filtering is the program's job.

use super::{attach_perf_events, load_program, sys_err, AttachContext, Attachment, ProbeError};
use crate::kernel::tracefs::Tracefs;
use crate::plan::ProbeSpec;
use crate::sys::PerfEvent;

pub fn attach(
    probe: &ProbeSpec,
    targets: &[(String, String)],
    ctx: &AttachContext<'_>,
) -> Result<Attachment, ProbeError> {
    let tracefs = Tracefs::open().map_err(|e| ProbeError::NoTarget {
        probe: probe.name.clone(),
        reason: e.to_string(),
    })?;
    let mut out = Attachment::default();
    // A wildcard's target that the kernel refuses is skipped with its reason (as fentry
    // targets are); a tracepoint named alone must attach.
    let wildcard = targets.len() > 1;
    for (i, (cat, name)) in targets.iter().enumerate() {
        let id = match tracefs.id(cat, name) {
            Ok(id) => id,
            Err(e) => {
                out.refused.push(format!("tracepoint:{cat}:{name}: {e}"));
                continue;
            }
        };
        let target = ProbeSpec {
            name: format!("tracepoint:{cat}:{name}"),
            ..probe.clone()
        };
        let attached = load_program(&target, i as u32, ctx).and_then(|prog| {
            let ev = PerfEvent::tracepoint(id as u64, -1, 0)
                .map_err(sys_err(&target, format!("opening tracepoint {cat}:{name}")))?;
            attach_perf_events(&target, prog, vec![ev])
        });
        match attached {
            Ok(a) => {
                out.attached += a.attached;
                out.objects.extend(a.objects);
            }
            Err(e) if wildcard && e.is_kernel_refusal() => {
                out.refused.push(format!("{e}; skipped"));
            }
            Err(e) => return Err(e),
        }
    }
    if out.attached == 0 {
        return Err(ProbeError::NoTarget {
            probe: probe.name.clone(),
            reason: format!(
                "no tracepoint could be attached ({})",
                out.refused.join("; ")
            ),
        });
    }
    Ok(out)
}
