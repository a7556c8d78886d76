//! BPF_PROG_TEST_RUN: runs a loaded program once (or `repeat` times) in the kernel on a given
//! context and packet data, returning its return value and duration. For raw tracepoint
//! programs the context is the u64 argument array and `repeat`/`data` must be empty
//! (net/bpf/test_run.c `bpf_prog_test_run_raw_tp`).

use std::os::fd::AsRawFd;

use super::attr::TestRunAttr;
use super::call::{bpf, ptr, Cmd};
use super::error::SysError;
use super::prog::Prog;

bitflags::bitflags! {
    /// `flags` of BPF_PROG_TEST_RUN.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct TestRunFlags: u32 {
        /// Run on `cpu` (raw_tp only).
        #[doc(alias = "BPF_F_TEST_RUN_ON_CPU")]
        const RUN_ON_CPU = 1 << 0;
        #[doc(alias = "BPF_F_TEST_XDP_LIVE_FRAMES")]
        const XDP_LIVE_FRAMES = 1 << 1;
    }
}

/// Inputs and output buffers of one test run.
#[derive(Debug, Default)]
pub struct TestRunOptions<'a> {
    pub ctx_in: &'a [u8],
    pub ctx_out: Option<&'a mut [u8]>,
    pub data_in: &'a [u8],
    pub data_out: Option<&'a mut [u8]>,
    pub repeat: u32,
    pub flags: TestRunFlags,
    pub cpu: u32,
}

impl<'a> TestRunOptions<'a> {
    /// A raw tracepoint run with `args` as the context (`ctx->args[i]`).
    pub fn raw_tp(args: &'a [u64]) -> TestRunOptions<'a> {
        // SAFETY: a u64 slice viewed as its bytes.
        let bytes =
            unsafe { std::slice::from_raw_parts(args.as_ptr().cast::<u8>(), args.len() * 8) };
        TestRunOptions {
            ctx_in: bytes,
            ..Default::default()
        }
    }
}

/// What the kernel reported.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TestRunResult {
    /// The program's return value (r0, truncated to 32 bits by the uapi).
    pub retval: u32,
    /// Average run time in ns (0 for raw_tp, which does not time).
    pub duration_ns: u32,
    pub data_size_out: u32,
    pub ctx_size_out: u32,
}

impl Prog {
    /// BPF_PROG_TEST_RUN.
    pub fn test_run(&self, opts: &mut TestRunOptions<'_>) -> Result<TestRunResult, SysError> {
        let (data_out, data_out_len) = match opts.data_out.as_deref_mut() {
            Some(b) => (ptr(b.as_mut_ptr()), b.len() as u32),
            None => (0, 0),
        };
        let (ctx_out, ctx_out_len) = match opts.ctx_out.as_deref_mut() {
            Some(b) => (ptr(b.as_mut_ptr()), b.len() as u32),
            None => (0, 0),
        };
        let nonempty = |b: &[u8]| if b.is_empty() { 0 } else { ptr(b.as_ptr()) };
        let mut a = TestRunAttr {
            prog_fd: self.as_raw_fd() as u32,
            data_size_in: opts.data_in.len() as u32,
            data_size_out: data_out_len,
            data_in: nonempty(opts.data_in),
            data_out,
            repeat: opts.repeat,
            ctx_size_in: opts.ctx_in.len() as u32,
            ctx_size_out: ctx_out_len,
            ctx_in: nonempty(opts.ctx_in),
            ctx_out,
            flags: opts.flags.bits(),
            cpu: opts.cpu,
            ..Default::default()
        };
        bpf(Cmd::ProgTestRun, &mut a).map_err(|e| SysError::bare(Cmd::ProgTestRun.name(), e))?;
        Ok(TestRunResult {
            retval: a.retval,
            duration_ns: a.duration,
            data_size_out: a.data_size_out,
            ctx_size_out: a.ctx_size_out,
        })
    }
}
