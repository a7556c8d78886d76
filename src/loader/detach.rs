//! Detaching: closing links. Each fentry/fexit link's release waits for RCU-tasks grace
//! periods inside the kernel (`kernel/bpf/trampoline.c`: the trampoline image is freed only
//! after `synchronize_rcu_tasks`), about 0.15 s per link measured in the VMs — 54 s for 361
//! links one after another. Three ways, measured by `scripts/bench-attach`:
//! - [`DetachMode::Sequential`]: close one by one in this thread;
//! - [`DetachMode::Parallel`]: close on N threads, so waits can overlap where the kernel does
//!   not serialise them;
//! - [`DetachMode::Background`]: fork a child that holds a reference to every object and
//!   closes them after this process exits, so the user never waits: the parent's own closes
//!   only drop a reference and return at once.

use std::os::fd::{AsRawFd, RawFd};
use std::time::{Duration, Instant};

use super::report::KernelObject;

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum DetachMode {
    Sequential,
    /// 0 threads = one per CPU.
    Parallel {
        threads: usize,
    },
    Background,
}

/// Closes every object as `mode` says; returns the time the caller waited.
pub fn detach(objects: Vec<KernelObject>, mode: DetachMode) -> Duration {
    let start = Instant::now();
    match mode {
        DetachMode::Sequential => drop(objects),
        DetachMode::Parallel { threads } => close_parallel(objects, threads),
        // Nothing attached (BEGIN/END only run by test run, or nothing left): closing
        // programs and maps is quick, and a fork would cost more than the closes.
        DetachMode::Background if !objects.iter().any(KernelObject::is_attachment) => drop(objects),
        DetachMode::Background => match detach_in_background(objects) {
            // Dropping the handle lets the child start; the parent's closes were cheap.
            Ok(handle) => drop(handle),
            Err(objects) => close_parallel(objects, 0),
        },
    }
    start.elapsed()
}

fn close_parallel(objects: Vec<KernelObject>, threads: usize) {
    let n = match threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    }
    .max(1);
    // Interleave so every thread gets a share of the links (they come first in the list).
    let mut parts: Vec<Vec<KernelObject>> = (0..n).map(|_| Vec::new()).collect();
    for (k, o) in objects.into_iter().enumerate() {
        parts[k % n].push(o);
    }
    std::thread::scope(|s| {
        for p in parts {
            s.spawn(move || drop(p));
        }
    });
}

/// The parent's side of a background detach: the child closes its copies of the objects once
/// this handle is dropped (or the process exits, which drops it implicitly).
#[derive(Debug)]
pub struct BackgroundDetach {
    pub child: libc::pid_t,
    release: std::os::fd::OwnedFd,
}

impl BackgroundDetach {
    /// Waits for the child to finish closing (tests and benchmarks use this to time the
    /// kernel-side work; strobe itself never waits).
    pub fn wait(self) -> Duration {
        let start = Instant::now();
        let pid = self.child;
        drop(self.release);
        let mut status = 0;
        // SAFETY: waiting for our own child.
        unsafe { libc::waitpid(pid, &mut status, 0) };
        start.elapsed()
    }
}

/// Forks a child that keeps every object alive and closes them when the returned handle is
/// dropped (the write end of a pipe closes: at the latest when this process exits). The
/// objects are released in the parent before this returns (a reference drop each). On fork
/// failure the objects come back unchanged.
pub fn detach_in_background(
    objects: Vec<KernelObject>,
) -> Result<BackgroundDetach, Vec<KernelObject>> {
    let mut keep: Vec<RawFd> = objects.iter().map(|o| o.as_raw_fd()).collect();
    let mut pipe = [0; 2];
    // SAFETY: valid out-array; O_CLOEXEC so commands strobe starts later do not hold it.
    if unsafe { libc::pipe2(pipe.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(objects);
    }
    let (r, w) = (pipe[0], pipe[1]);
    keep.push(r);
    keep.sort_unstable();
    // SAFETY: the child only makes async-signal-safe calls (close, close_range, read, setsid,
    // open, dup2, _exit) on memory prepared before fork.
    let pid = unsafe { libc::fork() };
    if pid < 0 {
        // SAFETY: closing the pipe we just made.
        unsafe {
            libc::close(r);
            libc::close(w);
        }
        return Err(objects);
    }
    if pid == 0 {
        // SAFETY: see above; this branch never returns.
        unsafe { child(&keep, r, w) }
    }
    // SAFETY: closing our read end; `w` becomes the handle.
    unsafe { libc::close(r) };
    drop(objects);
    Ok(BackgroundDetach {
        child: pid,
        // SAFETY: `w` is a fresh fd this process owns.
        release: unsafe { std::os::fd::FromRawFd::from_raw_fd(w) },
    })
}

/// The child: detach from the terminal and every fd it does not need (so a pipe the shell
/// reads from sees EOF when the parent exits), wait for the parent's release, close.
unsafe fn child(keep: &[RawFd], r: RawFd, w: RawFd) -> ! {
    libc::close(w);
    libc::setsid();
    let null = libc::open(c"/dev/null".as_ptr(), libc::O_RDWR);
    for fd in 0..3 {
        if null >= 0 && !keep.contains(&fd) {
            libc::dup2(null, fd);
        }
    }
    // Close every other fd: the gaps between the kept ones.
    let mut lo: u32 = 3;
    for &k in keep.iter().filter(|&&k| k >= 3) {
        let k = k as u32;
        if k > lo {
            close_range(lo, k - 1);
        }
        lo = k + 1;
    }
    close_range(lo, u32::MAX);
    let mut b = [0u8; 1];
    while libc::read(r, b.as_mut_ptr().cast(), 1) < 0 {}
    for &k in keep {
        if k >= 3 {
            libc::close(k);
        }
    }
    libc::_exit(0)
}

unsafe fn close_range(lo: u32, hi: u32) {
    if libc::syscall(libc::SYS_close_range, lo, hi, 0) != 0 {
        // Kernels before 5.9: close one by one up to a bound that covers strobe's fds.
        let end = hi.min(lo.saturating_add(65536));
        for fd in lo..=end {
            libc::close(fd as i32);
        }
    }
}
