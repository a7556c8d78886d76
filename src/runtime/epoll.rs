//! Waiting for events: a thin owned wrapper over epoll(7), and [`BufferSet`], which puts any
//! number of ring buffers and perf buffers into one epoll set and drains whichever is ready.
//!
//! Input: mapped [`RingBuf`]s and [`PerfBuf`]s. Output: every record, tagged with the
//! [`BufferId`] of the buffer it came from, handed to one callback. The set's own epoll fd is
//! itself pollable ([`BufferSet::as_fd`]), so the runtime's event loop can wait on it next to a
//! signalfd without this module knowing about signals.
//!
//! Invariants: `poll` never sleeps while a buffer still holds records. That matters because
//! readiness differs: a ring buffer's map fd is readable while `consumer_pos != producer_pos`
//! (`ringbuf_map_poll_kern` in `kernel/bpf/ringbuf.c`), but a perf event fd reports readiness
//! once per wake-up (`perf_poll` clears `rb->poll`), so records left behind by a `Break`, by the
//! one-snapshot-per-drain bound, or by `wakeup_events > 1` would otherwise wait for the next
//! wake-up. `poll` therefore drains buffers with pending bytes first and only waits on epoll when
//! all are empty.

use std::io;
use std::ops::ControlFlow;
use std::os::fd::{AsFd, AsRawFd, BorrowedFd, FromRawFd, OwnedFd};
use std::time::Duration;

use thiserror::Error;

use super::perfbuf::{PerfBuf, PerfBufError};
use super::ringbuf::{RingBuf, RingBufError};

/// An epoll instance (`epoll_create1(EPOLL_CLOEXEC)`).
#[derive(Debug)]
pub struct Epoll {
    fd: OwnedFd,
}

impl Epoll {
    pub fn new() -> io::Result<Epoll> {
        // SAFETY: plain syscall; the returned fd is owned by us from here on.
        let fd = unsafe { libc::epoll_create1(libc::EPOLL_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: `fd` is a fresh descriptor nobody else owns.
        Ok(Epoll {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// Watches `fd` for readability; `wait` reports it with `token`. The caller keeps `fd` open
    /// while it is registered.
    pub fn add(&self, fd: BorrowedFd<'_>, token: u64) -> io::Result<()> {
        let mut ev = libc::epoll_event {
            events: libc::EPOLLIN as u32,
            u64: token,
        };
        // SAFETY: both fds are valid; `ev` is a valid epoll_event.
        let rc = unsafe {
            libc::epoll_ctl(
                self.fd.as_raw_fd(),
                libc::EPOLL_CTL_ADD,
                fd.as_raw_fd(),
                &mut ev,
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Stops watching `fd`.
    pub fn remove(&self, fd: BorrowedFd<'_>) -> io::Result<()> {
        // SAFETY: both fds are valid; a null event is allowed for EPOLL_CTL_DEL since 2.6.9.
        let rc = unsafe {
            libc::epoll_ctl(
                self.fd.as_raw_fd(),
                libc::EPOLL_CTL_DEL,
                fd.as_raw_fd(),
                std::ptr::null_mut(),
            )
        };
        if rc < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(())
    }

    /// Waits up to `timeout` (`None`: forever) and appends the tokens of ready fds to `ready`
    /// (cleared first). An interrupting signal returns with nothing ready, so the caller can
    /// look at why it was woken.
    pub fn wait(&self, timeout: Option<Duration>, ready: &mut Vec<u64>) -> io::Result<usize> {
        const MAX_EVENTS: usize = 64;
        let mut events = [libc::epoll_event { events: 0, u64: 0 }; MAX_EVENTS];
        let ms = match timeout {
            None => -1,
            // Round up so a short non-zero timeout does not become a busy poll.
            Some(t) => t.as_nanos().div_ceil(1_000_000).min(i32::MAX as u128) as i32,
        };
        ready.clear();
        // SAFETY: `events` holds MAX_EVENTS writable entries.
        let n = unsafe {
            libc::epoll_wait(
                self.fd.as_raw_fd(),
                events.as_mut_ptr(),
                MAX_EVENTS as i32,
                ms,
            )
        };
        if n < 0 {
            let err = io::Error::last_os_error();
            if err.kind() == io::ErrorKind::Interrupted {
                return Ok(0);
            }
            return Err(err);
        }
        ready.extend(events[..n as usize].iter().map(|e| e.u64));
        Ok(n as usize)
    }
}

impl AsFd for Epoll {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

/// A buffer the kernel writes records into.
#[derive(Debug)]
pub enum EventBuffer {
    Ring(RingBuf),
    Perf(PerfBuf),
}

impl EventBuffer {
    /// Bytes written and not yet consumed.
    pub fn pending_bytes(&self) -> u64 {
        match self {
            EventBuffer::Ring(r) => r.pending_bytes() as u64,
            EventBuffer::Perf(p) => p.pending_bytes(),
        }
    }
}

impl From<RingBuf> for EventBuffer {
    fn from(r: RingBuf) -> EventBuffer {
        EventBuffer::Ring(r)
    }
}

impl From<PerfBuf> for EventBuffer {
    fn from(p: PerfBuf) -> EventBuffer {
        EventBuffer::Perf(p)
    }
}

/// Which buffer of a [`BufferSet`] a record came from: the order of [`BufferSet::add`] calls.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct BufferId(pub usize);

/// Errors of waiting on and draining a [`BufferSet`].
#[derive(Debug, Error)]
pub enum PollError {
    #[error("epoll {op} failed")]
    Epoll {
        op: &'static str,
        #[source]
        source: io::Error,
    },
    #[error("ring buffer {id:?}")]
    Ring {
        id: BufferId,
        #[source]
        source: RingBufError,
    },
    #[error("perf buffer {id:?}")]
    Perf {
        id: BufferId,
        #[source]
        source: PerfBufError,
    },
}

/// Ring and perf buffers waited on together.
#[derive(Debug)]
pub struct BufferSet {
    epoll: Epoll,
    buffers: Vec<EventBuffer>,
    ready: Vec<u64>,
}

impl BufferSet {
    pub fn new() -> Result<BufferSet, PollError> {
        let epoll = Epoll::new().map_err(|source| PollError::Epoll {
            op: "create",
            source,
        })?;
        Ok(BufferSet {
            epoll,
            buffers: Vec::new(),
            ready: Vec::new(),
        })
    }

    /// Adds a buffer; its records will be tagged with the returned id.
    pub fn add(&mut self, buffer: impl Into<EventBuffer>) -> Result<BufferId, PollError> {
        let buffer = buffer.into();
        let id = BufferId(self.buffers.len());
        let add = |fd| {
            self.epoll
                .add(fd, id.0 as u64)
                .map_err(|source| PollError::Epoll { op: "add", source })
        };
        match &buffer {
            EventBuffer::Ring(r) => add(r.as_fd())?,
            EventBuffer::Perf(p) => p.fds().try_for_each(add)?,
        }
        self.buffers.push(buffer);
        Ok(id)
    }

    pub fn get(&self, id: BufferId) -> Option<&EventBuffer> {
        self.buffers.get(id.0)
    }

    pub fn len(&self) -> usize {
        self.buffers.len()
    }

    pub fn is_empty(&self) -> bool {
        self.buffers.is_empty()
    }

    /// Drains the buffers that hold records; when none does, waits up to `timeout` (`None`:
    /// forever) for one to be written and drains the ready ones. Returns the records delivered
    /// (0 on timeout or a signal). A `Break` from `f` stops at once; the rest stays in the
    /// buffers for the next call.
    pub fn poll(
        &mut self,
        timeout: Option<Duration>,
        mut f: impl FnMut(BufferId, &[u8]) -> ControlFlow<()>,
    ) -> Result<usize, PollError> {
        let mut ready = std::mem::take(&mut self.ready);
        ready.clear();
        ready.extend(
            (0..self.buffers.len())
                .filter(|&i| self.buffers[i].pending_bytes() > 0)
                .map(|i| i as u64),
        );
        let waited = if ready.is_empty() {
            self.epoll.wait(timeout, &mut ready)
        } else {
            Ok(ready.len())
        };
        let result = waited
            .map_err(|source| PollError::Epoll { op: "wait", source })
            .and_then(|_| {
                ready.sort_unstable();
                ready.dedup();
                let mut total = 0;
                for &token in &ready {
                    let (n, flow) = self.drain_one(BufferId(token as usize), &mut f)?;
                    total += n;
                    if flow.is_break() {
                        break;
                    }
                }
                Ok(total)
            });
        self.ready = ready;
        result
    }

    /// Drains every buffer without waiting; returns the records delivered.
    pub fn drain(
        &mut self,
        mut f: impl FnMut(BufferId, &[u8]) -> ControlFlow<()>,
    ) -> Result<usize, PollError> {
        let mut total = 0;
        for i in 0..self.buffers.len() {
            let (n, flow) = self.drain_one(BufferId(i), &mut f)?;
            total += n;
            if flow.is_break() {
                break;
            }
        }
        Ok(total)
    }

    fn drain_one(
        &mut self,
        id: BufferId,
        f: &mut impl FnMut(BufferId, &[u8]) -> ControlFlow<()>,
    ) -> Result<(usize, ControlFlow<()>), PollError> {
        let mut flow = ControlFlow::Continue(());
        let mut each = |rec: &[u8]| {
            flow = f(id, rec);
            flow
        };
        let n = match self.buffers.get_mut(id.0) {
            Some(EventBuffer::Ring(r)) => r
                .drain_until(&mut each)
                .map_err(|source| PollError::Ring { id, source })?,
            Some(EventBuffer::Perf(p)) => p
                .drain_until(&mut each)
                .map_err(|source| PollError::Perf { id, source })?,
            None => panic!("internal error: epoll token {id:?} names no buffer"),
        };
        Ok((n, flow))
    }

    /// Whether some buffer holds unconsumed bytes, i.e. `poll` would not sleep. A ring buffer
    /// whose oldest record is still reserved (BUSY) counts as pending: its producer is running
    /// now and commits within microseconds.
    pub fn has_pending(&self) -> bool {
        self.buffers.iter().any(|b| b.pending_bytes() > 0)
    }

    /// Records lost so far in buffer `id`: reserve failures counted by the program for a ring
    /// buffer, kernel `PERF_RECORD_LOST` notices for a perf buffer.
    pub fn lost(&self, id: BufferId) -> Result<u64, PollError> {
        match self.buffers.get(id.0) {
            Some(EventBuffer::Ring(r)) => r.lost().map_err(|source| PollError::Ring { id, source }),
            Some(EventBuffer::Perf(p)) => Ok(p.lost()),
            None => Ok(0),
        }
    }

    /// Records lost so far over all buffers.
    pub fn total_lost(&self) -> Result<u64, PollError> {
        (0..self.buffers.len()).try_fold(0u64, |a, i| Ok(a.wrapping_add(self.lost(BufferId(i))?)))
    }
}

impl AsFd for BufferSet {
    /// The epoll fd, for nesting in another event loop: readable when a buffer was written. A
    /// loop that waits on it must not sleep while [`BufferSet::has_pending`] (perf leftovers
    /// are not announced again), and then calls `poll` with a zero timeout.
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.epoll.as_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn pipe() -> (OwnedFd, OwnedFd) {
        let mut fds = [0; 2];
        // SAFETY: `fds` has room for the two descriptors pipe2 returns.
        assert_eq!(unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) }, 0);
        // SAFETY: fresh descriptors owned by nobody else.
        unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) }
    }

    #[test]
    fn wait_reports_the_token_of_the_readable_fd_only() {
        let ep = Epoll::new().unwrap();
        let (r1, _w1) = pipe();
        let (r2, w2) = pipe();
        ep.add(r1.as_fd(), 11).unwrap();
        ep.add(r2.as_fd(), 22).unwrap();
        let mut ready = Vec::new();
        assert_eq!(ep.wait(Some(Duration::ZERO), &mut ready).unwrap(), 0);
        std::fs::File::from(w2).write_all_at_once(b"x");
        assert_eq!(
            ep.wait(Some(Duration::from_secs(5)), &mut ready).unwrap(),
            1
        );
        assert_eq!(ready, [22]);
        ep.remove(r2.as_fd()).unwrap();
        assert_eq!(ep.wait(Some(Duration::ZERO), &mut ready).unwrap(), 0);
    }

    #[test]
    fn an_empty_set_times_out_with_nothing() {
        let mut set = BufferSet::new().unwrap();
        assert!(set.is_empty());
        let t = std::time::Instant::now();
        let n = set
            .poll(Some(Duration::from_millis(20)), |_, _| {
                ControlFlow::Continue(())
            })
            .unwrap();
        assert_eq!(n, 0);
        assert!(t.elapsed() >= Duration::from_millis(15));
        assert_eq!(set.total_lost().unwrap(), 0);
    }

    trait WriteOnce {
        fn write_all_at_once(self, b: &[u8]);
    }

    impl WriteOnce for std::fs::File {
        fn write_all_at_once(mut self, b: &[u8]) {
            use std::io::Write;
            self.write_all(b).unwrap();
        }
    }
}
