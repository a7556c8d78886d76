//! Signals as events: SIGINT, SIGTERM, SIGCHLD and SIGUSR1 (`self:signal:SIGUSR1` probes) are
//! blocked and read from a signalfd that sits in the event loop's epoll set, so a Ctrl-C is
//! handled between records, never inside a syscall or a half-written line.
//!
//! Invariant: the signals must be blocked in *every* thread, or the kernel delivers them to
//! one that does not block them (with the default action: terminate). [`block`] must
//! therefore run before the process starts other threads; the CLI does it first thing.

use std::io;
use std::os::fd::{AsFd, BorrowedFd, FromRawFd, OwnedFd};

/// The signals the runtime handles (a parsing thread unblocks these for Ctrl-C).
pub const HANDLED: [i32; 3] = [libc::SIGINT, libc::SIGTERM, libc::SIGCHLD];

/// Signals that run the script's `self:signal:…` probes; read from the signalfd too, but
/// never unblocked (with no such probe a SIGUSR1 is read and dropped, as bpftrace ignores
/// it), so they must not be ignored (`SIG_IGN` discards a signal even while blocked).
pub const SELF_EVENTS: [i32; 1] = [libc::SIGUSR1];

fn set() -> libc::sigset_t {
    // SAFETY: sigemptyset/sigaddset initialise and fill a local set.
    unsafe {
        let mut s: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut s);
        for sig in HANDLED.into_iter().chain(SELF_EVENTS) {
            libc::sigaddset(&mut s, sig);
        }
        s
    }
}

/// Blocks [`HANDLED`] and [`SELF_EVENTS`] in the calling thread (threads started later inherit the mask).
pub fn block() -> io::Result<()> {
    let s = set();
    // SAFETY: a valid set; no old mask wanted.
    let r = unsafe { libc::pthread_sigmask(libc::SIG_BLOCK, &s, std::ptr::null_mut()) };
    if r != 0 {
        return Err(io::Error::from_raw_os_error(r));
    }
    Ok(())
}

/// While alive, SIGINT and SIGTERM are not blocked in the calling thread (nor in threads it
/// starts meanwhile), so they act at once, with the process's disposition (by default: the
/// process ends). For the load phase: the kernel's verifier stops for a pending signal, but a
/// blocked one is not pending for it, so a program that takes the verifier a minute would
/// otherwise keep strobe deaf to Ctrl-C and SIGTERM that long. Nothing is armed yet then,
/// and every kernel object is an fd the kernel closes at exit; a held `-c` command sees the
/// tracer gone and exits without running. Dropping it blocks them again; a signal that came
/// in between stays pending for the signalfd.
pub struct Interruptible(());

impl Interruptible {
    pub fn new() -> Interruptible {
        mask(libc::SIG_UNBLOCK, &[libc::SIGINT, libc::SIGTERM]);
        Interruptible(())
    }
}

impl Default for Interruptible {
    fn default() -> Self {
        Interruptible::new()
    }
}

impl Drop for Interruptible {
    fn drop(&mut self) {
        mask(libc::SIG_BLOCK, &[libc::SIGINT, libc::SIGTERM]);
    }
}

fn mask(how: libc::c_int, sigs: &[i32]) {
    // SAFETY: a local set filled by sigemptyset/sigaddset; no old mask wanted.
    unsafe {
        let mut s: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut s);
        for &sig in sigs {
            libc::sigaddset(&mut s, sig);
        }
        libc::pthread_sigmask(how, &s, std::ptr::null_mut());
    }
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

/// A signalfd for [`HANDLED`] and [`SELF_EVENTS`] (non-blocking, close-on-exec).
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
