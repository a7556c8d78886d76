//! Host-kernel tests of the runtime with hand-built compiled scripts (`strobe_testkit::canned`):
//! real maps, programs, perf events and ring buffers; output compared exactly.

use std::sync::Mutex;

use strobe::plan::CompiledScript;
use strobe::runtime::driver::{run, ExitReason, RunOptions};
use strobe::runtime::format::OutputFormat;
use strobe_testkit::canned;

use crate::runtime_support;
use runtime_support::{have_bpf, leftover_progs};

/// Runs touch process-wide state (signal mask, perf-event fds): one at a time.
static SERIAL: Mutex<()> = Mutex::new(());

fn quiet() -> RunOptions {
    RunOptions {
        quiet: true,
        ..Default::default()
    }
}

fn run_to_string(
    s: &CompiledScript,
    opts: &RunOptions,
) -> (String, strobe::runtime::driver::RunOutcome) {
    let mut out = Vec::new();
    let o = run(s, opts, &mut out).unwrap_or_else(|e| panic!("run failed: {e}"));
    (String::from_utf8(out).unwrap(), o)
}

#[test]
fn begin_printf_then_exit_prints_exactly_like_bpftrace() {
    if !have_bpf("begin_printf_then_exit_prints_exactly_like_bpftrace") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let tag = canned::fresh_tag();
    let (out, o) = run_to_string(&canned::hello(&tag, "hello\n"), &RunOptions::default());
    assert_eq!(out, "hello\n\n\n");
    assert_eq!(o.reason, ExitReason::Exit);
    assert_eq!(leftover_progs(&tag), Vec::<String>::new());
}

#[test]
fn begin_output_in_json_is_one_object_per_line() {
    if !have_bpf("begin_output_in_json_is_one_object_per_line") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let opts = RunOptions {
        format: OutputFormat::Json,
        ..Default::default()
    };
    let (out, _) = run_to_string(&canned::hello(&canned::fresh_tag(), "hello\n"), &opts);
    // bpftrace 0.17 -f json prints the exit preamble's two newlines in JSON mode too.
    assert_eq!(
        out,
        "{\"type\": \"attached_probes\", \"count\": 1, \"data\": {\"probes\": 1}}\n\
         {\"type\": \"printf\", \"data\": \"hello\\n\"}\n\n\n"
    );
}

#[test]
fn interval_probe_fires_until_exit_at_the_third_tick() {
    if !have_bpf("interval_probe_fires_until_exit_at_the_third_tick") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let tag = canned::fresh_tag();
    let (out, o) = run_to_string(&canned::interval_count(&tag, 10, 3), &quiet());
    assert_eq!(out, "\n\n@: 3\n");
    assert_eq!(o.reason, ExitReason::Exit);
    assert_eq!(leftover_progs(&tag), Vec::<String>::new());
}

#[test]
fn count_and_hist_maps_print_as_bpftrace_prints_them() {
    if !have_bpf("count_and_hist_maps_print_as_bpftrace_prints_them") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let (out, _) = run_to_string(&canned::count_and_hist(&canned::fresh_tag()), &quiet());
    // bpftrace 0.17 on this host, for the script canned::count_and_hist stands for:
    // bpftrace -e 'BEGIN { @c[1] = count(); @c[2] = count(); @c[2] = count(); @h = hist(1);
    //   @h = hist(5); @h = hist(5); @h = hist(100); exit(); }' (first line dropped).
    let expected = include_str!("../runtime_support/count_and_hist.out");
    assert_eq!(out, expected);
}

#[test]
fn ring_overflow_is_reported_as_lost_events() {
    if !have_bpf("ring_overflow_is_reported_as_lost_events") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let (out, o) = run_to_string(&canned::flood(&canned::fresh_tag(), 250), &quiet());
    let printed = out.lines().filter(|l| *l == "x").count() as u64;
    assert!(o.lost > 0, "a one-page ring cannot hold 250 records");
    assert_eq!(
        printed + o.lost,
        250,
        "every record is printed or counted lost"
    );
    assert!(out.contains(&format!("Lost {} events\n", o.lost)), "{out}");
}

/// Not a test of its own: the traced command of the `-c` tests. The tests re-run this test
/// binary with the filter `testee_main` and an action word (`getpid=N`, `call=N`).
#[test]
fn testee_main() {
    for a in std::env::args() {
        if let Some(n) = a.strip_prefix("getpid=") {
            for _ in 0..n.parse::<u32>().unwrap() {
                // SAFETY: a raw getpid(2), not libc's wrapper (which may cache).
                unsafe { libc::syscall(libc::SYS_getpid) };
            }
        }
        if let Some(n) = a.strip_prefix("call=") {
            let mut x = 0;
            for i in 0..n.parse::<u64>().unwrap() {
                x += strobe_testee_target(std::hint::black_box(i));
            }
            std::hint::black_box(x);
        }
    }
}

#[no_mangle]
#[inline(never)]
pub extern "C" fn strobe_testee_target(x: u64) -> u64 {
    std::hint::black_box(x.wrapping_mul(3))
}

fn testee(action: &str) -> Vec<String> {
    let exe = std::env::current_exe().unwrap();
    vec![
        exe.to_string_lossy().into_owned(),
        "runtime_run::testee_main".into(),
        action.into(),
        "--exact".into(),
        "-q".into(),
        "--test-threads=1".into(),
    ]
}

fn perf_event_fds() -> usize {
    std::fs::read_dir("/proc/self/fd")
        .map(|d| {
            d.filter_map(|e| std::fs::read_link(e.ok()?.path()).ok())
                .filter(|l| l.to_string_lossy().contains("perf_event"))
                .count()
        })
        .unwrap_or(0)
}

#[test]
fn tracepoint_counts_the_getpid_calls_of_the_traced_command() {
    if !have_bpf("tracepoint_counts_the_getpid_calls_of_the_traced_command") {
        return;
    }
    if strobe::kernel::tracefs::Tracefs::open().is_err() {
        strobe_testkit::skip(
            "tracepoint_counts_the_getpid_calls_of_the_traced_command",
            "no tracefs",
        );
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let before = perf_event_fds();
    let tag = canned::fresh_tag();
    let opts = RunOptions {
        command: Some(testee("getpid=5")),
        ..quiet()
    };
    let (out, o) = run_to_string(
        &canned::tracepoint_count(&tag, "syscalls", "sys_enter_getpid"),
        &opts,
    );
    assert_eq!(o.reason, ExitReason::CommandExited);
    let pid = o.child_pid.unwrap();
    assert!(
        out.lines().any(|l| l == format!("@[{pid}]: 5")),
        "the command called getpid 5 times:\n{out}"
    );
    assert_eq!(perf_event_fds(), before, "perf events closed");
    assert_eq!(leftover_progs(&tag), Vec::<String>::new());
}

#[test]
fn uprobe_counts_each_call_of_a_function_in_the_traced_command() {
    if !have_bpf("uprobe_counts_each_call_of_a_function_in_the_traced_command") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let tag = canned::fresh_tag();
    let exe = std::env::current_exe().unwrap();
    let opts = RunOptions {
        command: Some(testee("call=7")),
        ..quiet()
    };
    let (out, o) = run_to_string(
        &canned::uprobe_count(&tag, exe, "strobe_testee_target"),
        &opts,
    );
    let pid = o.child_pid.unwrap();
    assert_eq!(out, format!("\n\n@[{pid}]: 7\n"));
    assert_eq!(leftover_progs(&tag), Vec::<String>::new());
}

#[test]
fn updates_refused_by_a_full_map_are_counted_as_drops() {
    if !have_bpf("updates_refused_by_a_full_map_are_counted_as_drops") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let (out, o) = run_to_string(&canned::full_map(&canned::fresh_tag()), &quiet());
    assert_eq!(out, "\n\n@m[1]: 10\n@m[2]: 20\n");
    assert_eq!(o.drops, 1);
}

#[test]
fn rawtracepoint_sees_every_syscall_of_the_traced_command() {
    if !have_bpf("rawtracepoint_sees_every_syscall_of_the_traced_command") {
        return;
    }
    let _g = SERIAL.lock().unwrap_or_else(|p| p.into_inner());
    let tag = canned::fresh_tag();
    let script = canned::pid_count(
        &tag,
        "rawtracepoint:sys_enter",
        strobe::plan::ProbeKind::RawTracepoint {
            targets: vec!["sys_enter".into()],
        },
        strobe::template::AttachKind::RawTracepoint,
    );
    let opts = RunOptions {
        command: Some(testee("getpid=50")),
        ..quiet()
    };
    let (out, o) = run_to_string(&script, &opts);
    let pid = o.child_pid.unwrap();
    let n: u64 = out
        .lines()
        .find_map(|l| l.strip_prefix(&format!("@[{pid}]: ")))
        .unwrap_or_else(|| panic!("no count for the command:\n{out}"))
        .parse()
        .unwrap();
    assert!(n >= 50, "50 getpid calls and more: {n}");
    assert_eq!(leftover_progs(&tag), Vec::<String>::new());
}
