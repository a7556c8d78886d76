//! `usdt:` probes on this test binary's own USDT notes (`usdt_support`): listing, argument
//! specs read in the kernel, semaphores, provider wildcards and `-p PID`, compared with what
//! bpftrace 0.17 prints for the same binary when it is installed.

use crate::usdt_support;

/// Not a test of its own: the traced process. The tests re-run this binary with the filter
/// `usdt_workload` and `fire=N` (fire every probe N times, 20 ms apart) or `forever`.
#[test]
fn usdt_workload() {
    for a in std::env::args() {
        if let Some(n) = a.strip_prefix("fire=") {
            for i in 0..n.parse::<u64>().unwrap() {
                usdt_support::fire(i);
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
        if a == "forever" {
            for i in 0.. {
                usdt_support::fire(i % 4);
                std::thread::sleep(std::time::Duration::from_millis(20));
            }
        }
    }
}

use std::process::{Command, Output};

use crate::runtime_support;

fn exe() -> String {
    std::env::current_exe()
        .unwrap()
        .to_string_lossy()
        .into_owned()
}

/// The workload command line for `-c`: fire every probe `n` times.
fn fire(n: u32) -> String {
    format!("{} usdt::usdt_workload fire={n} --exact -q", exe())
}

fn run(tool: &str, args: &[&str]) -> Output {
    Command::new(tool).args(args).output().expect("tool runs")
}

fn strobe(args: &[&str]) -> Output {
    run(env!("CARGO_BIN_EXE_strobe"), args)
}

/// Runs strobe, or ends it (SIGKILL) and returns `None` when it has not exited within `limit`.
fn strobe_within(args: &[&str], limit: std::time::Duration) -> Option<Output> {
    let mut child = Command::new(env!("CARGO_BIN_EXE_strobe"))
        .args(args)
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .expect("strobe runs");
    let deadline = std::time::Instant::now() + limit;
    while child.try_wait().ok()?.is_none() {
        if std::time::Instant::now() > deadline {
            let _ = child.kill();
            let _ = child.wait();
            return None;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
    child.wait_with_output().ok()
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

/// The lines a script printed itself (maps and `out:` printf lines), not the workload's.
fn script_lines(o: &Output) -> Vec<String> {
    text(&o.stdout)
        .lines()
        .filter(|l| l.starts_with('@') || l.starts_with("out:"))
        .map(str::to_string)
        .collect()
}

/// bpftrace 0.17, when installed and able to run here.
fn bpftrace() -> Option<&'static str> {
    let ok = Command::new("bpftrace")
        .args(["-e", "BEGIN { exit(); }"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    ok.then_some("bpftrace")
}

/// The serial lock: the semaphore is per process but the probes are system-wide.
static SERIAL: std::sync::Mutex<()> = std::sync::Mutex::new(());

#[test]
fn listing_matches_bpftrace_sorted_once_per_probe() {
    let pattern = format!("usdt:{}:*", exe());
    let o = strobe(&["-l", &pattern]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let want: Vec<String> = [
        "other_provider:args",
        "strobe_test:args",
        "strobe_test:guarded",
    ]
    .iter()
    .map(|p| format!("usdt:{}:{p}", exe()))
    .collect();
    assert_eq!(text(&o.stdout).lines().collect::<Vec<_>>(), want);
    let o = strobe(&["-l", &format!("usdt:{}:strobe_*:g*", exe())]);
    assert_eq!(text(&o.stdout).lines().collect::<Vec<_>>(), want[2..]);
    let o = strobe(&["-lv", &format!("usdt:{}:other_provider:args", exe())]);
    assert_eq!(
        text(&o.stdout).lines().collect::<Vec<_>>(),
        vec![want[0].as_str(), "    arg0: 8@%rax"]
    );
    match bpftrace() {
        Some(b) => assert_eq!(text(&run(b, &["-l", &pattern]).stdout), {
            let mut s = want.join("\n");
            s.push('\n');
            s
        }),
        None => strobe_testkit::skip(
            "listing_matches_bpftrace_sorted_once_per_probe (bpftrace part)",
            "bpftrace cannot run here",
        ),
    }
}

const ARGS_SCRIPT: &str = r#"usdt:BIN:strobe_test:args {
    printf("out: %d %d %d %d %d %d\n", arg0, arg1, arg2, arg3, arg4, arg5);
    @a = arg0; @mem = arg3; @u8 = arg4; @i16 = arg5; @sum = sum(arg1);
    if (@n++ == 2) { exit(); }
}"#;

#[test]
fn arguments_are_read_from_registers_memory_and_constants_like_bpftrace() {
    if !runtime_support::have_bpf(
        "arguments_are_read_from_registers_memory_and_constants_like_bpftrace",
    ) {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let script = ARGS_SCRIPT.replace("BIN", &exe());
    let o = strobe(&["-e", &script, "-c", &fire(3)]);
    assert!(o.status.success(), "{}", text(&o.stderr));
    let got = script_lines(&o);
    let want = [
        "out: -5 1000 -7 -1 200 -300",
        "out: -6 1001 -7 -2 200 -300",
        "out: -7 1002 -7 -3 200 -300",
        "@a: 18446744073709551609",
        "@i16: 18446744073709551316",
        "@mem: 18446744073709551613",
        "@n: 3",
        "@sum: 3003",
        "@u8: 200",
    ];
    assert_eq!(got, want, "{}", text(&o.stdout));
    if let Some(b) = bpftrace() {
        let o = run(b, &["-e", &script, "-c", &fire(3)]);
        assert_eq!(script_lines(&o), want, "bpftrace: {}", text(&o.stdout));
    }
}

/// The load address of this test binary in process `pid` (its first mapping, file offset 0).
fn load_base(pid: &str) -> u64 {
    let maps = std::fs::read_to_string(format!("/proc/{pid}/maps")).unwrap();
    let exe = std::fs::read_link(format!("/proc/{pid}/exe")).unwrap();
    let line = maps
        .lines()
        .find(|l| l.ends_with(&*exe.to_string_lossy()))
        .unwrap();
    u64::from_str_radix(line.split('-').next().unwrap(), 16).unwrap()
}

/// Where `own` (an address in this process) is in process `pid` running the same binary.
fn address_in(pid: &str, own: u64) -> u64 {
    own - load_base("self") + load_base(pid)
}

/// The value of `strobe_test_guarded_semaphore` in process `pid` (same binary as this one).
fn semaphore_of(pid: &str) -> u16 {
    use std::os::unix::fs::FileExt;
    let own = std::ptr::addr_of!(usdt_support::strobe_test_guarded_semaphore) as u64;
    let at = address_in(pid, own);
    let mem = std::fs::File::open(format!("/proc/{pid}/mem")).unwrap();
    let mut b = [0u8; 2];
    mem.read_exact_at(&mut b, at).unwrap();
    u16::from_ne_bytes(b)
}

fn spawn_forever() -> std::process::Child {
    Command::new(exe())
        .args(["usdt::usdt_workload", "forever", "--exact", "-q"])
        .stdout(std::process::Stdio::null())
        .spawn()
        .unwrap()
}

#[test]
fn semaphore_is_raised_while_attached_and_provider_wildcards_match() {
    if !runtime_support::have_bpf("semaphore_is_raised_while_attached_and_provider_wildcards_match")
    {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let mut w = spawn_forever();
    let pid = w.id().to_string();
    std::thread::sleep(std::time::Duration::from_millis(200));
    let before = semaphore_of(&pid);
    let script = format!(
        "usdt:{0}:*:args {{ @[probe] = count(); }} \
         usdt:{0}:strobe_test:guarded {{ @g = count(); if (@g == 4) {{ exit(); }} }}",
        exe()
    );
    let o = strobe(&["-p", &pid, "-e", &script]);
    // Detaching may finish in strobe's background child after it printed: wait for it.
    let mut after = semaphore_of(&pid);
    for _ in 0..40 {
        if after == 0 {
            break;
        }
        std::thread::sleep(std::time::Duration::from_millis(50));
        after = semaphore_of(&pid);
    }
    let _ = (w.kill(), w.wait());
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(
        (before, after),
        (0, 0),
        "the semaphore is lowered at detach"
    );
    let got = script_lines(&o);
    let e = exe();
    // exit() at the 4th hit; hits already in flight on a loaded host may still count.
    let g = got
        .iter()
        .find_map(|l| l.strip_prefix("@g: ")?.parse::<u64>().ok());
    assert!(matches!(g, Some(n) if n >= 4), "{got:?}");
    for p in ["other_provider:args", "strobe_test:args"] {
        let prefix = format!("@[usdt:{e}:{p}]: ");
        assert!(got.iter().any(|l| l.starts_with(&prefix)), "{p}: {got:?}");
    }
}

#[test]
fn pid_filter_traces_only_that_process() {
    if !runtime_support::have_bpf("pid_filter_traces_only_that_process") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let (mut a, mut b) = (spawn_forever(), spawn_forever());
    let pid = a.id().to_string();
    let script = format!(
        "usdt:{}:strobe_test:guarded {{ @[pid] = count(); if (@[pid] == 5) {{ exit(); }} }}",
        exe()
    );
    let o = strobe(&["-p", &pid, "-e", &script]);
    let _ = (a.kill(), b.kill(), a.wait(), b.wait());
    assert!(o.status.success(), "{}", text(&o.stderr));
    // Only the -p process is counted; exit() at its 5th hit (hits in flight may still count).
    let got = script_lines(&o);
    let n = match got.as_slice() {
        [l] => l
            .strip_prefix(&format!("@[{pid}]: "))
            .and_then(|v| v.parse::<u64>().ok()),
        _ => None,
    };
    assert!(matches!(n, Some(n) if n >= 5), "{got:?}");
}

#[test]
fn an_argument_the_site_lacks_is_a_script_error() {
    let script = format!("usdt:{}:other_provider:args {{ print(arg1); }}", exe());
    let o = strobe(&["--dry-run", "-e", &script]);
    assert_eq!(o.status.code(), Some(1), "{}", text(&o.stderr));
    assert!(
        text(&o.stderr).contains("this USDT probe has 1 arguments"),
        "{}",
        text(&o.stderr)
    );
}

#[test]
fn watchpoint_counts_writes_to_a_variable_of_the_process() {
    if !runtime_support::have_bpf("watchpoint_counts_writes_to_a_variable_of_the_process") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let mut w = spawn_forever();
    let pid = w.id().to_string();
    std::thread::sleep(std::time::Duration::from_millis(100));
    let own = std::ptr::addr_of!(usdt_support::strobe_test_watched) as u64;
    let script = format!(
        "watchpoint:0x{:x}:8:w {{ @[pid] = count(); if (@[pid] == 3) {{ exit(); }} }}",
        address_in(&pid, own)
    );
    let o = strobe_within(
        &["-p", &pid, "-e", &script],
        std::time::Duration::from_secs(8),
    );
    let _ = (w.kill(), w.wait());
    let Some(o) = o else {
        // Seen on the Firecracker/PVM build hosts: the kernel accepts the breakpoint events
        // but they never fire (bpftrace 0.17 counts no hits on the same address either).
        strobe_testkit::skip(
            "watchpoint_counts_writes_to_a_variable_of_the_process",
            "hardware breakpoints are accepted but never fire on this machine",
        );
        return;
    };
    assert!(o.status.success(), "{}", text(&o.stderr));
    assert_eq!(script_lines(&o), [format!("@[{pid}]: 3")]);
}

#[test]
fn a_probe_name_in_several_providers_needs_a_provider_as_in_bpftrace() {
    let e = exe();
    let o = strobe(&["--dry-run", "-e", &format!("usdt:{e}:args {{ exit(); }}")]);
    let err = String::from_utf8_lossy(&o.stderr);
    assert!(!o.status.success(), "{err}");
    assert!(
        err.contains(&format!(
            "namespace for usdt:{e}:args not specified, matched 2 probes"
        )),
        "{err}"
    );
    assert!(err.contains("(other_provider, strobe_test)"), "{err}");
    // A provider, or a wildcard, picks them.
    for spec in ["strobe_test:args", "*:args"] {
        let o = strobe(&["--dry-run", "-e", &format!("usdt:{e}:{spec} {{ exit(); }}")]);
        assert!(
            o.status.success(),
            "{spec}: {}",
            String::from_utf8_lossy(&o.stderr)
        );
    }
    // Listing shows both.
    let o = strobe(&["-l", &format!("usdt:{e}:*:args")]);
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        out.contains("other_provider:args") && out.contains("strobe_test:args"),
        "{out}"
    );
}
