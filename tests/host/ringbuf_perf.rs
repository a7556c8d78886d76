//! The perf buffer reader (the pre-5.8 fallback) against the host kernel: a raw_tracepoint
//! program run through BPF_PROG_TEST_RUN writes sequence-numbered records with
//! `bpf_perf_event_output(ctx, map, BPF_F_CURRENT_CPU, …)`; the reader must get every one, in
//! order per CPU, with the right bytes, across the ring's end, and count what did not fit.

use crate::ringbuf_support;

use std::ops::ControlFlow;
use std::time::Duration;

use ringbuf_support::progs::{expected_record, Emit, RECORD_SIZE};
use ringbuf_support::{load, lost_map, perf_array, perf_buf, perf_setup, run, run_on_cpu};
use strobe::runtime::epoll::BufferSet;
use strobe::runtime::ringbuf::LostCounter;

use std::os::fd::AsFd;

/// A 32-byte record as a perf sample: the kernel pads the raw size so `4 + size` is a multiple
/// of 8, i.e. 36 bytes; the 4 padding bytes are skipped, not written, so only the length and
/// the first 32 bytes are compared.
fn expected_sample(seq: u64) -> Vec<u8> {
    expected_record(seq).to_vec()
}

fn record_part(samples: &[Vec<u8>]) -> Vec<Vec<u8>> {
    samples
        .iter()
        .map(|s| {
            assert_eq!(s.len(), RECORD_SIZE + 4, "padded raw size");
            s[..RECORD_SIZE].to_vec()
        })
        .collect()
}

fn seq_of(sample: &[u8]) -> u64 {
    u64::from_le_bytes(sample[..8].try_into().unwrap())
}

fn first_cpu() -> u32 {
    strobe::runtime::cpus::online_cpus().unwrap()[0]
}

/// Asserts that `samples` are records `0, 1, 2, …` in this order, with their content.
fn assert_in_sequence(samples: &[Vec<u8>]) {
    for (seq, s) in record_part(samples).iter().enumerate() {
        assert_eq!(*s, expected_sample(seq as u64), "sample {seq}");
    }
}

#[test]
fn perf_delivers_every_sample_with_its_content() {
    let test = "perf_delivers_every_sample_with_its_content";
    let Some((prog, mut perf, _lost, _array)) = perf_setup(test, 16, 1) else {
        return;
    };
    assert_eq!(run(&prog, 0, 400), 400);
    assert_eq!(run(&prog, 400, 400), 400);
    let mut got = Vec::new();
    assert_eq!(perf.drain(|s| got.push(s.to_vec())).unwrap(), 800);
    // Runs may land on different CPUs; drain goes CPU by CPU, each in order.
    let descents = got
        .windows(2)
        .filter(|w| seq_of(&w[1]) < seq_of(&w[0]))
        .count();
    assert!(descents < perf.cpus().count(), "order within a CPU broken");
    got.sort_by_key(|s| seq_of(s));
    assert_in_sequence(&got);
    assert_eq!(perf.lost(), 0);
    assert_eq!(perf.pending_bytes(), 0);
}

#[test]
fn perf_samples_wrapping_the_ring_end_arrive_whole() {
    let test = "perf_samples_wrapping_the_ring_end_arrive_whole";
    // One data page; 48-byte records (8 header + 4 size + 36 raw) do not divide 4096.
    let Some((prog, mut perf, _lost, _array)) = perf_setup(test, 1, 1) else {
        return;
    };
    let cpu = first_cpu();
    let mut got = Vec::new();
    for k in 0..40u64 {
        assert_eq!(run_on_cpu(&prog, cpu, k * 70, 70), 70);
        perf.drain(|s| got.push(s.to_vec())).unwrap();
    }
    assert_eq!(got.len(), 40 * 70);
    assert_in_sequence(&got);
    assert_eq!(perf.lost(), 0);
}

#[test]
fn perf_counts_samples_lost_to_a_full_ring() {
    let test = "perf_counts_samples_lost_to_a_full_ring";
    let Some((prog, mut perf, lost, _array)) = perf_setup(test, 1, 1) else {
        return;
    };
    let cpu = first_cpu();
    let fit = 4096 / 48;
    assert_eq!(run_on_cpu(&prog, cpu, 0, 200), 200);
    let mut got = Vec::new();
    perf.drain(|s| got.push(s.to_vec())).unwrap();
    assert_eq!(got.len(), fit);
    assert_in_sequence(&got);
    // The kernel reports the loss with the next record it can write.
    assert_eq!(run_on_cpu(&prog, cpu, 1000, 1), 1);
    let mut more = Vec::new();
    perf.drain(|s| more.push(s.to_vec())).unwrap();
    assert_eq!(record_part(&more), [expected_sample(1000)]);
    assert_eq!(perf.lost(), 200 - fit as u64);
    // The program saw the same failures (bpf_perf_event_output returned an error).
    let counter = LostCounter::new(lost.as_fd(), 0).unwrap();
    assert_eq!(counter.read().unwrap(), 200 - fit as u64);
}

#[test]
fn perf_buffer_and_ring_buffer_share_one_poll_set() {
    let test = "perf_buffer_and_ring_buffer_share_one_poll_set";
    let Some(array) = perf_array(test) else {
        return;
    };
    let Some(ring_map) = ringbuf_support::ring_map(test, 1 << 14) else {
        return;
    };
    let lost = lost_map(2);
    let Some(perf_prog) = load(test, Emit::PerfOutput, &array, &lost, 0) else {
        return;
    };
    let Some(ring_prog) = load(test, Emit::RingOutput, &ring_map, &lost, 1) else {
        return;
    };
    let Some(perf) = perf_buf(test, &array, 4) else {
        return;
    };
    let ring = strobe::runtime::ringbuf::RingBuf::new(ring_map.as_fd()).unwrap();
    let mut set = BufferSet::new().unwrap();
    let p = set.add(perf).unwrap();
    let r = set.add(ring).unwrap();
    run(&perf_prog, 0, 5);
    run(&ring_prog, 100, 5);
    let mut got = Vec::new();
    let deadline = std::time::Instant::now() + Duration::from_secs(5);
    while got.len() < 10 && std::time::Instant::now() < deadline {
        set.poll(Some(Duration::from_millis(100)), |id, s| {
            got.push((id, seq_of(s), s.len()));
            ControlFlow::Continue(())
        })
        .unwrap();
    }
    got.sort();
    let want: Vec<_> = (0..5)
        .map(|s| (p, s, RECORD_SIZE + 4))
        .chain((100..105).map(|s| (r, s, RECORD_SIZE)))
        .collect();
    let mut want = want;
    want.sort();
    assert_eq!(got, want);
}

#[test]
fn perf_set_break_leaves_the_rest_for_the_next_poll() {
    // A perf fd reports readiness once per wake-up, so the set must remember the leftovers.
    let test = "perf_set_break_leaves_the_rest_for_the_next_poll";
    let Some((prog, perf, _lost, _array)) = perf_setup(test, 4, 1) else {
        return;
    };
    let mut set = BufferSet::new().unwrap();
    set.add(perf).unwrap();
    assert_eq!(run_on_cpu(&prog, first_cpu(), 0, 10), 10);
    let mut seen = Vec::new();
    let n = set
        .poll(Some(Duration::from_secs(5)), |_, s| {
            seen.push(seq_of(s));
            ControlFlow::Break(())
        })
        .unwrap();
    assert_eq!((n, seen.as_slice()), (1, &[0u64][..]));
    let t = std::time::Instant::now();
    set.poll(Some(Duration::from_secs(5)), |_, s| {
        seen.push(seq_of(s));
        ControlFlow::Continue(())
    })
    .unwrap();
    assert!(
        t.elapsed() < Duration::from_secs(1),
        "leftovers must not wait for a wake-up"
    );
    assert_eq!(seen, (0..10).collect::<Vec<_>>());
}

#[test]
fn perf_samples_below_the_wakeup_threshold_are_still_drained() {
    let test = "perf_samples_below_the_wakeup_threshold_are_still_drained";
    let Some((prog, perf, _lost, _array)) = perf_setup(test, 4, 64) else {
        return;
    };
    let mut set = BufferSet::new().unwrap();
    set.add(perf).unwrap();
    // 5 samples, no wake-up (64 needed): the poll still finds them.
    assert_eq!(run_on_cpu(&prog, first_cpu(), 0, 5), 5);
    let mut seen = Vec::new();
    set.poll(Some(Duration::from_millis(100)), |_, s| {
        seen.push(seq_of(s));
        ControlFlow::Continue(())
    })
    .unwrap();
    assert_eq!(seen, (0..5).collect::<Vec<_>>());
}
