//! Ending a run from another thread: an eventfd the event loop watches beside the ring
//! buffers and the signalfd, so a library user stops a script the way Ctrl-C does (END runs,
//! maps are read and printed, everything detaches) without sending the process a signal.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, FromRawFd, OwnedFd};
use std::sync::Arc;

/// A cloneable "stop now" switch for one run ([`super::driver::RunOptions::stop`]).
#[derive(Clone, Debug)]
pub struct StopHandle {
    fd: Arc<OwnedFd>,
}

impl StopHandle {
    pub fn new() -> io::Result<StopHandle> {
        // SAFETY: eventfd(2) with flags only; a fresh fd on success.
        let fd = unsafe { libc::eventfd(0, libc::EFD_CLOEXEC | libc::EFD_NONBLOCK) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        Ok(StopHandle {
            // SAFETY: `fd` is a new descriptor owned by nobody else.
            fd: Arc::new(unsafe { OwnedFd::from_raw_fd(fd) }),
        })
    }

    /// Asks the run to end (idempotent; a run that has not started its loop yet ends as soon
    /// as it does).
    pub fn stop(&self) {
        let one = 1u64.to_ne_bytes();
        // SAFETY: an 8-byte write to our eventfd; EAGAIN (counter full) means already stopped.
        let _ = unsafe { libc::write(self.fd_raw(), one.as_ptr().cast(), one.len()) };
    }

    /// Whether [`StopHandle::stop`] was called.
    pub fn is_stopped(&self) -> bool {
        let mut p = libc::pollfd {
            fd: self.fd_raw(),
            events: libc::POLLIN,
            revents: 0,
        };
        // SAFETY: one valid pollfd, no wait.
        unsafe { libc::poll(&mut p, 1, 0) == 1 }
    }

    fn fd_raw(&self) -> i32 {
        use std::os::fd::AsRawFd;
        self.fd.as_raw_fd()
    }
}

impl AsFd for StopHandle {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stop_is_seen_by_every_clone_and_is_idempotent() {
        let a = StopHandle::new().unwrap();
        let b = a.clone();
        assert!(!b.is_stopped());
        a.stop();
        a.stop();
        assert!(b.is_stopped());
    }
}
