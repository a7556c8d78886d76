//! Throughput of the event buffer readers. A raw_tracepoint program writes 32-byte records in a
//! bounded loop (1024 per BPF_PROG_TEST_RUN, runs back to back on a producer thread) while this
//! thread waits on epoll and drains. Prints one JSON object per line:
//! - `ringbuf_reader_only_32b_records`: the reader alone, draining a pre-filled 16 MiB ring
//!   (best of 5);
//! - `ringbuf_drain_32b_records`: `bpf_ringbuf_output` into a 16 MiB ring buffer (target ≥ 5 M
//!   records/s);
//! - `perfbuf_drain_32b_records_wakeup_{1,64}`: `bpf_perf_event_output` into 1 MiB per-CPU
//!   perf rings, the pre-5.8 fallback, with a wake-up per sample and per 64 samples
//!   (informational, no target).
//!
//! Each line also gives the records drained and lost (counted by the program when a write
//! failed), and the seconds from the first run to the last record drained.
//! Run: `cargo bench --bench ringbuf` (needs root/CAP_BPF; prints a skip line otherwise).

#[path = "../tests/ringbuf_support/mod.rs"]
mod ringbuf_support;

use std::ops::ControlFlow;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ringbuf_support::progs::{Emit, MAX_RECORDS_PER_RUN};
use ringbuf_support::{load, lost_map, perf_array, perf_buf_with, ring_map, run};
use strobe::runtime::epoll::BufferSet;
use strobe::runtime::ringbuf::{LostCounter, RingBuf};
use strobe::sys::Prog;

const RING_SIZE: u32 = 16 << 20;
const PERF_PAGES: usize = 256;

fn main() {
    bench_ringbuf_reader_only();
    bench_ringbuf();
    bench_perfbuf(1, 300_000);
    bench_perfbuf(64, 5_000_000);
}

/// The reader alone: fill the ring first (no reader running), then time one drain.
fn bench_ringbuf_reader_only() {
    let name = "ringbuf_reader_only_32b_records";
    let Some(map) = ring_map(name, RING_SIZE) else {
        return;
    };
    let lost = lost_map(1);
    let Some(prog) = load(name, Emit::RingOutput, &map, &lost, 0) else {
        return;
    };
    let mut ring = RingBuf::from_map(&map).expect("map the ring");
    let mut best = 0f64;
    for _ in 0..5 {
        let mut written = 0;
        // 400 runs of 1024 records of 40 bytes: 16 000 KiB, just under the 16 MiB ring.
        for k in 0..400 {
            written += run(&prog, k * MAX_RECORDS_PER_RUN, MAX_RECORDS_PER_RUN);
        }
        let mut sum = 0u64;
        let t = Instant::now();
        let n = ring
            .drain(|r| sum = sum.wrapping_add(r[0] as u64))
            .expect("drain");
        let secs = t.elapsed().as_secs_f64();
        assert_eq!(n as u64, written, "a pre-filled ring drains completely");
        std::hint::black_box(sum);
        best = best.max(n as f64 / secs.max(1e-9));
    }
    println!(
        "{{\"name\":\"{name}\",\"value\":{best:.0},\"unit\":\"records/s\",\"target\":5000000,\"records\":{}}}",
        400 * MAX_RECORDS_PER_RUN
    );
}

fn bench_ringbuf() {
    let name = "ringbuf_drain_32b_records";
    let Some(map) = ring_map(name, RING_SIZE) else {
        return;
    };
    let lost = lost_map(1);
    let Some(prog) = load(name, Emit::RingOutput, &map, &lost, 0) else {
        return;
    };
    let ring = RingBuf::from_map(&map).expect("map the ring");
    let mut set = BufferSet::new().expect("epoll");
    set.add(ring).expect("add ring");
    let counter = LostCounter::new(lost.as_fd(), 0).expect("lost counter");
    measure(
        name,
        set,
        prog,
        counter,
        20_000_000,
        Some(5_000_000.0),
        true,
    );
}

fn bench_perfbuf(wakeup_events: u32, total: u64) {
    let name = &format!("perfbuf_drain_32b_records_wakeup_{wakeup_events}");
    let Some(array) = perf_array(name) else {
        return;
    };
    let lost = lost_map(1);
    let Some(prog) = load(name, Emit::PerfOutput, &array, &lost, 0) else {
        return;
    };
    let Some(perf) = perf_buf_with(name, &array, PERF_PAGES, wakeup_events) else {
        return;
    };
    let mut set = BufferSet::new().expect("epoll");
    set.add(perf).expect("add perf buffer");
    let counter = LostCounter::new(lost.as_fd(), 0).expect("lost counter");
    // Runs may move between CPUs, and drains go CPU by CPU: no global order to check.
    measure(name, set, prog, counter, total, None, false);
}

/// Runs `prog` on a producer thread until it has written `total` records, drains `set` here,
/// and prints the JSON line.
fn measure(
    name: &str,
    mut set: BufferSet,
    prog: Prog,
    lost: LostCounter,
    total: u64,
    target: Option<f64>,
    check_order: bool,
) {
    let done = Arc::new(AtomicBool::new(false));
    let start = Instant::now();
    let producer = {
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            let mut seq = 0;
            while seq < total {
                seq += run(&prog, seq, MAX_RECORDS_PER_RUN.min(total - seq));
            }
            done.store(true, Ordering::Release);
        })
    };

    let mut drained = 0u64;
    let mut out_of_order = 0u64;
    let mut expect = 0u64;
    let mut count = |_, rec: &[u8]| {
        let seq = u64::from_le_bytes(rec[..8].try_into().expect("32-byte record"));
        // Records lost to a full ring leave gaps; a seq going backwards would be a bug.
        if seq < expect {
            out_of_order += 1;
        }
        expect = seq + 1;
        drained += 1;
        ControlFlow::Continue(())
    };
    loop {
        let finished = done.load(Ordering::Acquire);
        let n = set
            .poll(Some(Duration::from_millis(50)), &mut count)
            .expect("poll");
        if finished && n == 0 {
            set.drain(&mut count).expect("drain");
            break;
        }
    }
    let elapsed = start.elapsed().as_secs_f64();
    producer.join().expect("producer thread");
    let lost_records = lost.read().expect("lost counter");
    if check_order {
        assert_eq!(out_of_order, 0, "records arrived out of order");
    }
    assert_eq!(
        drained + lost_records,
        total,
        "every record is drained or counted lost"
    );
    let rate = drained as f64 / elapsed.max(1e-9);
    let target = target.map_or("null".to_string(), |t| format!("{t:.0}"));
    println!(
        "{{\"name\":\"{name}\",\"value\":{rate:.0},\"unit\":\"records/s\",\"target\":{target},\"records\":{drained},\"lost\":{lost_records},\"seconds\":{elapsed:.3}}}"
    );
}
