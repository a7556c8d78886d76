//! Positive grammar tests: each construct parses to the expected tree, asserted through the
//! `-d ast` printer (locations stripped unless the test is about locations).

use strobe::diag::SourceFile;
use strobe::syntax::ast::{ExprKind, Item};
use strobe::syntax::attach::{AttachNum, AttachSpec, ProbeKind, TimeUnit};
use strobe::syntax::print::{print_expr, print_program};
use strobe::syntax::{self, parse_expression};

fn strip_locations(tree: &str) -> String {
    tree.lines()
        .map(|l| l.rsplit_once(" @").map_or(l, |(a, _)| a))
        .collect::<Vec<_>>()
        .join("\n")
}

fn program_tree(text: &str) -> String {
    let src = SourceFile::new("t.bt", text);
    let p = syntax::parse(&src);
    assert!(
        !p.has_errors(),
        "{}",
        strobe::diag::render_all(&p.diagnostics, &src)
    );
    strip_locations(&print_program(&p.program, &src))
}

/// The statements of `BEGIN { body }`, dedented to column 0.
fn body_tree(body: &str) -> String {
    let tree = program_tree(&format!("BEGIN {{ {body} }}"));
    tree.lines()
        .skip(4)
        .map(|l| l.get(6..).unwrap_or(""))
        .collect::<Vec<_>>()
        .join("\n")
}

fn expr_tree(text: &str) -> String {
    let src = SourceFile::new("e", text);
    let (e, d) = parse_expression(&src);
    assert!(d.is_empty(), "{text}: {d:?}");
    strip_locations(&print_expr(&e.expect("an expression"), &src))
        .trim_end()
        .to_string()
}

#[test]
fn every_probe_kind_and_alias_is_recognised() {
    let cases: &[(&str, &str)] = &[
        ("BEGIN", "(begin)"),
        ("begin", "(begin)"),
        ("END", "(end)"),
        ("end", "(end)"),
        ("self:signal:SIGUSR1", "(self kind=signal name=SIGUSR1)"),
        ("test:okay", "(test name=okay)"),
        ("bench:lhist", "(bench name=lhist)"),
        ("kprobe:vfs_read", "(kprobe func=vfs_read)"),
        ("k:vfs_*", "(kprobe func=vfs_*)"),
        ("kprobe:f+0x10", "(kprobe func=f offset=0x10)"),
        (
            "kprobe:ext4:ext4_sync_fs",
            "(kprobe module=ext4 func=ext4_sync_fs)",
        ),
        (
            "kprobe:0xffffffff81000000",
            "(kprobe address=0xffffffff81000000)",
        ),
        ("kretprobe:vfs_read", "(kretprobe func=vfs_read)"),
        ("kr:mod:fn", "(kretprobe module=mod func=fn)"),
        (
            "uprobe:/bin/bash:readline",
            "(uprobe target=/bin/bash func=readline)",
        ),
        ("u:/bin/bash:read*", "(uprobe target=/bin/bash func=read*)"),
        (
            "uprobe:/usr/*/bash:readline",
            "(uprobe target=/usr/*/bash func=readline)",
        ),
        ("uprobe:libc:malloc", "(uprobe target=libc func=malloc)"),
        (
            "uprobe:/bin/x:main+16",
            "(uprobe target=/bin/x func=main offset=0x10)",
        ),
        (
            "uprobe:/bin/x:0x401000",
            "(uprobe target=/bin/x address=0x401000)",
        ),
        (
            "uprobe:/bin/x:cpp:\"ns::f(int)\"",
            "(uprobe target=/bin/x lang=cpp func=ns::f(int))",
        ),
        ("uprobe:\"/my dir/x\":f", "(uprobe target=/my dir/x func=f)"),
        (
            "uretprobe:/bin/bash:readline",
            "(uretprobe target=/bin/bash func=readline)",
        ),
        (
            "ur:/bin/bash:readline",
            "(uretprobe target=/bin/bash func=readline)",
        ),
        (
            "usdt:/usr/bin/python3:function__entry",
            "(usdt target=/usr/bin/python3 name=function__entry)",
        ),
        (
            "U:/bin/x:prov:probe",
            "(usdt target=/bin/x provider=prov name=probe)",
        ),
        (
            "tracepoint:syscalls:sys_enter_openat",
            "(tracepoint category=syscalls name=sys_enter_openat)",
        ),
        (
            "t:syscalls:sys_enter_*",
            "(tracepoint category=syscalls name=sys_enter_*)",
        ),
        ("tracepoint:*open*", "(tracepoint category=* name=*open*)"),
        (
            "rawtracepoint:sched_switch",
            "(rawtracepoint name=sched_switch)",
        ),
        (
            "rt:vmlinux:sched_switch",
            "(rawtracepoint module=vmlinux name=sched_switch)",
        ),
        ("fentry:vfs_read", "(fentry func=vfs_read)"),
        (
            "f:ext4:ext4_file_read_iter",
            "(fentry module=ext4 func=ext4_file_read_iter)",
        ),
        ("kfunc:vfs_read", "(fentry func=vfs_read)"),
        (
            "fentry:bpf:123:my_prog",
            "(fentry module=bpf func=my_prog prog_id=123)",
        ),
        ("fexit:vfs_read", "(fexit func=vfs_read)"),
        ("fr:vfs_read", "(fexit func=vfs_read)"),
        ("kretfunc:vfs_read", "(fexit func=vfs_read)"),
        ("interval:s:1", "(interval unit=s value=1)"),
        ("interval:1s", "(interval unit=ns value=1000000000)"),
        ("i:ms:100", "(interval unit=ms value=100)"),
        ("interval:us:$1", "(interval unit=us value=$1)"),
        ("uprobe:$1:$2", "(uprobe target=$1 func=$2)"),
        ("uprobe:/bin/x:\"f$x\"", "(uprobe target=/bin/x func=f$x)"),
        ("profile:hz:99", "(profile unit=hz value=99)"),
        ("p:hz:49", "(profile unit=hz value=49)"),
        ("profile:10ms", "(profile unit=ns value=10000000)"),
        (
            "software:cpu-clock:100000",
            "(software event=cpu-clock count=100000)",
        ),
        ("s:page-faults", "(software event=page-faults)"),
        (
            "hardware:cache-misses:1e6",
            "(hardware event=cache-misses count=1000000)",
        ),
        ("h:cycles:", "(hardware event=cycles)"),
        (
            "watchpoint:0x10000000:8:rw",
            "(watchpoint address=268435456 len=8 mode=rw)",
        ),
        ("w:0x1000:4:w", "(watchpoint address=4096 len=4 mode=w)"),
        (
            "asyncwatchpoint:0x1000:4:r",
            "(asyncwatchpoint address=4096 len=4 mode=r)",
        ),
        (
            "aw:0x1000:4:x",
            "(asyncwatchpoint address=4096 len=4 mode=x)",
        ),
        ("iter:task", "(iter name=task)"),
        (
            "it:task_file:/sys/fs/bpf/p",
            "(iter name=task_file pin=/sys/fs/bpf/p)",
        ),
        ("name=kprobe:f", "(kprobe label=name func=f)"),
    ];
    for (ap, want) in cases {
        let tree = program_tree(&format!("{ap} {{ }}"));
        let line = tree.lines().nth(2).unwrap_or("");
        assert_eq!(line, format!("    AttachPoint {ap} {want}"), "for {ap}");
    }
}

#[test]
fn wildcard_probe_types_expand_to_the_kinds_they_match() {
    let cases: &[(&str, &[&str])] = &[
        ("t*point:sched:sched_switch", &["tracepoint"]),
        ("*ware:*", &["software", "hardware"]),
        ("*:/bin/sh:*", &["uprobe", "usdt"]),
        ("k*:vfs_read", &["kprobe"]),
    ];
    for (ap, kinds) in cases {
        let src = SourceFile::new("t", format!("{ap} {{ }}"));
        let p = syntax::parse_ok(&src).expect("parses");
        let Item::Probe(probe) = &p.items[0] else {
            panic!("not a probe")
        };
        let got: Vec<&str> = probe.attach_points.iter().map(|a| a.kind.name()).collect();
        assert_eq!(got, *kinds, "for {ap}");
    }
}

#[test]
fn attach_points_are_typed_for_later_passes() {
    let src = SourceFile::new(
        "t",
        "kprobe:f, interval:s:5, uprobe:/b:g+8, profile:hz:$3 {}",
    );
    let p = syntax::parse_ok(&src).expect("parses");
    let Item::Probe(probe) = &p.items[0] else {
        panic!("not a probe")
    };
    let kinds: Vec<ProbeKind> = probe.attach_points.iter().map(|a| a.kind).collect();
    assert_eq!(
        kinds,
        [
            ProbeKind::Kprobe,
            ProbeKind::Interval,
            ProbeKind::Uprobe,
            ProbeKind::Profile
        ]
    );
    assert_eq!(
        probe.attach_points[1].spec,
        AttachSpec::Timer {
            unit: TimeUnit::S,
            value: AttachNum::Lit(5)
        }
    );
    assert_eq!(
        probe.attach_points[3].spec,
        AttachSpec::Timer {
            unit: TimeUnit::Hz,
            value: AttachNum::Param(3)
        }
    );
    assert_eq!(probe.attach_points[2].span, strobe::diag::Span::new(24, 37));
}

#[test]
fn multiple_attach_points_trailing_comma_predicate_and_comments() {
    let t = program_tree(
        "kprobe:a, // first\n  kprobe:b, /* second */ kprobe:c,\n/ arg0 / 2 > 1 /* halved */ / { }",
    );
    assert_eq!(
        t,
        "Program
  Probe
    AttachPoint kprobe:a (kprobe func=a)
    AttachPoint kprobe:b (kprobe func=b)
    AttachPoint kprobe:c (kprobe func=c)
    Predicate
      Binary >
        Binary /
          Ident arg0
          Int 2
        Int 1
    Block"
    );
}

#[test]
fn binary_operators_follow_c_precedence_and_associativity() {
    let cases = [
        ("1 + 2 * 3", "(1 + (2 * 3))"),
        ("1 - 2 - 3", "((1 - 2) - 3)"),
        ("1 << 2 + 3", "(1 << (2 + 3))"),
        ("1 < 2 == 3 > 4", "((1 < 2) == (3 > 4))"),
        ("1 & 2 ^ 3 | 4", "(((1 & 2) ^ 3) | 4)"),
        ("1 || 2 && 3", "(1 || (2 && 3))"),
        ("1 | 2 && 3 | 4", "((1 | 2) && (3 | 4))"),
        ("a == b != c", "((a == b) != c)"),
        ("10 / 2 % 3 * 4", "(((10 / 2) % 3) * 4)"),
        ("1 >> 2 >= 3", "((1 >> 2) >= 3)"),
        ("-a * !b", "((-a) * (!b))"),
        ("~a & *b", "((~a) & (*b))"),
        ("a ? b : c ? d : e", "(a ? b : (c ? d : e))"),
        ("a || b ? c : d", "((a || b) ? c : d)"),
        ("a ?: b", "(a ?: b)"),
        ("1 - -1", "(1 - (-1))"),
        ("(1 + 2) * 3", "((1 + 2) * 3)"),
    ];
    for (text, want) in cases {
        let src = SourceFile::new("e", text);
        let (e, d) = parse_expression(&src);
        assert!(d.is_empty(), "{text}: {d:?}");
        assert_eq!(sexpr(&e.expect("expression")), want, "for {text}");
    }
}

/// Fully parenthesised rendering of an expression, to assert precedence compactly.
fn sexpr(e: &strobe::syntax::ast::Expr) -> String {
    match &e.kind {
        ExprKind::Int(i) => i.value.to_string(),
        ExprKind::Ident(n) => n.clone(),
        ExprKind::Binary { op, lhs, rhs } => {
            format!("({} {} {})", sexpr(lhs), op.symbol(), sexpr(rhs))
        }
        ExprKind::Unary { op, expr } => format!("({}{})", op.symbol(), sexpr(expr)),
        ExprKind::Ternary {
            cond,
            then: Some(t),
            otherwise,
        } => format!("({} ? {} : {})", sexpr(cond), sexpr(t), sexpr(otherwise)),
        ExprKind::Ternary {
            cond, otherwise, ..
        } => format!("({} ?: {})", sexpr(cond), sexpr(otherwise)),
        other => format!("{other:?}"),
    }
}

#[test]
fn statements_parse_to_the_expected_shapes() {
    let cases: &[(&str, &str)] = &[
        ("let $x;", "Let $x"),
        ("let $x: uint32 = 5;", "Let $x: uint32\n  Int 5"),
        ("let $p: struct task_struct * = 0;", "Let $p: struct task_struct*\n  Int 0"),
        ("let $a: int8[4];", "Let $a: int8[4]"),
        ("$x = 1;", "Assign =\n  Var $x\n  Int 1"),
        ("@ = 1;", "Assign =\n  Map @\n  Int 1"),
        ("@m[1] = 2;", "Assign =\n  Map @m\n    Int 1\n  Int 2"),
        ("@m[1, \"a\"] = 2;", "Assign =\n  Map @m\n    Int 1\n    Str \"a\"\n  Int 2"),
        ("@x = count();", "Assign =\n  Map @x\n  Call count"),
        ("$x -= 1;", "Assign -=\n  Var $x\n  Int 1"),
        ("$x *= 1;", "Assign *=\n  Var $x\n  Int 1"),
        ("$x /= 1;", "Assign /=\n  Var $x\n  Int 1"),
        ("$x %= 1;", "Assign %=\n  Var $x\n  Int 1"),
        ("$x &= 1;", "Assign &=\n  Var $x\n  Int 1"),
        ("$x |= 1;", "Assign |=\n  Var $x\n  Int 1"),
        ("$x ^= 1;", "Assign ^=\n  Var $x\n  Int 1"),
        ("$x >>= 1;", "Assign >>=\n  Var $x\n  Int 1"),
        ("@m[k] <<= 1;", "Assign <<=\n  Map @m\n    Ident k\n  Int 1"),
        ("$x++;", "ExprStmt\n  Unary x++\n    Var $x"),
        ("@x--;", "ExprStmt\n  Unary x--\n    Map @x"),
        ("++$x;", "ExprStmt\n  Unary ++\n    Var $x"),
        ("--@m[1];", "ExprStmt\n  Unary --\n    Map @m\n      Int 1"),
        ("_ = f();", "Discard\n  Call f"),
        ("delete(@m[k]);", "ExprStmt\n  Call delete\n    Map @m\n      Ident k"),
        ("delete(@m, k);", "ExprStmt\n  Call delete\n    Map @m\n    Ident k"),
        ("clear(@m); zero(@n);", "ExprStmt\n  Call clear\n    Map @m\nExprStmt\n  Call zero\n    Map @n"),
        ("print(@m, 10);", "ExprStmt\n  Call print\n    Map @m\n    Int 10"),
        ("exit();", "ExprStmt\n  Call exit"),
        ("return;", "Return"),
        ("return 1;", "Return\n  Int 1"),
        ("while ($i < 3) { break; }", "While\n  Binary <\n    Var $i\n    Int 3\n  Block\n    Break"),
        ("while $i { continue }", "While\n  Var $i\n  Block\n    Continue"),
        ("unroll(4) { f(); }", "Unroll\n  Int 4\n  Block\n    ExprStmt\n      Call f"),
        ("for ($kv : @m) { }", "For $kv\n  Map @m\n  Block"),
        ("for ($i : 0..$n) { }", "For $i\n  Range\n    Int 0\n    Var $n\n  Block"),
        ("for $i : 1..ncpus { }", "For $i\n  Range\n    Int 1\n    Ident ncpus\n  Block"),
        ("import \"x.bt\";", "Import \"x.bt\""),
        ("if ($x) { f(); }", "ExprStmt\n  If\n    Var $x\n    Block\n      ExprStmt\n        Call f"),
        (
            "if ($x) { } else if ($y) { } else { }",
            "ExprStmt\n  If\n    Var $x\n    Block\n    Else\n      If\n        Var $y\n        Block\n        Else\n          Block",
        ),
        ("{ let $x = 1; }", "ExprStmt\n  Block\n    Let $x\n      Int 1"),
        ("print(1)", "ExprStmt\n  Call print\n    Int 1"),
    ];
    for (body, want) in cases {
        assert_eq!(body_tree(body), *want, "for {body}");
    }
}

#[test]
fn expressions_parse_to_the_expected_shapes() {
    let cases: &[(&str, &str)] = &[
        ("(uint32)$x", "Cast uint32\n  Var $x"),
        ("(struct task_struct *)arg0", "Cast struct task_struct*\n  Ident arg0"),
        ("(int8[4])$x", "Cast int8[4]\n  Var $x"),
        ("(uint8[])$x", "Cast uint8[]\n  Var $x"),
        ("(mytype)*$p", "Cast mytype\n  Unary *\n    Var $p"),
        ("(pid) * 2", "Binary *\n  Ident pid\n  Int 2"),
        ("(myident)", "Ident myident"),
        ("(typeof($y))$x", "Cast typeof(…)\n  Var $x"),
        ("$p->a.b", "Field .b\n  Field ->a\n    Var $p"),
        ("$t.0.1", "TupleIndex .1\n  TupleIndex .0\n    Var $t"),
        ("$a[1][2]", "Index\n  Index\n    Var $a\n    Int 1\n  Int 2"),
        ("args.filename", "Field .filename\n  Ident args"),
        ("(1, \"a\")", "Tuple\n  Int 1\n  Str \"a\""),
        ("(1,)", "Tuple\n  Int 1"),
        ("()", "Tuple"),
        ("(a = 1, b = 2)", "Record\n  a =\n    Int 1\n  b =\n    Int 2"),
        ("&$x", "Unary &\n  Var $x"),
        ("&@m", "Unary &\n  Map @m"),
        ("&@m[1]", "Unary &\n  Map @m\n    Int 1"),
        ("&$p->a.b", "Unary &\n  Field .b\n    Field ->a\n      Var $p"),
        ("&*$p + 1", "Binary +\n  Unary &\n    Unary *\n      Var $p\n  Int 1"),
        ("$1 + $#", "Binary +\n  Positional $1\n  PositionalCount $#"),
        ("sizeof(uint32)", "Sizeof\n  Type uint32"),
        ("sizeof(struct S)", "Sizeof\n  Type struct S"),
        ("sizeof($x)", "Sizeof\n  Var $x"),
        ("sizeof(uint32*[10])", "Sizeof\n  Type uint32*[10]"),
        ("offsetof(struct S, a.b)", "Offsetof a.b\n  Type struct S"),
        ("typeinfo($x)", "Typeinfo\n  Var $x"),
        ("comptime 1 + 2", "Binary +\n  Comptime\n    Int 1\n  Int 2"),
        ("f(typeof(uint8), 1)", "Call f\n  Typeof\n    Type uint8\n  Int 1"),
        ("{ let $a = 1; $a }", "Block\n  Let $a\n    Int 1\n  Tail\n    Var $a"),
        ("if $c { 1 } else { 2 }", "If\n  Var $c\n  Block\n    Tail\n      Int 1\n  Else\n    Block\n      Tail\n        Int 2"),
        ("true && false", "Binary &&\n  Bool true\n  Bool false"),
        ("kstack(perf, 3)", "Call kstack\n  Ident perf\n  Int 3"),
        ("\"a\\x41\\101\\t\"", "Str \"aAA\\t\""),
        ("1_000", "Int 1000"),
        ("0x10", "Int 16"),
        ("010", "Int 8"),
        ("2e3", "Int 2000"),
        ("5ms", "Int 5000000 (ns)"),
        ("100UL", "Int 100 (C suffix)"),
    ];
    for (text, want) in cases {
        assert_eq!(expr_tree(text), *want, "for {text}");
    }
}

#[test]
fn top_level_sections_parse_in_order() {
    let t = program_tree(concat!(
        "#!/usr/bin/env strobe\n",
        "#include <linux/sched.h>\n",
        "#define N 4\n",
        "struct S { int a; struct S *next; char name[16]; };\n",
        "union U { u32 x; u8 b[4]; }\n",
        "enum E { A, B = 2 };\n",
        "config = { max_map_keys = 10; stack_mode = perf; license = \"GPL\"; lazy = true }\n",
        "import \"lib.bt\";\n",
        "let @m = lruhash(100);\n",
        "macro m($v, @map, e) { $v + e }\n",
        "fn add($a: int64, $b: int64): int64 { return $a + $b; }\n",
        "BEGIN { }\n",
    ));
    let want = "Program
  Shebang
  Preprocessor #include <linux/sched.h>
  Preprocessor #define N 4
  struct S
    Field a: int
    Field next: struct S*
    Field name: char[16]
  union U
    Field x: u32
    Field b: u8[4]
  enum E
    Enumerator A
    Enumerator B
      Int 2
  Config
    max_map_keys = 10
    stack_mode = perf
    license = \"GPL\"
    lazy = true
  Import \"lib.bt\"
  MapDecl @m = lruhash(100)
  Macro m($v, @map, e)
    Block
      Tail
        Binary +
          Var $v
          Ident e
  Fn add($a: int64, $b: int64): int64
    Block
      Return
        Binary +
          Var $a
          Var $b
  Probe
    AttachPoint BEGIN (begin)
    Block";
    assert_eq!(t, want);
}

#[test]
fn c_definitions_keep_attributes_bitfields_and_function_pointers() {
    let t = program_tree(
        "struct __attribute__((packed)) P { unsigned int f : 3, g : 5; const char *s; void (*cb)(int); } __attribute__((aligned(8)));\nBEGIN {}",
    );
    assert_eq!(
        t.lines().take(6).collect::<Vec<_>>().join("\n"),
        "Program
  struct P attributes(packed, aligned(8))
    Field f: unsigned int : 3
    Field g: unsigned int : 5
    Field s: char*
    Field cb: void (*)(…)"
    );
}

#[test]
fn every_node_records_its_line_and_column() {
    let src = SourceFile::new(
        "t.bt",
        "BEGIN\n{\n  @x[pid] =\n    count();\n  if (1) { exit(); }\n}\n",
    );
    let p = syntax::parse_ok(&src).expect("parses");
    let t = print_program(&p, &src);
    assert_eq!(
        t,
        "Program @1:1
  Probe @1:1
    AttachPoint BEGIN (begin) @1:1
    Block @2:1
      Assign = @3:3
        Map @x @3:3
          Ident pid @3:6
        Call count @4:5
      ExprStmt @5:3
        If @5:3
          Int 1 @5:7
          Block @5:10
            ExprStmt @5:12
              Call exit @5:12
"
    );
}

#[test]
fn probe_body_tail_becomes_a_statement_but_macro_tail_stays_a_value() {
    let src = SourceFile::new("t", "macro m() { 1 } BEGIN { print(m()) }");
    let p = syntax::parse_ok(&src).expect("parses");
    match (&p.items[0], &p.items[1]) {
        (Item::Macro(m), Item::Probe(b)) => {
            assert!(m.body.tail.is_some());
            assert!(b.body.tail.is_none());
            assert_eq!(b.body.stmts.len(), 1);
        }
        other => panic!("unexpected items {other:?}"),
    }
}
