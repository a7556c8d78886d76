//! Expected strings below were printed by bpftrace 0.17 (`bpftrace -e 'BEGIN { printf(...) }'`)
//! on the project host, except where a comment says current bpftrace decides.

use super::*;

fn fmt(f: &str, args: &[Value]) -> String {
    let fs = FormatString::parse(f).expect("format parses");
    String::from_utf8_lossy(&fs.render(args, TextStyle::default())).into_owned()
}

fn each(f: &str) -> [String; 3] {
    [
        fmt(f, &[Value::Int(-5)]),
        fmt(f, &[Value::Int(255)]),
        fmt(f, &[Value::Int(1 << 40)]),
    ]
}

#[test]
fn plain_d_narrows_to_32_bit_int() {
    assert_eq!(each("[%d]"), ["[-5]", "[255]", "[0]"]);
    // %i: not recognised by 0.17, same as %d in current bpftrace.
    assert_eq!(each("[%i]"), ["[-5]", "[255]", "[0]"]);
}

#[test]
fn unsigned_hex_and_octal_narrow_to_32_bit_unsigned() {
    assert_eq!(each("[%u]"), ["[4294967291]", "[255]", "[0]"]);
    assert_eq!(each("[%x]"), ["[fffffffb]", "[ff]", "[0]"]);
    assert_eq!(each("[%X]"), ["[FFFFFFFB]", "[FF]", "[0]"]);
    assert_eq!(each("[%o]"), ["[37777777773]", "[377]", "[0]"]);
}

#[test]
fn long_modifiers_keep_64_bits() {
    assert_eq!(each("[%ld]"), ["[-5]", "[255]", "[1099511627776]"]);
    assert_eq!(each("[%lld]"), ["[-5]", "[255]", "[1099511627776]"]);
    assert_eq!(each("[%zd]"), ["[-5]", "[255]", "[1099511627776]"]);
    assert_eq!(each("[%jd]"), ["[-5]", "[255]", "[1099511627776]"]);
    assert_eq!(
        each("[%lu]"),
        ["[18446744073709551611]", "[255]", "[1099511627776]"]
    );
    assert_eq!(
        each("[%llu]"),
        ["[18446744073709551611]", "[255]", "[1099511627776]"]
    );
    assert_eq!(
        each("[%lx]"),
        ["[fffffffffffffffb]", "[ff]", "[10000000000]"]
    );
    assert_eq!(
        each("[%llx]"),
        ["[fffffffffffffffb]", "[ff]", "[10000000000]"]
    );
}

#[test]
fn short_modifiers_narrow() {
    assert_eq!(each("[%hhd]"), ["[-5]", "[-1]", "[0]"]);
    assert_eq!(each("[%hd]"), ["[-5]", "[255]", "[0]"]);
    assert_eq!(each("[%hhu]"), ["[251]", "[255]", "[0]"]);
    assert_eq!(each("[%hu]"), ["[65531]", "[255]", "[0]"]);
}

#[test]
fn width_zero_fill_and_precision_follow_c() {
    assert_eq!(each("[%5d]"), ["[   -5]", "[  255]", "[    0]"]);
    assert_eq!(each("[%05d]"), ["[-0005]", "[00255]", "[00000]"]);
    assert_eq!(each("[%-5d]"), ["[-5   ]", "[255  ]", "[0    ]"]);
    assert_eq!(each("[%5x]"), ["[fffffffb]", "[   ff]", "[    0]"]);
    assert_eq!(
        each("[%-8x|]"),
        ["[fffffffb|]", "[ff      |]", "[0       |]"]
    );
    assert_eq!(each("[%08x]"), ["[fffffffb]", "[000000ff]", "[00000000]"]);
    assert_eq!(each("[%08.3d]"), ["[    -005]", "[     255]", "[     000]"]);
    assert_eq!(each("[%.5d]"), ["[-00005]", "[00255]", "[00000]"]);
}

#[test]
fn pointer_prints_full_64_bit_hex() {
    assert_eq!(
        each("[%p]"),
        ["[0xfffffffffffffffb]", "[0xff]", "[0x10000000000]"]
    );
    assert_eq!(fmt("%p", &[Value::UInt(0)]), "(nil)");
}

#[test]
fn c_style_flags_current_bpftrace_accepts() {
    assert_eq!(
        fmt(
            "%+d|% d|%#x|%#o|%#X",
            &[
                Value::Int(7),
                Value::Int(7),
                Value::Int(255),
                Value::Int(8),
                Value::Int(0)
            ]
        ),
        "+7| 7|0xff|010|0"
    );
    assert_eq!(fmt("%04x", &[Value::Int(2)]), "0002");
    assert_eq!(fmt("%.0d|", &[Value::Int(0)]), "|");
}

#[test]
fn strings_pad_and_truncate_by_precision() {
    let s = fmt(
        "%%|%.3s|%-10s|%10s|%-5.2s|",
        &[
            Value::str("abcdef"),
            Value::str("ab"),
            Value::str("ab"),
            Value::str("xyz"),
        ],
    );
    assert_eq!(s, "%|abc|ab        |        ab|xy   |");
    assert_eq!(
        fmt("%5s %04x", &[Value::str("ba"), Value::Int(2)]),
        "   ba 0002"
    );
}

#[test]
fn s_prints_any_value_text() {
    assert_eq!(fmt("%s", &[Value::Int(-3)]), "-3");
    assert_eq!(
        fmt("%s", &[Value::Tuple(vec![Value::Int(1), Value::str("a")])]),
        "(1, a)"
    );
}

#[test]
fn char_prints_low_byte() {
    assert_eq!(fmt("%c%c", &[Value::Int(104), Value::Int(105)]), "hi");
    let fs = FormatString::parse("%c").unwrap();
    assert_eq!(
        fs.render(&[Value::Int(-5)], TextStyle::default()),
        vec![0xfb]
    );
}

#[test]
fn buffer_conversions_escape() {
    let b = Value::Buf(b"ab\n\x01\xff\"\\".to_vec());
    assert_eq!(fmt("%r|", &[b]), "ab\\x0a\\x01\\xff\"\\|");
    assert_eq!(
        fmt("%rx|", &[Value::Buf(b"ab\x01".to_vec())]),
        "\\x61\\x62\\x01|"
    );
    assert_eq!(fmt("%rh|", &[Value::Buf(b"ab\x01".to_vec())]), "61 62 01|");
}

#[test]
fn percent_sequences_that_are_not_conversions_stay_literal() {
    assert_eq!(fmt("100%", &[]), "100%");
    assert_eq!(fmt("%y %", &[]), "%y %");
    assert_eq!(fmt("a%%b", &[]), "a%b");
}

#[test]
fn arg_kinds_tell_codegen_what_each_conversion_takes() {
    let fs = FormatString::parse("%d %s %r %lu %% %c").unwrap();
    assert_eq!(
        fs.arg_kinds(),
        vec![
            ArgKind::Integer,
            ArgKind::Any,
            ArgKind::Buffer,
            ArgKind::Integer,
            ArgKind::Integer
        ]
    );
    let spec = fs.specs().nth(3).unwrap();
    assert_eq!(spec.length, Length::Long);
    assert_eq!(spec.conv, Conv::Unsigned);
}

#[test]
fn unsupported_conversions_are_typed_errors() {
    assert!(matches!(
        FormatString::parse("x %f"),
        Err(PrintfError::Unsupported { offset: 2, .. })
    ));
    assert!(matches!(
        FormatString::parse("%*d"),
        Err(PrintfError::StarWidth { offset: 0 })
    ));
    assert!(matches!(
        FormatString::parse("%hld"),
        Err(PrintfError::BadLength { .. })
    ));
    assert!(matches!(
        FormatString::parse("%99999999999999999999d"),
        Err(PrintfError::TooWide { .. })
    ));
}

#[test]
fn missing_and_mistyped_arguments_never_panic() {
    assert_eq!(fmt("a%db%sc", &[]), "abc");
    assert_eq!(fmt("%d", &[Value::str("x")]), "x");
    assert_eq!(fmt("%ld", &[Value::Int(i64::MIN)]), "-9223372036854775808");
    assert_eq!(fmt("%lu", &[Value::UInt(u64::MAX)]), "18446744073709551615");
}

#[test]
fn gr_prints_gfp_flag_names_and_plain_g_stays_refused() {
    // Current bpftrace: `%gr` names GFP flags; `%g` alone is not a conversion it accepts.
    assert_eq!(fmt("[%gr]", &[Value::Int(1)]), "[GFP_DMA]");
    assert_eq!(fmt("[%gr]", &[Value::Int(0xcc0)]), "[GFP_KERNEL]");
    assert_eq!(fmt("[%-12gr]", &[Value::Int(0)]), "[0           ]");
    assert!(matches!(
        FormatString::parse("x %g"),
        Err(PrintfError::Unsupported { offset: 2, .. })
    ));
}
