//! How the `strobe` binary ends a run of a compiled script: the exit status `exit(code)`
//! asks for, an `exit()` whose record a full ring buffer lost, strobe's own process left out
//! of its kernel probes, closed and failing outputs, signals, odd command lines.
//! Each test runs the built binary as a user does, with a deadline: a run that does not end
//! is a failure, never a hang.

use std::io::Read;
use std::process::{Child, Command, ExitStatus, Output, Stdio};
use std::time::{Duration, Instant};

mod runtime_support;
use runtime_support::have_bpf;

fn strobe() -> Command {
    Command::new(env!("CARGO_BIN_EXE_strobe"))
}

/// Waits up to `secs` for `child`; kills it and fails the test when it is still running.
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
             interval:ms:500 { if (@n == 0) { @n = 1; exit(); } }",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = child.stdout.take().unwrap();
    let reader = std::thread::spawn(move || {
        let mut all = Vec::new();
        let mut b = vec![0u8; 16 << 10];
        loop {
            match out.read(&mut b) {
                Ok(0) | Err(_) => return all,
                Ok(n) => all.extend_from_slice(&b[..n]),
            }
            std::thread::sleep(Duration::from_millis(10));
        }
    });
    let status = wait_for(&mut child, 60, "flood with exit()");
    let all = text(&reader.join().unwrap());
    assert!(status.success(), "{status:?}");
    assert!(all.ends_with("@n: 1\n"), "maps printed at exit");
    assert!(all.matches("Lost ").count() <= 1, "lost records said once");
}

/// strobe's own syscalls (its epoll waits, its output writes) are not traced.
#[test]
fn kernel_probes_leave_out_strobe_itself() {
    if !have_bpf("kernel_probes_leave_out_strobe_itself") {
        return;
    }
    let mut child = strobe()
        .args([
            "-e",
            "tracepoint:raw_syscalls:sys_enter { @[pid] = count(); } interval:ms:300 { exit(); }",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let me = child.id();
    let mut out = String::new();
    child
        .stdout
        .take()
        .unwrap()
        .read_to_string(&mut out)
        .unwrap();
    let status = wait_for(&mut child, 30, "raw_syscalls count");
    assert!(status.success());
    assert!(out.contains("@["), "other processes are counted: {out}");
    assert!(
        !out.contains(&format!("@[{me}]:")),
        "strobe ({me}) counted itself"
    );
}
