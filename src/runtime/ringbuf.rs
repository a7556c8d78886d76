//! Consumer side of a BPF ring buffer (`BPF_MAP_TYPE_RINGBUF`, kernel 5.8+).
//!
//! Input: the fd of a ring buffer map and its size (`max_entries`). Output: each committed,
//! non-discarded record's bytes, in reservation order, handed to a callback as a slice that
//! points straight into the shared mapping (no copy); valid only during the call.
//!
//! Layout (`kernel/bpf/ringbuf.c`, `Documentation/bpf/ringbuf.rst`): mapping offset 0 is the
//! consumer page, writable by us, holding `consumer_pos`; offset one page is the producer page
//! (read-only) holding `producer_pos`, followed by the data area, which the kernel maps twice
//! back to back so that a record crossing the end of the ring is still contiguous. Both positions
//! are ever-increasing `unsigned long` byte counters; `pos & (size - 1)` is the offset in the
//! data area. Every record starts with an 8-byte header: `u32 len` whose bit 31 says the
//! producer has not committed it yet (BUSY) and bit 30 that it was discarded, then `u32 pg_off`
//! (only the kernel needs it). Records occupy `round_up(len + 8, 8)` bytes.
//!
//! Invariants: we only ever read what lies between `consumer_pos` and the `producer_pos` read
//! with acquire ordering; we stop at the first BUSY record (later records may be committed but
//! must wait: the consumer position can only move past a record once it is final); we publish
//! the new `consumer_pos` with release ordering after the callback returned, so the kernel never
//! reuses bytes we are still reading.
//!
//! Lost records: the kernel does not count reservations that fail because the ring is full. The
//! convention in strobe is that generated code increments slot `index` of a
//! `BPF_MAP_TYPE_ARRAY` or `BPF_MAP_TYPE_PERCPU_ARRAY` of `u64` (the "lost map") whenever
//! `bpf_ringbuf_output` returns non-zero or `bpf_ringbuf_reserve` returns NULL; one slot per
//! ring buffer. [`LostCounter`] sums that slot over all CPUs (a plain array has one).

use std::io;
use std::ops::ControlFlow;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU32, AtomicUsize, Ordering};

use memmap2::{MmapOptions, MmapRaw};
use thiserror::Error;

use crate::sys::{Map, MapType, SysError};

/// `BPF_RINGBUF_BUSY_BIT` (`include/uapi/linux/bpf.h`): the record is reserved, not committed.
pub const BUSY_BIT: u32 = 1 << 31;
/// `BPF_RINGBUF_DISCARD_BIT`: the record was discarded; the consumer skips it.
pub const DISCARD_BIT: u32 = 1 << 30;
/// `BPF_RINGBUF_HDR_SZ`: bytes of header before each record's data.
pub const HDR_SIZE: usize = 8;

/// Errors of the ring buffer consumer.
#[derive(Debug, Error)]
pub enum RingBufError {
    #[error(
        "ring buffer size {size} is not a power of two and a multiple of the page size {page_size}"
    )]
    BadSize { size: usize, page_size: usize },
    #[error("cannot duplicate the ring buffer map fd")]
    Dup {
        #[source]
        source: io::Error,
    },
    #[error("cannot mmap the ring buffer's {part}")]
    Mmap {
        part: &'static str,
        #[source]
        source: io::Error,
    },
    #[error("corrupt ring buffer record at position {pos}: length {len:#x} does not fit the ring of {size} bytes")]
    CorruptRecord { pos: usize, len: u32, size: usize },
    #[error("cannot query the ring buffer map")]
    Map {
        #[source]
        source: SysError,
    },
    #[error("map is a {map_type:?}, not a BPF ring buffer")]
    NotRingBuf { map_type: Option<MapType> },
    #[error("the lost-record map must be a per-CPU array of u64, not a {map_type:?} with {value_size}-byte values")]
    LostMapShape {
        map_type: Option<MapType>,
        value_size: u32,
    },
    #[error("cannot read lost-record counter slot {index}")]
    Lost {
        index: u32,
        #[source]
        source: SysError,
    },
}

/// The bytes a record of `len` data bytes occupies in the ring, header included.
pub const fn record_footprint(len: usize) -> usize {
    (len + HDR_SIZE + 7) & !7
}

/// The memory page size, which the ring layout is built from.
pub fn page_size() -> usize {
    // SAFETY: sysconf has no memory-safety preconditions.
    let n = unsafe { libc::sysconf(libc::_SC_PAGESIZE) };
    if n > 0 {
        n as usize
    } else {
        4096
    }
}

/// The consumer loop over raw pointers into a ring laid out as the kernel lays it out. Kept apart
/// from the mapping so it can be exercised over memory a test owns.
pub(crate) struct RingView {
    consumer_pos: NonNull<AtomicUsize>,
    producer_pos: NonNull<AtomicUsize>,
    /// Start of the data area; `2 * size` bytes are readable (the double mapping).
    data: NonNull<u8>,
    mask: usize,
}

impl RingView {
    /// # Safety
    /// `consumer_pos` and `producer_pos` point to aligned `usize`s, `data` to `2 * size` readable,
    /// 8-byte-aligned bytes whose second half mirrors the first, all valid for the view's life;
    /// `size` is a power of two. Only the producer writes `producer_pos` and record bytes.
    pub(crate) unsafe fn new(
        consumer_pos: NonNull<usize>,
        producer_pos: NonNull<usize>,
        data: NonNull<u8>,
        size: usize,
    ) -> RingView {
        debug_assert!(size.is_power_of_two());
        RingView {
            consumer_pos: consumer_pos.cast(),
            producer_pos: producer_pos.cast(),
            data,
            mask: size - 1,
        }
    }

    fn consumer(&self) -> &AtomicUsize {
        // SAFETY: valid and aligned per `new`'s contract.
        unsafe { self.consumer_pos.as_ref() }
    }

    fn producer(&self) -> &AtomicUsize {
        // SAFETY: as above.
        unsafe { self.producer_pos.as_ref() }
    }

    /// Bytes reserved by producers and not yet consumed (committed or not).
    pub(crate) fn pending_bytes(&self) -> usize {
        let prod = self.producer().load(Ordering::Acquire);
        prod.wrapping_sub(self.consumer().load(Ordering::Relaxed))
    }

    /// Hands the records committed when the call began to `f`, stopping early at a record that
    /// is still BUSY or when `f` breaks. Returns the number of records handed to `f`.
    pub(crate) fn consume<F>(&mut self, f: &mut F) -> Result<usize, RingBufError>
    where
        F: FnMut(&[u8]) -> ControlFlow<()>,
    {
        let size = self.mask + 1;
        // We are the only writer of consumer_pos, so our own last store is what we read.
        let mut cons = self.consumer().load(Ordering::Relaxed);
        let mut delivered = 0;
        // One snapshot of producer_pos per call bounds the work (a fast producer cannot keep
        // us here); what arrives meanwhile is left for the next call.
        // Acquire pairs with the kernel's release of producer_pos, so every header below it is
        // at least reserved (written with BUSY set).
        let prod = self.producer().load(Ordering::Acquire);
        while cons != prod {
            let off = cons & self.mask;
            // SAFETY: off < size and the data area is 2*size bytes, 8-byte aligned records.
            let hdr = unsafe { self.data.as_ptr().add(off) };
            // Acquire pairs with the commit's release (xchg) that clears BUSY: once we see
            // it cleared, the record's bytes are final.
            // SAFETY: headers are 8-aligned within the mapping.
            let word = unsafe { (*hdr.cast::<AtomicU32>()).load(Ordering::Acquire) };
            if word & BUSY_BIT != 0 {
                return Ok(delivered);
            }
            let len = (word & !(BUSY_BIT | DISCARD_BIT)) as usize;
            let step = record_footprint(len);
            if step > size || step > prod.wrapping_sub(cons) {
                return Err(RingBufError::CorruptRecord {
                    pos: cons,
                    len: word,
                    size,
                });
            }
            let mut flow = ControlFlow::Continue(());
            if word & DISCARD_BIT == 0 {
                // SAFETY: HDR_SIZE + len <= size, and off < size, so the record lies within
                // the doubly mapped 2*size bytes; the producer does not touch it until we
                // move consumer_pos past it, which happens only after `f` returns.
                let rec = unsafe { std::slice::from_raw_parts(hdr.add(HDR_SIZE), len) };
                flow = f(rec);
                delivered += 1;
            }
            cons = cons.wrapping_add(step);
            self.consumer().store(cons, Ordering::Release);
            if flow.is_break() {
                return Ok(delivered);
            }
        }
        Ok(delivered)
    }
}

/// A mapped BPF ring buffer. Owns a duplicate of the map fd (pollable: readable when records
/// are available) and the two mappings.
pub struct RingBuf {
    fd: OwnedFd,
    view: RingView,
    size: usize,
    lost: Option<LostCounter>,
    // The view points into these; they must outlive it (fields drop after `view`).
    _consumer: MmapRaw,
    _producer: MmapRaw,
}

// SAFETY: RingBuf owns its mappings; the raw pointers in `view` point only into them, and the
// consumer side is driven through `&mut self`, so moving it to another thread is sound.
unsafe impl Send for RingBuf {}

impl std::fmt::Debug for RingBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("RingBuf")
            .field("fd", &self.fd.as_raw_fd())
            .field("size", &self.size)
            .finish_non_exhaustive()
    }
}

impl RingBuf {
    /// Maps the ring buffer `map`, its size taken from the map.
    pub fn from_map(map: &Map) -> Result<RingBuf, RingBufError> {
        if map.map_type() != Some(MapType::Ringbuf) {
            return Err(RingBufError::NotRingBuf {
                map_type: map.map_type(),
            });
        }
        RingBuf::map_with_size(map.as_fd(), map.max_entries() as usize)
    }

    /// Maps the ring buffer map `map` (the fd is duplicated), asking the kernel for its type
    /// and size.
    pub fn new(map: BorrowedFd<'_>) -> Result<RingBuf, RingBufError> {
        let info =
            crate::sys::info::map_info(map).map_err(|source| RingBufError::Map { source })?;
        let map_type = MapType::from_raw(info.map_type);
        if map_type != Some(MapType::Ringbuf) {
            return Err(RingBufError::NotRingBuf { map_type });
        }
        RingBuf::map_with_size(map, info.max_entries as usize)
    }

    /// Maps a ring buffer map known to be `size` bytes.
    fn map_with_size(map: BorrowedFd<'_>, size: usize) -> Result<RingBuf, RingBufError> {
        let page = page_size();
        if !size.is_power_of_two() || size % page != 0 {
            return Err(RingBufError::BadSize {
                size,
                page_size: page,
            });
        }
        let fd = map
            .try_clone_to_owned()
            .map_err(|source| RingBufError::Dup { source })?;
        let consumer = MmapOptions::new()
            .len(page)
            .map_raw(fd.as_raw_fd())
            .map_err(|source| RingBufError::Mmap {
                part: "consumer page",
                source,
            })?;
        let producer = MmapOptions::new()
            .offset(page as u64)
            .len(page + 2 * size)
            .map_raw_read_only(fd.as_raw_fd())
            .map_err(|source| RingBufError::Mmap {
                part: "producer page and data area",
                source,
            })?;
        let cons_ptr = NonNull::new(consumer.as_mut_ptr().cast::<usize>()).expect("mmap non-null");
        let prod_base = producer.as_ptr().cast_mut();
        let prod_ptr = NonNull::new(prod_base.cast::<usize>()).expect("mmap non-null");
        // SAFETY: offset `page` lies within the producer mapping (length page + 2*size).
        let data = NonNull::new(unsafe { prod_base.add(page) }).expect("mmap non-null");
        // SAFETY: the kernel's layout satisfies `RingView::new`'s contract; mappings are owned
        // by the RingBuf and outlive the view.
        let view = unsafe { RingView::new(cons_ptr, prod_ptr, data, size) };
        Ok(RingBuf {
            fd,
            view,
            size,
            lost: None,
            _consumer: consumer,
            _producer: producer,
        })
    }

    /// Attaches the lost-record counter that the producer side of this ring increments.
    pub fn with_lost_counter(mut self, lost: LostCounter) -> RingBuf {
        self.lost = Some(lost);
        self
    }

    /// The data area size in bytes (the map's `max_entries`).
    pub fn size(&self) -> usize {
        self.size
    }

    /// Bytes reserved by producers and not yet consumed.
    pub fn pending_bytes(&self) -> usize {
        self.view.pending_bytes()
    }

    /// Hands the records committed when the call began to `f`, in order; returns how many.
    /// Stops early at a record the producer has not committed yet (BUSY); it and everything
    /// after it are delivered by a later call. Never blocks.
    pub fn drain(&mut self, mut f: impl FnMut(&[u8])) -> Result<usize, RingBufError> {
        self.view.consume(&mut |rec| {
            f(rec);
            ControlFlow::Continue(())
        })
    }

    /// Like [`RingBuf::drain`], but stops after the record for which `f` returns `Break`.
    pub fn drain_until(
        &mut self,
        mut f: impl FnMut(&[u8]) -> ControlFlow<()>,
    ) -> Result<usize, RingBufError> {
        self.view.consume(&mut f)
    }

    /// Records the producer side failed to reserve (0 without a [`LostCounter`]).
    pub fn lost(&self) -> Result<u64, RingBufError> {
        self.lost.as_ref().map_or(Ok(0), LostCounter::read)
    }
}

impl AsFd for RingBuf {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// Slot `index` of a `BPF_MAP_TYPE_PERCPU_ARRAY` with `u64` values, counting records the
/// producer side could not write; see the module doc for the convention.
#[derive(Debug)]
pub struct LostCounter {
    map: Map,
    index: u32,
}

impl LostCounter {
    /// Reads slot `index` of the (per-CPU) array map `map` (the fd is duplicated).
    pub fn new(map: BorrowedFd<'_>, index: u32) -> Result<LostCounter, RingBufError> {
        let fd = map
            .try_clone_to_owned()
            .map_err(|source| RingBufError::Dup { source })?;
        let map = Map::from_fd(fd).map_err(|source| RingBufError::Lost { index, source })?;
        let array = matches!(map.map_type(), Some(MapType::Array | MapType::PercpuArray));
        if !array || map.value_size() != 8 {
            return Err(RingBufError::LostMapShape {
                map_type: map.map_type(),
                value_size: map.value_size(),
            });
        }
        Ok(LostCounter { map, index })
    }

    /// The slot this counter reads.
    pub fn index(&self) -> u32 {
        self.index
    }

    /// The sum of the slot over all CPUs.
    pub fn read(&self) -> Result<u64, RingBufError> {
        let lost = |source| RingBufError::Lost {
            index: self.index,
            source,
        };
        let values = self
            .map
            .lookup_vec(&self.index.to_le_bytes())
            .map_err(lost)?
            .unwrap_or_default();
        Ok(values
            .chunks_exact(8)
            .map(|c| u64::from_le_bytes(c.try_into().expect("8-byte chunk")))
            .fold(0u64, u64::wrapping_add))
    }
}

#[cfg(test)]
mod tests;
