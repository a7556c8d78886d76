//! CO-RE relocations of a clang-built object (tests/fixtures/clang_core.c) resolved against the
//! host's vmlinux BTF, then run in the kernel: a raw tracepoint program executed through
//! BPF_PROG_TEST_RUN stores each relocated value in an array map, and every value must equal
//! what the host's BTF says (field offsets, sizes, existence, an enumerator's value) — and the
//! relocated `&current->pid` must read this thread's id. A second fixture (clang_bitfields.c)
//! checks bitfield offsets, sizes and shifts and "type matches" the same way, and reads a
//! bitfield of `current` that the test sets (SCHED_RESET_ON_FORK).

use crate::loader_common;

use std::os::fd::AsRawFd;

use strobe::btf::Btf;
use strobe::loader::co_re;
use strobe::sys::Map;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/clang_core.o");

fn section() -> strobe::asm::Section {
    let bytes = std::fs::read(FIXTURE).unwrap();
    let obj = strobe::elf::read_object(&bytes).unwrap();
    obj.sections
        .into_iter()
        .find(|s| s.name == "raw_tracepoint/sys_enter")
        .unwrap()
}

#[test]
fn fixture_has_one_relocation_per_builtin_and_a_field_access() {
    let bytes = std::fs::read(FIXTURE).unwrap();
    let (_, relos) = co_re::section_relos(&bytes, "raw_tracepoint/sys_enter")
        .unwrap()
        .expect("CO-RE records");
    // 9 builtins and the address of t->pid.
    assert_eq!(relos.len(), 10, "{relos:?}");
    assert!(co_re::section_relos(&bytes, "no_such_section")
        .unwrap()
        .is_none());
}

#[test]
fn core_relocated_program_reads_the_kernels_layout() {
    let test = "core_relocated_program_reads_the_kernels_layout";
    if !loader_common::can_bpf(test) {
        return;
    }
    let Ok(vmlinux) = Btf::from_vmlinux() else {
        strobe_testkit::skip(test, "no /sys/kernel/btf/vmlinux");
        return;
    };
    let bytes = std::fs::read(FIXTURE).unwrap();
    let (local, relos) = co_re::section_relos(&bytes, "raw_tracepoint/sys_enter")
        .unwrap()
        .unwrap();
    let mut s = section();
    let original = s.insns.clone();
    co_re::apply(&mut s.insns, &local, &relos, &vmlinux).unwrap();
    assert_ne!(s.insns, original, "relocation changed nothing");

    let out = loader_common::out_map();
    let insns = loader_common::instantiate_raw_tp(&s, &["out".to_string()], &[out.as_raw_fd()]);
    loader_common::run_raw_tp_once(&insns);
    let got = loader_common::read_out(&out, 10);
    let get = |k: u32| got[k as usize];

    let task = vmlinux.find_struct("task_struct").unwrap();
    let pid = vmlinux.find_member(task, "pid").unwrap().unwrap();
    let comm = vmlinux.find_member(task, "comm").unwrap().unwrap();
    let tracing = vmlinux
        .enumerators(vmlinux.find_enum("bpf_prog_type").unwrap())
        .unwrap()
        .value_of("BPF_PROG_TYPE_TRACING")
        .unwrap();
    let expect = [
        (0, u64::from(pid.byte_offset())),
        (1, u64::from(comm.byte_offset())),
        (2, 1),
        (3, 0),
        (4, u64::from(vmlinux.size_of(comm.type_id).unwrap())),
        (5, 1),
        (6, u64::from(vmlinux.size_of(task).unwrap())),
        (7, tracing as u64),
        (8, 0),
        // SAFETY: gettid has no preconditions.
        (9, unsafe { libc::gettid() } as u64),
    ];
    for (k, want) in expect {
        assert_eq!(get(k), want, "out[{k}]");
    }
    // The local layout disagrees, so these prove relocation rather than luck.
    assert_ne!(pid.byte_offset(), 20);
    assert_ne!(tracing, 3);
}

const BITFIELDS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/clang_bitfields.o"
);

/// Runs `insns` (a raw tracepoint program writing `out`) once; `out[0..13]`.
fn run_into_out(insns: &[strobe::asm::Insn], out: &Map) -> Vec<u64> {
    loader_common::run_raw_tp_once(insns);
    loader_common::read_out(out, 13)
}

/// Sets or clears SCHED_RESET_ON_FORK on this thread (policy SCHED_OTHER either way).
fn set_reset_on_fork(on: bool) -> bool {
    let param = libc::sched_param { sched_priority: 0 };
    let policy = libc::SCHED_OTHER | if on { libc::SCHED_RESET_ON_FORK } else { 0 };
    // SAFETY: pid 0 is the calling thread; param is a valid sched_param.
    unsafe { libc::sched_setscheduler(0, policy, &param) == 0 }
}

#[test]
fn bitfield_relocations_and_type_matches_follow_the_kernels_btf() {
    let test = "bitfield_relocations_and_type_matches_follow_the_kernels_btf";
    if !loader_common::can_bpf(test) {
        return;
    }
    let Ok(vmlinux) = Btf::from_vmlinux() else {
        strobe_testkit::skip(test, "no /sys/kernel/btf/vmlinux");
        return;
    };
    let task = vmlinux.find_struct("task_struct").unwrap();
    let member = |name: &str| vmlinux.find_member(task, name).unwrap().unwrap();
    let (reset, iowait) = (member("sched_reset_on_fork"), member("in_iowait"));
    if reset.bitfield_size == 0 || iowait.bitfield_size == 0 {
        strobe_testkit::skip(test, "task_struct has no such bitfields on this kernel");
        return;
    }
    let bytes = std::fs::read(BITFIELDS).unwrap();
    let sec = "raw_tracepoint/sys_enter";
    let (local, relos) = co_re::section_relos(&bytes, sec).unwrap().unwrap();
    let kinds: std::collections::BTreeSet<u32> = relos.iter().map(|r| r.kind).collect();
    assert_eq!(kinds, [0, 1, 4, 5, 12].into(), "{relos:?}");
    let mut s = strobe::elf::read_object(&bytes)
        .unwrap()
        .sections
        .into_iter()
        .find(|s| s.name == sec)
        .unwrap();
    co_re::apply(&mut s.insns, &local, &relos, &vmlinux).unwrap();

    let out = loader_common::out_map();
    let insns = loader_common::instantiate_raw_tp(&s, &["out".to_string()], &[out.as_raw_fd()]);
    assert!(set_reset_on_fork(false));
    let before = run_into_out(&insns, &out);
    assert!(set_reset_on_fork(true));
    let after = run_into_out(&insns, &out);
    assert!(set_reset_on_fork(false));

    // Expected, from the BTF alone: the narrowest naturally aligned load, at least as wide as
    // the member's type, that holds every bit of the field.
    let expect = |m: &strobe::btf::MemberRef<'_>| {
        let ty = vmlinux.size_of(m.type_id).unwrap();
        let (first, last) = (m.bit_offset, m.bit_offset + m.bitfield_size - 1);
        let size = [1u32, 2, 4, 8]
            .into_iter()
            .filter(|&z| z >= ty)
            .find(|&z| first / (8 * z) == last / (8 * z))
            .unwrap();
        let byte_off = first / (8 * size) * size;
        let low = u64::from(first - byte_off * 8);
        [
            u64::from(byte_off),
            u64::from(size),
            64 - low - u64::from(m.bitfield_size),
            64 - u64::from(m.bitfield_size),
        ]
    };
    assert_eq!(before[0..4], expect(&reset), "sched_reset_on_fork");
    assert_eq!(before[4..8], expect(&iowait), "in_iowait");
    // The local layout puts both in the first word: relocation, not luck.
    assert_ne!(before[0], 0);
    // The probed read sees the flag this thread just set, and its neighbour unchanged.
    assert_eq!((before[8], after[8]), (0, 1), "sched_reset_on_fork");
    assert_eq!((before[9], after[9]), (0, 0), "in_iowait");
    assert_eq!(before[10..13], [1, 0, 0], "type matches");
}
