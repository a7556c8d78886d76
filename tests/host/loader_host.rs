//! Host-kernel tests of the clone loader: raw tracepoint clones (parallel load, refusal
//! accounting, --strict, arming), uprobe wildcards on this test binary's own functions through
//! uprobe_multi and through per-target perf events, and the leak check (no program or link of
//! ours remains after detach, in every detach mode).

use crate::loader_common;

use std::collections::HashSet;
use std::os::fd::AsFd;
use std::time::Instant;

use loader_common::*;
use strobe::loader::{
    attach_multi, detach, detach_in_background, load_clones, map_fds_for, symbols, Arming,
    Attached, CloneTarget, DetachMode, LoadOptions, LoaderError, MultiOptions, MultiTargets,
    MultiVia, Stage,
};
use strobe::sys::info::{all_ids, link_info, prog_info, ObjKind};
use strobe::template::AttachKind;

fn syscalls() {
    for _ in 0..50 {
        let _ = std::fs::metadata("/");
    }
}

/// (prog ids, link ids) of everything in `a`.
fn ids(a: &Attached) -> (Vec<u32>, Vec<u32>) {
    let mut progs = Vec::new();
    let mut links = Vec::new();
    for c in &a.clones {
        progs.push(prog_info(c.prog.as_fd()).unwrap().id);
        links.push(link_info(c.link.as_fd()).unwrap().id);
    }
    if let Some(p) = &a.shared_prog {
        progs.push(prog_info(p.as_fd()).unwrap().id);
    }
    for l in &a.links {
        links.push(link_info(l.as_fd()).unwrap().id);
    }
    (progs, links)
}

/// None of `progs`/`links` is alive. Links go at once; a program's memory (and its id) is
/// freed after an RCU grace period, so this polls for up to 5 s.
fn assert_gone(progs: &[u32], links: &[u32]) {
    let start = Instant::now();
    loop {
        let live_p: HashSet<u32> = all_ids(ObjKind::Prog).unwrap().into_iter().collect();
        let live_l: HashSet<u32> = all_ids(ObjKind::Link).unwrap().into_iter().collect();
        let left_p: Vec<_> = progs.iter().filter(|i| live_p.contains(i)).collect();
        let left_l: Vec<_> = links.iter().filter(|i| live_l.contains(i)).collect();
        if left_p.is_empty() && left_l.is_empty() {
            return;
        }
        assert!(
            start.elapsed().as_secs() < 5,
            "leaked progs {left_p:?} links {left_l:?}"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

fn raw_tp_setup(
    names: &[&str],
) -> (
    strobe::template::Template,
    strobe::sys::Map,
    Arming,
    Vec<CloneTarget>,
) {
    let t = counting_template(AttachKind::RawTracepoint, Key::TargetIndex);
    let counts = counts_map(names.len());
    let arming = Arming::create().unwrap();
    let targets = names.iter().map(|n| CloneTarget::named(n, 0)).collect();
    (t, counts, arming, targets)
}

#[test]
fn raw_tp_clones_count_per_target_only_while_armed_and_refusals_are_listed() {
    let test = "raw_tp_clones_count_per_target_only_while_armed_and_refusals_are_listed";
    if !can_bpf(test) {
        return;
    }
    let names = ["sys_enter", "strobe_no_such_tracepoint", "sys_exit"];
    let (t, counts, arming, targets) = raw_tp_setup(&names);
    let fds = map_fds_for(&t, &[("counts", fd(&counts)), arming.map_entry()]).unwrap();
    let a = load_clones(&t, &fds, &targets, &LoadOptions::default()).unwrap();
    assert_eq!(
        a.summary_line(),
        "Attached 2/3 rawtracepoint probes (1 refused; -v lists them)"
    );
    assert_eq!(a.refused.len(), 1);
    assert_eq!(a.refused[0].name, "strobe_no_such_tracepoint");
    assert_eq!(a.refused[0].stage, Stage::Attach);
    assert!(
        a.refused[0].to_string().contains("attach refused"),
        "{}",
        a.refused[0]
    );

    syscalls();
    assert_eq!(
        read_counts(&counts, 3),
        vec![0, 0, 0],
        "disarmed programs count nothing"
    );
    arming.arm().unwrap();
    syscalls();
    arming.disarm().unwrap();
    let armed = read_counts(&counts, 3);
    assert!(armed[0] >= 50 && armed[2] >= 50, "{armed:?}");
    assert_eq!(armed[1], 0);
    syscalls();
    assert_eq!(
        read_counts(&counts, 3),
        armed,
        "disarming stops every program at once"
    );

    let (p, l) = ids(&a);
    drop(a);
    assert_gone(&p, &l);
}

#[test]
fn strict_mode_fails_on_the_first_refusal_and_leaves_nothing_behind() {
    let test = "strict_mode_fails_on_the_first_refusal_and_leaves_nothing_behind";
    if !can_bpf(test) {
        return;
    }
    let (mut t, counts, arming, targets) = raw_tp_setup(&["sys_enter", "strobe_no_such_tp"]);
    t.name = "strobe_strict".into();
    let fds = map_fds_for(&t, &[("counts", fd(&counts)), arming.map_entry()]).unwrap();
    let opts = LoadOptions {
        strict: true,
        threads: 1,
        ..Default::default()
    };
    match load_clones(&t, &fds, &targets, &opts) {
        Err(LoaderError::Strict { refusal }) => assert_eq!(refusal.name, "strobe_no_such_tp"),
        other => panic!("expected a strict failure, got {other:?}"),
    }
    // The clone that did attach (sys_enter) was released with the error: no program of this
    // test's name remains (polling: program memory goes after an RCU grace period).
    let start = Instant::now();
    loop {
        let alive = all_ids(ObjKind::Prog)
            .unwrap()
            .into_iter()
            .filter_map(|id| strobe::sys::info::prog_fd_by_id(id).ok().flatten())
            .filter_map(|fd| prog_info(fd.as_fd()).ok())
            .filter(|i| i.name == "strobe_strict")
            .count();
        if alive == 0 {
            break;
        }
        assert!(
            start.elapsed().as_secs() < 5,
            "{alive} strobe_strict programs left"
        );
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}

#[test]
fn missing_map_is_a_typed_error_and_all_bad_targets_fail_as_a_whole() {
    let test = "missing_map_is_a_typed_error_and_all_bad_targets_fail_as_a_whole";
    if !can_bpf(test) {
        return;
    }
    let (t, counts, arming, _) = raw_tp_setup(&[]);
    assert!(matches!(
        map_fds_for(&t, &[("counts", fd(&counts))]),
        Err(LoaderError::UnknownMap(m)) if m == "strobe_arm"
    ));
    let fds = map_fds_for(&t, &[("counts", fd(&counts)), arming.map_entry()]).unwrap();
    let bad = [
        CloneTarget::named("strobe_nope_1", 0),
        CloneTarget::named("strobe_nope_2", 0),
    ];
    match load_clones(&t, &fds, &bad, &LoadOptions::default()) {
        Err(LoaderError::NothingAttached { refused }) => assert_eq!(refused.len(), 2),
        other => panic!("expected NothingAttached, got {other:?}"),
    }
}

#[test]
fn parallel_load_of_many_raw_tp_clones_attaches_all_and_detaches_without_leaks() {
    let test = "parallel_load_of_many_raw_tp_clones_attaches_all_and_detaches_without_leaks";
    if !can_bpf(test) {
        return;
    }
    let n = 64;
    let names: Vec<&str> = (0..n)
        .map(|i| if i % 2 == 0 { "sys_enter" } else { "sys_exit" })
        .collect();
    for (threads, mode) in [
        (1, DetachMode::Sequential),
        (0, DetachMode::Parallel { threads: 0 }),
        (2, DetachMode::Background),
    ] {
        let (t, counts, arming, targets) = raw_tp_setup(&names);
        let fds = map_fds_for(&t, &[("counts", fd(&counts)), arming.map_entry()]).unwrap();
        let start = Instant::now();
        let a = load_clones(
            &t,
            &fds,
            &targets,
            &LoadOptions {
                threads,
                ..Default::default()
            },
        )
        .unwrap();
        let load = start.elapsed();
        assert_eq!(a.attached(), n, "{}", a.summary_line());
        arming.arm().unwrap();
        syscalls();
        arming.disarm().unwrap();
        let c = read_counts(&counts, n);
        assert!(c.iter().all(|&x| x > 0), "every clone counted: {c:?}");
        let (p, l) = ids(&a);
        let waited = if mode == DetachMode::Background {
            let handle = detach_in_background(a.into_objects()).unwrap();
            let kernel = handle.wait();
            eprintln!("background detach: child finished {kernel:?} after release");
            std::time::Duration::ZERO
        } else {
            detach(a.into_objects(), mode)
        };
        eprintln!("{n} raw_tp clones, {threads} threads: load+attach {load:?}, detach ({mode:?}) {waited:?}");
        assert_gone(&p, &l);
    }
}

#[no_mangle]
#[inline(never)]
pub extern "C" fn strobe_loader_target_alpha(x: u64) -> u64 {
    std::hint::black_box(x.wrapping_add(1))
}

#[no_mangle]
#[inline(never)]
pub extern "C" fn strobe_loader_target_beta(x: u64) -> u64 {
    std::hint::black_box(x.wrapping_mul(3))
}

#[no_mangle]
#[inline(never)]
pub extern "C" fn strobe_loader_target_gamma(x: u64) -> u64 {
    std::hint::black_box(x ^ 5)
}

fn call_targets(times: [u64; 3]) {
    for i in 0..times[0] {
        strobe_loader_target_alpha(i);
    }
    for i in 0..times[1] {
        strobe_loader_target_beta(i);
    }
    for i in 0..times[2] {
        strobe_loader_target_gamma(i);
    }
}

fn uprobe_wildcard(test: &str, use_multi: bool) {
    if !can_bpf(test) {
        return;
    }
    if strobe::sys::perf::pmu_type("uprobe").is_none() {
        strobe_testkit::skip(test, "no uprobe PMU");
        return;
    }
    let exe = std::fs::read_link("/proc/self/exe").unwrap();
    let funcs = symbols::elf_functions(&exe, "strobe_loader_target_*").unwrap();
    let names: Vec<&str> = funcs.iter().map(|f| f.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "strobe_loader_target_alpha",
            "strobe_loader_target_beta",
            "strobe_loader_target_gamma"
        ]
    );
    let t = counting_template(AttachKind::Uprobe { retprobe: false }, Key::Cookie);
    let counts = counts_map(3);
    let arming = Arming::create().unwrap();
    let fds = map_fds_for(&t, &[("counts", fd(&counts)), arming.map_entry()]).unwrap();
    let targets = MultiTargets::User {
        path: exe,
        funcs: funcs.iter().map(|f| (f.name.clone(), f.offset)).collect(),
        pid: Some(std::process::id() as i32),
    };
    let opts = MultiOptions {
        use_multi: Some(use_multi),
        ..Default::default()
    };
    let (a, via) = match attach_multi(&t, &fds, &targets, &opts) {
        Ok(x) => x,
        Err(e) if use_multi => {
            strobe_testkit::skip(test, &format!("uprobe_multi unavailable: {e}"));
            return;
        }
        Err(e) => panic!("{e}"),
    };
    assert_eq!(
        via,
        if use_multi {
            MultiVia::UprobeMulti
        } else {
            MultiVia::PerfEvents
        }
    );
    assert_eq!(a.summary_line(), "Attached 3/3 uprobe probes");
    call_targets([2, 2, 2]);
    assert_eq!(read_counts(&counts, 3), vec![0, 0, 0], "disarmed");
    arming.arm().unwrap();
    call_targets([3, 5, 7]);
    arming.disarm().unwrap();
    call_targets([1, 1, 1]);
    assert_eq!(
        read_counts(&counts, 3),
        vec![3, 5, 7],
        "counted per target while armed"
    );
    let (p, l) = ids(&a);
    detach(a.into_objects(), DetachMode::Parallel { threads: 2 });
    assert_gone(&p, &l);
}

#[test]
fn uprobe_wildcard_through_uprobe_multi_counts_each_function() {
    uprobe_wildcard(
        "uprobe_wildcard_through_uprobe_multi_counts_each_function",
        true,
    );
}

#[test]
fn uprobe_wildcard_through_perf_events_counts_each_function() {
    uprobe_wildcard(
        "uprobe_wildcard_through_perf_events_counts_each_function",
        false,
    );
}
