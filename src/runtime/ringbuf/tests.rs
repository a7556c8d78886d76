//! The consumer loop over a ring a test owns: a producer written here follows the kernel's
//! protocol (reserve with BUSY set, then commit or discard), and mirrors every byte into the
//! second half of the data area as the kernel's double mapping would.

use super::*;

struct FakeRing {
    consumer: Box<usize>,
    producer: Box<usize>,
    /// 2 * size bytes, u64 for 8-byte alignment.
    data: Vec<u64>,
    size: usize,
}

impl FakeRing {
    fn new(size: usize) -> FakeRing {
        FakeRing {
            consumer: Box::new(0),
            producer: Box::new(0),
            data: vec![0; 2 * size / 8],
            size,
        }
    }

    fn view(&mut self) -> RingView {
        let c = NonNull::from(&mut *self.consumer);
        let p = NonNull::from(&mut *self.producer);
        let d = NonNull::new(self.data.as_mut_ptr().cast::<u8>()).unwrap();
        // SAFETY: the fake ring keeps the kernel's layout and outlives every view in a test.
        unsafe { RingView::new(c, p, d, self.size) }
    }

    fn write(&mut self, pos: usize, bytes: &[u8]) {
        let size = self.size;
        let base = self.data.as_mut_ptr().cast::<u8>();
        for (i, &b) in bytes.iter().enumerate() {
            let off = (pos + i) % size;
            // SAFETY: off and off+size are within 2*size bytes.
            unsafe {
                *base.add(off) = b;
                *base.add(off + size) = b;
            }
        }
    }

    /// Reserves a record (header with BUSY) and returns its position, or None when full.
    fn reserve(&mut self, len: usize) -> Option<usize> {
        let pos = *self.producer;
        if pos + record_footprint(len) - *self.consumer > self.size {
            return None;
        }
        self.write(pos, &(len as u32 | BUSY_BIT).to_le_bytes());
        *self.producer = pos + record_footprint(len);
        Some(pos)
    }

    fn commit(&mut self, pos: usize, payload: &[u8], discard: bool) {
        self.write(pos + HDR_SIZE, payload);
        let flag = if discard { DISCARD_BIT } else { 0 };
        self.write(pos, &(payload.len() as u32 | flag).to_le_bytes());
    }

    fn output(&mut self, payload: &[u8]) -> bool {
        match self.reserve(payload.len()) {
            Some(pos) => {
                self.commit(pos, payload, false);
                true
            }
            None => false,
        }
    }
}

fn collect(view: &mut RingView) -> Vec<Vec<u8>> {
    let mut out = Vec::new();
    view.consume(&mut |r: &[u8]| {
        out.push(r.to_vec());
        ControlFlow::Continue(())
    })
    .unwrap();
    out
}

#[test]
fn record_footprint_includes_header_and_rounds_to_eight() {
    assert_eq!(record_footprint(0), 8);
    assert_eq!(record_footprint(1), 16);
    assert_eq!(record_footprint(8), 16);
    assert_eq!(record_footprint(32), 40);
}

#[test]
fn delivers_committed_records_in_order_and_advances_consumer() {
    let mut ring = FakeRing::new(4096);
    for i in 0u32..10 {
        assert!(ring.output(&i.to_le_bytes()));
    }
    let mut view = ring.view();
    let got = collect(&mut view);
    assert_eq!(got.len(), 10);
    for (i, r) in got.iter().enumerate() {
        assert_eq!(r.as_slice(), (i as u32).to_le_bytes());
    }
    assert_eq!(view.pending_bytes(), 0);
    assert_eq!(*ring.consumer, 10 * 16);
    // Nothing new: nothing delivered.
    assert!(collect(&mut ring.view()).is_empty());
}

#[test]
fn records_crossing_the_ring_end_arrive_whole() {
    let mut ring = FakeRing::new(4096);
    let mut expected = Vec::new();
    let mut got = Vec::new();
    // 100-byte records (footprint 112) do not divide 4096, so some straddle the end.
    for round in 0u32..200 {
        let payload: Vec<u8> = (0..100).map(|i| (round as u8).wrapping_add(i)).collect();
        if !ring.output(&payload) {
            got.extend(collect(&mut ring.view()));
            assert!(ring.output(&payload));
        }
        expected.push(payload);
    }
    got.extend(collect(&mut ring.view()));
    assert!(
        *ring.producer > 4 * 4096,
        "the test must wrap several times"
    );
    assert_eq!(got, expected);
}

#[test]
fn discarded_records_are_skipped_but_consumed() {
    let mut ring = FakeRing::new(4096);
    let a = ring.reserve(4).unwrap();
    let b = ring.reserve(4).unwrap();
    let c = ring.reserve(4).unwrap();
    ring.commit(a, b"aaaa", false);
    ring.commit(b, b"bbbb", true);
    ring.commit(c, b"cccc", false);
    let mut view = ring.view();
    assert_eq!(collect(&mut view), [b"aaaa".to_vec(), b"cccc".to_vec()]);
    assert_eq!(view.pending_bytes(), 0);
}

#[test]
fn stops_at_a_busy_record_even_when_later_ones_are_committed() {
    let mut ring = FakeRing::new(4096);
    let a = ring.reserve(4).unwrap();
    let b = ring.reserve(4).unwrap();
    let c = ring.reserve(4).unwrap();
    ring.commit(a, b"aaaa", false);
    ring.commit(c, b"cccc", false);
    let mut view = ring.view();
    assert_eq!(collect(&mut view), [b"aaaa".to_vec()]);
    assert_eq!(view.pending_bytes(), 32, "b and c stay in the ring");
    ring.commit(b, b"bbbb", false);
    assert_eq!(
        collect(&mut ring.view()),
        [b"bbbb".to_vec(), b"cccc".to_vec()]
    );
}

#[test]
fn break_stops_after_the_current_record_and_keeps_the_rest() {
    let mut ring = FakeRing::new(4096);
    for i in 0u8..5 {
        ring.output(&[i]);
    }
    let mut view = ring.view();
    let mut seen = Vec::new();
    let n = view
        .consume(&mut |r: &[u8]| {
            seen.push(r[0]);
            if r[0] == 1 {
                ControlFlow::Break(())
            } else {
                ControlFlow::Continue(())
            }
        })
        .unwrap();
    assert_eq!((n, seen.as_slice()), (2, &[0u8, 1][..]));
    assert_eq!(
        collect(&mut view),
        [[2u8].to_vec(), [3].to_vec(), [4].to_vec()]
    );
}

#[test]
fn a_length_larger_than_the_ring_is_an_error_not_a_wild_read() {
    let mut ring = FakeRing::new(4096);
    ring.write(0, &(100_000u32).to_le_bytes());
    *ring.producer = 8;
    let err = ring
        .view()
        .consume(&mut |_: &[u8]| ControlFlow::Continue(()))
        .unwrap_err();
    assert!(
        matches!(err, RingBufError::CorruptRecord { pos: 0, .. }),
        "{err}"
    );
}

#[test]
fn positions_keep_working_across_usize_wraparound() {
    let mut ring = FakeRing::new(4096);
    let start = usize::MAX - 15; // 8-aligned, two records before the counter wraps
    *ring.consumer = start;
    *ring.producer = start;
    let mut got = Vec::new();
    for i in 0u8..6 {
        let pos = *ring.producer;
        ring.write(pos, &1u32.to_le_bytes());
        ring.write(pos.wrapping_add(HDR_SIZE), &[i]);
        *ring.producer = pos.wrapping_add(16);
        got.push(vec![i]);
    }
    assert_eq!(collect(&mut ring.view()), got);
}

#[test]
fn bad_sizes_are_rejected_before_any_syscall() {
    let fd = std::fs::File::open("/dev/null").unwrap();
    let err = RingBuf::map_with_size(fd.as_fd(), 3 * page_size()).unwrap_err();
    assert!(matches!(err, RingBufError::BadSize { .. }), "{err}");
}
