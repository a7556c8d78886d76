//! Host-kernel tests of the smaller commands: BTF load (accepted and refused with a log),
//! raising resource limits, link release on drop, and raw tracepoint attach.

use crate::sys_common;

use std::os::fd::AsFd;

use strobe::sys::info::{self, ObjKind};
use strobe::sys::{
    raise_memlock_rlimit, raise_nofile_rlimit, BtfObj, Errno, Link, Prog, ProgLoadOptions, ProgType,
};
use sys_common::*;

/// A BTF blob holding one type, `int` (32-bit signed), laid out per Documentation/bpf/btf.rst.
fn int_btf(magic: u16) -> Vec<u8> {
    let strs = b"\0int\0";
    let mut types = Vec::new();
    // name_off 1, info kind INT (1 << 24), size 4, then encoding SIGNED (1 << 24) | 32 bits.
    for w in [1u32, 1 << 24, 4, (1 << 24) | 32] {
        types.extend_from_slice(&w.to_le_bytes());
    }
    let mut d = Vec::new();
    d.extend_from_slice(&magic.to_le_bytes());
    d.extend_from_slice(&[1, 0]);
    for w in [
        24u32,
        0,
        types.len() as u32,
        types.len() as u32,
        strs.len() as u32,
    ] {
        d.extend_from_slice(&w.to_le_bytes());
    }
    d.extend_from_slice(&types);
    d.extend_from_slice(strs);
    d
}

#[test]
fn btf_load_accepts_valid_blob_and_explains_a_bad_one() {
    if !can_bpf("btf_load_accepts_valid_blob_and_explains_a_bad_one") {
        return;
    }
    let btf = BtfObj::load(&int_btf(0xeb9f)).unwrap();
    assert!(!info::all_ids(ObjKind::Btf).unwrap().is_empty());
    drop(btf);
    let e = BtfObj::load(&int_btf(0x1234)).unwrap_err();
    assert_eq!(e.sys.errno, Errno::EINVAL);
    assert!(
        !e.log.is_empty(),
        "the retry with a log must return the kernel's BTF log"
    );
}

#[test]
fn rlimits_are_raised_when_permitted() {
    let n = raise_nofile_rlimit().unwrap();
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: valid out-pointer.
    unsafe { libc::getrlimit(libc::RLIMIT_NOFILE, &mut r) };
    assert_eq!(r.rlim_cur, r.rlim_max);
    assert_eq!(
        n.after,
        (r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur)
    );
    match raise_memlock_rlimit() {
        Ok(c) => {
            assert_eq!(c.after, None);
            assert_eq!(strobe::sys::env::memlock_limit(), None);
        }
        Err(e) => {
            // Only without CAP_SYS_RESOURCE; the error must say what could not be done.
            assert!(e.to_string().contains("RLIMIT_MEMLOCK"), "{e}");
        }
    }
}

#[test]
fn raw_tracepoint_link_is_released_on_drop() {
    if !can_bpf("raw_tracepoint_link_is_released_on_drop") {
        return;
    }
    let map = counter_map();
    let insns = count_into(&map);
    let prog = Prog::load(&ProgLoadOptions::new(ProgType::RawTracepoint, &insns)).unwrap();
    let link = Link::raw_tracepoint_open(&prog, Some("sys_enter")).unwrap();
    // Some syscall on some CPU will hit sys_enter; ours certainly does.
    // SAFETY: getpid has no effects.
    unsafe { libc::syscall(libc::SYS_getpid) };
    assert!(counter(&map) >= 1);
    let li = info::link_info(link.as_fd()).unwrap();
    assert_eq!(li.link_type, 1, "BPF_LINK_TYPE_RAW_TRACEPOINT");
    let id = li.id;
    assert!(info::link_fd_by_id(id).unwrap().is_some());
    drop(link);
    let gone = eventually(|| info::link_fd_by_id(id).unwrap().is_none());
    assert!(gone, "link {id} still exists after drop");
    // Detach completes right after the id is released; give it a moment.
    std::thread::sleep(std::time::Duration::from_millis(20));
    let before = counter(&map);
    // SAFETY: as above.
    unsafe { libc::syscall(libc::SYS_getpid) };
    assert_eq!(counter(&map), before, "a dropped link must not fire");
}
