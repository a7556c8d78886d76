//! Consumer side of a perf event array (`BPF_MAP_TYPE_PERF_EVENT_ARRAY`), the fallback for
//! kernels without BPF ring buffers (< 5.8).
//!
//! Input: the fd of a perf event array map. [`PerfBuf::open`] opens one `PERF_COUNT_SW_BPF_OUTPUT`
//! software event per online CPU, maps its ring (one metadata page + 2^n data pages), and stores
//! the event fd in the array at index `cpu`, so `bpf_perf_event_output(ctx, map,
//! BPF_F_CURRENT_CPU, …)` writes into the ring of the CPU the program runs on.
//! Output: each sample's raw bytes, handed to a callback (a slice into the mapping, or into a
//! scratch copy when the record wraps the ring's end); records the kernel could not write are
//! counted from `PERF_RECORD_LOST`.
//!
//! Layout (`include/uapi/linux/perf_event.h`, `struct perf_event_mmap_page`): the kernel
//! advances `data_head` (offset 1024 in the metadata page); we advance `data_tail` (offset
//! 1032) after reading, which, because the mapping is writable, tells the kernel the space is
//! free (it drops and counts records instead of overwriting unread ones). The data area starts
//! at `data_offset` and is `data_size` bytes (fields present since 4.1). Records start with
//! `struct perf_event_header { u32 type; u16 misc; u16 size; }` and are 8-byte aligned; a
//! `PERF_RECORD_SAMPLE` with only `PERF_SAMPLE_RAW` carries `u32 size` then the raw bytes.
//!
//! Invariants: `data_head` is read with acquire ordering and `data_tail` published with release
//! ordering after the callback returned. Unlike the ring buffer, the raw size the kernel reports
//! is padded so that `4 + size` is a multiple of 8 (`perf_prepare_sample`), so a sample may
//! carry up to 7 trailing bytes after what the program wrote, with unspecified content (the
//! kernel skips them rather than zeroing them); decoders must know their record's length. Samples are ordered per CPU only.

use std::io;
use std::ops::ControlFlow;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd};
use std::ptr::NonNull;
use std::sync::atomic::{AtomicU64, Ordering};

use memmap2::{MmapOptions, MmapRaw};
use thiserror::Error;

use crate::sys::{Map, MapType, PerfEvent, SysError, UpdateFlags};

/// `PERF_RECORD_LOST`: `{ header; u64 id; u64 lost; }`.
const PERF_RECORD_LOST: u32 = 2;
/// `PERF_RECORD_SAMPLE`.
const PERF_RECORD_SAMPLE: u32 = 9;
const HEADER_SIZE: usize = 8;
/// Offsets in `struct perf_event_mmap_page`.
const DATA_HEAD: usize = 1024;
const DATA_TAIL: usize = 1032;
const DATA_OFFSET: usize = 1040;
const DATA_SIZE: usize = 1048;

/// Errors of the perf buffer consumer.
#[derive(Debug, Error)]
pub enum PerfBufError {
    #[error("perf buffer data pages {pages} is not a power of two")]
    BadPages { pages: usize },
    #[error("cannot list the online CPUs")]
    Cpus {
        #[source]
        source: io::Error,
    },
    #[error("cannot use the perf event array")]
    Map {
        #[source]
        source: SysError,
    },
    #[error("map is a {map_type:?}, not a perf event array")]
    NotPerfEventArray { map_type: Option<MapType> },
    #[error("the perf event array has {max_entries} slots, but CPU {cpu} is online")]
    TooFewSlots { cpu: u32, max_entries: u32 },
    #[error("cannot duplicate a perf event fd")]
    Dup {
        #[source]
        source: io::Error,
    },
    #[error("cannot open the BPF output perf event on CPU {cpu}")]
    Open {
        cpu: u32,
        #[source]
        source: SysError,
    },
    #[error("cannot mmap the perf ring of CPU {cpu}")]
    Mmap {
        cpu: u32,
        #[source]
        source: io::Error,
    },
    #[error("the perf ring of CPU {cpu} reports a data area of {size} bytes at offset {offset}, which is not a power of two inside the {mapped} mapped bytes")]
    DataArea {
        cpu: u32,
        offset: usize,
        size: usize,
        mapped: usize,
    },
    #[error("cannot store the perf event fd of CPU {cpu} in the perf event array")]
    Store {
        cpu: u32,
        #[source]
        source: SysError,
    },
    #[error("corrupt perf record at position {pos}: {what}")]
    CorruptRecord { pos: u64, what: &'static str },
}

/// One record read from a perf ring.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PerfRecord<'a> {
    /// A `PERF_RECORD_SAMPLE`'s raw data (possibly with trailing padding, see the module doc).
    Sample(&'a [u8]),
    /// A `PERF_RECORD_LOST`: this many records did not fit.
    Lost(u64),
}

/// The consumer loop over one perf ring given by raw pointers, kept apart from the mapping so
/// it can be exercised over memory a test owns.
pub(crate) struct PerfRingView {
    meta: NonNull<u8>,
    data: NonNull<u8>,
    size: usize,
}

impl PerfRingView {
    /// # Safety
    /// `meta` points to a `perf_event_mmap_page` and `data` to `size` bytes (a power of two) of
    /// ring, both 8-byte aligned and valid for the view's life; only the producer writes
    /// `data_head` and the ring bytes between `data_tail` and the space it may reuse.
    pub(crate) unsafe fn new(meta: NonNull<u8>, data: NonNull<u8>, size: usize) -> PerfRingView {
        debug_assert!(size.is_power_of_two());
        PerfRingView { meta, data, size }
    }

    fn word(&self, off: usize) -> &AtomicU64 {
        // SAFETY: `off` is one of the 8-aligned u64 fields of the metadata page.
        unsafe { &*self.meta.as_ptr().add(off).cast::<AtomicU64>() }
    }

    /// Bytes written by the kernel and not yet consumed.
    pub(crate) fn pending_bytes(&self) -> u64 {
        let head = self.word(DATA_HEAD).load(Ordering::Acquire);
        head.wrapping_sub(self.word(DATA_TAIL).load(Ordering::Relaxed))
    }

    /// Copies `out.len()` ring bytes starting at logical position `pos`, wrapping at the end.
    fn copy_out(&self, pos: u64, out: &mut [u8]) {
        let off = pos as usize & (self.size - 1);
        let first = out.len().min(self.size - off);
        // SAFETY: both ranges lie within the `size` ring bytes; `out` is our own buffer.
        unsafe {
            let base = self.data.as_ptr();
            std::ptr::copy_nonoverlapping(base.add(off), out.as_mut_ptr(), first);
            std::ptr::copy_nonoverlapping(base, out.as_mut_ptr().add(first), out.len() - first);
        }
    }

    /// Hands the records written when the call began to `f`, stopping early when `f` breaks.
    /// Records that wrap the ring's end are copied into `scratch` first. Returns the records
    /// handed over.
    pub(crate) fn consume<F>(
        &mut self,
        scratch: &mut Vec<u8>,
        f: &mut F,
    ) -> Result<usize, PerfBufError>
    where
        F: FnMut(PerfRecord<'_>) -> ControlFlow<()>,
    {
        let mut tail = self.word(DATA_TAIL).load(Ordering::Relaxed);
        let mut delivered = 0;
        // One snapshot of data_head per call bounds the work; later records wait for the
        // next call. Acquire pairs with the kernel's release of data_head after the records.
        let head = self.word(DATA_HEAD).load(Ordering::Acquire);
        while tail != head {
            let corrupt = |what| PerfBufError::CorruptRecord { pos: tail, what };
            let avail = head.wrapping_sub(tail);
            if avail < HEADER_SIZE as u64 {
                return Err(corrupt("fewer bytes than a record header"));
            }
            let mut hdr = [0u8; HEADER_SIZE];
            self.copy_out(tail, &mut hdr);
            let kind = u32::from_le_bytes(hdr[0..4].try_into().expect("4 bytes"));
            let len = u16::from_le_bytes(hdr[6..8].try_into().expect("2 bytes")) as usize;
            if len < HEADER_SIZE || len as u64 > avail || len > self.size {
                return Err(corrupt("record size out of range"));
            }
            let off = tail as usize & (self.size - 1);
            let rec: &[u8] = if off + len <= self.size {
                // SAFETY: within the ring; the kernel does not reuse it before data_tail
                // moves past it, which happens after `f` returned.
                unsafe { std::slice::from_raw_parts(self.data.as_ptr().add(off), len) }
            } else {
                scratch.resize(len, 0);
                self.copy_out(tail, scratch);
                scratch
            };
            let flow = match parse_record(kind, &rec[HEADER_SIZE..]) {
                Ok(Some(r)) => {
                    delivered += 1;
                    f(r)
                }
                Ok(None) => ControlFlow::Continue(()),
                Err(what) => return Err(corrupt(what)),
            };
            tail = tail.wrapping_add(len as u64);
            // Release: our reads of the record happen before the kernel may overwrite it.
            self.word(DATA_TAIL).store(tail, Ordering::Release);
            if flow.is_break() {
                return Ok(delivered);
            }
        }
        Ok(delivered)
    }
}

/// Decodes a record body; `None` for record types a BPF output event does not produce.
fn parse_record(kind: u32, body: &[u8]) -> Result<Option<PerfRecord<'_>>, &'static str> {
    match kind {
        PERF_RECORD_SAMPLE => {
            let size = body.get(0..4).ok_or("sample shorter than its size field")?;
            let size = u32::from_le_bytes(size.try_into().expect("4 bytes")) as usize;
            let raw = body
                .get(4..4 + size)
                .ok_or("raw sample larger than its record")?;
            Ok(Some(PerfRecord::Sample(raw)))
        }
        PERF_RECORD_LOST => {
            let lost = body.get(8..16).ok_or("lost record too short")?;
            Ok(Some(PerfRecord::Lost(u64::from_le_bytes(
                lost.try_into().expect("8 bytes"),
            ))))
        }
        _ => Ok(None),
    }
}

/// How [`PerfBuf::open_with`] sets up each CPU's event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct PerfBufOptions {
    /// Data pages per CPU, a power of two.
    pub pages: usize,
    /// Samples per wake-up (`wakeup_events`, at least 1). Each wake-up costs the producer an
    /// irq_work and the reader a context switch, so 1 caps throughput (about 64 K samples/s on
    /// this project's VM host); a larger value batches wake-ups but leaves up to `n - 1` samples
    /// unannounced until the next one, so the reader must also poll with a timeout.
    pub wakeup_events: u32,
}

/// One CPU's perf event and its mapped ring.
struct PerfRing {
    cpu: u32,
    fd: OwnedFd,
    view: PerfRingView,
    // The view points into this mapping; it drops after `view`.
    _mmap: MmapRaw,
}

/// The per-CPU rings behind one perf event array.
pub struct PerfBuf {
    rings: Vec<PerfRing>,
    scratch: Vec<u8>,
    lost: u64,
}

// SAFETY: PerfBuf owns its mappings; the raw pointers in the views point only into them and are
// used through `&mut self`.
unsafe impl Send for PerfBuf {}

impl std::fmt::Debug for PerfBuf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("PerfBuf")
            .field(
                "cpus",
                &self.rings.iter().map(|r| r.cpu).collect::<Vec<_>>(),
            )
            .field("lost", &self.lost)
            .finish_non_exhaustive()
    }
}

impl PerfBuf {
    /// Opens a `PERF_COUNT_SW_BPF_OUTPUT` event (raw samples, a wake-up per sample) on every
    /// online CPU, maps its ring with `pages` data pages (a power of two), and stores its fd in
    /// the perf event array `array` at index `cpu`.
    pub fn open(array: BorrowedFd<'_>, pages: usize) -> Result<PerfBuf, PerfBufError> {
        PerfBuf::open_with(
            array,
            &PerfBufOptions {
                pages,
                wakeup_events: 1,
            },
        )
    }

    /// [`PerfBuf::open`] with a choice of how many samples wake the reader.
    pub fn open_with(
        array: BorrowedFd<'_>,
        opts: &PerfBufOptions,
    ) -> Result<PerfBuf, PerfBufError> {
        let pages = opts.pages;
        if !pages.is_power_of_two() {
            return Err(PerfBufError::BadPages { pages });
        }
        let fd = array
            .try_clone_to_owned()
            .map_err(|source| PerfBufError::Dup { source })?;
        let map = Map::from_fd(fd).map_err(|source| PerfBufError::Map { source })?;
        if map.map_type() != Some(MapType::PerfEventArray) {
            return Err(PerfBufError::NotPerfEventArray {
                map_type: map.map_type(),
            });
        }
        let cpus = super::cpus::online_cpus().map_err(|source| PerfBufError::Cpus { source })?;
        let mut events = Vec::with_capacity(cpus.len());
        for cpu in cpus {
            if cpu >= map.max_entries() {
                return Err(PerfBufError::TooFewSlots {
                    cpu,
                    max_entries: map.max_entries(),
                });
            }
            let event = PerfEvent::bpf_output(cpu as i32, opts.wakeup_events.max(1))
                .map_err(|source| PerfBufError::Open { cpu, source })?;
            // The ring keeps its own fd; the event stays open through it.
            let fd = event
                .as_fd()
                .try_clone_to_owned()
                .map_err(|source| PerfBufError::Dup { source })?;
            events.push((cpu, fd));
        }
        let buf = PerfBuf::from_events(events, pages)?;
        // Store the fds only once every ring is mapped, so a failure leaves no slot pointing at
        // an event nobody reads.
        for ring in &buf.rings {
            let fd = ring.fd.as_raw_fd() as u32;
            map.update(
                &ring.cpu.to_le_bytes(),
                &fd.to_le_bytes(),
                UpdateFlags::empty(),
            )
            .map_err(|source| PerfBufError::Store {
                cpu: ring.cpu,
                source,
            })?;
        }
        Ok(buf)
    }

    /// Maps the rings of already opened BPF output events, one `(cpu, fd)` per CPU, each with
    /// `pages` data pages (a power of two). The caller has stored (or will store) each fd in
    /// the perf event array at index `cpu`; [`PerfBuf::open`] does all of it.
    pub fn from_events(
        events: impl IntoIterator<Item = (u32, OwnedFd)>,
        pages: usize,
    ) -> Result<PerfBuf, PerfBufError> {
        if !pages.is_power_of_two() {
            return Err(PerfBufError::BadPages { pages });
        }
        let rings = events
            .into_iter()
            .map(|(cpu, fd)| PerfBuf::map_ring(cpu, fd, pages))
            .collect::<Result<Vec<_>, _>>()?;
        Ok(PerfBuf {
            rings,
            scratch: Vec::new(),
            lost: 0,
        })
    }

    /// Maps an already opened BPF output perf event `fd` of `cpu` whose ring has `pages` data
    /// pages (a power of two), without touching any map.
    fn map_ring(cpu: u32, fd: OwnedFd, pages: usize) -> Result<PerfRing, PerfBufError> {
        let page = super::ringbuf::page_size();
        let mmap = MmapOptions::new()
            .len(page * (1 + pages))
            .map_raw(fd.as_raw_fd())
            .map_err(|source| PerfBufError::Mmap { cpu, source })?;
        let meta = NonNull::new(mmap.as_mut_ptr()).expect("mmap non-null");
        // SAFETY: the metadata page is mapped; data_offset/data_size are plain u64 fields.
        let (offset, size) = unsafe {
            let m = meta.as_ptr();
            (
                (*m.add(DATA_OFFSET).cast::<AtomicU64>()).load(Ordering::Relaxed) as usize,
                (*m.add(DATA_SIZE).cast::<AtomicU64>()).load(Ordering::Relaxed) as usize,
            )
        };
        // Kernels before 4.1 leave both fields zero: data then starts at the second page.
        let (offset, size) = if offset == 0 {
            (page, page * pages)
        } else {
            (offset, size)
        };
        if offset + size > mmap.len() || !size.is_power_of_two() {
            return Err(PerfBufError::DataArea {
                cpu,
                offset,
                size,
                mapped: mmap.len(),
            });
        }
        // SAFETY: checked to lie within the mapping above.
        let data = NonNull::new(unsafe { meta.as_ptr().add(offset) }).expect("mmap non-null");
        // SAFETY: the kernel's layout satisfies the view's contract; the mapping outlives it.
        let view = unsafe { PerfRingView::new(meta, data, size) };
        Ok(PerfRing {
            cpu,
            fd,
            view,
            _mmap: mmap,
        })
    }

    /// The CPUs this buffer has a ring for.
    pub fn cpus(&self) -> impl Iterator<Item = u32> + '_ {
        self.rings.iter().map(|r| r.cpu)
    }

    /// The per-CPU event fds, each readable (pollable) when its ring has data.
    pub fn fds(&self) -> impl Iterator<Item = BorrowedFd<'_>> + '_ {
        self.rings.iter().map(|r| r.fd.as_fd())
    }

    /// Bytes written by the kernel and not yet consumed, over all CPUs.
    pub fn pending_bytes(&self) -> u64 {
        self.rings.iter().map(|r| r.view.pending_bytes()).sum()
    }

    /// Hands the samples written when the call began to `f`, CPU by CPU (ordered within a CPU
    /// only); returns how many. Lost-record notices are added to [`PerfBuf::lost`]. Never
    /// blocks.
    pub fn drain(&mut self, mut f: impl FnMut(&[u8])) -> Result<usize, PerfBufError> {
        self.drain_until(|rec| {
            f(rec);
            ControlFlow::Continue(())
        })
    }

    /// Like [`PerfBuf::drain`], but stops after the sample for which `f` returns `Break`.
    pub fn drain_until(
        &mut self,
        mut f: impl FnMut(&[u8]) -> ControlFlow<()>,
    ) -> Result<usize, PerfBufError> {
        let mut samples = 0;
        let mut stopped = false;
        let lost = &mut self.lost;
        for ring in &mut self.rings {
            ring.view.consume(&mut self.scratch, &mut |rec| match rec {
                PerfRecord::Sample(raw) => {
                    samples += 1;
                    let flow = f(raw);
                    stopped = flow.is_break();
                    flow
                }
                PerfRecord::Lost(n) => {
                    *lost = lost.wrapping_add(n);
                    ControlFlow::Continue(())
                }
            })?;
            if stopped {
                break;
            }
        }
        Ok(samples)
    }

    /// Records the kernel reported lost (ring full) so far, over all CPUs.
    pub fn lost(&self) -> u64 {
        self.lost
    }
}

#[cfg(test)]
mod tests;
