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
//! The driver reads them twice, when arming and after disarming, and reports the difference:
//! a run skipped while the probes were attached but disarmed loses nothing.
//!
//! Input: the run's owned kernel objects. Output: [`KernelMisses`]. One
//! BPF_OBJ_GET_INFO_BY_FD per program and per link of a kind that counts misses (not the
//! trampoline links); objects whose info the kernel refuses count nothing.

use std::os::fd::AsFd;

use super::report::KernelObject;

/// Above this many objects, [`KernelMisses::of`] reads on several threads.
pub const PARALLEL_ABOVE: usize = 4096;

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

    /// Reads the counters of every program and link in `objects`: about 1.7 µs per object on
    /// the 6.18 host (1,601 raw tracepoint clones in 2.7 ms), so tens of thousands of
    /// trampoline clones cost tens of milliseconds; past [`PARALLEL_ABOVE`] objects the calls
    /// are spread over one thread per CPU.
    pub fn of(objects: &[KernelObject]) -> KernelMisses {
        sum_over(objects, PARALLEL_ABOVE, KernelMisses::of_object)
    }

    /// What was skipped after `before` (an earlier reading of the same objects).
    pub fn since(&self, before: &KernelMisses) -> KernelMisses {
        KernelMisses {
            probe: self.probe.saturating_sub(before.probe),
            recursion: self.recursion.saturating_sub(before.recursion),
        }
    }

    fn of_object(o: &KernelObject) -> KernelMisses {
        match o {
            KernelObject::Prog(p) => KernelMisses {
                recursion: crate::sys::info::prog_info(p.as_fd()).map_or(0, |i| i.recursion_misses),
                ..Default::default()
            },
            KernelObject::Link(l) if !l.may_count_misses() => KernelMisses::default(),
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

/// The sum of `f` over `items`, on one thread per CPU when there are more than
/// `parallel_above`.
fn sum_over<T: Sync>(
    items: &[T],
    parallel_above: usize,
    f: impl Fn(&T) -> KernelMisses + Sync,
) -> KernelMisses {
    let sum = |part: &[T]| {
        let mut m = KernelMisses::default();
        for o in part {
            m += f(o);
        }
        m
    };
    let threads = std::thread::available_parallelism().map_or(1, |n| n.get());
    if items.len() <= parallel_above || threads < 2 {
        return sum(items);
    }
    let chunk = items.len().div_ceil(threads);
    std::thread::scope(|s| {
        let parts: Vec<_> = items
            .chunks(chunk)
            .map(|part| s.spawn(move || sum(part)))
            .collect();
        let mut m = KernelMisses::default();
        for p in parts {
            // A panicking reader (never expected) counts nothing rather than ending the run.
            m += p.join().unwrap_or_default();
        }
        m
    })
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
    fn parallel_and_sequential_sums_agree() {
        let items: Vec<u64> = (0..10_000).collect();
        let f = |&i: &u64| KernelMisses {
            probe: i % 3,
            recursion: i % 7,
        };
        let seq = sum_over(&items, usize::MAX, f);
        assert_eq!(sum_over(&items, 0, f), seq);
        assert_eq!(sum_over(&items, 100, f), seq);
        let want_probe: u64 = items.iter().map(|i| i % 3).sum();
        let want_rec: u64 = items.iter().map(|i| i % 7).sum();
        assert_eq!((seq.probe, seq.recursion), (want_probe, want_rec));
    }

    #[test]
    fn since_counts_only_the_growth() {
        let before = KernelMisses {
            probe: 3,
            recursion: 10,
        };
        let after = KernelMisses {
            probe: 5,
            recursion: 10,
        };
        assert_eq!(
            after.since(&before),
            KernelMisses {
                probe: 2,
                recursion: 0
            }
        );
        // A counter read lower later (an object gone between the readings) counts nothing.
        assert_eq!(before.since(&after).probe, 0);
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
