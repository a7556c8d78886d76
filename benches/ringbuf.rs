//! Throughput of the ring buffer reader: a raw_tracepoint program writes 32-byte records with
//! `bpf_ringbuf_output` in a bounded loop (1024 per BPF_PROG_TEST_RUN, run back to back on one
//! thread) into a 16 MiB ring while this thread waits on epoll and drains. Prints one JSON object
//! per line: records drained per second (target ≥ 5 M/s), and the records lost to a full ring.
//!
//! Run: `cargo bench --bench ringbuf` (needs root/CAP_BPF; prints a skip line otherwise).

#[path = "../tests/ringbuf_support/mod.rs"]
mod ringbuf_support;

use std::ops::ControlFlow;
use std::os::fd::AsFd;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};

use ringbuf_support::progs::{Emit, MAX_RECORDS_PER_RUN};
use ringbuf_support::{load, lost_map, ring_map, run};
use strobe::runtime::epoll::BufferSet;
use strobe::runtime::ringbuf::{LostCounter, RingBuf};

const RING_SIZE: u32 = 16 << 20;
const TOTAL: u64 = 20_000_000;
const TARGET: f64 = 5_000_000.0;

fn main() {
    let name = "ringbuf_drain_32b_records";
    let Some(map) = ring_map(name, RING_SIZE) else {
        return;
    };
    let lost = lost_map(1);
    let Some(prog) = load(name, Emit::RingOutput, &map, &lost, 0) else {
        return;
    };
    let ring = RingBuf::new(map.as_fd(), RING_SIZE as usize)
        .expect("map the ring")
        .with_lost_counter(LostCounter::new(lost.as_fd(), 0).expect("lost counter"));
    let mut set = BufferSet::new().expect("epoll");
    set.add(ring).expect("add ring");

    let done = Arc::new(AtomicBool::new(false));
    // End to end: from the first run to the last record drained.
    let start = Instant::now();
    let producer = {
        let done = Arc::clone(&done);
        std::thread::spawn(move || {
            let mut seq = 0;
            while seq < TOTAL {
                let n = MAX_RECORDS_PER_RUN.min(TOTAL - seq);
                seq += run(&prog, seq, n);
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
    let lost_records = set.total_lost().expect("lost counter");
    assert_eq!(out_of_order, 0, "records arrived out of order");
    assert_eq!(
        drained + lost_records,
        TOTAL,
        "every record is drained or counted lost"
    );
    let rate = drained as f64 / elapsed.max(1e-9);
    println!(
        "{{\"name\":\"{name}\",\"value\":{rate:.0},\"unit\":\"records/s\",\"target\":{TARGET:.0},\"records\":{drained},\"lost\":{lost_records},\"seconds\":{elapsed:.3}}}"
    );
}
