//! The library API (`strobe::Script`) run for real on this host: compile errors, a blocking
//! run, and an attached session whose output is read while it runs and which stops like
//! Ctrl-C (END, final maps) when asked or dropped.

use strobe::runtime::driver::ExitReason;
use strobe::{Script, ScriptError};

use crate::runtime_support;

#[test]
fn compile_errors_are_rendered_like_the_cli() {
    let Err(ScriptError::Compile {
        rendered,
        diagnostics,
    }) = Script::compile("BEGIN { @x = nosuchfn(1); }")
    else {
        panic!("compiled");
    };
    assert!(rendered.contains("script.bt:1:"), "{rendered}");
    assert!(rendered.contains(": ERROR: "), "{rendered}");
    assert!(diagnostics.iter().any(|d| d.is_error()));
}

#[test]
fn run_blocks_until_exit_and_returns_the_output() {
    if !runtime_support::have_bpf("run_blocks_until_exit_and_returns_the_output") {
        return;
    }
    let s = Script::compile("BEGIN { printf(\"hello %d\\n\", 7); @n = 3; exit(); }").unwrap();
    let mut out = Vec::new();
    let o = s.run(&mut out).unwrap();
    assert_eq!(o.reason, ExitReason::Exit);
    assert_eq!(String::from_utf8_lossy(&out), "hello 7\n\n\n@n: 3\n");
    assert_eq!(o.maps.len(), 1);
    assert_eq!(o.maps[0].name, "@n");
}

#[test]
fn attached_session_streams_output_and_stops_with_end_and_maps() {
    if !runtime_support::have_bpf("attached_session_streams_output_and_stops_with_end_and_maps") {
        return;
    }
    let s = Script::compile(
        "interval:ms:20 { @ticks = count(); printf(\"tick\\n\"); } END { printf(\"end\\n\"); }",
    )
    .unwrap();
    let mut session = s.attach().unwrap();
    assert_eq!(session.attached(), 2);
    let mut seen = Vec::new();
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(5);
    while !String::from_utf8_lossy(&seen).contains("tick\ntick\n") {
        assert!(std::time::Instant::now() < deadline, "no ticks");
        session.write_output_to(&mut seen).unwrap();
        std::thread::sleep(std::time::Duration::from_millis(10));
    }
    assert!(!session.is_finished());
    let done = session.stop().unwrap();
    assert_eq!(done.outcome.reason, ExitReason::Stopped);
    let text = String::from_utf8_lossy(&done.output);
    assert!(text.contains("end\n"), "{text}");
    assert!(text.contains("\n@ticks: "), "{text}");
    assert_eq!(done.outcome.maps[0].name, "@ticks");
}

#[test]
fn session_of_a_script_that_exits_in_begin_is_already_finished() {
    if !runtime_support::have_bpf("session_of_a_script_that_exits_in_begin_is_already_finished") {
        return;
    }
    let s = Script::compile("BEGIN { printf(\"bye\\n\"); exit(); }").unwrap();
    let session = s.attach().unwrap();
    assert!(session.is_finished());
    let done = session.wait().unwrap();
    assert_eq!(done.outcome.reason, ExitReason::Exit);
    // bpftrace 0.17 also ends with two empty lines when no map is left to print.
    assert_eq!(String::from_utf8_lossy(&done.output), "bye\n\n\n");
}

#[test]
fn dropping_a_session_stops_the_run() {
    if !runtime_support::have_bpf("dropping_a_session_stops_the_run") {
        return;
    }
    let s = Script::compile("interval:ms:10 { @ = count(); }").unwrap();
    let session = s.attach().unwrap();
    let t = std::time::Instant::now();
    drop(session);
    assert!(t.elapsed() < std::time::Duration::from_secs(3));
}
