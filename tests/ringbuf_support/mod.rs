//! Shared by the ring buffer / perf buffer kernel tests and the throughput benchmark: the
//! programs that write records, and the few kernel objects they need, behind functions that
//! return `None` (after saying why) when this kernel or these privileges cannot provide them.
#![allow(dead_code)]

pub mod progs;

use std::os::fd::{AsFd, AsRawFd};

use progs::{emit_prog, Emit};
use strobe::runtime::perfbuf::{PerfBuf, PerfBufError, PerfBufOptions};
use strobe::sys::{
    Map, MapCreateOptions, MapType, Prog, ProgLoadOptions, ProgType, TestRunFlags, TestRunOptions,
};

fn create(
    map_type: MapType,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
) -> Result<Map, String> {
    let opts = MapCreateOptions {
        key_size,
        value_size,
        max_entries,
        ..Default::default()
    };
    Map::create(map_type, &opts).map_err(|e| e.to_string())
}

/// A ring buffer map of `size` bytes, or `None` after reporting the skip for `test`.
pub fn ring_map(test: &str, size: u32) -> Option<Map> {
    match create(MapType::Ringbuf, 0, 0, size) {
        Ok(map) => Some(map),
        Err(e) => {
            strobe_testkit::skip(test, &format!("cannot create a BPF ring buffer map: {e}"));
            None
        }
    }
}

/// A perf event array with one slot per possible CPU.
pub fn perf_array(test: &str) -> Option<Map> {
    let slots = strobe::sys::map::possible_cpus() as u32;
    match create(MapType::PerfEventArray, 4, 4, slots) {
        Ok(map) => Some(map),
        Err(e) => {
            strobe_testkit::skip(test, &format!("cannot create a perf event array: {e}"));
            None
        }
    }
}

/// The per-CPU `u64` array the programs count failed writes in.
pub fn lost_map(slots: u32) -> Map {
    create(MapType::PercpuArray, 4, 8, slots).expect("per-CPU array map")
}

/// A raw_tp program writing records with `emit` into `map`, counting failures in
/// `lost[lost_slot]`; `None` after reporting the skip when raw_tp loads are refused.
pub fn load(test: &str, emit: Emit, map: &Map, lost: &Map, lost_slot: u32) -> Option<Prog> {
    let insns = emit_prog(emit, map.as_raw_fd(), lost.as_raw_fd(), lost_slot);
    match Prog::load(&ProgLoadOptions::new(ProgType::RawTracepoint, &insns)) {
        Ok(prog) => Some(prog),
        Err(e) => {
            strobe_testkit::skip(test, &format!("cannot load a raw_tracepoint program: {e}"));
            None
        }
    }
}

/// Runs `prog` once through BPF_PROG_TEST_RUN to write records `first .. first + count`
/// (`count` ≤ `progs::MAX_RECORDS_PER_RUN`); returns how many it tried to write.
pub fn run(prog: &Prog, first: u64, count: u64) -> u64 {
    let args = [first, count];
    let res = prog
        .test_run(&mut TestRunOptions::raw_tp(&args))
        .expect("BPF_PROG_TEST_RUN");
    res.retval as u64
}

/// Like [`run`], on CPU `cpu` (BPF_F_TEST_RUN_ON_CPU), so the records land in that CPU's perf
/// ring.
pub fn run_on_cpu(prog: &Prog, cpu: u32, first: u64, count: u64) -> u64 {
    let args = [first, count];
    let mut opts = TestRunOptions::raw_tp(&args);
    opts.flags = TestRunFlags::RUN_ON_CPU;
    opts.cpu = cpu;
    prog.test_run(&mut opts)
        .expect("BPF_PROG_TEST_RUN on a CPU")
        .retval as u64
}

/// A perf buffer over `array` with `pages` data pages per online CPU.
pub fn perf_buf(test: &str, array: &Map, pages: usize) -> Option<PerfBuf> {
    perf_buf_with(test, array, pages, 1)
}

/// [`perf_buf`] with a wake-up every `wakeup_events` samples.
pub fn perf_buf_with(test: &str, array: &Map, pages: usize, wakeup_events: u32) -> Option<PerfBuf> {
    let opts = PerfBufOptions {
        pages,
        wakeup_events,
    };
    match PerfBuf::open_with(array.as_fd(), &opts) {
        Ok(buf) => Some(buf),
        Err(e @ PerfBufError::Open { .. }) => {
            strobe_testkit::skip(test, &format!("cannot open a BPF output perf event: {e}"));
            None
        }
        Err(e) => panic!("perf buffer: {e}"),
    }
}

/// The usual start of a ring buffer test: a program writing records with `emit` into a ring
/// buffer map of `size` bytes, counting failures in a one-slot lost counter; returns
/// `(prog, ring map, lost counter)`, or `None` after a loud skip.
pub fn ring_setup(test: &str, size: u32, emit: Emit) -> Option<(Prog, Map, Map)> {
    let map = ring_map(test, size)?;
    let lost = lost_map(1);
    let prog = load(test, emit, &map, &lost, 0)?;
    Some((prog, map, lost))
}

/// The usual start of a perf buffer test: the `bpf_perf_event_output` program, a reader with
/// `pages` data pages per CPU that wakes up every `wakeup_events` samples, the one-slot lost
/// counter and the perf event array (returned so that the caller keeps them open); `None`
/// after a loud skip.
pub fn perf_setup(
    test: &str,
    pages: usize,
    wakeup_events: u32,
) -> Option<(Prog, PerfBuf, Map, Map)> {
    let array = perf_array(test)?;
    let lost = lost_map(1);
    let prog = load(test, Emit::PerfOutput, &array, &lost, 0)?;
    let perf = perf_buf_with(test, &array, pages, wakeup_events)?;
    Some((prog, perf, lost, array))
}

/// The busy-record program (see `progs::busy_prog`), or `None` after reporting the skip.
pub fn load_busy(test: &str, map: &Map) -> Option<Prog> {
    let insns = progs::busy_prog(map.as_raw_fd());
    match Prog::load(&ProgLoadOptions::new(ProgType::RawTracepoint, &insns)) {
        Ok(prog) => Some(prog),
        Err(e) => {
            strobe_testkit::skip(test, &format!("cannot load a raw_tracepoint program: {e}"));
            None
        }
    }
}
