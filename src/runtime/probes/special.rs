//! BEGIN and END: raw tracepoint programs the runtime runs itself with BPF_PROG_TEST_RUN, so
//! BEGIN runs exactly once before any other probe can fire (it runs before arming) and END
//! once after every other probe stopped (after disarming). Their templates carry no arming
//! guard. `self:signal:SIGUSR1` probes are run the same way, by the event loop, each time
//! strobe receives the signal (they keep the guard: they run only while armed). Needs
//! BPF_PROG_TEST_RUN for raw tracepoints (5.10).

use super::{load_program, AttachContext, ProbeError};
use crate::plan::ProbeSpec;
use std::os::fd::AsFd;

use crate::sys::{Prog, TestRunOptions};

/// A loaded BEGIN, END or `self:signal` program.
#[derive(Debug)]
pub struct SpecialProg {
    pub name: String,
    pub prog: Prog,
}

impl SpecialProg {
    pub fn load(probe: &ProbeSpec, ctx: &AttachContext<'_>) -> Result<SpecialProg, ProbeError> {
        Ok(SpecialProg {
            name: probe.name.clone(),
            prog: load_program(probe, 0, ctx)?,
        })
    }

    /// Runs the program once (its records land in the ring buffer), on the process's main
    /// thread when strobe serves one (`runtime::main_thread`), as bpftrace runs BEGIN and END.
    pub fn run(&self) -> Result<(), ProbeError> {
        let run = |prog: &Prog| {
            let args = [0u64; 1];
            prog.test_run(&mut TestRunOptions::raw_tp(&args))
                .map(|_| ())
        };
        let result = match self.prog.as_fd().try_clone_to_owned() {
            Ok(fd) => {
                let prog = Prog::from_parts(fd, self.prog.prog_type());
                crate::runtime::main_thread::on_main(move || run(&prog))
            }
            // Out of fds: run it here.
            Err(_) => run(&self.prog),
        };
        result.map_err(|source| ProbeError::Sys {
            probe: self.name.clone(),
            what: "running the program (BPF_PROG_TEST_RUN)".into(),
            source,
        })
    }
}
