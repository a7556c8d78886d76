//! Exit paths of the `strobe` command line running a hand-built script (`--x-plan`, through
//! `strobe-plan`: the product's CLI with this crate's canned plans installed): exit(),
//! SIGINT, SIGTERM and SIGKILL. After each, the kernel must hold none of the run's programs
//! (programs are named after the strobe process's pid; links and perf events hold a program,
//! so none of those survive either).

use std::io::{BufRead, BufReader, Read};
use std::process::{Child, Command, Stdio};

#[path = "../../../tests/runtime_support/mod.rs"]
mod runtime_support;
use runtime_support::{have_bpf, leftover_progs};

fn start(plan: &str) -> (Child, String) {
    let child = Command::new(env!("CARGO_BIN_EXE_strobe-plan"))
        .args(["--x-plan", plan])
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("strobe starts");
    // canned::fresh_tag's first tag in that process.
    let tag = format!("sx{:x}0", child.id());
    (child, tag)
}

/// Waits for `Attached N probes` on stderr (the probes are attached and armed right after);
/// returns stdout.
fn wait_attached(child: &mut Child) -> BufReader<std::process::ChildStdout> {
    let mut e = BufReader::new(child.stderr.take().unwrap());
    let mut line = String::new();
    e.read_line(&mut line).unwrap();
    assert!(line.starts_with("Attached "), "{line}");
    BufReader::new(child.stdout.take().unwrap())
}

fn signal_run(sig: i32, name: &str) {
    if !have_bpf(name) {
        return;
    }
    let (mut child, tag) = start("forever");
    let mut r = wait_attached(&mut child);
    std::thread::sleep(std::time::Duration::from_millis(350));
    assert!(
        !leftover_progs_now(&tag).is_empty(),
        "the program is loaded while running"
    );
    // SAFETY: signalling our own child.
    unsafe { libc::kill(child.id() as i32, sig) };
    let status = child.wait().unwrap();
    let mut rest = String::new();
    r.read_to_string(&mut rest).unwrap();
    if sig == libc::SIGKILL {
        assert!(!status.success());
    } else {
        assert!(status.success(), "{status:?}");
        assert!(
            rest.starts_with("\n\n@: "),
            "maps printed at exit: {rest:?}"
        );
    }
    assert_eq!(leftover_progs(&tag), Vec::<String>::new());
}

/// The programs now, without waiting for them to go away.
fn leftover_progs_now(tag: &str) -> Vec<String> {
    use std::os::fd::AsFd;
    use strobe::sys::info::{all_ids, prog_fd_by_id, prog_info, ObjKind};
    all_ids(ObjKind::Prog)
        .unwrap_or_default()
        .into_iter()
        .filter_map(|id| prog_fd_by_id(id).ok().flatten())
        .filter_map(|fd| prog_info(fd.as_fd()).ok())
        .map(|i| i.name)
        .filter(|n| n.starts_with(&format!("{tag}_")))
        .collect()
}

#[test]
fn sigint_prints_maps_and_detaches_everything() {
    signal_run(libc::SIGINT, "sigint_prints_maps_and_detaches_everything");
}

#[test]
fn sigterm_prints_maps_and_detaches_everything() {
    signal_run(libc::SIGTERM, "sigterm_prints_maps_and_detaches_everything");
}

#[test]
fn sigkill_leaves_nothing_in_the_kernel() {
    signal_run(libc::SIGKILL, "sigkill_leaves_nothing_in_the_kernel");
}

#[test]
fn exit_in_a_probe_ends_the_run_and_detaches_everything() {
    if !have_bpf("exit_in_a_probe_ends_the_run_and_detaches_everything") {
        return;
    }
    let (child, tag) = start("interval:3");
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success());
    assert_eq!(String::from_utf8_lossy(&out.stdout), "\n\n@: 3\n");
    assert_eq!(leftover_progs(&tag), Vec::<String>::new());
}

#[test]
fn unknown_plan_is_an_input_error() {
    let out = Command::new(env!("CARGO_BIN_EXE_strobe-plan"))
        .args(["--x-plan", "nope"])
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(1));
}

#[test]
fn failing_attach_half_way_detaches_what_was_attached() {
    if !have_bpf("failing_attach_half_way_detaches_what_was_attached") {
        return;
    }
    let (child, tag) = start("halfway");
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success(), "{err}");
    assert!(err.contains("strobe_no_such_category"), "{err}");
    assert_eq!(leftover_progs(&tag), Vec::<String>::new());
}

#[test]
fn panic_while_armed_disarms_and_leaves_nothing_in_the_kernel() {
    if !have_bpf("panic_while_armed_disarms_and_leaves_nothing_in_the_kernel") {
        return;
    }
    let child = Command::new(env!("CARGO_BIN_EXE_strobe-plan"))
        .args(["--x-plan", "forever"])
        .env("STROBE_TEST_PANIC_WHEN_ARMED", "1")
        .env("RUST_BACKTRACE", "0")
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("strobe starts");
    let tag = format!("sx{:x}0", child.id());
    let out = child.wait_with_output().unwrap();
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(!out.status.success());
    assert!(err.contains("STROBE_TEST_PANIC_WHEN_ARMED"), "{err}");
    assert_eq!(leftover_progs(&tag), Vec::<String>::new());
}
