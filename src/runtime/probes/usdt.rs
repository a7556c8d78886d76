//! `usdt:BINARY:PROVIDER:NAME`: one probe site (a `.note.stapsdt` note) per [`ProbeSpec`],
//! attached as a perf uprobe at the site's file offset. A site with a semaphore gets the
//! uprobe PMU's `ref_ctr_offset`, so the kernel raises the semaphore in every process that
//! maps the binary (and in the `-p` process) while the probe exists, and lowers it when the
//! probe is closed — no writes to other processes' memory. (`ref_ctr_offset` is Linux 4.20;
//! strobe's ring buffers already need 5.8, so there is no older kernel to fall back for.)
//!
//! With `-p PID` the binary is opened through `/proc/PID/root` and the event counts only that
//! process; without it the probe fires in every process running the binary.

use std::path::Path;

use super::{attach_perf_events, load_program, sys_err, uprobe::resolve_binary};
use super::{AttachContext, Attachment, ProbeError};
use crate::kernel::info::UsdtNote;
use crate::kernel::usdt::locate;
use crate::plan::ProbeSpec;
use crate::sys::PerfEvent;

pub fn attach(
    probe: &ProbeSpec,
    binary: &Path,
    note: &UsdtNote,
    ctx: &AttachContext<'_>,
) -> Result<Attachment, ProbeError> {
    let path = resolve_binary(binary, ctx.pid);
    let site = locate(&path, note).map_err(|e| ProbeError::NoTarget {
        probe: probe.name.clone(),
        reason: e.to_string(),
    })?;
    let (pid, cpu) = match ctx.pid {
        Some(p) => (p, -1),
        None => (-1, 0),
    };
    let event = match site.semaphore_offset {
        Some(sema) => PerfEvent::uprobe_with_ref_ctr(&path, site.offset, sema, pid, cpu),
        None => PerfEvent::uprobe(&path, site.offset, false, pid, cpu),
    }
    .map_err(sys_err(
        probe,
        format!("opening a uprobe at {}+0x{:x}", path.display(), site.offset),
    ))?;
    let prog = load_program(probe, 0, ctx)?;
    attach_perf_events(probe, prog, vec![event])
}
