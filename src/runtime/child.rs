//! `-c CMD`: the traced command, started before attaching but held just before `exec` until
//! the probes are armed (it blocks reading a pipe in the forked child), so no event of its
//! early life is missed. The runtime releases it with [`Child::release`] and learns of its
//! exit through SIGCHLD.
//!
//! Invariant: dropping a [`Child`] that is still running sends it SIGTERM and reaps it, so the
//! tracer never leaves a stopped command behind.

use std::io::{self, Read, Write};
use std::os::unix::process::CommandExt;
use std::process::{Command, ExitStatus};

/// The command being traced.
#[derive(Debug)]
pub struct Child {
    child: std::process::Child,
    gate: Option<std::fs::File>,
    status: Option<ExitStatus>,
}

/// Splits `-c`'s argument into words as bpftrace does (whitespace; no shell).
pub fn split_command(cmd: &str) -> Vec<String> {
    cmd.split_whitespace().map(str::to_string).collect()
}

impl Child {
    /// Forks `argv` held before exec.
    pub fn spawn(argv: &[String]) -> io::Result<Child> {
        let Some((prog, args)) = argv.split_first() else {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "empty -c command",
            ));
        };
        let (reader, writer) = pipe()?;
        let mut cmd = Command::new(prog);
        cmd.args(args);
        let mut reader = Some(reader);
        // SAFETY: between fork and exec only async-signal-safe calls: read(2) on the pipe and
        // sigprocmask(2) to give the command the default signal mask back.
        unsafe {
            let r = reader.take();
            cmd.pre_exec(move || {
                let mut byte = [0u8; 1];
                if let Some(mut f) = r.as_ref() {
                    let _ = f.read(&mut byte);
                }
                let mut empty: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut empty);
                libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
                Ok(())
            });
        }
        let child = cmd.spawn()?;
        Ok(Child {
            child,
            gate: Some(writer),
            status: None,
        })
    }

    pub fn pid(&self) -> i32 {
        self.child.id() as i32
    }

    /// Lets the command run (closing our end also releases it if we never write).
    pub fn release(&mut self) {
        if let Some(mut w) = self.gate.take() {
            let _ = w.write_all(b"g");
        }
    }

    /// Its exit status once it has exited (non-blocking).
    pub fn exited(&mut self) -> Option<ExitStatus> {
        if self.status.is_none() {
            self.status = self.child.try_wait().ok().flatten();
        }
        self.status
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if self.exited().is_none() {
            // SAFETY: signalling our own child by pid.
            unsafe { libc::kill(self.pid(), libc::SIGTERM) };
            // A command still held before exec has SIGTERM blocked: let it reach the point
            // where it unblocks signals, and the pending SIGTERM ends it there.
            self.release();
            let _ = self.child.wait();
        }
    }
}

fn pipe() -> io::Result<(std::fs::File, std::fs::File)> {
    let mut fds = [0; 2];
    // SAFETY: pipe2 fills two fds on success.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(io::Error::last_os_error());
    }
    use std::os::fd::FromRawFd;
    // SAFETY: fresh fds owned from here on.
    Ok(unsafe {
        (
            std::fs::File::from_raw_fd(fds[0]),
            std::fs::File::from_raw_fd(fds[1]),
        )
    })
}
