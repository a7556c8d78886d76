use super::*;
use crate::plan::layout::StackMode;
use crate::runtime::format::value::TextStyle;
use std::sync::Arc;

fn text(v: &Value) -> String {
    String::from_utf8_lossy(&v.to_text(TextStyle::default())).into_owned()
}

#[test]
fn integers_sign_extend_by_width() {
    let b = [0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff];
    let r = &NoResolver;
    for (bytes, want) in [(1u8, -1i64), (2, -1), (4, -1), (8, -1)] {
        let v = decode(
            &FieldType::Int {
                bytes,
                signed: true,
            },
            &b,
            r,
        )
        .unwrap();
        assert_eq!(v, Value::Int(want));
    }
    let v = decode(
        &FieldType::Int {
            bytes: 2,
            signed: false,
        },
        &b,
        r,
    )
    .unwrap();
    assert_eq!(v, Value::UInt(0xffff));
    let v = decode(
        &FieldType::Int {
            bytes: 8,
            signed: false,
        },
        &b,
        r,
    )
    .unwrap();
    assert_eq!(v, Value::UInt(u64::MAX));
}

#[test]
fn tuples_follow_c_layout() {
    let fs = vec![
        FieldType::Int {
            bytes: 1,
            signed: false,
        },
        FieldType::Int {
            bytes: 8,
            signed: true,
        },
        FieldType::Str { size: 3 },
        FieldType::Int {
            bytes: 4,
            signed: false,
        },
    ];
    assert_eq!(tuple_offsets(&fs), vec![0, 8, 16, 20]);
    assert_eq!(FieldType::Tuple(fs.clone()).size(), 24);
    let mut b = vec![0u8; 24];
    b[0] = 7;
    b[8..16].copy_from_slice(&(-2i64).to_le_bytes());
    b[16..19].copy_from_slice(b"ab\0");
    b[20..24].copy_from_slice(&9u32.to_le_bytes());
    let v = decode(&FieldType::Tuple(fs), &b, &NoResolver).unwrap();
    assert_eq!(text(&v), "(7, -2, ab, 9)");
}

#[test]
fn short_records_are_errors_not_panics() {
    let e = decode(
        &FieldType::Int {
            bytes: 8,
            signed: true,
        },
        &[1, 2],
        &NoResolver,
    );
    assert!(matches!(
        e,
        Err(DecodeError::Short {
            need: 8,
            have: 2,
            ..
        })
    ));
    let e = decode(
        &FieldType::KStack {
            limit: 4,
            mode: StackMode::Bpftrace,
        },
        &[],
        &NoResolver,
    );
    assert!(e.is_err());
    let buf = FieldType::Buf { capacity: 4 };
    let mut b = vec![0u8; 8];
    b[0..4].copy_from_slice(&u32::MAX.to_le_bytes());
    b[4..8].copy_from_slice(b"ab\x01c");
    assert_eq!(text(&decode(&buf, &b, &NoResolver).unwrap()), "ab\\x01c");
}

struct Syms;
impl Resolver for Syms {
    fn ksym(&self, addr: u64) -> Option<Sym> {
        (addr >= 0x1000).then(|| Sym {
            name: "vfs_read".into(),
            offset: addr - 0x1000,
            module: None,
            ..Default::default()
        })
    }
    fn username(&self, uid: u64) -> Option<String> {
        (uid == 0).then(|| "root".into())
    }
    fn stack(&self, user: bool, limit: usize, id: i64) -> Option<Vec<u64>> {
        assert!(!user && limit == 4);
        // The kernel zero-fills the frames past the stack's depth.
        (id == 7).then(|| vec![0x1004, 0x20, 0x1010, 0, 0x1000])
    }
}

#[test]
fn symbols_stacks_and_names_go_through_the_resolver() {
    let r = &Syms;
    let v = decode(&FieldType::KSym, &0x1004u64.to_le_bytes(), r).unwrap();
    assert_eq!(text(&v), "vfs_read");
    let v = decode(&FieldType::KSym, &0x10u64.to_le_bytes(), r).unwrap();
    assert_eq!(text(&v), "0x10");
    let ks = FieldType::KStack {
        limit: 4,
        mode: StackMode::Bpftrace,
    };
    let v = decode(&ks, &7i64.to_le_bytes(), r).unwrap();
    assert_eq!(
        text(&v),
        "\n        vfs_read+4\n        0x20\n        vfs_read+16\n"
    );
    // A stack the kernel could not record (negative id) or an unknown id: no frames.
    let v = decode(&ks, &(-17i64).to_le_bytes(), r).unwrap();
    assert_eq!(text(&v), "\n");
    let v = decode(&ks, &8i64.to_le_bytes(), r).unwrap();
    assert_eq!(text(&v), "\n");
    let v = decode(&FieldType::Username, &0u64.to_le_bytes(), r).unwrap();
    assert_eq!(text(&v), "root");
    let v = decode(&FieldType::Username, &5u64.to_le_bytes(), r).unwrap();
    assert_eq!(text(&v), "5");
}

#[test]
fn inet_mac_and_timestamps() {
    let mut b = vec![0u8; 24];
    b[0..8].copy_from_slice(&2u64.to_le_bytes());
    b[8..12].copy_from_slice(&[10, 1, 2, 3]);
    assert_eq!(
        text(&decode(&FieldType::Inet, &b, &NoResolver).unwrap()),
        "10.1.2.3"
    );
    let m = decode(
        &FieldType::MacAddr,
        &[0, 0x1b, 0x21, 0x3c, 0x9d, 0xf8],
        &NoResolver,
    )
    .unwrap();
    assert_eq!(text(&m), "00:1B:21:3C:9D:F8");
    let ts = FieldType::Timestamp {
        format: "%Y-%m-%d %H:%M:%S.%f".into(),
    };
    let v = decode(
        &ts,
        &1_500_000_123_456_789_012u64.to_le_bytes(),
        &NoResolver,
    )
    .unwrap();
    assert_eq!(text(&v), "2017-07-14 02:42:03.456789");
}

fn member(name: &str, offset: usize, ty: FieldType) -> StructField {
    StructField {
        name: name.into(),
        offset,
        ty,
        bits: None,
    }
}

const I32: FieldType = FieldType::Int {
    bytes: 4,
    signed: true,
};

fn json(v: &Value) -> String {
    let mut out = Vec::new();
    crate::runtime::format::json::write_json_value(&mut out, v, TextStyle::default());
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn structs_print_members_at_their_offsets_as_bpftrace() {
    // struct { int a; struct { int c; } b; int arr[2]; char s[6]; void *p; }
    let inner = Arc::new(StructLayout {
        size: 4,
        align: 4,
        fields: vec![member("c", 0, I32)],
    });
    let outer = FieldType::Struct(Arc::new(StructLayout {
        size: 32,
        align: 8,
        fields: vec![
            member("a", 0, I32),
            member("b", 4, FieldType::Struct(inner)),
            member(
                "arr",
                8,
                FieldType::Array {
                    elem: Box::new(I32),
                    len: 2,
                },
            ),
            member("s", 16, FieldType::Str { size: 6 }),
            member("p", 24, FieldType::Pointer),
        ],
    }));
    let mut b = Vec::new();
    for n in [1i32, 2, 1, 2] {
        b.extend_from_slice(&n.to_le_bytes());
    }
    b.extend_from_slice(b"hello\0\0\0");
    b.extend_from_slice(&0x10u64.to_le_bytes());
    assert_eq!(outer.size(), 32);
    assert_eq!(outer.align(), 8);
    let v = decode(&outer, &b, &NoResolver).unwrap();
    assert_eq!(
        text(&v),
        "{ .a = 1, .b = { .c = 2 }, .arr = [1,2], .s = hello, .p = 0x10 }"
    );
    assert_eq!(
        json(&v),
        r#"{"a": 1, "b": {"c": 2}, "arr": [1,2], "s": "hello", "p": 16}"#
    );
    // Too few bytes is an error, not a panic.
    assert!(decode(&outer, &b[..20], &NoResolver).is_err());
}

#[test]
fn unions_print_every_member_and_floats_print_as_none() {
    // union N { int i; float f; } inside struct Foo { int m; union N n; }
    let n = Arc::new(StructLayout {
        size: 4,
        align: 4,
        fields: vec![
            member("i", 0, I32),
            member("f", 0, FieldType::Opaque { size: 4, align: 4 }),
        ],
    });
    let foo = FieldType::Struct(Arc::new(StructLayout {
        size: 8,
        align: 4,
        fields: vec![member("m", 0, I32), member("n", 4, FieldType::Struct(n))],
    }));
    let mut b = 2i32.to_le_bytes().to_vec();
    b.extend_from_slice(&5i32.to_le_bytes());
    let v = decode(&foo, &b, &NoResolver).unwrap();
    assert_eq!(json(&v), r#"{"m": 2, "n": {"i": 5, "f": null}}"#);
    assert_eq!(text(&v), "{ .m = 2, .n = { .i = 5, .f =  } }");
}

#[test]
fn bitfields_are_shifted_masked_and_sign_extended() {
    // struct { u64 x_0:1; u64 x_1:1; u64 x_2:2; s8 y:3 (at bit 4) } over 0x1e | 0x70
    let u64t = FieldType::Int {
        bytes: 8,
        signed: false,
    };
    let bit = |name: &str, shift: u8, width: u8, ty: FieldType| StructField {
        name: name.into(),
        offset: 0,
        ty,
        bits: Some((shift, width)),
    };
    let s = FieldType::Struct(Arc::new(StructLayout {
        size: 8,
        align: 8,
        fields: vec![
            bit("x_0", 0, 1, u64t.clone()),
            bit("x_1", 1, 1, u64t.clone()),
            bit("x_2", 2, 2, u64t),
            bit(
                "y",
                4,
                3,
                FieldType::Int {
                    bytes: 1,
                    signed: true,
                },
            ),
        ],
    }));
    let v = decode(&s, &0x7eu64.to_le_bytes(), &NoResolver).unwrap();
    assert_eq!(text(&v), "{ .x_0 = 0, .x_1 = 1, .x_2 = 3, .y = -1 }");
}

struct BuildIds;

impl Resolver for BuildIds {
    fn build_id_stack(&self, limit: usize, id: i64) -> Option<Vec<u8>> {
        assert_eq!((limit, id), (4, 9));
        let mut v = vec![0u8; 4 * crate::plan::BUILD_ID_FRAME_SIZE];
        // Frame 0: a valid build id and offset 0x1146; frame 1: only the ip; 2, 3: padding.
        v[0] = 1;
        for (i, b) in v[4..24].iter_mut().enumerate() {
            *b = i as u8 + 0xa0;
        }
        v[24..32].copy_from_slice(&0x1146u64.to_le_bytes());
        v[32] = 2;
        v[56..64].copy_from_slice(&0x7f00_1234u64.to_le_bytes());
        Some(v)
    }
}

#[test]
fn build_id_stacks_print_id_and_offset_or_the_ip() {
    let ty = FieldType::UStack {
        limit: 4,
        mode: StackMode::BuildId,
    };
    let mut rec = vec![0u8; 16];
    rec[8] = 9;
    let v = decode(&ty, &rec, &BuildIds).unwrap();
    assert_eq!(
        text(&v),
        "\na0a1a2a3a4a5a6a7a8a9aaabacadaeafb0b1b2b3 0x1146\n7f001234\n"
    );
}
