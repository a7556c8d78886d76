//! How the `strobe` binary ends a run of a compiled script: the exit status `exit(code)`
//! asks for, an `exit()` whose record a full ring buffer lost, strobe's own process left out
//! of its kernel probes, closed and failing outputs, signals, odd command lines.
//! Each test runs the built binary as a user does, with a deadline: a run that does not end
//! is a failure, never a hang.

use std::io::Read;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

use crate::runtime_support;
use runtime_support::have_bpf;

fn strobe() -> Command {
    Command::new(env!("CARGO_BIN_EXE_strobe"))
}

/// Waits up to `secs` for `child`; kills it and fails the test when it is still running.
/// All of `child`'s piped stdout (until it closes it).
fn read_stdout(child: &mut Child) -> String {
    let mut out = String::new();
    if let Some(mut o) = child.stdout.take() {
        o.read_to_string(&mut out).unwrap();
    }
    out
}

fn wait_for(child: &mut Child, secs: u64, what: &str) -> ExitStatus {
    let deadline = Instant::now() + Duration::from_secs(secs);
    loop {
        if let Some(st) = child.try_wait().unwrap() {
            return st;
        }
        if Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            panic!("{what}: still running after {secs} s");
        }
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Runs strobe to the end (at most `secs`), with its output captured.
fn run(args: &[&str], secs: u64) -> Output {
    let mut child = strobe()
        .args(args)
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("strobe starts");
    let mut out = child.stdout.take().unwrap();
    let mut err = child.stderr.take().unwrap();
    let t_out = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = out.read_to_end(&mut v);
        v
    });
    let t_err = std::thread::spawn(move || {
        let mut v = Vec::new();
        let _ = err.read_to_end(&mut v);
        v
    });
    let status = wait_for(&mut child, secs, &args.join(" "));
    Output {
        status,
        stdout: t_out.join().unwrap(),
        stderr: t_err.join().unwrap(),
    }
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn exit_code_becomes_the_process_status() {
    if !have_bpf("exit_code_becomes_the_process_status") {
        return;
    }
    for (prog, code) in [
        ("BEGIN { exit(3); }", 3),
        ("BEGIN { exit(); }", 0),
        ("interval:ms:20 { exit(7); }", 7),
        // The status carries the low 8 bits, as bpftrace's u8 exit code.
        ("interval:ms:20 { $c = 258; exit($c); }", 2),
        ("END { exit(5); }  interval:ms:20 { exit(); }", 5),
    ] {
        let o = run(&["-e", prog], 30);
        assert_eq!(o.status.code(), Some(code), "{prog}: {}", text(&o.stderr));
    }
}

/// A flood fills the ring buffer faster than a slow reader of strobe's output empties it, so
/// `exit()`'s record is lost; the run must end anyway (the exit map), and say once how many
/// records were lost.
#[test]
fn exit_ends_the_run_when_a_flood_lost_its_record() {
    if !have_bpf("exit_ends_the_run_when_a_flood_lost_its_record") {
        return;
    }
    let mut child = strobe()
        .args([
            "-c",
            "/bin/dd if=/dev/zero of=/dev/null bs=1 count=4000000000",
            "-e",
            // One exit() only: a later one could find room in the buffer.
            "tracepoint:raw_syscalls:sys_enter { printf(\"%d\\n\", tid); } \
             interval:ms:1500 { if (@n == 0) { @n = 1; exit(); } }",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut all = Vec::new();
        // About 200 KB/s: far slower than the flood, even on a busy machine.
        let mut b = vec![0u8; 4 << 10];
        loop {
            match out.read(&mut b) {
                Ok(0) | Err(_) => return all,
                Ok(n) => all.extend_from_slice(&b[..n]),
            }
            std::thread::sleep(Duration::from_millis(20));
        }
    });
    let status = wait_for(&mut child, 60, "flood with exit()");
    let all = text(&reader.join().unwrap());
    assert!(status.success(), "{status:?}");
    assert!(all.ends_with("@n: 1\n"), "maps printed at exit");
    assert!(all.matches("Lost ").count() <= 1, "lost records said once");
}

/// strobe's own syscalls (its epoll waits, its output writes) are not traced by a probe that
/// sends records to strobe (its printing would feed the probe without end), but a probe that
/// only updates maps counts them, as bpftrace counts its own.
#[test]
fn kernel_probes_leave_out_strobe_itself_where_it_would_feed_them() {
    if !have_bpf("kernel_probes_leave_out_strobe_itself_where_it_would_feed_them") {
        return;
    }
    let run = |script: &str| {
        let mut child = strobe()
            .args(["-e", script])
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .unwrap();
        let me = child.id();
        let out = read_stdout(&mut child);
        let status = wait_for(&mut child, 30, script);
        assert!(status.success());
        (me, out)
    };
    // Other strobe processes (tests running beside this one) may show up; this one must not.
    let (me, out) = run(
        "tracepoint:raw_syscalls:sys_enter /comm == \"strobe\"/ { printf(\"pid %d\\n\", pid); } \
         interval:ms:300 { exit(); }",
    );
    assert!(
        !out.lines().any(|l| l == format!("pid {me}")),
        "strobe ({me}) traced its own syscalls while printing: {out}"
    );
    let (me, out) =
        run("tracepoint:raw_syscalls:sys_enter { @[pid] = count(); } interval:ms:300 { exit(); }");
    assert!(
        out.contains(&format!("@[{me}]:")),
        "strobe ({me}) left its own syscalls out of a map-only probe: {out}"
    );
}

/// A pipe whose reading end is already closed, as `strobe … | true` leaves it.
fn closed_pipe() -> Stdio {
    let mut fds = [0; 2];
    // SAFETY: pipe fills two fresh fds; we own both.
    assert_eq!(unsafe { libc::pipe(fds.as_mut_ptr()) }, 0);
    // SAFETY: closing our own read end.
    unsafe { libc::close(fds[0]) };
    // SAFETY: the write end is ours alone.
    Stdio::from(unsafe { <std::os::fd::OwnedFd as std::os::fd::FromRawFd>::from_raw_fd(fds[1]) })
}

fn dev_full() -> Stdio {
    Stdio::from(
        std::fs::OpenOptions::new()
            .write(true)
            .open("/dev/full")
            .unwrap(),
    )
}

#[test]
fn printing_into_a_closed_pipe_exits_141_without_a_panic() {
    for args in [
        &["--version"][..],
        &["info"],
        &["-d", "ast", "-e", "BEGIN { }"],
        &["-d", "asm", "-e", "BEGIN { printf(\"x\\n\"); }"],
        &["-l", "tracepoint:syscalls:sys_enter_*"],
    ] {
        let o = strobe()
            .args(args)
            .stdout(closed_pipe())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(141), "{args:?}: {err}");
        assert!(!err.contains("panicked"), "{args:?}: {err}");
    }
}

#[test]
fn printing_into_a_full_disk_is_reported() {
    for args in [&["--version"][..], &["-d", "ast", "-e", "BEGIN { }"]] {
        let o = strobe()
            .args(args)
            .stdout(dev_full())
            .stderr(Stdio::piped())
            .output()
            .unwrap();
        let err = text(&o.stderr);
        assert_eq!(o.status.code(), Some(1), "{args:?}: {err}");
        assert!(
            err.contains("cannot write the output: No space left"),
            "{err}"
        );
    }
}

/// `strobe … | head -1`: the run ends (141, as bpftrace) instead of tracing on for nobody.
#[test]
fn a_run_whose_output_pipe_closes_ends_with_141() {
    if !have_bpf("a_run_whose_output_pipe_closes_ends_with_141") {
        return;
    }
    let mut child = strobe()
        .args(["-e", "interval:ms:10 { printf(\"tick\\n\"); }"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let mut b = [0u8; 64];
    let _ = out.read(&mut b).unwrap();
    drop(out);
    let status = wait_for(&mut child, 20, "run into a closed pipe");
    assert_eq!(status.code(), Some(141), "{status:?}");
}

#[test]
fn a_run_whose_output_file_is_full_fails_and_says_why() {
    if !have_bpf("a_run_whose_output_file_is_full_fails_and_says_why") {
        return;
    }
    let o = run(
        &[
            "-o",
            "/dev/full",
            "-e",
            "interval:ms:10 { printf(\"tick\\n\"); }",
        ],
        20,
    );
    assert_eq!(o.status.code(), Some(1));
    assert!(
        text(&o.stderr).contains("cannot write the output: No space left"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn sigusr1_does_not_end_a_run() {
    if !have_bpf("sigusr1_does_not_end_a_run") {
        return;
    }
    let mut child = strobe()
        .args(["-e", "interval:ms:700 { printf(\"done\\n\"); exit(); }"])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::thread::sleep(Duration::from_millis(300));
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGUSR1) };
    let status = wait_for(&mut child, 20, "run with SIGUSR1");
    let out = read_stdout(&mut child);
    assert!(status.success(), "{status:?}");
    assert!(out.contains("done"), "{out}");
}

/// Whether process `pid` still exists (not a zombie of ours: `pid` is a grandchild).
fn alive(pid: i32) -> bool {
    std::fs::read_to_string(format!("/proc/{pid}/stat")).is_ok_and(|s| {
        !s.rsplit(')')
            .next()
            .unwrap_or("")
            .trim_start()
            .starts_with('Z')
    })
}

#[test]
fn a_sigkilled_strobe_takes_its_command_along() {
    if !have_bpf("a_sigkilled_strobe_takes_its_command_along") {
        return;
    }
    let mut child = strobe()
        .args([
            "-c",
            "/bin/sleep 60",
            "-e",
            "tracepoint:syscalls:sys_enter_nanosleep, tracepoint:syscalls:sys_enter_clock_nanosleep \
             { printf(\"cpid %d\\n\", pid); }",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut r = std::io::BufReader::new(child.stdout.take().unwrap());
    let mut line = String::new();
    let cpid = loop {
        line.clear();
        assert!(
            std::io::BufRead::read_line(&mut r, &mut line).unwrap() > 0,
            "no cpid line"
        );
        if let Some(p) = line.trim().strip_prefix("cpid ") {
            break p.parse::<i32>().unwrap();
        }
    };
    assert!(alive(cpid));
    child.kill().unwrap();
    child.wait().unwrap();
    let deadline = Instant::now() + Duration::from_secs(5);
    while alive(cpid) && Instant::now() < deadline {
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(!alive(cpid), "the -c command {cpid} outlived strobe");
}

/// Ctrl-C while a large map is printed at exit stops the printing.
#[test]
fn sigint_stops_printing_a_large_map() {
    if !have_bpf("sigint_stops_printing_a_large_map") {
        return;
    }
    let mut child = strobe()
        .env("STROBE_MAX_MAP_KEYS", "300000")
        .args([
            "-c",
            "/bin/dd if=/dev/zero of=/dev/null bs=1 count=4000000000",
            "-e",
            "tracepoint:raw_syscalls:sys_enter { @[nsecs] = 1; } interval:ms:1500 { exit(); }",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let pid = child.id() as i32;
    let reader = std::thread::spawn(move || {
        let mut all = Vec::new();
        let mut b = vec![0u8; 16 << 10];
        let mut signalled = None;
        loop {
            match out.read(&mut b) {
                Ok(0) | Err(_) => return (all, signalled),
                Ok(n) => all.extend_from_slice(&b[..n]),
            }
            if signalled.is_none() && all.len() > 256 << 10 {
                // SAFETY: signalling our own child.
                unsafe { libc::kill(pid, libc::SIGINT) };
                signalled = Some(Instant::now());
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    });
    wait_for(&mut child, 120, "large map printing");
    let (all, signalled) = reader.join().unwrap();
    let signalled = signalled.expect("the map was printed");
    let lines = all.iter().filter(|&&c| c == b'\n').count();
    assert!(
        lines < 200_000,
        "printing went on after SIGINT: {lines} lines, {:?} after it",
        signalled.elapsed()
    );
}

#[test]
fn odd_command_lines_are_refused_before_attaching() {
    for (args, code, says) in [
        (&["-e", ""][..], 2, "filename or -e 'program' required"),
        (&["-e", " // nothing "], 1, "No probes to attach"),
        (
            &["-c", "/nonexistent/cmd", "-e", "BEGIN { }"],
            1,
            "path '/nonexistent/cmd' does not exist or is not executable",
        ),
        (&["-p", "0", "-e", "BEGIN { }"], 2, "invalid pid 0"),
        (&["--dry-run", "/dev/zero"], 2, "larger than 16 MiB"),
    ] {
        let o = run(args, 60);
        let all = text(&o.stdout) + &text(&o.stderr);
        assert_eq!(o.status.code(), Some(code), "{args:?}: {all}");
        assert!(all.contains(says), "{args:?}: {all}");
        assert!(!all.contains("Attaching"), "{args:?}: {all}");
    }
}

#[test]
fn a_pid_that_does_not_exist_is_refused() {
    // The highest pid the kernel hands out, then one past it.
    let max: i64 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(4 << 20);
    let pid = (max + 1).to_string();
    let o = run(&["-p", &pid, "-e", "BEGIN { }"], 20);
    assert_eq!(o.status.code(), Some(2));
    // bpftrace's words for a pid past pid_max.
    assert!(
        text(&o.stderr).contains(&format!("ERROR: Pid out of range: {pid}")),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn a_pid_run_ends_when_that_process_exits() {
    if !have_bpf("a_pid_run_ends_when_that_process_exits") {
        return;
    }
    let mut sleeper = Command::new("/bin/sleep").arg("1").spawn().unwrap();
    let pid = sleeper.id().to_string();
    let mut child = strobe()
        .args([
            "-p",
            &pid,
            "-e",
            "tracepoint:syscalls:sys_enter_getppid { }",
        ])
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // Reap the sleeper when it ends, as a shell would; strobe must see it go.
    sleeper.wait().unwrap();
    let status = wait_for(&mut child, 20, "-p run after the process exited");
    assert!(status.success(), "{status:?}");
}

/// `ftrace:function` has a tracefs id but the kernel refuses a perf event on it (EINVAL): a
/// wildcard that takes it in skips it and runs with the others.
#[test]
fn a_tracepoint_wildcard_skips_a_target_the_kernel_refuses() {
    if !have_bpf("a_tracepoint_wildcard_skips_a_target_the_kernel_refuses") {
        return;
    }
    if !std::path::Path::new("/sys/kernel/tracing/events/ftrace/function/id").exists() {
        strobe_testkit::skip(
            "a_tracepoint_wildcard_skips_a_target_the_kernel_refuses",
            "no ftrace:function tracepoint here",
        );
        return;
    }
    let o = run(
        &[
            "-e",
            "tracepoint:*:*function* { @ = count(); } BEGIN { exit(); }",
        ],
        30,
    );
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(0), "{err}");
    assert!(
        err.contains("warning: tracepoint:ftrace:function: opening tracepoint ftrace:function"),
        "{err}"
    );
    assert!(
        err.contains("\nAttached ") || err.starts_with("Attached "),
        "{err}"
    );
}

/// A copy of strobe that an unprivileged user may run (the build tree may not be
/// reachable for them).
fn world_runnable_strobe() -> std::path::PathBuf {
    use std::os::unix::fs::PermissionsExt;
    let dir = std::env::temp_dir().join(format!("strobe-unpriv-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::set_permissions(&dir, std::fs::Permissions::from_mode(0o755)).unwrap();
    let bin = dir.join("strobe");
    std::fs::copy(env!("CARGO_BIN_EXE_strobe"), &bin).unwrap();
    std::fs::set_permissions(&bin, std::fs::Permissions::from_mode(0o755)).unwrap();
    bin
}

/// Runs strobe as `nobody` through util-linux `setpriv`, keeping `caps` (e.g. `+bpf,+perfmon`).
fn run_unprivileged(caps: Option<&str>, args: &[&str]) -> Option<Output> {
    let tracing = std::fs::metadata("/sys/kernel/tracing/events").ok()?;
    let _ = tracing;
    let bin = world_runnable_strobe();
    let mut c = Command::new("setpriv");
    c.args(["--reuid=65534", "--regid=65534", "--clear-groups"]);
    if let Some(caps) = caps {
        c.args([
            &format!("--inh-caps={caps}"),
            &format!("--ambient-caps={caps}"),
        ]);
    }
    let o = c.arg(&bin).args(args).stdin(Stdio::null()).output().ok();
    let _ = std::fs::remove_dir_all(bin.parent().unwrap());
    o.filter(|o| !text(&o.stderr).starts_with("setpriv:"))
}

/// With CAP_BPF and CAP_PERFMON but not root, the mounted tracefs (mode 700) is unreadable:
/// strobe says so, instead of "not mounted".
#[test]
fn unreadable_tracefs_is_not_called_unmounted() {
    let Some(o) = run_unprivileged(
        Some("+bpf,+perfmon"),
        &[
            "--dry-run",
            "-e",
            "tracepoint:syscalls:sys_enter_getpid { }",
        ],
    ) else {
        strobe_testkit::skip(
            "unreadable_tracefs_is_not_called_unmounted",
            "no tracefs or no setpriv here",
        );
        return;
    };
    let err = text(&o.stderr);
    if err.is_empty() && o.status.success() {
        // tracefs is readable for everyone on this host: nothing to tell.
        return;
    }
    assert_eq!(o.status.code(), Some(1), "{err}");
    assert!(err.contains("cannot be read: Permission denied"), "{err}");
    assert!(!err.contains("not mounted"), "{err}");
}

#[test]
fn listing_what_cannot_be_read_says_why() {
    let Some(o) = run_unprivileged(None, &["-l", "tracepoint:syscalls:*"]) else {
        strobe_testkit::skip(
            "listing_what_cannot_be_read_says_why",
            "no tracefs or no setpriv here",
        );
        return;
    };
    if o.status.success() && !o.stdout.is_empty() {
        // tracefs is readable for everyone on this host.
        return;
    }
    let err = text(&o.stderr);
    assert_eq!(o.status.code(), Some(3), "{err}");
    assert!(
        err.contains("cannot list probes") && err.contains("Permission denied"),
        "{err}"
    );
}
