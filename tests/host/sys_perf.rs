//! Host-kernel tests of perf events with BPF programs: a syscall tracepoint that really fires,
//! a software cpu-clock event, and a uprobe on a function of this test binary (attached by
//! ioctl, by a perf_event link, and by a uprobe_multi link).

use crate::sys_common;

use std::os::fd::AsFd;
use std::path::{Path, PathBuf};

use strobe::sys::perf::pmu_type;
use strobe::sys::{
    Link, LinkTarget, PerfEvent, Prog, ProgLoadOptions, ProgType, Sampling, SoftwareEvent,
};
use sys_common::*;

fn getpid_syscall() {
    // SAFETY: getpid has no arguments or effects.
    unsafe { libc::syscall(libc::SYS_getpid) };
}

#[test]
fn tracepoint_event_with_set_bpf_counts_getpid_calls() {
    let test = "tracepoint_event_with_set_bpf_counts_getpid_calls";
    if !can_bpf(test) {
        return;
    }
    let Some(id) = tracepoint_id(test, "syscalls", "sys_enter_getpid") else {
        return;
    };
    let map = counter_map();
    // The program runs for every task's getpid (whatever task the perf event is opened for):
    // it counts this thread's only, so other processes' getpid calls do not count.
    let insns = count_into_for_thread(&map, gettid());
    let prog = Prog::load(&ProgLoadOptions::new(ProgType::Tracepoint, &insns)).unwrap();
    let ev = PerfEvent::tracepoint(id, 0, -1).unwrap();
    ev.set_bpf(&prog).unwrap();
    ev.enable().unwrap();
    for _ in 0..7 {
        getpid_syscall();
    }
    assert_eq!(counter(&map), 7);
    // The ioctls work; note that a tracepoint's BPF program runs whether or not the perf
    // event is enabled (kernel/trace/trace_event_perf.c calls it before the event's state
    // matters), so disabling is not a way to pause it.
    ev.disable().unwrap();
    ev.enable().unwrap();
    getpid_syscall();
    assert_eq!(counter(&map), 8);
    drop(ev);
    getpid_syscall();
    assert_eq!(counter(&map), 8, "closing the event detaches the program");
}

#[test]
fn software_cpu_clock_event_fires_while_spinning() {
    let test = "software_cpu_clock_event_fires_while_spinning";
    if !can_bpf(test) {
        return;
    }
    let map = counter_map();
    let insns = count_into(&map);
    let prog = Prog::load(&ProgLoadOptions::new(ProgType::PerfEvent, &insns)).unwrap();
    // Every 1 ms of this thread's CPU time.
    let ev =
        PerfEvent::software(SoftwareEvent::CpuClock, Sampling::Period(1_000_000), 0, -1).unwrap();
    ev.set_bpf(&prog).unwrap();
    let start = std::time::Instant::now();
    let mut x = 0u64;
    while start.elapsed() < std::time::Duration::from_millis(60) {
        x = std::hint::black_box(x.wrapping_mul(31).wrapping_add(7));
    }
    let n = counter(&map);
    assert!(n >= 5, "cpu-clock fired {n} times in 60 ms of spinning");
}

#[no_mangle]
#[inline(never)]
pub extern "C" fn strobe_sys_perf_uprobe_target(x: u64) -> u64 {
    std::hint::black_box(x.wrapping_mul(3))
}

/// A second target, so the two uprobe tests (run on parallel threads of one process) do not
/// count each other's calls.
#[no_mangle]
#[inline(never)]
pub extern "C" fn strobe_sys_perf_uprobe_multi_target(x: u64) -> u64 {
    std::hint::black_box(x.wrapping_mul(5))
}

/// The file offset of `sym` in the ELF at `path`: its address mapped through the PT_LOAD
/// segment that contains it.
fn symbol_file_offset(path: &Path, sym: &str) -> Option<u64> {
    let data = std::fs::read(path).ok()?;
    let elf = goblin::elf::Elf::parse(&data).ok()?;
    let s = elf
        .syms
        .iter()
        .find(|s| elf.strtab.get_at(s.st_name) == Some(sym))?;
    elf.program_headers
        .iter()
        .find(|ph| {
            ph.p_type == goblin::elf::program_header::PT_LOAD
                && s.st_value >= ph.p_vaddr
                && s.st_value < ph.p_vaddr + ph.p_memsz
        })
        .map(|ph| s.st_value - ph.p_vaddr + ph.p_offset)
}

/// The test binary and the file offset of function `sym`, when uprobes can be used here;
/// `None` after a loud skip.
fn uprobe_target(test: &str, sym: &str) -> Option<(PathBuf, u64)> {
    if !can_bpf(test) {
        return None;
    }
    if pmu_type("uprobe").is_none() {
        strobe_testkit::skip(test, "no uprobe PMU (kernel without CONFIG_UPROBE_EVENTS)");
        return None;
    }
    let exe = std::fs::read_link("/proc/self/exe").ok()?;
    match symbol_file_offset(&exe, sym) {
        Some(off) => Some((exe, off)),
        None => {
            strobe_testkit::skip(test, "test binary has no symbol table (stripped?)");
            None
        }
    }
}

#[test]
fn uprobe_on_own_function_fires_via_ioctl_and_perf_link() {
    let test = "uprobe_on_own_function_fires_via_ioctl_and_perf_link";
    let Some((exe, off)) = uprobe_target(test, "strobe_sys_perf_uprobe_target") else {
        return;
    };
    let map = counter_map();
    let insns = count_into(&map);
    let prog = Prog::load(&ProgLoadOptions::new(ProgType::Kprobe, &insns)).unwrap();
    let ev = PerfEvent::uprobe(&exe, off, false, 0, -1).unwrap();
    ev.set_bpf(&prog).unwrap();
    for i in 0..5 {
        strobe_sys_perf_uprobe_target(i);
    }
    assert_eq!(counter(&map), 5);
    drop(ev);

    // The same through a BPF perf_event link (5.15+).
    let ev = PerfEvent::uprobe(&exe, off, false, 0, -1).unwrap();
    let link = Link::create(
        &prog,
        &LinkTarget::PerfEvent {
            event: ev.as_fd(),
            cookie: 0,
        },
    )
    .unwrap();
    for i in 0..3 {
        strobe_sys_perf_uprobe_target(i);
    }
    assert_eq!(counter(&map), 8);
    let li = strobe::sys::info::link_info(link.as_fd()).unwrap();
    assert_eq!(li.link_type, 7, "BPF_LINK_TYPE_PERF_EVENT");
    drop(link);
    drop(ev);
    strobe_sys_perf_uprobe_target(0);
    assert_eq!(counter(&map), 8, "dropping the link detaches");
}

#[test]
fn uprobe_multi_link_fires_on_own_function() {
    let test = "uprobe_multi_link_fires_on_own_function";
    let Some((exe, off)) = uprobe_target(test, "strobe_sys_perf_uprobe_multi_target") else {
        return;
    };
    let map = counter_map();
    let insns = count_into(&map);
    let mut o = ProgLoadOptions::new(ProgType::Kprobe, &insns);
    o.expected_attach_type = Some(strobe::sys::AttachType::TraceUprobeMulti);
    let prog = Prog::load(&o).unwrap();
    let target = LinkTarget::UprobeMulti {
        retprobe: false,
        path: &exe,
        offsets: &[off],
        ref_ctr_offsets: &[],
        cookies: &[],
        pid: Some(std::process::id()),
    };
    let link = match Link::create(&prog, &target) {
        Ok(l) => l,
        Err(e) => {
            strobe_testkit::skip(test, &format!("uprobe_multi unavailable: {e}"));
            return;
        }
    };
    for i in 0..4 {
        strobe_sys_perf_uprobe_multi_target(i);
    }
    assert_eq!(counter(&map), 4);
    drop(link);
    strobe_sys_perf_uprobe_multi_target(0);
    assert_eq!(counter(&map), 4);
}

#[test]
fn kprobe_without_kprobe_pmu_names_the_missing_config() {
    if Path::new("/sys/bus/event_source/devices/kprobe").exists() {
        strobe_testkit::skip(
            "kprobe_without_kprobe_pmu_names_the_missing_config",
            "this kernel has kprobes; the test checks the diagnosis of their absence",
        );
        return;
    }
    let e = PerfEvent::kprobe("vfs_read", 0, false, -1, 0).unwrap_err();
    assert!(
        matches!(
            e.cause,
            Some(strobe::sys::Cause::KernelLacks {
                config: "CONFIG_KPROBES",
                ..
            })
        ),
        "{e}"
    );
    assert!(
        e.to_string().starts_with("perf_event_open failed: ENOENT"),
        "{e}"
    );
}
