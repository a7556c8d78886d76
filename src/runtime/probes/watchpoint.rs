//! `watchpoint:ADDR:LEN:MODE` (and `asyncwatchpoint:`, which is the same here): a hardware
//! breakpoint perf event (`PERF_TYPE_BREAKPOINT`, `bp_addr`/`bp_len`/`bp_type`,
//! include/uapi/linux/hw_breakpoint.h) running a perf_event program on every hit. With
//! `-p PID` it watches that process's address; without, it watches the address on every
//! online CPU whatever runs there (as bpftrace 0.17 does). The kernel decides which lengths
//! and modes the CPU supports (x86: 1, 2, 4 or 8 bytes; `r` alone is refused, `x` needs 8)
//! and its refusal is reported as is.

use super::{attach_perf_events, load_program, sys_err, AttachContext, Attachment, ProbeError};
use crate::plan::ProbeSpec;
use crate::runtime::cpus::online_cpus;
use crate::sys::attr::PerfEventAttr;
use crate::sys::PerfEvent;

/// `PERF_TYPE_BREAKPOINT` (include/uapi/linux/perf_event.h).
const PERF_TYPE_BREAKPOINT: u32 = 5;

pub fn attach(
    probe: &ProbeSpec,
    address: u64,
    len: u64,
    bp_type: u32,
    ctx: &AttachContext<'_>,
) -> Result<Attachment, ProbeError> {
    let attr = PerfEventAttr {
        type_: PERF_TYPE_BREAKPOINT,
        bp_type,
        config1: address,
        config2: len,
        sample_period: 1,
        wakeup_events: 1,
        ..Default::default()
    };
    let places: Vec<(i32, i32)> = match ctx.pid {
        Some(pid) => vec![(pid, -1)],
        None => online_cpus()
            .map_err(|e| ProbeError::NoTarget {
                probe: probe.name.clone(),
                reason: format!("cannot read the online CPUs: {e}"),
            })?
            .into_iter()
            .map(|c| (-1, c as i32))
            .collect(),
    };
    let mut events = Vec::with_capacity(places.len());
    for (pid, cpu) in places {
        events.push(
            PerfEvent::open(&attr, pid, cpu, None, "breakpoint").map_err(sys_err(
                probe,
                format!("opening a {len}-byte hardware breakpoint at 0x{address:x}"),
            ))?,
        );
    }
    let prog = load_program(probe, 0, ctx)?;
    attach_perf_events(probe, prog, events)
}
