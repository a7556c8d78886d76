//! The kernel's own BTF verifier accepts what `BtfBuilder` encodes (BPF_BTF_LOAD), and what it
//! accepts parses back to the same facts. Skips loudly without CAP_BPF.

use strobe::btf::encode::{BtfBuilder, MemberDef};
use strobe::btf::{Btf, IntInfo, Linkage, TypeKind};
use strobe::sys::BtfObj;
use strobe_testkit::skip;

/// Loads `blob` through `strobe::sys`; Ok(fd) or Err((errno, BTF verifier log)).
fn btf_load(blob: &[u8]) -> Result<BtfObj, (i32, String)> {
    BtfObj::load(blob).map_err(|e| (e.sys.errno.0, e.log))
}

fn every_kind_blob() -> Vec<u8> {
    let mut b = BtfBuilder::new();
    let int = b.add_int("int", 4, true);
    let uchar = b.add_int_info(
        "unsigned char",
        IntInfo {
            size: 1,
            bits: 8,
            offset: 0,
            signed: false,
            char: true,
            bool: false,
        },
    );
    let ulong = b.add_int("unsigned long", 8, false);
    let arr = b.add_array(uchar, int, 16);
    let fwd = b.add_fwd("opaque", false);
    let fwd_ptr = b.add_ptr(fwd);
    let inner = b.add_union(
        "",
        8,
        &[MemberDef::new("l", ulong, 0), MemberDef::new("i", int, 0)],
    );
    let s = b.add_struct(
        "event",
        40,
        &[
            MemberDef::new("pid", int, 0),
            MemberDef::bitfield("a", int, 32, 3),
            MemberDef::bitfield("b", int, 35, 5),
            MemberDef::new("", inner, 8),
            MemberDef::new("comm", arr, 16),
            MemberDef::new("o", fwd_ptr, 32),
        ],
    );
    let vol = b.add_volatile(int);
    let cst = b.add_const(vol);
    let tag = b.add_type_tag("user", cst);
    let p = b.add_ptr(tag);
    let rp = b.add_restrict(p);
    let td = b.add_typedef("event_t", s);
    let e = b.add_enum("state", 4, false, &[("RUNNING", 0), ("SLEEPING", 1)]);
    let e64 = b.add_enum64("wide", 8, false, &[("BIG", 1 << 40)]);
    let fl = b.add_float("double", 8);
    let sp = b.add_ptr(td);
    let proto = b.add_func_proto(
        int,
        &[("ev", sp), ("p", rp), ("st", e), ("w", e64), ("d", fl)],
    );
    let f = b.add_func("handle", proto, Linkage::Global);
    b.add_decl_tag("hot", f, 0);
    let var = b.add_var("counter", ulong, 1);
    b.add_datasec(".data", 8, &[(var, 0, 8)]);
    b.finish().unwrap()
}

#[test]
fn kernel_accepts_encoded_btf_with_every_kind() {
    let test = "kernel_accepts_encoded_btf_with_every_kind";
    let blob = every_kind_blob();
    let btf = Btf::parse(blob.clone()).unwrap();
    let f = btf.find_func("handle").unwrap();
    assert_eq!(
        btf.decl_to_string(f, ""),
        "int handle(event_t *ev, const volatile int *restrict p, enum state st, enum wide w, double d)"
    );
    assert!(matches!(
        btf.type_by_id(btf.last_id()).unwrap().kind,
        TypeKind::Datasec(_)
    ));
    match btf_load(&blob) {
        Ok(_fd) => {}
        Err((libc::EPERM, _)) => skip(test, "BPF_BTF_LOAD refused with EPERM (no CAP_BPF?)"),
        Err((errno, log)) => panic!("kernel rejected encoded BTF (errno {errno}):\n{log}"),
    }
}

#[test]
fn kernel_rejects_what_it_should_and_so_do_we() {
    let test = "kernel_rejects_what_it_should_and_so_do_we";
    // A pointer to a type id that does not exist.
    let mut b = BtfBuilder::new();
    b.add_ptr(42);
    let blob = b.finish().unwrap();
    let ours = Btf::parse(blob.clone()).unwrap();
    assert!(ours.type_by_id(ours.pointee(1).unwrap()).is_err());
    match btf_load(&blob) {
        Err((libc::EPERM, _)) => skip(test, "BPF_BTF_LOAD refused with EPERM (no CAP_BPF?)"),
        Err((errno, _)) => assert_eq!(errno, libc::EINVAL),
        Ok(_) => panic!("kernel accepted a dangling pointer"),
    }
}
