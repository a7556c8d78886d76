//! Child processes for the case runner: each runs in its own process group with stdout and
//! stderr merged into one pipe (or, for a check of stdout alone, on two pipes), read by a
//! thread per pipe, so a case can be timed out and stopped together with everything it
//! started.
//!
//! Invariant: a [`Captured`] is always stopped (group killed, child reaped) before its output
//! is returned, and collecting the output never blocks for more than [`DRAIN_GRACE`] after
//! that, even when a descendant that left the group keeps the pipe open.

use std::io::{BufRead, BufReader};
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::process::{CommandExt, ExitStatusExt};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::sync::{Arc, Mutex};
use std::time::{Duration, Instant};

/// How long a stopped process group may take to exit after SIGTERM before SIGKILL (strobe
/// prints its maps then; a big map on a busy machine takes a while).
const TERM_GRACE: Duration = Duration::from_secs(3);
/// How long to wait for the output pipe to reach end-of-file once the child is gone.
const DRAIN_GRACE: Duration = Duration::from_secs(2);
const POLL: Duration = Duration::from_millis(10);

/// How a waited-for process ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Ended {
    Exited(ExitStatus),
    TimedOut,
}

/// Where a child's stdout and stderr go.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Streams {
    /// One pipe for both, in the order the child wrote them; a last line without a newline
    /// gets one.
    Merged,
    /// Apart: the output is stdout byte for byte (marker lines withheld), stderr is kept
    /// beside it.
    Split,
}

/// A running child whose output is being collected.
pub struct Captured {
    child: Child,
    output: Arc<Mutex<String>>,
    /// Stderr, when it has a pipe of its own ([`Streams::Split`]).
    stderr: Option<Arc<Mutex<String>>>,
    /// One end-of-file message per pipe.
    eof: Receiver<()>,
    pipes: usize,
    marker: Receiver<()>,
}

/// What a stopped child left: how it ended (`None` if it was still running when stopped), its
/// output and, with [`Streams::Split`], its stderr.
#[derive(Debug, Clone)]
pub struct Stopped {
    pub status: Option<ExitStatus>,
    pub output: String,
    pub stderr: Option<String>,
}

/// Formats an exit status as a shell would describe it.
pub fn describe_status(status: ExitStatus) -> String {
    match (status.code(), status.signal()) {
        (Some(code), _) => format!("exit code {code}"),
        (None, Some(sig)) => format!("killed by signal {sig}"),
        (None, None) => "unknown exit status".to_string(),
    }
}

impl Captured {
    /// Starts `cmd` in a new process group with stdin from /dev/null and stdout+stderr going to
    /// one pipe. A line equal to `marker` (if given) is withheld from the output and reported
    /// through [`Captured::saw_marker`].
    pub fn spawn(cmd: Command, marker: Option<&'static str>) -> std::io::Result<Captured> {
        Captured::spawn_with(cmd, marker, Streams::Merged)
    }

    /// [`Captured::spawn`] with the choice of [`Streams`].
    pub fn spawn_with(
        mut cmd: Command,
        marker: Option<&'static str>,
        streams: Streams,
    ) -> std::io::Result<Captured> {
        let (read_end, write_end) = pipe()?;
        let err_pipe = match streams {
            Streams::Merged => None,
            Streams::Split => Some(pipe()?),
        };
        let stderr_end = match &err_pipe {
            Some((_, w)) => w.try_clone()?,
            None => write_end.try_clone()?,
        };
        cmd.stdin(Stdio::null())
            .stdout(Stdio::from(write_end))
            .stderr(Stdio::from(stderr_end))
            .process_group(0);
        let child = cmd.spawn()?;
        // `cmd` still holds the write ends' copies; drop them (and ours) so EOF arrives when
        // the child and its descendants close theirs.
        drop(cmd);
        let output = Arc::new(Mutex::new(String::new()));
        let (eof_tx, eof) = mpsc::channel();
        let (marker_tx, marker_rx) = mpsc::channel();
        let exact = streams == Streams::Split;
        read_into(
            read_end,
            Arc::clone(&output),
            marker,
            marker_tx.clone(),
            eof_tx.clone(),
            exact,
        );
        let stderr = err_pipe.map(|(r, w)| {
            drop(w);
            let sink = Arc::new(Mutex::new(String::new()));
            read_into(r, Arc::clone(&sink), marker, marker_tx, eof_tx, exact);
            sink
        });
        Ok(Captured {
            child,
            output,
            pipes: if stderr.is_some() { 2 } else { 1 },
            stderr,
            eof,
            marker: marker_rx,
        })
    }

    pub fn pid(&self) -> u32 {
        self.child.id()
    }

    /// Whether the marker line has been seen since the last call.
    pub fn saw_marker(&self) -> bool {
        self.marker.try_recv().is_ok()
    }

    /// Waits for the child to exit until `deadline`, calling `tick` every poll interval (the
    /// runner starts `AFTER` workloads from it).
    pub fn wait_until(&mut self, deadline: Instant, mut tick: impl FnMut(&Self)) -> Ended {
        loop {
            if let Ok(Some(status)) = self.child.try_wait() {
                return Ended::Exited(status);
            }
            tick(self);
            if Instant::now() >= deadline {
                return Ended::TimedOut;
            }
            std::thread::sleep(POLL);
        }
    }

    /// Waits until a process named `comm` runs in this child's process group (the child
    /// itself once it has exec'd, or one of its descendants). `false` when `deadline` passes
    /// or the child exits first.
    pub fn wait_for_comm(&mut self, comm: &str, deadline: Instant) -> bool {
        let pgid = self.child.id();
        loop {
            if group_has_comm(pgid, comm) {
                return true;
            }
            if matches!(self.child.try_wait(), Ok(Some(_))) || Instant::now() >= deadline {
                return false;
            }
            std::thread::sleep(POLL);
        }
    }

    /// Stops the whole process group (SIGTERM, then SIGKILL after a grace period), reaps the
    /// child and returns how it ended (`None` if it was still running when stopped) and its
    /// output.
    pub fn stop(self) -> (Option<ExitStatus>, String) {
        let s = self.stop_all();
        (s.status, s.output)
    }

    /// [`Captured::stop`], keeping stderr apart when it had its own pipe.
    pub fn stop_all(mut self) -> Stopped {
        let already = self.child.try_wait().ok().flatten();
        let pgid = self.child.id() as libc::pid_t;
        if already.is_none() {
            signal_group(pgid, libc::SIGTERM);
            // The whole group gets the grace period, not just the child: a shell running
            // `strobe …` dies of SIGTERM at once while strobe is still printing its maps.
            let deadline = Instant::now() + TERM_GRACE;
            while Instant::now() < deadline {
                let _ = self.child.try_wait();
                if !group_alive(pgid) {
                    break;
                }
                std::thread::sleep(POLL);
            }
        }
        // Descendants may outlive the child; they would keep the pipe open.
        signal_group(pgid, libc::SIGKILL);
        let _ = self.child.wait();
        let drained = Instant::now() + DRAIN_GRACE;
        for _ in 0..self.pipes {
            let left = drained.saturating_duration_since(Instant::now());
            let _ = self.eof.recv_timeout(left);
        }
        let text = |b: &Arc<Mutex<String>>| b.lock().map(|o| o.clone()).unwrap_or_default();
        Stopped {
            status: already,
            output: text(&self.output),
            stderr: self.stderr.as_ref().map(text),
        }
    }
}

/// Reads `pipe` line by line on a thread into `sink` until end-of-file, then sends on `eof`.
/// A line equal to `marker` is withheld and sent on `marker_tx`. Unless `exact`, a last line
/// without a newline gets one.
fn read_into(
    pipe: OwnedFd,
    sink: Arc<Mutex<String>>,
    marker: Option<&'static str>,
    marker_tx: mpsc::Sender<()>,
    eof_tx: mpsc::Sender<()>,
    exact: bool,
) {
    std::thread::spawn(move || {
        let mut reader = BufReader::new(std::fs::File::from(pipe));
        let mut line = Vec::new();
        while matches!(reader.read_until(b'\n', &mut line), Ok(n) if n > 0) {
            let text = String::from_utf8_lossy(&line);
            if marker.is_some_and(|m| text.trim_end() == m) {
                let _ = marker_tx.send(());
            } else if let Ok(mut out) = sink.lock() {
                out.push_str(&text);
                if !exact && !text.ends_with('\n') {
                    out.push('\n');
                }
            }
            line.clear();
        }
        let _ = eof_tx.send(());
    });
}

/// Runs `cmd` to completion (or until `timeout`) and returns how it ended and its output.
pub fn run_to_end(cmd: Command, timeout: Duration) -> std::io::Result<(Ended, String)> {
    let mut child = Captured::spawn(cmd, None)?;
    let ended = child.wait_until(Instant::now() + timeout, |_| {});
    let (_, output) = child.stop();
    Ok((ended, output))
}

/// Whether a process in process group `pgid` has the command name `comm` (as the kernel keeps
/// it: the executable's basename cut to 15 bytes).
fn group_has_comm(pgid: u32, comm: &str) -> bool {
    group_members(pgid).any(|(c, _)| c == comm)
}

/// `(comm, state)` of every process in group `pgid`, from /proc.
fn group_members(pgid: u32) -> impl Iterator<Item = (String, char)> {
    std::fs::read_dir("/proc")
        .into_iter()
        .flatten()
        .filter_map(Result::ok)
        .filter(|e| {
            e.file_name()
                .to_string_lossy()
                .bytes()
                .all(|b| b.is_ascii_digit())
        })
        .filter_map(|e| std::fs::read_to_string(e.path().join("stat")).ok())
        .filter_map(move |stat| {
            let (comm, state, pgrp) = parse_stat(&stat)?;
            (pgrp == pgid).then(|| (comm.to_string(), state))
        })
}

/// `(comm, state, pgrp)` from a /proc/PID/stat line: `pid (comm) state ppid pgrp …`. The comm
/// may itself contain spaces and parentheses, so it ends at the last `)`.
fn parse_stat(stat: &str) -> Option<(&str, char, u32)> {
    let open = stat.find('(')?;
    let close = stat.rfind(')')?;
    let comm = stat.get(open + 1..close)?;
    let mut rest = stat.get(close + 1..)?.split_whitespace();
    let state = rest.next()?.chars().next()?;
    let pgrp = rest.nth(1)?.parse().ok()?;
    Some((comm, state, pgrp))
}

/// Whether a process that has not exited yet is left in group `pgid` (zombies waiting for
/// their reaper do not count: they have written all they will write).
fn group_alive(pgid: libc::pid_t) -> bool {
    let Ok(pgid) = u32::try_from(pgid) else {
        return false;
    };
    group_members(pgid).any(|(_, state)| state != 'Z')
}

fn signal_group(pgid: libc::pid_t, sig: libc::c_int) {
    if pgid > 0 {
        // SAFETY: kill(2) with a negative pid signals that process group; ESRCH (already
        // gone) is expected and harmless.
        unsafe { libc::kill(-pgid, sig) };
    }
}

fn pipe() -> std::io::Result<(OwnedFd, OwnedFd)> {
    let mut fds = [0 as libc::c_int; 2];
    // SAFETY: pipe2 writes two new descriptors into `fds` on success; we own them from here.
    if unsafe { libc::pipe2(fds.as_mut_ptr(), libc::O_CLOEXEC) } != 0 {
        return Err(std::io::Error::last_os_error());
    }
    // SAFETY: both descriptors were just created and are owned by nobody else.
    Ok(unsafe { (OwnedFd::from_raw_fd(fds[0]), OwnedFd::from_raw_fd(fds[1])) })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sh(script: &str) -> Command {
        let mut c = Command::new("/bin/sh");
        c.arg("-c").arg(script);
        c
    }

    #[test]
    fn merged_output_keeps_stdout_and_stderr() {
        let (ended, out) =
            run_to_end(sh("echo out; echo err >&2; exit 3"), Duration::from_secs(5)).unwrap();
        let Ended::Exited(status) = ended else {
            panic!("timed out")
        };
        assert_eq!(status.code(), Some(3));
        assert!(out.contains("out\n") && out.contains("err\n"), "{out:?}");
    }

    #[test]
    fn split_streams_keep_stdout_exact_and_stderr_apart() {
        let mut c = Captured::spawn_with(
            sh("printf 'a\\n\\n'; echo err >&2; echo MARK; sleep 0.2; printf 'b  '"),
            Some("MARK"),
            Streams::Split,
        )
        .unwrap();
        let mut seen = false;
        c.wait_until(Instant::now() + Duration::from_secs(5), |c| {
            seen |= c.saw_marker()
        });
        let s = c.stop_all();
        assert!(seen);
        assert_eq!(s.output, "a\n\nb  ");
        assert_eq!(s.stderr.as_deref(), Some("err\n"));
    }

    #[test]
    fn timeout_stops_the_whole_group_promptly() {
        let start = Instant::now();
        let (ended, out) = run_to_end(
            sh("echo started; sleep 30 & sleep 30; echo never"),
            Duration::from_millis(200),
        )
        .unwrap();
        assert_eq!(ended, Ended::TimedOut);
        assert_eq!(out, "started\n");
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "{:?}",
            start.elapsed()
        );
    }

    #[test]
    fn stopping_waits_for_the_group_after_the_shell_dies() {
        // The shell dies of SIGTERM at once; its child traps it and writes on for a while.
        let mut c = Captured::spawn(
            sh("sh -c 'trap \"sleep 0.3; echo printed; exit 0\" TERM; echo ready; while :; do sleep 0.05; done'; echo never"),
            None,
        )
        .unwrap();
        let ended = c.wait_until(Instant::now() + Duration::from_millis(500), |_| {});
        assert_eq!(ended, Ended::TimedOut);
        let (_, out) = c.stop();
        assert!(
            out.contains("ready\n") && out.contains("printed\n"),
            "{out:?}"
        );
    }

    #[test]
    fn stat_lines_yield_comm_and_process_group() {
        assert_eq!(
            parse_stat("42 (sleep) S 1 40 40 0 -1"),
            Some(("sleep", 'S', 40))
        );
        assert_eq!(
            parse_stat("7 (a) b) (c) Z 1 9 9"),
            Some(("a) b) (c", 'Z', 9))
        );
        assert_eq!(parse_stat("garbage"), None);
    }

    #[test]
    fn waiting_for_a_comm_sees_the_exec_and_gives_up_when_the_child_exits() {
        let mut c = Captured::spawn(sh("sleep 0.1; exec sleep 30"), None).unwrap();
        assert!(c.wait_for_comm("sleep", Instant::now() + Duration::from_secs(5)));
        let _ = c.stop();
        let mut c = Captured::spawn(sh("exit 0"), None).unwrap();
        let start = Instant::now();
        assert!(!c.wait_for_comm("never-runs", Instant::now() + Duration::from_secs(5)));
        assert!(start.elapsed() < Duration::from_secs(4));
        let _ = c.stop();
    }

    #[test]
    fn marker_line_is_reported_and_withheld() {
        let mut c =
            Captured::spawn(sh("echo a; echo MARK; sleep 0.2; echo b"), Some("MARK")).unwrap();
        let mut seen = false;
        let ended = c.wait_until(Instant::now() + Duration::from_secs(5), |c| {
            seen |= c.saw_marker()
        });
        assert!(matches!(ended, Ended::Exited(_)));
        let (status, out) = c.stop();
        assert!(seen);
        assert_eq!(status.and_then(|s| s.code()), Some(0));
        assert_eq!(out, "a\nb\n");
    }
}
