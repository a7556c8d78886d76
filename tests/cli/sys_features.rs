//! Host-kernel tests of the feature probes: the report matches what this host really does
//! (every "yes" is backed by a working operation; known gaps are "no" with the right reason),
//! and `strobe info` / `strobe --info` print it.

use crate::sys_common;

use std::path::Path;
use std::process::Command;

use strobe::asm::{Insn, Reg};
use strobe::btf::Btf;
use strobe::kernel::features::{features, Helper, Support};
use strobe::sys::env::{lockdown, Lockdown};
use strobe::sys::{AttachType, Map, MapCreateOptions, MapType, Prog, ProgLoadOptions, ProgType};

#[test]
fn features_report_matches_this_host() {
    if !sys_common::can_bpf("features_report_matches_this_host") {
        return;
    }
    let f = features();
    // Ring buffers: the report says yes exactly when creating one works.
    let rb = Map::create(
        MapType::Ringbuf,
        &MapCreateOptions {
            max_entries: 4096,
            ..Default::default()
        },
    );
    assert_eq!(f.ringbuf.is_yes(), rb.is_ok(), "{:?}", f.ringbuf);
    assert!(f.raw_tp_test_run.is_yes(), "{:?}", f.raw_tp_test_run);
    assert!(f.hash_map.is_yes() && f.map_batch.is_yes());
    assert!(f.helper(Helper::ProbeReadKernel).is_yes());
    assert!(f.helper(Helper::GetCurrentPidTgid).is_yes());
    assert!(f.isa_v2.is_yes() && f.isa_v3.is_yes());
    let unknown_release = f.kernel_release.is_empty() || f.kernel_release == "unknown";
    assert!(!unknown_release && f.kernel_version.0 >= 4);

    // No kprobe PMU means kprobes are "no" and the reason names CONFIG_KPROBES.
    let kprobe_pmu = Path::new("/sys/bus/event_source/devices/kprobe").exists();
    match (&f.kprobes, kprobe_pmu) {
        (Support::No(r), false) => {
            assert!(r.contains("CONFIG_KPROBES"), "{r}");
            match &f.kprobe_multi {
                Support::No(r) => assert!(r.contains("CONFIG_KPROBES"), "{r}"),
                Support::Yes => panic!("kprobe_multi without kprobes"),
            }
        }
        (Support::Yes, true) => {}
        (s, pmu) => panic!("kprobes {s:?} with kprobe PMU present = {pmu}"),
    }
    assert_eq!(
        f.uprobes.is_yes(),
        Path::new("/sys/bus/event_source/devices/uprobe").exists(),
        "{:?}",
        f.uprobes
    );

    // fentry: the report agrees with an independent tracing load, and under lockdown (this
    // host) a refusal is explained by lockdown.
    if let Some(id) = Btf::from_vmlinux()
        .ok()
        .and_then(|b| b.find_func("vfs_read"))
    {
        let insns = [Insn::mov64_imm(Reg::R0, 0), Insn::exit()];
        let mut o = ProgLoadOptions::new(ProgType::Tracing, &insns);
        o.expected_attach_type = Some(AttachType::TraceFentry);
        o.attach_btf_id = id;
        let direct = Prog::load(&o);
        assert_eq!(f.fentry.is_yes(), direct.is_ok(), "{:?}", f.fentry);
        let locked = matches!(
            lockdown(),
            Some(Lockdown::Integrity | Lockdown::Confidentiality)
        );
        if let (Err(e), true) = (&direct, locked) {
            if e.errno() == strobe::sys::Errno::EPERM {
                match &f.fentry {
                    Support::No(r) => assert!(r.contains("lockdown"), "{r}"),
                    Support::Yes => unreachable!(),
                }
            }
        }
    }
    if f.fentry.is_yes() {
        assert!(f.btf_vmlinux.is_yes());
    }
}

#[test]
fn strobe_info_prints_sections_and_accepts_the_bpftrace_flag() {
    if !sys_common::can_bpf("strobe_info_prints_sections_and_accepts_the_bpftrace_flag") {
        return;
    }
    let exe = env!("CARGO_BIN_EXE_strobe");
    let out = Command::new(exe).arg("info").output().unwrap();
    assert!(out.status.success());
    let text = String::from_utf8(out.stdout).unwrap();
    for needle in [
        "System\n",
        "Probe types\n",
        "Kernel helpers\n",
        "  ringbuf:",
        "  probe_read_kernel:",
    ] {
        assert!(text.contains(needle), "missing {needle:?} in:\n{text}");
    }
    // bpftrace's test engine reads features as the exact text `NAME: yes`: every name it
    // looks for is there, unpadded, answered yes or no.
    for name in [
        "Loop support",
        "probe_read_kernel",
        "btf",
        "fentry",
        "dpath",
        "send_signal",
        "iter",
        "bcc library path resolution",
        "libdw (DWARF support)",
        "kprobe_multi",
        "kprobe_session",
        "uprobe_multi",
        "get_func_ip",
        "jiffies64",
        "lookup_percpu_elem",
        "get_tai_ns",
        "dwunwind (DWARF stack unwinding)",
        "blazesym (advanced symbolization)",
    ] {
        let line = text
            .lines()
            .find(|l| l.starts_with(&format!("  {name}: ")))
            .unwrap_or_else(|| panic!("no `  {name}: ` line in:\n{text}"));
        let value = &line[name.len() + 4..];
        assert!(value == "yes" || value.starts_with("no"), "{line}");
    }
    let out2 = Command::new(exe).arg("--info").output().unwrap();
    assert!(out2.status.success());
    assert!(String::from_utf8(out2.stdout)
        .unwrap()
        .contains("Probe types\n"));
    let json = Command::new(exe).args(["info", "--json"]).output().unwrap();
    let j = String::from_utf8(json.stdout).unwrap();
    assert!(
        j.starts_with("{\"System\":{") && j.trim_end().ends_with('}'),
        "{j}"
    );
    let bad = Command::new(exe)
        .args(["info", "--bogus"])
        .output()
        .unwrap();
    assert_eq!(bad.status.code(), Some(strobe::cli::EXIT_USAGE));
}
