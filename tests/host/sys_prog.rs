//! Host-kernel tests of program loading and running: a raw tracepoint program run through
//! BPF_PROG_TEST_RUN writes into a map; verifier rejections carry the log, errno and failing
//! instruction; lockdown refusals name lockdown; fds are closed on drop.

use crate::sys_common;

use std::os::fd::AsFd;

use strobe::asm::{Insn, Reg};
use strobe::sys::env::{lockdown, Lockdown};
use strobe::sys::info::{self, ObjKind};
use strobe::sys::{AttachType, Cause, Errno, Map, Prog, ProgLoadOptions, ProgType, TestRunOptions};
use sys_common::*;

#[test]
fn raw_tp_program_runs_with_ctx_args_and_writes_the_map() {
    if !can_bpf("raw_tp_program_runs_with_ctx_args_and_writes_the_map") {
        return;
    }
    let map = counter_map();
    let insns = store_sum_of_args(&map);
    let mut o = ProgLoadOptions::new(ProgType::RawTracepoint, &insns);
    o.name = "sum_args";
    let prog = Prog::load(&o).unwrap();
    let args = [40u64, 2];
    let r = prog.test_run(&mut TestRunOptions::raw_tp(&args)).unwrap();
    assert_eq!(r.retval, 42);
    let v = map.lookup_vec(&0u32.to_ne_bytes()).unwrap().unwrap();
    assert_eq!(u64::from_ne_bytes(v[..].try_into().unwrap()), 42);
    // A second run with other arguments overwrites it: the program really ran again.
    prog.test_run(&mut TestRunOptions::raw_tp(&[1000, 337]))
        .unwrap();
    let v = map.lookup_vec(&0u32.to_ne_bytes()).unwrap().unwrap();
    assert_eq!(u64::from_ne_bytes(v[..].try_into().unwrap()), 1337);
    let pi = info::prog_info(prog.as_fd()).unwrap();
    assert_eq!(pi.prog_type, ProgType::RawTracepoint as u32);
    assert_eq!(pi.name, "sum_args");
    assert_eq!(pi.xlated_len as usize, insns.len() * 8);
}

#[test]
fn verifier_rejection_returns_log_errno_and_failing_insn() {
    if !can_bpf("verifier_rejection_returns_log_errno_and_failing_insn") {
        return;
    }
    // insn 2 reads r2, which is never written.
    let insns = [
        Insn::mov64_imm(Reg::R0, 0),
        Insn::mov64_imm(Reg::R3, 1),
        Insn::mov64_reg(Reg::R0, Reg::R2),
        Insn::exit(),
    ];
    let e = Prog::load(&ProgLoadOptions::new(ProgType::RawTracepoint, &insns)).unwrap_err();
    assert_eq!(e.errno(), Errno::EACCES, "{e}");
    assert_eq!(e.insn(), Some(2), "log:\n{}", e.log);
    assert_eq!(e.reason(), Some("R2 !read_ok"), "log:\n{}", e.log);
    assert!(e.log.contains("processed"), "{}", e.log);
    assert!(!e.log_truncated);
    assert!(
        e.to_string().contains("verifier: R2 !read_ok (insn 2)"),
        "{e}"
    );

    // An unknown helper is EINVAL with the verifier's reason.
    let insns = [Insn::call_helper_id(99_999), Insn::exit()];
    let e = Prog::load(&ProgLoadOptions::new(ProgType::RawTracepoint, &insns)).unwrap_err();
    assert_eq!(e.errno(), Errno::EINVAL, "{e}");
    assert_eq!(e.insn(), Some(0), "log:\n{}", e.log);
    assert!(e.reason().unwrap_or("").contains("invalid func"), "{e}");
}

#[test]
fn tracing_load_under_lockdown_names_lockdown() {
    if !can_bpf("tracing_load_under_lockdown_names_lockdown") {
        return;
    }
    let mode = lockdown();
    if !matches!(mode, Some(Lockdown::Confidentiality | Lockdown::Integrity)) {
        strobe_testkit::skip(
            "tracing_load_under_lockdown_names_lockdown",
            &format!("kernel lockdown is {mode:?}, this test checks the lockdown diagnosis"),
        );
        return;
    }
    let insns = [Insn::mov64_imm(Reg::R0, 0), Insn::exit()];
    let mut o = ProgLoadOptions::new(ProgType::Tracing, &insns);
    o.expected_attach_type = Some(AttachType::TraceFentry);
    o.attach_btf_id = 1;
    match Prog::load(&o) {
        Ok(_) => strobe_testkit::skip(
            "tracing_load_under_lockdown_names_lockdown",
            "this kernel accepts tracing programs despite lockdown",
        ),
        Err(e) => {
            assert_eq!(e.errno(), Errno::EPERM, "{e}");
            assert!(e.log.is_empty(), "{}", e.log);
            assert!(
                matches!(e.sys.cause, Some(Cause::Lockdown { .. })),
                "cause: {:?}",
                e.sys.cause
            );
            assert!(e.to_string().contains("lockdown"), "{e}");
        }
    }
}

#[test]
fn dropping_a_prog_closes_it_and_its_id_disappears() {
    if !can_bpf("dropping_a_prog_closes_it_and_its_id_disappears") {
        return;
    }
    let insns = [Insn::mov64_imm(Reg::R0, 0), Insn::exit()];
    let prog = Prog::load(&ProgLoadOptions::new(ProgType::RawTracepoint, &insns)).unwrap();
    let id = info::prog_info(prog.as_fd()).unwrap().id;
    assert!(info::all_ids(ObjKind::Prog).unwrap().contains(&id));
    let again = info::prog_fd_by_id(id).unwrap();
    assert!(again.is_some());
    drop(again);
    drop(prog);
    // Release of a BPF program is deferred to an RCU callback; poll briefly.
    let gone = eventually(|| info::prog_fd_by_id(id).unwrap().is_none());
    assert!(gone, "prog {id} still exists after drop");

    let map = counter_map();
    let mid = info::map_info(map.as_fd()).unwrap().id;
    let m2 = Map::from_fd(info::map_fd_by_id(mid).unwrap().unwrap()).unwrap();
    assert_eq!((m2.key_size(), m2.value_size()), (4, 8));
    drop(m2);
    drop(map);
    let gone = eventually(|| info::map_fd_by_id(mid).unwrap().is_none());
    assert!(gone, "map {mid} still exists after drop");
}

#[test]
fn large_verifier_log_grows_the_buffer_and_keeps_the_failing_insn() {
    if !can_bpf("large_verifier_log_grows_the_buffer_and_keeps_the_failing_insn") {
        return;
    }
    // 4000 straight-line instructions make a level-2 log far beyond the first 64 KiB buffer;
    // the error is at the very end.
    let mut insns: Vec<_> = (0..4000).map(|i| Insn::mov64_imm(Reg::R0, i)).collect();
    insns.push(Insn::mov64_reg(Reg::R0, Reg::R2));
    insns.push(Insn::exit());
    let e = Prog::load(&ProgLoadOptions::new(ProgType::RawTracepoint, &insns)).unwrap_err();
    assert_eq!(e.errno(), Errno::EACCES, "{e}");
    assert!(e.log.len() > 64 << 10, "log is only {} bytes", e.log.len());
    assert!(!e.log_truncated);
    assert_eq!(e.insn(), Some(4000));
    assert_eq!(e.reason(), Some("R2 !read_ok"));
}
