//! `strobe load` end to end on the host: an assembled raw tracepoint object mass-attached by
//! wildcard, stopped by --duration and by SIGINT, with its map printed and nothing leaked;
//! usage and input errors with their exit codes.

use crate::loader_common;

use std::io::{BufRead, BufReader, Read};
use std::process::{Command, Stdio};

const STROBE: &str = env!("CARGO_BIN_EXE_strobe");
const PROG: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/data/count_rawtp.s");

fn count_of(stdout: &str) -> u64 {
    let after = stdout.split("@counts:").nth(1).unwrap_or("");
    after
        .lines()
        .find_map(|l| l.trim().strip_prefix("0: "))
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

#[test]
fn load_attaches_a_wildcard_counts_and_prints_maps_after_duration() {
    let test = "load_attaches_a_wildcard_counts_and_prints_maps_after_duration";
    if !loader_common::can_bpf(test) {
        return;
    }
    let out = Command::new(STROBE)
        .args([
            "load",
            PROG,
            "--attach",
            "rawtracepoint:sys_e*",
            "--duration",
            "0.3",
        ])
        .args(["--timings", "-v", "--load-threads", "2"])
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.starts_with("Attached 2/2 rawtracepoint probes\n"),
        "{stdout}"
    );
    assert!(count_of(&stdout) > 0, "{stdout}");
    assert!(stderr.contains("\"start_to_armed_s\":"), "{stderr}");
}

/// Live programs named `name`.
fn progs_named(name: &str) -> usize {
    strobe::sys::info::all_ids(strobe::sys::info::ObjKind::Prog)
        .unwrap()
        .into_iter()
        .filter_map(|id| strobe::sys::info::prog_fd_by_id(id).ok().flatten())
        .filter_map(|fd| strobe::sys::info::prog_info(std::os::fd::AsFd::as_fd(&fd)).ok())
        .filter(|i| i.name == name)
        .count()
}

#[test]
fn load_stops_on_sigint_prints_results_and_returns_promptly() {
    let test = "load_stops_on_sigint_prints_results_and_returns_promptly";
    if !loader_common::can_bpf(test) {
        return;
    }
    // A copy whose program has a name no other test uses, for the leak check below.
    let prog = std::env::temp_dir().join(format!("strobe-sigint-{}.s", std::process::id()));
    let text = std::fs::read_to_string(PROG)
        .unwrap()
        .replace("count", "strobe_sigint");
    std::fs::write(&prog, text.replace("strobe_sigints", "counts")).unwrap();
    let mut child = Command::new(STROBE)
        .args([
            "load",
            prog.to_str().unwrap(),
            "--attach",
            "rawtracepoint:sys_enter",
        ])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut out = BufReader::new(child.stdout.take().unwrap());
    let mut first = String::new();
    out.read_line(&mut first).unwrap();
    assert_eq!(first, "Attached 1/1 rawtracepoint probe\n");
    for _ in 0..20 {
        let _ = std::fs::metadata("/");
    }
    assert_eq!(
        progs_named("strobe_sigint"),
        1,
        "the attached program is visible by name"
    );
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, libc::SIGINT) };
    let t = std::time::Instant::now();
    let mut rest = String::new();
    out.read_to_string(&mut rest).unwrap();
    let status = child.wait().unwrap();
    assert!(status.success(), "{rest}");
    assert!(count_of(&rest) >= 20, "{rest}");
    // The background detach child has stdout closed, so EOF came as soon as strobe exited.
    assert!(t.elapsed().as_secs() < 5);
    let _ = std::fs::remove_file(&prog);
    // Nothing of that run remains once the background child is done (poll: it closes after
    // strobe exits, and program memory goes after an RCU grace period).
    let start = std::time::Instant::now();
    loop {
        let left = progs_named("strobe_sigint");
        if left == 0 {
            break;
        }
        assert!(
            start.elapsed().as_secs() < 5,
            "{left} strobe_sigint programs left"
        );
        std::thread::sleep(std::time::Duration::from_millis(50));
    }
}

#[test]
fn load_reports_bad_input_and_usage_with_distinct_exit_codes() {
    let run = |args: &[&str]| {
        let o = Command::new(STROBE)
            .arg("load")
            .args(args)
            .output()
            .unwrap();
        (
            o.status.code(),
            String::from_utf8_lossy(&o.stderr).to_string(),
        )
    };
    let (code, err) = run(&[PROG, "--attach", "tracepoint:x:y"]);
    assert_eq!(code, Some(2), "{err}");
    assert!(err.contains("not tracepoint"), "{err}");
    let (code, err) = run(&["/nonexistent.o", "--attach", "fentry:vfs_read"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("cannot read /nonexistent.o"), "{err}");
    let (code, err) = run(&[PROG, "--prog", "nope"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(err.contains("no program `nope`"), "{err}");
    let (code, err) = run(&[PROG, "--attach", "rawtracepoint:strobe_no_such_tp_*"]);
    assert_eq!(code, Some(1), "{err}");
    assert!(
        err.contains("No matches for rawtracepoint strobe_no_such_tp_*."),
        "{err}"
    );
}

#[test]
fn load_pin_keeps_links_attached_after_exit_until_the_pins_are_removed() {
    let test = "load_pin_keeps_links_attached_after_exit_until_the_pins_are_removed";
    let Some(dir) = loader_common::pin_dir(test, "strobe_pin_test") else {
        return;
    };
    let out = Command::new(STROBE)
        .args(["load", PROG, "--attach", "rawtracepoint:sys_e*", "--pin"])
        .arg(&dir)
        .output()
        .unwrap();
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success(),
        "{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
    assert!(stdout.contains("Pinned 4 objects under"), "{stdout}");
    for link in ["sys_enter", "sys_exit"] {
        assert!(dir.join("links").join(link).exists(), "{link}");
    }
    // strobe has exited: the pinned map still counts syscalls through the pinned links.
    let map =
        strobe::sys::Map::from_fd(strobe::sys::pin::get_pinned(&dir.join("maps/counts")).unwrap())
            .unwrap();
    let read = || {
        let mut v = [0u8; 8];
        map.lookup(&0u32.to_ne_bytes(), &mut v).unwrap();
        u64::from_ne_bytes(v)
    };
    let before = read();
    for _ in 0..20 {
        let _ = std::fs::metadata("/");
    }
    std::thread::sleep(std::time::Duration::from_millis(50));
    let after = read();
    assert!(after > before, "{before} → {after}");
    std::fs::remove_dir_all(&dir).unwrap();
    // The links are gone with their pins: the count stops (the map lives on through `map`).
    std::thread::sleep(std::time::Duration::from_millis(200));
    let stopped = read();
    for _ in 0..20 {
        let _ = std::fs::metadata("/");
    }
    std::thread::sleep(std::time::Duration::from_millis(50));
    assert_eq!(read(), stopped);
}

#[test]
fn timings_break_start_to_armed_into_phases_for_scripts_and_load() {
    let test = "timings_break_start_to_armed_into_phases_for_scripts_and_load";
    if !loader_common::can_bpf(test) {
        return;
    }
    let out = Command::new(STROBE)
        .args([
            "-e",
            "interval:ms:50 { @n = count(); exit(); } rawtracepoint:sys_enter { @s = count(); }",
        ])
        .env("STROBE_TIMINGS", "1")
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let line = stderr
        .lines()
        .find(|l| l.starts_with("{\"start_to_armed_s\":"))
        .unwrap_or_else(|| panic!("no timings line: {stderr}"));
    for phase in [
        "\"parse_s\":",
        "\"check_s\":",
        "\"lower_s\":",
        "\"btf_read_s\":",
        "\"arm_s\":",
    ] {
        assert!(line.contains(phase), "{phase} missing: {line}");
    }
    let out = Command::new(STROBE)
        .args([
            "load",
            PROG,
            "--attach",
            "rawtracepoint:sys_e*",
            "--duration",
            "0",
        ])
        .args(["-v", "--load-threads", "2"])
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stderr}");
    let line = stderr
        .lines()
        .find(|l| l.starts_with("strobe load: start → armed "))
        .unwrap_or_else(|| panic!("no timings line: {stderr}"));
    assert!(line.contains("load ") && line.contains("(2×)"), "{line}");
    assert!(line.contains("attach "), "{line}");
}
