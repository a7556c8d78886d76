//! strobe's test support, a dev-only crate of the workspace (never part of the product):
//! the declarative case format and its runner (and the `strobe-cases` binary the VM harness
//! runs), process helpers, kernel-version filters, the instruction-form corpus and oracle
//! plumbing.
//!
//! Support for tests that need a kernel capability: they check for it at run time and, when it
//! is missing, say loudly which test was skipped and why. `scripts/test` collects every skip
//! (through `STROBE_SKIP_LOG`) and prints the list at the end of the run, so a skipped test is
//! never mistaken for a passing one.

use std::io::Write;

/// Records that `test` was skipped because of `reason`, on stderr and in `$STROBE_SKIP_LOG`.
pub fn skip(test: &str, reason: &str) {
    eprintln!("SKIPPED {test}: {reason}");
    if let Some(path) = std::env::var_os("STROBE_SKIP_LOG") {
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            // One write per line: tests run on parallel threads, and O_APPEND keeps a single
            // small write whole, where writeln!'s pieces could interleave.
            let _ = f.write_all(format!("{test}: {reason}\n").as_bytes());
        }
    }
}

/// CPU time of the calling thread, in seconds. Scaling tests compare this rather than wall
/// time: other work on a busy machine stretches wall time by any factor, but barely changes
/// the CPU time a computation needs.
pub fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime fills the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

pub mod canned;
pub mod cases;
pub mod cases_cli;
pub mod forms;
pub mod kernels;
pub mod oracle;
pub mod process;
pub mod report;
pub mod runner;
