//! The progress line shown while many targets attach: on stderr, rewritten in place, only when
//! the caller asked for it (a terminal and more than ~100 targets), erased when done.

use std::io::Write;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::time::Duration;

/// Above this many targets a run on a terminal shows progress.
pub const PROGRESS_ABOVE: usize = 100;

/// Whether a run with `total` targets should show a progress line: more than
/// [`PROGRESS_ABOVE`] targets and stderr is a terminal (not redirected).
pub fn progress_wanted(total: usize) -> bool {
    // SAFETY: isatty on a constant fd.
    total > PROGRESS_ABOVE && unsafe { libc::isatty(2) } == 1
}

pub struct Progress {
    enabled: bool,
    total: usize,
    kind: &'static str,
}

impl Progress {
    pub fn new(enabled: bool, total: usize, kind: &'static str) -> Progress {
        Progress {
            enabled,
            total,
            kind,
        }
    }

    /// Redraws every 100 ms until `finished()`; returns at once when disabled.
    pub fn run_until(&self, done: &AtomicUsize, finished: impl Fn() -> bool) {
        if !self.enabled {
            return;
        }
        let mut err = std::io::stderr();
        while !finished() {
            let n = done.load(Ordering::Relaxed);
            let _ = write!(err, "\rattaching {} probes: {n}/{}", self.kind, self.total);
            let _ = err.flush();
            std::thread::sleep(Duration::from_millis(100));
        }
        let _ = write!(err, "\r\x1b[2K");
        let _ = err.flush();
    }
}
