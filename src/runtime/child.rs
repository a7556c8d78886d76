//! `-c CMD`: the traced command, forked before attaching but held just before `exec` until
//! the probes are armed (the child blocks reading a pipe), so no event of its early life is
//! missed. The runtime releases it with [`Child::release`] and learns of its exit through
//! SIGCHLD.
//!
//! `std::process::Command` cannot do this: its `spawn` waits until the child has exec'd, which
//! a held child never does before release. Hence a plain fork/exec here, with everything the
//! child needs (C strings, argv) prepared before the fork so the child only makes
//! async-signal-safe calls (close, read, sigprocmask, execvp, write, _exit).
//!
//! Invariants: if the tracer dies before releasing it, the child sees EOF on the pipe and
//! exits without running the command (never untraced); if it dies afterwards (even by
//! SIGKILL), the command gets SIGTERM (`PR_SET_PDEATHSIG`, as bpftrace's child); dropping a
//! [`Child`] that is still running sends it SIGTERM and reaps it, so the tracer never leaves a
//! held command behind. A command that is not an executable file (on `PATH` for a bare name)
//! is refused before forking, so the run fails before anything is attached.

use std::ffi::CString;
use std::io;
use std::os::fd::{AsFd, BorrowedFd, FromRawFd, OwnedFd, RawFd};

/// The command being traced.
#[derive(Debug)]
pub struct Child {
    pid: libc::pid_t,
    /// Readable when the command exits (pidfd_open, 5.3): the event loop's exit signal even
    /// when SIGCHLD went to another thread of an embedding program.
    pidfd: Option<OwnedFd>,
    gate: Option<libc::c_int>,
    status: Option<i32>,
}

/// Splits `-c`'s argument into words as bpftrace does (whitespace; no shell).
pub fn split_command(cmd: &str) -> Vec<String> {
    cmd.split_whitespace().map(str::to_string).collect()
}

const EXEC_FAILED: &[u8] = b"strobe: cannot run the -c command\n";

/// The file `execvp` would run for `name`: `name` itself when it has a `/`, else the first
/// executable regular file named so in a `PATH` directory.
fn resolve_program(name: &str) -> io::Result<CString> {
    use std::os::unix::ffi::OsStrExt;
    let runnable = |p: &std::path::Path| {
        let Ok(c) = CString::new(p.as_os_str().as_bytes()) else {
            return None;
        };
        // SAFETY: a NUL-terminated path.
        let exec = unsafe { libc::access(c.as_ptr(), libc::X_OK) } == 0;
        (exec && p.is_file()).then_some(c)
    };
    let found = if name.contains('/') {
        runnable(std::path::Path::new(name))
    } else {
        let path =
            std::env::var_os("PATH").unwrap_or_else(|| "/usr/local/bin:/usr/bin:/bin".into());
        std::env::split_paths(&path).find_map(|d| runnable(&d.join(name)))
    };
    found.ok_or_else(|| {
        io::Error::new(
            io::ErrorKind::NotFound,
            format!("path '{name}' does not exist or is not executable"),
        )
    })
}

impl Child {
    /// Forks `argv`, held before exec.
    pub fn spawn(argv: &[String]) -> io::Result<Child> {
        if argv.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "empty -c command",
            ));
        }
        let program = resolve_program(&argv[0])?;
        let cargs: Vec<CString> = argv
            .iter()
            .map(|a| CString::new(a.as_bytes()))
            .collect::<Result<_, _>>()
            .map_err(|_| io::Error::new(io::ErrorKind::InvalidInput, "NUL in -c command"))?;
        let mut ptrs: Vec<*const libc::c_char> = cargs.iter().map(|c| c.as_ptr()).collect();
        ptrs.push(std::ptr::null());
        let mut fds = [0; 2];
        // SAFETY: pipe2 fills two fds on success.
        if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
            return Err(io::Error::last_os_error());
        }
        let (rd, wr) = (fds[0], fds[1]);
        // SAFETY: getpid has no preconditions.
        let parent = unsafe { libc::getpid() };
        // SAFETY: the child branch only calls async-signal-safe functions on memory prepared
        // before the fork, and never returns.
        let pid = unsafe { libc::fork() };
        if pid < 0 {
            let e = io::Error::last_os_error();
            // SAFETY: closing our own fresh fds.
            unsafe {
                libc::close(rd);
                libc::close(wr);
            }
            return Err(e);
        }
        if pid == 0 {
            // SAFETY: see above.
            unsafe {
                libc::close(wr);
                // The tracer's death ends the command; a tracer already gone before the
                // prctl is seen through getppid.
                if libc::prctl(libc::PR_SET_PDEATHSIG, libc::SIGTERM) != 0
                    || libc::getppid() != parent
                {
                    libc::_exit(127);
                }
                let mut b = 0u8;
                let n = libc::read(rd, (&mut b as *mut u8).cast(), 1);
                if n != 1 {
                    libc::_exit(127);
                }
                let mut empty: libc::sigset_t = std::mem::zeroed();
                libc::sigemptyset(&mut empty);
                libc::sigprocmask(libc::SIG_SETMASK, &empty, std::ptr::null_mut());
                // Rust ignores SIGPIPE and an ignored signal stays ignored across exec: give
                // the command the default a shell would.
                libc::signal(libc::SIGPIPE, libc::SIG_DFL);
                libc::signal(libc::SIGUSR1, libc::SIG_DFL);
                libc::execv(program.as_ptr(), ptrs.as_ptr());
                libc::write(2, EXEC_FAILED.as_ptr().cast(), EXEC_FAILED.len());
                libc::_exit(127);
            }
        }
        // SAFETY: the parent's copy of the read end is not needed.
        unsafe { libc::close(rd) };
        // SAFETY: pidfd_open on our own child; a fresh fd on success.
        let pidfd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
        let pidfd = (pidfd >= 0).then(|| unsafe { OwnedFd::from_raw_fd(pidfd as RawFd) });
        Ok(Child {
            pid,
            pidfd,
            gate: Some(wr),
            status: None,
        })
    }

    pub fn pid(&self) -> i32 {
        self.pid
    }

    /// A pidfd that becomes readable when the command exits, where the kernel has them.
    pub fn pidfd(&self) -> Option<BorrowedFd<'_>> {
        self.pidfd.as_ref().map(|f| f.as_fd())
    }

    /// Lets the command run.
    pub fn release(&mut self) {
        if let Some(w) = self.gate.take() {
            // SAFETY: our own pipe fd, written once and closed.
            unsafe {
                libc::write(w, b"g".as_ptr().cast(), 1);
                libc::close(w);
            }
        }
    }

    /// Its wait status once it has exited (non-blocking).
    pub fn exited(&mut self) -> Option<i32> {
        if self.status.is_none() {
            let mut st = 0;
            // SAFETY: waiting for our own child without blocking.
            if unsafe { libc::waitpid(self.pid, &mut st, libc::WNOHANG) } == self.pid {
                self.status = Some(st);
            }
        }
        self.status
    }
}

impl Drop for Child {
    fn drop(&mut self) {
        if self.exited().is_none() {
            // SAFETY: signalling and reaping our own child.
            unsafe {
                libc::kill(self.pid, libc::SIGTERM);
                // A held command has not unblocked signals yet: closing the gate without a
                // byte makes it exit before exec.
                if let Some(w) = self.gate.take() {
                    libc::close(w);
                }
                let mut st = 0;
                libc::waitpid(self.pid, &mut st, 0);
            }
        }
        if let Some(w) = self.gate.take() {
            // SAFETY: our own fd.
            unsafe { libc::close(w) };
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn split_command_splits_on_whitespace() {
        assert_eq!(split_command(" ls  -l /tmp "), ["ls", "-l", "/tmp"]);
    }

    #[test]
    fn held_command_runs_only_after_release() {
        let dir = std::env::temp_dir().join(format!("strobe-child-{}", std::process::id()));
        let argv = vec!["/bin/mkdir".to_string(), dir.to_string_lossy().into_owned()];
        let mut c = Child::spawn(&argv).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!dir.exists(), "held before exec");
        assert_eq!(c.exited(), None);
        c.release();
        let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
        while c.exited().is_none() && std::time::Instant::now() < deadline {
            std::thread::sleep(std::time::Duration::from_millis(5));
        }
        assert_eq!(c.exited(), Some(0));
        assert!(dir.exists());
        let _ = std::fs::remove_dir(&dir);
    }

    #[test]
    fn dropping_a_held_command_never_runs_it() {
        let dir = std::env::temp_dir().join(format!("strobe-child-drop-{}", std::process::id()));
        let argv = vec!["/bin/mkdir".to_string(), dir.to_string_lossy().into_owned()];
        drop(Child::spawn(&argv).unwrap());
        std::thread::sleep(std::time::Duration::from_millis(50));
        assert!(!dir.exists());
    }
}
