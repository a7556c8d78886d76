//! The progress line shown while many targets attach: on stderr, rewritten in place, only when
//! the caller asked for it (a terminal and more than ~100 targets), erased when done.

use std::io::Write;
use std::time::{Duration, Instant};

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
    drawn: Option<Instant>,
}

impl Progress {
    pub fn new(enabled: bool, total: usize, kind: &'static str) -> Progress {
        Progress {
            enabled,
            total,
            kind,
            drawn: None,
        }
    }

    /// `done` targets handled: redraws at most every 100 ms; nothing when disabled.
    pub fn show(&mut self, done: usize) {
        if !self.enabled
            || self
                .drawn
                .is_some_and(|t| t.elapsed() < Duration::from_millis(100))
        {
            return;
        }
        self.drawn = Some(Instant::now());
        let mut err = std::io::stderr();
        let _ = write!(
            err,
            "\rattaching {} probes: {done}/{}",
            self.kind, self.total
        );
        let _ = err.flush();
    }

    /// Erases the line (if one was drawn).
    pub fn finish(&mut self) {
        if self.drawn.take().is_some() {
            let mut err = std::io::stderr();
            let _ = write!(err, "\r\x1b[2K");
            let _ = err.flush();
        }
    }
}
