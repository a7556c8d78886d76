//! `--test` and `--bench` (bpftrace's test and benchmark modes): the script's `test:` and
//! `bench:` probes run through BPF_PROG_TEST_RUN, in script order, instead of attaching
//! anything.
//!
//! Input: the loaded probes (XDP programs: the raw tracepoint runner takes no repeat count and
//! reports no time) and a `drain` callback that handles the records a run wrote and says
//! whether the run failed (`exit()` or `errorf()`). Output: one [`TestResult`] or
//! [`BenchOutcome`] per probe, printed by the caller.
//!
//! A test passes when its program returns 0 and it neither called `exit()` nor reported an
//! `errorf()`; its output is shown only when it fails. A benchmark runs with a repeat count
//! raised until the runs together take at least 1 ms (as bpftrace does), and reports the
//! kernel's average time per run; returning non-zero skips it, `exit()`/`errorf()` fail it.

use super::probes::{ProbeError, SpecialProg};
use crate::sys::{TestRunOptions, TestRunResult};

/// Packet bytes for an XDP test run: the kernel wants at least an Ethernet header (ETH_HLEN).
const PACKET: [u8; 14] = [0; 14];

/// Runs `prog` `repeat` times on [`PACKET`].
fn run_packet(prog: &SpecialProg, repeat: u32) -> Result<TestRunResult, ProbeError> {
    prog.prog
        .test_run(&mut TestRunOptions {
            data_in: &PACKET,
            repeat,
            ..Default::default()
        })
        .map_err(|source| ProbeError::Sys {
            probe: prog.name.clone(),
            what: "running the program (BPF_PROG_TEST_RUN)".into(),
            source,
        })
}

/// One test's result.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TestResult {
    pub passed: bool,
    pub duration_ns: u64,
    /// What the test printed (shown when it failed).
    pub output: Vec<u8>,
}

/// Runs one `test:` probe. `drain(out)` handles the records written so far into `out` and
/// says whether the run failed.
pub fn run_test<E: From<ProbeError>>(
    prog: &SpecialProg,
    drain: &mut dyn FnMut(&mut Vec<u8>) -> Result<bool, E>,
) -> Result<TestResult, E> {
    let r = run_packet(prog, 1)?;
    let mut output = Vec::new();
    let failed = drain(&mut output)?;
    Ok(TestResult {
        passed: r.retval == 0 && !failed,
        duration_ns: u64::from(r.duration_ns),
        output,
    })
}

/// How one benchmark ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BenchOutcome {
    /// The kernel's average time per run over `iters` runs.
    Measured { average_ns: u64, iters: u64 },
    /// The probe returned non-zero: no result, not a failure.
    Skipped,
    /// `exit()` or `errorf()`.
    Failed,
}

/// The next repeat count after runs that took `total_ns` together (bpftrace's steps), or
/// `None` once they took 1 ms.
fn next_iters(iters: u64, total_ns: u64) -> Option<u64> {
    let factor = match total_ns {
        t if t < 1_000 => 1000,
        t if t < 10_000 => 100,
        t if t < 100_000 => 10,
        t if t < 1_000_000 => 2,
        _ => return None,
    };
    Some(iters.saturating_mul(factor))
}

/// Runs one `bench:` probe (its output is discarded by `drain`).
pub fn run_bench<E: From<ProbeError>>(
    prog: &SpecialProg,
    drain: &mut dyn FnMut() -> Result<bool, E>,
) -> Result<BenchOutcome, E> {
    let mut iters: u64 = 1;
    loop {
        let r = run_packet(prog, iters as u32)?;
        let failed = drain()?;
        if !failed && r.retval != 0 {
            return Ok(BenchOutcome::Skipped);
        }
        let average_ns = u64::from(r.duration_ns);
        // The kernel's repeat count is 32 bits: a program too fast to time that often is
        // measured with the most runs it takes.
        match next_iters(iters, average_ns.saturating_mul(iters)) {
            Some(n) if n <= u64::from(u32::MAX) && !failed => iters = n,
            _ if failed => return Ok(BenchOutcome::Failed),
            _ => return Ok(BenchOutcome::Measured { average_ns, iters }),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_repeat_count_grows_until_a_millisecond() {
        assert_eq!(next_iters(1, 50), Some(1000));
        assert_eq!(next_iters(1000, 5_000), Some(100_000));
        assert_eq!(next_iters(10, 50_000), Some(100));
        assert_eq!(next_iters(100, 500_000), Some(200));
        assert_eq!(next_iters(200, 1_000_000), None);
        assert_eq!(next_iters(u64::MAX, 0), Some(u64::MAX));
    }
}
