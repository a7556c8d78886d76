//! The events the kernel skipped without running strobe's programs: read at the end of a run
//! (after disarming, before detaching) so results that undercount say so.
//!
//! Two counters, both kept by the kernel per object:
//! - a kprobe_multi or kprobe.session link's `missed` (and a kprobe perf link's): the fprobe or
//!   kprobe layer did not run the program, e.g. an fprobe with an exit handler found its fixed
//!   pool of return slots empty (6.10–6.13: functions × possible CPUs × 2), or the probe fired
//!   inside another probe (`kernel/trace/fprobe.c`, `kernel/kprobes.c`);
//! - a program's `recursion_misses`: a kprobe, tracepoint or perf event program skipped because
//!   a BPF program was already running on that CPU (`bpf_prog_active`, `trace_call_bpf` in
//!   `kernel/trace/bpf_trace.c`), a trampoline or raw tracepoint program because the same
//!   program was already running there (5.12+).
//!
//! Input: the run's owned kernel objects. Output: [`KernelMisses`]. One
//! BPF_OBJ_GET_INFO_BY_FD per program and per link; objects whose info the kernel refuses
//! count nothing.

use std::os::fd::AsFd;

use super::report::KernelObject;

/// What the kernel skipped over a run's objects.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct KernelMisses {
    /// Skipped by kprobe_multi/kprobe.session links and kprobe perf links (their `missed`).
    pub probe: u64,
    /// Skipped because a BPF program was already running on the CPU (`recursion_misses`).
    pub recursion: u64,
}

impl KernelMisses {
    pub fn total(&self) -> u64 {
        self.probe.saturating_add(self.recursion)
    }

    /// Reads the counters of every program and link in `objects`.
    pub fn of(objects: &[KernelObject]) -> KernelMisses {
        let mut m = KernelMisses::default();
        for o in objects {
            m += KernelMisses::of_object(o);
        }
        m
    }

    fn of_object(o: &KernelObject) -> KernelMisses {
        match o {
            KernelObject::Prog(p) => KernelMisses {
                recursion: crate::sys::info::prog_info(p.as_fd()).map_or(0, |i| i.recursion_misses),
                ..Default::default()
            },
            KernelObject::Link(l) => KernelMisses {
                probe: crate::sys::info::link_info(l.as_fd())
                    .ok()
                    .and_then(|i| i.missed())
                    .unwrap_or(0),
                ..Default::default()
            },
            // A perf event's program is a `Prog` of its own; `Fd`s are not probes.
            KernelObject::Event(_) | KernelObject::Fd(_) => KernelMisses::default(),
        }
    }
}

impl std::ops::AddAssign for KernelMisses {
    fn add_assign(&mut self, o: KernelMisses) {
        self.probe = self.probe.saturating_add(o.probe);
        self.recursion = self.recursion.saturating_add(o.recursion);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn nothing_missed_without_objects() {
        assert_eq!(KernelMisses::of(&[]), KernelMisses::default());
        assert_eq!(KernelMisses::default().total(), 0);
    }

    #[test]
    fn sums_saturate() {
        let mut m = KernelMisses {
            probe: u64::MAX,
            recursion: 1,
        };
        m += KernelMisses {
            probe: 1,
            recursion: 1,
        };
        assert_eq!(m.probe, u64::MAX);
        assert_eq!(m.recursion, 2);
        assert_eq!(m.total(), u64::MAX);
    }
}
