//! BTF parsing and queries over synthetic blobs built with [`BtfBuilder`]: every kind, split
//! BTF, bitfields old and new, anonymous members, printing, and malformed input.

use std::sync::Arc;

use super::encode::{BtfBuilder, EncodeError, MemberDef};
use super::*;

/// A little kernel: ints, a typedef chain, a struct with an anonymous union and bitfields,
/// a function `long vfs_read(struct file *file, const char *buf, size_t count)`, …
struct Fixture {
    btf: Btf,
    int: u32,
    char_: u32,
    ulong: u32,
    size_t: u32,
    file: u32,
    task: u32,
    vfs_read: u32,
    cb: u32,
}

fn fixture() -> Fixture {
    let mut b = BtfBuilder::new();
    let int = b.add_int("int", 4, true);
    let char_ = b.add_int_info(
        "char",
        IntInfo {
            size: 1,
            bits: 8,
            offset: 0,
            signed: true,
            char: true,
            bool: false,
        },
    );
    let ulong = b.add_int("unsigned long", 8, false);
    let size_t = b.add_typedef("size_t", ulong);
    let file_fwd = b.add_fwd("file", false);
    let _ = file_fwd;
    let comm = b.add_array(char_, int, 16);
    let u = b.add_union(
        "",
        8,
        &[
            MemberDef::new("as_long", ulong, 0),
            MemberDef::new("as_int", int, 0),
        ],
    );
    let task = b.add_struct(
        "task_struct",
        40,
        &[
            MemberDef::new("pid", int, 0),
            MemberDef::bitfield("flag_a", int, 32, 1),
            MemberDef::bitfield("flag_b", int, 33, 3),
            MemberDef::new("", u, 8),
            MemberDef::new("comm", comm, 16),
        ],
    );
    let file = b.add_struct("file", 8, &[MemberDef::new("f_mode", ulong, 0)]);
    let file_ptr = b.add_ptr(file);
    let cchar = b.add_const(char_);
    let cchar_ptr = b.add_ptr(cchar);
    let long = b.add_int("long", 8, true);
    let proto = b.add_func_proto(
        long,
        &[("file", file_ptr), ("buf", cchar_ptr), ("count", size_t)],
    );
    let vfs_read = b.add_func("vfs_read", proto, Linkage::Global);
    b.add_func("vfs_write", proto, Linkage::Global);
    b.add_func("vfs_readv", proto, Linkage::Static);
    let void_proto = b.add_func_proto(int, &[]);
    let cb_ptr = b.add_ptr(void_proto);
    let cb = b.add_typedef("cb_t", cb_ptr);
    Fixture {
        btf: Btf::parse(b.finish().unwrap()).unwrap(),
        int,
        char_,
        ulong,
        size_t,
        file,
        task,
        vfs_read,
        cb,
    }
}

#[test]
fn function_lookup_and_prototype_by_exact_name() {
    let f = fixture();
    assert_eq!(f.btf.find_func("vfs_read"), Some(f.vfs_read));
    assert_eq!(f.btf.find_func("vfs_rea"), None);
    let p = f.btf.func_proto(f.vfs_read).unwrap();
    assert_eq!(p.len(), 3);
    let names: Vec<&str> = p.params().map(|p| p.name).collect();
    assert_eq!(names, ["file", "buf", "count"]);
    assert_eq!(f.btf.pointee(p.param(0).unwrap().type_id).unwrap(), f.file);
    assert_eq!(p.param(2).unwrap().type_id, f.size_t);
    assert_eq!(f.btf.resolve(f.size_t).unwrap().id, f.ulong);
    assert_eq!(
        f.btf.decl_to_string(f.vfs_read, ""),
        "long vfs_read(struct file *file, const char *buf, size_t count)"
    );
}

#[test]
fn globs_select_functions_through_the_sorted_index() {
    let f = fixture();
    let names = |p: &str| -> Vec<String> {
        let g = Glob::new(p).unwrap();
        f.btf
            .funcs_matching(&g)
            .map(|(n, _)| n.to_string())
            .collect()
    };
    assert_eq!(names("vfs_*"), ["vfs_read", "vfs_readv", "vfs_write"]);
    assert_eq!(names("*_read"), ["vfs_read"]);
    assert_eq!(names("vfs_{read,write}"), ["vfs_read", "vfs_write"]);
    assert!(names("tcp_*").is_empty());
}

#[test]
fn struct_members_bitfields_and_anonymous_unions_resolve_with_offsets() {
    let f = fixture();
    let m = f.btf.members(f.task).unwrap();
    assert_eq!(m.size, 40);
    assert_eq!(m.len(), 5);
    let flag_b = f.btf.find_member(f.task, "flag_b").unwrap().unwrap();
    assert_eq!((flag_b.bit_offset, flag_b.bitfield_size), (33, 3));
    let as_int = f.btf.find_member(f.task, "as_int").unwrap().unwrap();
    assert_eq!((as_int.byte_offset(), as_int.type_id), (8, f.int));
    let comm = f.btf.find_member(f.task, "comm").unwrap().unwrap();
    assert_eq!(comm.byte_offset(), 16);
    assert_eq!(f.btf.array_info(comm.type_id).unwrap().len, 16);
    assert_eq!(f.btf.size_of(comm.type_id).unwrap(), 16);
    assert!(f.btf.find_member(f.task, "nope").unwrap().is_none());
    assert_eq!(
        f.btf.member_names(f.task).unwrap(),
        ["pid", "flag_a", "flag_b", "as_long", "as_int", "comm"]
    );
    assert!(matches!(
        f.btf.members(f.int),
        Err(BtfError::UnexpectedKind {
            expected: "struct or union",
            ..
        })
    ));
}

#[test]
fn member_access_dereferences_pointers_and_classifies_types() {
    let f = fixture();
    let b = &f.btf;
    let p = b.func_proto(f.vfs_read).unwrap();
    let file_ptr = p.param(0).unwrap().type_id;
    let a = b.access_member(file_ptr, "f_mode").unwrap();
    assert!(a.through_pointer);
    assert_eq!((a.record, a.member.byte_offset()), (f.file, 0));
    assert!(!b.access_member(f.task, "comm").unwrap().through_pointer);
    let e = b.access_member(f.task, "nope").unwrap_err();
    assert_eq!(
        e.to_string(),
        "struct task_struct has no member named `nope`"
    );
    assert!(matches!(
        b.access_member(f.int, "x"),
        Err(BtfError::UnexpectedKind { .. })
    ));
    assert_eq!(
        b.classify(f.size_t).unwrap(),
        TypeClass::Int {
            size: 8,
            signed: false,
            bool: false,
            char: false
        }
    );
    assert_eq!(
        b.classify(file_ptr).unwrap(),
        TypeClass::Pointer { target: f.file }
    );
    assert_eq!(
        b.classify(f.task).unwrap(),
        TypeClass::Record {
            id: f.task,
            size: 40,
            union: false
        }
    );
    assert_eq!(b.classify(0).unwrap(), TypeClass::Void);
    let buf = p.param(1).unwrap().type_id;
    assert!(b.is_char_array_or_pointer(buf).unwrap());
    let comm = b.find_member(f.task, "comm").unwrap().unwrap();
    assert!(b.is_char_array_or_pointer(comm.type_id).unwrap());
    assert!(!b.is_char_array_or_pointer(file_ptr).unwrap());
    assert_eq!(
        b.classify(b.find_types_named("file")[1]).unwrap(),
        TypeClass::Opaque { union: false }
    );
}

#[test]
fn find_struct_skips_forward_declarations() {
    let f = fixture();
    assert_eq!(f.btf.find_struct("file"), Some(f.file));
    assert_eq!(f.btf.find_struct("task_struct"), Some(f.task));
    assert_eq!(f.btf.find_typedef("size_t"), Some(f.size_t));
    assert_eq!(f.btf.find_types_named("file").len(), 2);
}

#[test]
fn printer_writes_c_declarators() {
    let f = fixture();
    let b = &f.btf;
    assert_eq!(b.type_to_string(0), "void");
    assert_eq!(b.type_to_string(f.cb), "cb_t");
    assert_eq!(
        b.type_to_string(b.resolve(f.cb).unwrap().id),
        "int (*)(void)"
    );
    let comm = b.find_member(f.task, "comm").unwrap().unwrap();
    assert_eq!(b.type_to_string(comm.type_id), "char[16]");
    assert_eq!(b.decl_to_string(comm.type_id, "comm"), "char comm[16]");
    assert_eq!(b.type_to_string(999), "<bad type 999>");
    assert_eq!(b.type_to_string(f.char_), "char");
}

#[test]
fn every_kind_round_trips_through_the_encoder() {
    let mut b = BtfBuilder::new();
    let int = b.add_int("int", 4, true);
    let vol = b.add_volatile(int);
    let res = b.add_restrict(vol);
    let tag = b.add_type_tag("user", res);
    let ptr = b.add_ptr(tag);
    let e = b.add_enum("color", 4, true, &[("RED", -1), ("BLUE", 7)]);
    let e64 = b.add_enum64("big", 8, false, &[("HUGE", u64::MAX)]);
    let fl = b.add_float("double", 8);
    let var = b.add_var("counter", int, 1);
    let sec = b.add_datasec(".data", 4, &[(var, 0, 4)]);
    let dt = b.add_decl_tag("noinline", var, -1);
    let fwd_u = b.add_fwd("maybe", true);
    let variadic = b.add_func_proto(int, &[("fmt", ptr), ("", 0)]);
    let btf = Btf::parse(b.finish().unwrap()).unwrap();

    assert!(matches!(btf.type_by_id(vol).unwrap().kind, TypeKind::Volatile(t) if t == int));
    assert!(matches!(btf.type_by_id(res).unwrap().kind, TypeKind::Restrict(t) if t == vol));
    let t = btf.type_by_id(tag).unwrap();
    assert!(matches!(t.kind, TypeKind::TypeTag(x) if x == res) && t.name == "user");
    assert_eq!(btf.resolve(ptr).unwrap().id, ptr);
    assert_eq!(btf.resolve(tag).unwrap().id, int);
    assert_eq!(btf.skip_qualifiers(tag).unwrap().id, int);
    let en = btf.enumerators(e).unwrap();
    assert!(en.signed);
    assert_eq!(en.value_of("RED"), Some(-1));
    assert_eq!(en.value_of("BLUE"), Some(7));
    assert_eq!(
        btf.enumerators(e64).unwrap().value_of("HUGE"),
        Some(u64::MAX as i128)
    );
    assert_eq!(btf.find_enum("big"), Some(e64));
    assert_eq!(btf.size_of(fl).unwrap(), 8);
    assert_eq!(btf.size_of(var).unwrap(), 4);
    assert!(
        matches!(btf.type_by_id(var).unwrap().kind, TypeKind::Var { type_id, linkage: 1 } if type_id == int)
    );
    match btf.type_by_id(sec).unwrap().kind {
        TypeKind::Datasec(d) => {
            let v: Vec<_> = d.entries().collect();
            assert_eq!(
                v,
                [DatasecEntry {
                    type_id: var,
                    offset: 0,
                    size: 4
                }]
            );
        }
        k => panic!("{k:?}"),
    }
    assert!(
        matches!(btf.type_by_id(dt).unwrap().kind, TypeKind::DeclTag { target, component: -1 } if target == var)
    );
    assert!(matches!(
        btf.type_by_id(fwd_u).unwrap().kind,
        TypeKind::Fwd { union: true }
    ));
    assert_eq!(btf.type_to_string(fwd_u), "union maybe");
    let p = btf.func_proto(variadic).unwrap();
    assert!(p.is_variadic());
    assert_eq!(p.len(), 1);
    assert_eq!(
        btf.type_to_string(variadic),
        "int (restrict volatile int *, ...)"
    );
    assert_eq!(btf.type_to_string(e), "enum color");
    assert_eq!(btf.types().count(), btf.own_type_count());
    assert!(matches!(
        btf.size_of(variadic),
        Err(BtfError::NoSize { .. })
    ));
}

#[test]
fn user_type_tags_mark_user_pointers() {
    let mut b = BtfBuilder::new();
    let ch = b.add_int("char", 1, true);
    let user = b.add_type_tag("user", ch);
    let uptr = b.add_ptr(user);
    let kptr = b.add_ptr(ch);
    let td = b.add_typedef("ubuf_t", uptr);
    let btf = Btf::parse(b.finish().unwrap()).unwrap();
    assert!(btf.is_user_pointer(uptr).unwrap());
    assert!(btf.is_user_pointer(td).unwrap());
    assert!(!btf.is_user_pointer(kptr).unwrap());
    assert_eq!(btf.type_tags(user).unwrap(), ["user"]);
    assert_eq!(btf.type_to_string(uptr), "char *");
    assert!(btf.is_user_pointer(ch).is_err());
}

#[test]
fn legacy_int_bitfields_without_kind_flag_are_normalised() {
    let mut b = BtfBuilder::new();
    let bits3 = b.add_int_info(
        "int",
        IntInfo {
            size: 4,
            bits: 3,
            offset: 2,
            signed: false,
            char: false,
            bool: false,
        },
    );
    let s = b.add_struct("s", 4, &[MemberDef::new("x", bits3, 0)]);
    let btf = Btf::parse(b.finish().unwrap()).unwrap();
    let m = btf.members(s).unwrap().get(0).unwrap();
    assert_eq!((m.bit_offset, m.bitfield_size), (2, 3));
}

#[test]
fn split_btf_continues_base_ids_and_strings() {
    let f = fixture();
    let base = Arc::new(f.btf);
    let mut b = BtfBuilder::new_split(&base);
    let file_ptr = b.add_ptr(f.file);
    let proto = b.add_func_proto(f.int, &[("filp", file_ptr), ("n", f.size_t)]);
    let func = b.add_func("ext4_file_read_iter", proto, Linkage::Global);
    let st = b.add_struct(
        "ext4_inode_info",
        8,
        &[MemberDef::new("i_flags", f.ulong, 0)],
    );
    let split = Btf::parse_split(b.finish().unwrap(), &base).unwrap();
    assert!(split.is_split());
    assert_eq!(split.first_id(), base.last_id() + 1);
    assert_eq!(split.own_type_count(), 4);
    assert_eq!(split.find_func("ext4_file_read_iter"), Some(func));
    // Exact lookups fall through to the base; enumerations are own-only.
    assert_eq!(split.find_func("vfs_read"), Some(f.vfs_read));
    assert_eq!(split.find_struct("task_struct"), Some(f.task));
    assert_eq!(split.find_struct("ext4_inode_info"), Some(st));
    assert_eq!(split.func_count(), 1);
    assert_eq!(
        split.decl_to_string(func, ""),
        "int ext4_file_read_iter(struct file *filp, size_t n)"
    );
    assert_eq!(split.type_by_id(f.task).unwrap().name, "task_struct");
    // A split blob parsed without its base is rejected, not misread.
    assert!(Btf::parse(b.finish().unwrap()).is_err());
}

#[test]
fn malformed_headers_are_typed_errors() {
    let good = BtfBuilder::new().finish().unwrap();
    assert!(Btf::parse(good.clone()).is_ok());
    assert!(matches!(
        Btf::parse(vec![0u8; 3]),
        Err(BtfError::TooShort { .. })
    ));
    let mut bad = good.clone();
    bad[0] = 0;
    assert!(matches!(Btf::parse(bad), Err(BtfError::BadMagic { .. })));
    let mut be = good.clone();
    be.swap(0, 1);
    assert!(matches!(Btf::parse(be), Err(BtfError::BigEndian)));
    let mut v = good.clone();
    v[2] = 2;
    assert!(matches!(
        Btf::parse(v),
        Err(BtfError::UnsupportedVersion { version: 2 })
    ));
    let mut s = good.clone();
    s[20] = 200; // str_len past the end
    assert!(matches!(
        Btf::parse(s),
        Err(BtfError::SectionOutOfBounds {
            section: "string",
            ..
        })
    ));
}

#[test]
fn malformed_records_are_typed_errors() {
    // Unknown kind 31.
    let mut b = BtfBuilder::new();
    b.add_raw("x", 31 << 24, 0, &[]);
    assert!(matches!(
        Btf::parse(b.finish().unwrap()),
        Err(BtfError::UnknownKind { kind: 31, .. })
    ));
    // A struct claiming 5 members with none present.
    let mut b = BtfBuilder::new();
    b.add_raw("s", (4 << 24) | 5, 8, &[]);
    assert!(matches!(
        Btf::parse(b.finish().unwrap()),
        Err(BtfError::TruncatedType { id: 1, .. })
    ));
    // A name offset past the string section.
    let mut b = BtfBuilder::new();
    let name_off_past_end = 1000u32;
    let mut tail = Vec::new();
    tail.extend_from_slice(&name_off_past_end.to_le_bytes());
    tail.extend_from_slice(&1u32.to_le_bytes());
    tail.extend_from_slice(&0u32.to_le_bytes());
    b.add_raw("s", (4 << 24) | 1, 8, &tail);
    assert!(matches!(
        Btf::parse(b.finish().unwrap()),
        Err(BtfError::BadStringOffset { offset: 1000, .. })
    ));
    // References to missing ids, and cycles, fail at query time.
    let mut b = BtfBuilder::new();
    let t1 = b.next_id();
    b.add_typedef("a", t1 + 1);
    b.add_typedef("b", t1);
    let p = b.add_ptr(77);
    let arr = b.add_array(p, p, u32::MAX);
    let arr2 = b.add_array(arr, p, u32::MAX);
    let btf = Btf::parse(b.finish().unwrap()).unwrap();
    assert!(matches!(btf.resolve(t1), Err(BtfError::TooDeep { .. })));
    assert!(matches!(
        btf.pointee(p).map(|t| btf.type_by_id(t)),
        Ok(Err(BtfError::BadTypeId { id: 77, .. }))
    ));
    assert!(matches!(
        btf.size_of(arr2),
        Err(BtfError::SizeOverflow { .. })
    ));
    assert_eq!(btf.type_to_string(t1), "a");
    assert_eq!(btf.type_to_string(p), "<bad type 77> *");
}

#[test]
fn self_referencing_types_are_bounded_not_exponential() {
    let mut b = BtfBuilder::new();
    // A prototype whose two parameters point back to it, and a struct that contains itself
    // through two anonymous members: both blow up exponentially without a visit budget.
    let proto = b.next_id();
    let ptr = proto + 1;
    b.add_func_proto(ptr, &[("a", ptr), ("b", ptr)]);
    b.add_ptr(proto);
    let s = b.next_id();
    b.add_struct(
        "s",
        8,
        &[MemberDef::new("", s, 0), MemberDef::new("", s, 0)],
    );
    let btf = Btf::parse(b.finish().unwrap()).unwrap();
    let t = std::time::Instant::now();
    assert!(btf.type_to_string(proto).contains("<...>"));
    assert!(matches!(
        btf.find_member(s, "x"),
        Err(BtfError::TooDeep { .. })
    ));
    assert!(btf.member_names(s).is_err());
    assert!(t.elapsed() < std::time::Duration::from_secs(5));
}

#[test]
fn encoder_reports_limits_instead_of_truncating() {
    let mut b = BtfBuilder::new();
    let int = b.add_int("int", 4, true);
    b.add_struct("s", 4, &[MemberDef::bitfield("x", int, 1 << 24, 1)]);
    assert!(matches!(
        b.finish(),
        Err(EncodeError::BitOffsetTooLarge { .. })
    ));
}

fn sample_blob() -> Vec<u8> {
    let f = fixture();
    let _ = (f.task, f.cb);
    // Re-encode the fixture so mutations start from a known-valid blob.
    let mut b = BtfBuilder::new();
    let int = b.add_int("int", 4, true);
    let s = b.add_struct(
        "s",
        8,
        &[
            MemberDef::new("a", int, 0),
            MemberDef::bitfield("b", int, 32, 4),
        ],
    );
    let p = b.add_ptr(s);
    let proto = b.add_func_proto(int, &[("x", p), ("", 0)]);
    b.add_func("f", proto, Linkage::Global);
    b.add_enum("e", 4, false, &[("A", 1)]);
    b.add_typedef("t", p);
    b.add_array(int, int, 4);
    b.finish().unwrap()
}

/// Exercises every query on every type of `btf`; used to prove nothing panics.
fn exercise(btf: &Btf) {
    for id in 0..=btf.last_id() + 2 {
        let _ = btf.type_to_string(id);
        let _ = btf.size_of(id);
        let _ = btf.resolve(id);
        let _ = btf.find_member(id, "a");
        let _ = btf.member_names(id);
        if let Ok(p) = btf.func_proto(id) {
            let _ = p.params().count();
        }
        if let Ok(e) = btf.enumerators(id) {
            let _ = e.iter().count();
        }
    }
    let g = Glob::new("*").unwrap();
    let _ = btf.funcs_matching(&g).count();
    let _ = btf.find_struct("s");
}

proptest::proptest! {
    #[test]
    fn random_bytes_never_panic(bytes in proptest::collection::vec(proptest::num::u8::ANY, 0..256)) {
        if let Ok(btf) = Btf::parse(bytes) {
            exercise(&btf);
        }
    }

    #[test]
    fn mutated_valid_blobs_never_panic(
        edits in proptest::collection::vec((0usize..4096, proptest::num::u8::ANY), 1..8),
        cut in 0usize..4096,
    ) {
        let mut blob = sample_blob();
        for (at, v) in edits {
            let n = blob.len();
            blob[at % n] = v;
        }
        let keep = blob.len() - cut % 8;
        blob.truncate(keep);
        if let Ok(btf) = Btf::parse(blob.clone()) {
            exercise(&btf);
            let base = Arc::new(btf);
            if let Ok(split) = Btf::parse_split(blob, &base) {
                exercise(&split);
            }
        }
    }
}

#[test]
fn btf_is_shareable_across_threads() {
    fn assert_send_sync<T: Send + Sync>() {}
    assert_send_sync::<Btf>();
    assert_send_sync::<KernelBtf>();
}

#[test]
fn wildcard_scan_before_the_name_index_equals_the_indexed_lookup() {
    let Ok(scanned) = Btf::from_vmlinux() else {
        crate::diag::skip::skip(
            "wildcard_scan_before_the_name_index_equals_the_indexed_lookup",
            "no /sys/kernel/btf/vmlinux",
        );
        return;
    };
    let indexed = Btf::from_vmlinux().unwrap();
    assert!(indexed.find_func("vfs_read").is_some());
    for pat in [
        "vfs_*",
        "*_read*",
        "tcp_v4_*",
        "vfs_read",
        "strobe_no_such_*",
        "*",
    ] {
        let g = Glob::new(pat).unwrap();
        let a: Vec<_> = scanned.funcs_matching(&g).collect();
        let b: Vec<_> = indexed.funcs_matching(&g).collect();
        assert_eq!(a, b, "{pat}");
        assert!(pat.starts_with("strobe_") || !a.is_empty(), "{pat}");
    }
}

#[test]
fn kernel_btf_parsed_without_member_checks_reads_the_same_as_checked() {
    let Ok(trusted) = Btf::from_vmlinux() else {
        crate::diag::skip::skip(
            "kernel_btf_parsed_without_member_checks_reads_the_same_as_checked",
            "no /sys/kernel/btf/vmlinux",
        );
        return;
    };
    let checked = Btf::parse(std::fs::read(crate::btf::VMLINUX_PATH).unwrap()).unwrap();
    assert_eq!(trusted.own_type_count(), checked.own_type_count());
    let id = checked.find_struct("task_struct").unwrap();
    assert_eq!(trusted.find_struct("task_struct"), Some(id));
    assert_eq!(
        trusted.member_names(id).unwrap(),
        checked.member_names(id).unwrap()
    );
}
