//! Signals as events: SIGINT, SIGTERM and SIGCHLD are blocked and read from a signalfd that
//! sits in the event loop's epoll set, so a Ctrl-C is handled between records, never inside
//! a syscall or a half-written line.
//!
//! Invariant: the signals must be blocked in *every* thread, or the kernel delivers them to
//! one that does not block them (with the default action: terminate). [`block`] must
//! therefore run before the process starts other threads; the CLI does it first thing.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, FromRawFd, OwnedFd};

/// The signals the runtime handles.
pub const HANDLED: [i32; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGCHLD];

fn set() -> libc::sigset_t {
    // SAFETY: sigemptyset/sigaddset initialise and fill a local set.
    unsafe {
        let mut s: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut s);
        for sig in HANDLED {
            libc::sigaddset(&mut s, sig);
        }
        s
    }
}

/// Blocks [`HANDLED`] in the calling thread (threads started later inherit the mask).
pub fn block() -> io::Result<()> {
    let s = set();
    // SAFETY: a valid set; no old mask wanted.
    let r = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &s, std::ptr::null_mut()) };
    if r != 0 {
        return Err(io::Error::from_raw_os_error(r));
    }
    Ok(())
}

/// Whether a SIGINT or SIGTERM is waiting to be read (without reading it): long output (a
/// large map at exit) checks this between pieces to stop promptly, and the event loop still
/// sees the signal afterwards.
pub fn stop_pending() -> bool {
    // SAFETY: sigpending fills a local set; sigismember reads it.
    unsafe {
        let mut s: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut s);
        if libc::sigpending(&mut s) != 0 {
            return false;
        }
        libc::sigismember(&s, libc::SIGINT) == 1 || libc::sigismember(&s, libc::SIGTERM) == 1
    }
}

/// A signalfd for [`HANDLED`] (non-blocking, close-on-exec).
#[derive(Debug)]
pub struct SignalFd {
    fd: OwnedFd,
}

impl SignalFd {
    pub fn new() -> io::Result<SignalFd> {
        block()?;
        let s = set();
        // SAFETY: a valid set; -1 asks for a new fd.
        let fd = unsafe { libc::signalfd(-1, &s, libc::SFD_NONBLOCK | libc::SFD_CLOEXEC) };
        if fd < 0 {
            return Err(io::Error::last_os_error());
        }
        // SAFETY: a fresh fd nobody else owns.
        Ok(SignalFd {
            fd: unsafe { OwnedFd::from_raw_fd(fd) },
        })
    }

    /// The next pending signal number, if any.
    pub fn read(&self) -> Option<i32> {
        // SAFETY: signalfd_siginfo is plain data; we read at most its size.
        let mut info: libc::signalfd_siginfo = unsafe { std::mem::zeroed() };
        let n = unsafe {
            libc::read(
                std::os::fd::AsRawFd::as_raw_fd(&self.fd),
                (&mut info as *mut libc::signalfd_siginfo).cast(),
                std::mem::size_of::<libc::signalfd_siginfo>(),
            )
        };
        (n == std::mem::size_of::<libc::signalfd_siginfo>() as isize)
            .then_some(info.ssi_signo as i32)
    }
}

impl AsFd for SignalFd {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}
