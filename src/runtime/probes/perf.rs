//! Perf-event probes: `interval:` (software cpu-clock on one CPU), `profile:` (cpu-clock on
//! every online CPU), `software:` and `hardware:` events on every online CPU. The program is a
//! `BPF_PROG_TYPE_PERF_EVENT` (4.9); one program serves every CPU's event.

use super::{attach_perf_events, load_program, sys_err, AttachContext, Attachment, ProbeError};
use crate::plan::{ProbeSpec, Sampling};
use crate::runtime::cpus::online_cpus;
use crate::sys::attr::PerfEventAttr;
use crate::sys::perf::{PerfFlags, PerfType};
use crate::sys::{PerfEvent, SoftwareEvent};

/// Which perf event.
#[derive(Clone, Copy, Debug)]
pub enum EventKind {
    /// A `perf_sw_ids` value.
    Software(u64),
    /// A `perf_hw_id` value.
    Hardware(u64),
}

/// `interval`: one cpu-clock event on CPU 0 (it fires on that CPU only, like bpftrace's).
pub fn interval(
    probe: &ProbeSpec,
    period_ns: u64,
    ctx: &AttachContext<'_>,
) -> Result<Attachment, ProbeError> {
    let prog = load_program(probe, 0, ctx)?;
    let cpu = online_cpus()
        .ok()
        .and_then(|c| c.first().copied())
        .unwrap_or(0);
    let ev = PerfEvent::software(
        SoftwareEvent::CpuClock,
        crate::sys::Sampling::Period(period_ns.max(1)),
        -1,
        cpu as i32,
    )
    .map_err(sys_err(probe, "opening a cpu-clock perf event"))?;
    attach_perf_events(probe, prog, vec![ev])
}

/// `profile`: the cpu-clock on every online CPU.
pub fn profile(
    probe: &ProbeSpec,
    sampling: Sampling,
    ctx: &AttachContext<'_>,
) -> Result<Attachment, ProbeError> {
    on_every_cpu(
        probe,
        EventKind::Software(SoftwareEvent::CpuClock as u64),
        sampling,
        ctx,
    )
}

/// One event of `kind` per online CPU, all running the same program.
pub fn on_every_cpu(
    probe: &ProbeSpec,
    kind: EventKind,
    sampling: Sampling,
    ctx: &AttachContext<'_>,
) -> Result<Attachment, ProbeError> {
    let prog = load_program(probe, 0, ctx)?;
    let cpus = online_cpus().map_err(|e| ProbeError::NoTarget {
        probe: probe.name.clone(),
        reason: format!("cannot read the online CPUs: {e}"),
    })?;
    let (type_, config) = match kind {
        EventKind::Software(c) => (PerfType::Software as u32, c),
        EventKind::Hardware(c) => (PerfType::Hardware as u32, c),
    };
    let (period, flags) = match sampling {
        Sampling::Period(p) => (p.max(1), PerfFlags::empty()),
        Sampling::Frequency(f) => (f.max(1), PerfFlags::FREQ),
    };
    let attr = PerfEventAttr {
        type_,
        config,
        sample_period: period,
        flags: flags.bits(),
        ..Default::default()
    };
    let pmu = match kind {
        EventKind::Software(_) => "software",
        EventKind::Hardware(_) => "hardware",
    };
    let mut events = Vec::with_capacity(cpus.len());
    for cpu in cpus {
        events.push(
            PerfEvent::open(&attr, -1, cpu as i32, None, pmu).map_err(sys_err(
                probe,
                format!("opening a {pmu} perf event on CPU {cpu}"),
            ))?,
        );
    }
    attach_perf_events(probe, prog, events)
}
