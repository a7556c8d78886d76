//! Parser unit tests: nesting limits, recovery, literals. The grammar tables live in
//! tests/parse_*.rs.

use super::*;
use crate::syntax::ast::{ExprKind, IntSuffix};

fn parse_str(text: &str) -> Parsed {
    parse_program(&SourceFile::new("t.bt", text), &Default::default())
}

fn nest(open: &str, inner: &str, close: &str, n: usize) -> String {
    format!("{}{}{}", open.repeat(n), inner, close.repeat(n))
}

/// Nesting just under the limit parses; far over it is one clear error, never a stack overflow
/// (the test thread has the default 2 MiB stack, in debug builds too).
#[test]
fn deep_nesting_is_limited_with_a_clear_error() {
    let depth = MAX_DEPTH as usize;
    // (open, inner, close, nesting levels per repetition)
    let shapes: Vec<(&str, &str, &str, usize)> = vec![
        ("(", "1", ")", 1),
        ("- ", "1", "", 1),
        ("!", "1", "", 1),
        ("f(", "1", ")", 1),
        ("{ ", "1 ", "}", 2),
        ("if (1) { ", "1 ", "}", 2),
        ("@m[", "1", "]", 1),
        ("$a[", "1", "]", 1),
        ("1 ? ", "1", " : 2", 1),
        ("(uint8)", "1", "", 1),
        ("sizeof(", "1", ")", 1),
        ("(1, ", "1", ")", 1),
        ("typeof(", "1", ")", 1),
        ("(typeof(", "1", "))$x", 2),
    ];
    for (open, inner, close, cost) in shapes {
        let ok = format!(
            "kprobe:f {{ $x = {}; }}",
            nest(open, inner, close, depth / cost - 8)
        );
        let p = parse_str(&ok);
        assert!(!p.has_errors(), "{open}: {:?}", p.diagnostics);
        for n in [depth + 5, 100_000] {
            let bad = format!("kprobe:f {{ $x = {}; }}", nest(open, inner, close, n));
            let p = parse_str(&bad);
            assert!(
                p.diagnostics
                    .iter()
                    .any(|d| d.message.starts_with("nesting too deep")),
                "{open} x{n}: {:?}",
                p.diagnostics.first()
            );
        }
    }
    let structs = nest("struct { ", "int a; ", "} x; ", 100_000);
    let p = parse_str(&format!("struct S {{ {structs} }}"));
    assert!(p.has_errors());
}

#[test]
fn independent_errors_are_all_reported() {
    let p = parse_str(
        "kprobe:f { $a = ; @b = 1 }\nkprobe:g { $c = (1 + ; }\nbogus:x { }\nkprobe:h { print(\"\\q\"); $d = 1zz; }\n",
    );
    let lines: Vec<(u32, &str)> = p
        .diagnostics
        .iter()
        .map(|d| (d.span.start, d.message.as_str()))
        .collect();
    assert_eq!(
        lines.iter().map(|l| l.1).collect::<Vec<_>>(),
        [
            "expected expression",
            "expected expression",
            "unknown probe type 'bogus'",
            "invalid escape character '\\q'",
            "invalid integer suffix 'zz'",
        ]
    );
}

#[test]
fn error_count_is_capped() {
    let text = "kprobe:f { $a = ; }\n".repeat(200);
    let p = parse_str(&text);
    let errors = p.diagnostics.iter().filter(|d| d.is_error()).count();
    assert_eq!(errors, MAX_ERRORS);
    let last = p.diagnostics.last().expect("a final note");
    assert_eq!(
        last.message,
        format!("too many errors ({MAX_ERRORS}); stopping here")
    );
    assert!(!last.is_error());
}

#[test]
fn integer_literals_follow_bpftrace() {
    use literal::parse_int_text;
    let v = |s: &str| parse_int_text(s).map(|l| (l.value, l.suffix));
    assert_eq!(v("0x1F"), Ok((31, IntSuffix::None)));
    assert_eq!(v("0755"), Ok((0o755, IntSuffix::None)));
    assert_eq!(v("1_000_000"), Ok((1_000_000, IntSuffix::None)));
    assert_eq!(v("2e3"), Ok((2000, IntSuffix::None)));
    assert_eq!(v("5ms"), Ok((5_000_000, IntSuffix::Duration)));
    assert_eq!(v("1d"), Ok((86_400_000_000_000, IntSuffix::Duration)));
    assert_eq!(v("123UL"), Ok((123, IntSuffix::C)));
    assert_eq!(v("0b101"), Ok((5, IntSuffix::None)));
    assert_eq!(v("18446744073709551615"), Ok((u64::MAX, IntSuffix::None)));
    assert!(v("18446744073709551616").is_err());
    assert!(v("4294967296u").is_err());
    assert!(v("1e").is_err());
    assert!(v("1K").is_err());
}

#[test]
fn string_escapes_decode_to_bytes() {
    let (e, d) = parse_expression(&SourceFile::new("t", r#""a\n\t\"\\\101\x41\0\xff""#));
    assert!(d.is_empty(), "{d:?}");
    match e.map(|e| e.kind) {
        Some(ExprKind::Str(b)) => assert_eq!(b, b"a\n\t\"\\AA\0\xff"),
        other => panic!("not a string: {other:?}"),
    }
}

#[test]
fn parse_expression_rejects_trailing_input() {
    let (_, d) = parse_expression(&SourceFile::new("t", "1 + 2 )"));
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].message, "unexpected input after expression");
}

/// Long left-associative chains deepen the tree without recursing in the parser; they are
/// bounded too, so printing, visiting and dropping the tree cannot overflow the stack.
#[test]
fn long_operator_chains_are_bounded_and_safe_to_walk() {
    use crate::syntax::visit::Visitor;
    struct Walk;
    impl Visitor for Walk {}

    let n = MAX_TREE_DEPTH as usize - 20;
    let ok_chains = [
        format!("1{}", "+1".repeat(n)),
        format!("$a{}", ".b".repeat(n)),
        format!("$a{}", "[1]".repeat(n)),
        format!("1{}", " || 1".repeat(n)),
        // Worst case: a deep left operand, then a long chain on top of it.
        format!(
            "{}1{}{}{}",
            "(".repeat(100),
            "+1".repeat(n - 110),
            ")".repeat(100),
            "*2".repeat(n - 110)
        ),
    ];
    for chain in &ok_chains {
        let src = SourceFile::new("t.bt", format!("BEGIN {{ $x = {chain}; }}"));
        let p = parse_program(&src, &crate::syntax::cpp::CppOptions::default());
        assert!(!p.has_errors(), "{:?}", p.diagnostics.first());
        let printed = crate::syntax::print::print_program(&p.program, &src);
        assert!(printed.lines().count() > n);
        Walk.visit_program(&p.program);
        drop(p);
    }
    for chain in [
        format!("1{}", "+1".repeat(100_000)),
        format!("$a{}", ".b".repeat(100_000)),
    ] {
        let p = parse_str(&format!("BEGIN {{ $x = {chain}; }}"));
        assert_eq!(p.diagnostics.len(), 1);
        assert!(p.diagnostics[0].message.starts_with("expression too long"));
    }
}
