//! CO-RE relocations of a clang-built object (tests/fixtures/clang_core.c) resolved against the
//! host's vmlinux BTF, then run in the kernel: a raw tracepoint program executed through
//! BPF_PROG_TEST_RUN stores each relocated value in an array map, and every value must equal
//! what the host's BTF says (field offsets, sizes, existence, an enumerator's value) — and the
//! relocated `&current->pid` must read this thread's id.

mod loader_common;

use std::os::fd::AsRawFd;

use strobe::btf::Btf;
use strobe::loader::co_re;
use strobe::sys::{
    Map, MapCreateOptions, MapType, Prog, ProgLoadOptions, ProgType, TestRunOptions,
};
use strobe::template::{instantiate, AttachKind, TargetValues, Template};

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
        strobe::testkit::skip(test, "no /sys/kernel/btf/vmlinux");
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

    let out = Map::create(
        MapType::Array,
        &MapCreateOptions {
            name: "out",
            key_size: 4,
            value_size: 8,
            max_entries: 16,
            ..Default::default()
        },
    )
    .unwrap();
    let t =
        Template::from_section(&s, &["out".to_string()], AttachKind::RawTracepoint, "GPL").unwrap();
    let fds = [out.as_raw_fd()];
    let insns = instantiate(
        &t,
        &TargetValues {
            map_fds: &fds,
            ..Default::default()
        },
    )
    .unwrap();
    let prog = Prog::load(&ProgLoadOptions::new(ProgType::RawTracepoint, &insns)).unwrap();
    prog.test_run(&mut TestRunOptions {
        ctx_in: &[0u8; 16],
        ..Default::default()
    })
    .unwrap();
    let get = |k: u32| {
        let mut v = [0u8; 8];
        out.lookup(&k.to_ne_bytes(), &mut v).unwrap();
        u64::from_ne_bytes(v)
    };

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
