//! The perf ring consumer over memory a test owns, with a producer that writes records the way
//! `kernel/events/ring_buffer.c` does: 8-byte aligned, wrapping at the end of the data area,
//! `data_head` advanced after the bytes.

use super::*;

struct FakePerf {
    meta: Vec<u64>,
    data: Vec<u64>,
    size: usize,
}

impl FakePerf {
    fn new(size: usize) -> FakePerf {
        FakePerf {
            meta: vec![0; 4096 / 8],
            data: vec![0; size / 8],
            size,
        }
    }

    fn view(&mut self) -> PerfRingView {
        let m = NonNull::new(self.meta.as_mut_ptr().cast::<u8>()).unwrap();
        let d = NonNull::new(self.data.as_mut_ptr().cast::<u8>()).unwrap();
        // SAFETY: the fake keeps the kernel's layout and outlives every view in a test.
        unsafe { PerfRingView::new(m, d, self.size) }
    }

    fn head(&self) -> u64 {
        self.meta[DATA_HEAD / 8]
    }

    fn tail(&self) -> u64 {
        self.meta[DATA_TAIL / 8]
    }

    fn push(&mut self, kind: u32, body: &[u8]) -> bool {
        let len = HEADER_SIZE + body.len();
        assert_eq!(len % 8, 0);
        let head = self.head();
        if head + len as u64 - self.tail() > self.size as u64 {
            return false;
        }
        let mut rec = Vec::with_capacity(len);
        rec.extend_from_slice(&kind.to_le_bytes());
        rec.extend_from_slice(&0u16.to_le_bytes());
        rec.extend_from_slice(&(len as u16).to_le_bytes());
        rec.extend_from_slice(body);
        let bytes = self.data.as_mut_ptr().cast::<u8>();
        for (i, b) in rec.into_iter().enumerate() {
            // SAFETY: the index is reduced modulo the data size.
            unsafe { *bytes.add((head as usize + i) % self.size) = b };
        }
        self.meta[DATA_HEAD / 8] = head + len as u64;
        true
    }

    fn sample(&mut self, raw: &[u8]) -> bool {
        let padded = (raw.len() + 4).div_ceil(8) * 8 - 4;
        let mut body = (padded as u32).to_le_bytes().to_vec();
        body.extend_from_slice(raw);
        body.resize(4 + padded, 0);
        self.push(PERF_RECORD_SAMPLE, &body)
    }

    fn lost(&mut self, n: u64) {
        let mut body = 7u64.to_le_bytes().to_vec();
        body.extend_from_slice(&n.to_le_bytes());
        assert!(self.push(PERF_RECORD_LOST, &body));
    }
}

#[derive(Debug, PartialEq)]
enum Got {
    Sample(Vec<u8>),
    Lost(u64),
}

fn collect(view: &mut PerfRingView) -> Vec<Got> {
    let mut scratch = Vec::new();
    let mut out = Vec::new();
    view.consume(&mut scratch, &mut |r: PerfRecord<'_>| {
        out.push(match r {
            PerfRecord::Sample(s) => Got::Sample(s.to_vec()),
            PerfRecord::Lost(n) => Got::Lost(n),
        });
        ControlFlow::Continue(())
    })
    .unwrap();
    out
}

fn padded(raw: &[u8]) -> Vec<u8> {
    let mut v = raw.to_vec();
    v.resize((raw.len() + 4).div_ceil(8) * 8 - 4, 0);
    v
}

#[test]
fn samples_and_lost_notices_arrive_in_order_and_tail_follows_head() {
    let mut ring = FakePerf::new(4096);
    ring.sample(b"12345678");
    ring.lost(3);
    ring.sample(b"abc");
    let got = collect(&mut ring.view());
    assert_eq!(
        got,
        [
            Got::Sample(padded(b"12345678")),
            Got::Lost(3),
            Got::Sample(padded(b"abc"))
        ]
    );
    assert_eq!(ring.tail(), ring.head());
}

#[test]
fn samples_wrapping_the_ring_end_are_reassembled() {
    let mut ring = FakePerf::new(4096);
    let mut expected = Vec::new();
    let mut got = Vec::new();
    // 60-byte raw samples make 72-byte records, which do not divide 4096.
    for round in 0u32..300 {
        let raw: Vec<u8> = (0..60).map(|i| (round as u8) ^ i).collect();
        if !ring.sample(&raw) {
            got.extend(collect(&mut ring.view()));
            assert!(ring.sample(&raw));
        }
        expected.push(Got::Sample(padded(&raw)));
    }
    got.extend(collect(&mut ring.view()));
    assert!(ring.head() > 4 * 4096, "the test must wrap several times");
    assert_eq!(got, expected);
}

#[test]
fn unknown_record_types_are_skipped() {
    let mut ring = FakePerf::new(4096);
    ring.push(42, &[0; 16]);
    ring.sample(b"x");
    assert_eq!(collect(&mut ring.view()), [Got::Sample(padded(b"x"))]);
    assert_eq!(ring.tail(), ring.head());
}

#[test]
fn a_record_size_beyond_the_written_bytes_is_an_error() {
    let mut ring = FakePerf::new(4096);
    ring.sample(b"abcd");
    ring.meta[DATA_HEAD / 8] = 8; // claims only the header was written
    let err = ring
        .view()
        .consume(&mut Vec::new(), &mut |_: PerfRecord<'_>| {
            ControlFlow::Continue(())
        })
        .unwrap_err();
    assert!(
        matches!(err, PerfBufError::CorruptRecord { pos: 0, .. }),
        "{err}"
    );
}

#[test]
fn a_raw_size_beyond_its_record_is_an_error() {
    let mut ring = FakePerf::new(4096);
    let mut body = 100u32.to_le_bytes().to_vec();
    body.extend_from_slice(&[0; 4]);
    ring.push(PERF_RECORD_SAMPLE, &body);
    let err = ring
        .view()
        .consume(&mut Vec::new(), &mut |_: PerfRecord<'_>| {
            ControlFlow::Continue(())
        })
        .unwrap_err();
    assert!(matches!(err, PerfBufError::CorruptRecord { .. }), "{err}");
}

#[test]
fn break_leaves_later_records_for_the_next_call() {
    let mut ring = FakePerf::new(4096);
    for i in 0u8..4 {
        ring.sample(&[i]);
    }
    let mut view = ring.view();
    let n = view
        .consume(&mut Vec::new(), &mut |_: PerfRecord<'_>| {
            ControlFlow::Break(())
        })
        .unwrap();
    assert_eq!(n, 1);
    assert_eq!(collect(&mut view).len(), 3);
}
