//! Shared by the ring buffer / perf buffer kernel tests and the throughput benchmark: the
//! programs that write records, and the few kernel objects they need, behind functions that
//! return `None` (after saying why) when this kernel or these privileges cannot provide them.
#![allow(dead_code)]

pub mod progs;
mod tmp_sys;

use std::os::fd::{AsRawFd, OwnedFd};

use progs::{emit_prog, Emit};

const BPF_MAP_TYPE_PERF_EVENT_ARRAY: u32 = 4;
const BPF_MAP_TYPE_PERCPU_ARRAY: u32 = 6;
const BPF_MAP_TYPE_RINGBUF: u32 = 27;
const BPF_PROG_TYPE_RAW_TRACEPOINT: u32 = 17;

/// A ring buffer map of `size` bytes, or `None` after reporting the skip for `test`.
pub fn ring_map(test: &str, size: u32) -> Option<OwnedFd> {
    match tmp_sys::map_create(BPF_MAP_TYPE_RINGBUF, 0, 0, size) {
        Ok(fd) => Some(fd),
        Err(e) => {
            strobe::testkit::skip(test, &format!("cannot create a BPF ring buffer map: {e}"));
            None
        }
    }
}

/// A perf event array with one slot per possible CPU.
pub fn perf_array(test: &str) -> Option<OwnedFd> {
    let slots = strobe::runtime::cpus::possible_cpu_slots().expect("sysfs cpu/possible") as u32;
    match tmp_sys::map_create(BPF_MAP_TYPE_PERF_EVENT_ARRAY, 4, 4, slots) {
        Ok(fd) => Some(fd),
        Err(e) => {
            strobe::testkit::skip(test, &format!("cannot create a perf event array: {e}"));
            None
        }
    }
}

/// The per-CPU `u64` array the programs count failed writes in.
pub fn lost_map(slots: u32) -> OwnedFd {
    tmp_sys::map_create(BPF_MAP_TYPE_PERCPU_ARRAY, 4, 8, slots).expect("per-CPU array map")
}

/// A raw_tp program writing records with `emit` into `map`, counting failures in
/// `lost[lost_slot]`; `None` after reporting the skip when raw_tp loads are refused.
pub fn load(
    test: &str,
    emit: Emit,
    map: &OwnedFd,
    lost: &OwnedFd,
    lost_slot: u32,
) -> Option<OwnedFd> {
    let insns = emit_prog(emit, map.as_raw_fd(), lost.as_raw_fd(), lost_slot);
    match tmp_sys::prog_load(BPF_PROG_TYPE_RAW_TRACEPOINT, &insns) {
        Ok(fd) => Some(fd),
        Err(e) => {
            strobe::testkit::skip(test, &format!("cannot load a raw_tracepoint program: {e}"));
            None
        }
    }
}

/// Runs `prog` once through BPF_PROG_TEST_RUN to write records `first .. first + count`
/// (`count` ≤ `progs::MAX_RECORDS_PER_RUN`); returns how many it tried to write.
pub fn run(prog: &OwnedFd, first: u64, count: u64) -> u64 {
    tmp_sys::test_run_raw_tp(prog.as_raw_fd(), &[first, count]).expect("BPF_PROG_TEST_RUN") as u64
}
