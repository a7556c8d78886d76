//! Table-driven parse-error tests: each invalid script must produce, as its first error in
//! source order, exactly this message at exactly this line and column.

use strobe::diag::{Diagnostic, SourceFile};
use strobe::syntax;

/// (script, line, column, message of the first error)
const CASES: &[(&str, usize, usize, &str)] = &[
    ("kprobe:f { $x = 1 $y = 2; }", 1, 18, "expected ';'"),
    ("BEGN { }", 1, 1, "unknown probe type 'BEGN'"),
    ("kprobe:f { printf(\"abc); }", 1, 19, "unterminated string"),
    ("kprobe:f { $x = 08; }", 1, 17, "invalid digit '8' in octal literal"),
    ("kprobe:f { $y = 10zz; }", 1, 19, "invalid integer suffix 'zz'"),
    ("kprobe:f { @x = (1 + ; }", 1, 21, "expected expression"),
    ("i:s:1 { print(\"\\q\") }", 1, 16, "invalid escape character '\\q'"),
    ("kprobe:f {", 1, 11, "expected '}'"),
    ("kprobe:f { } /* x", 1, 14, "unterminated comment"),
    ("}", 1, 1, "expected a probe, macro, function or map declaration"),
    ("kprobe:f { 1 = 2; }", 1, 12, "invalid assignment target"),
    ("interval:x:1 {}", 1, 10, "invalid time unit 'x' for interval probe"),
    ("kprobe:f { $x.a = 1; }", 1, 12, "cannot assign to a field: tuples, records and structs are read-only"),
    ("tracepoint:foo { }", 1, 1, "tracepoint probe type requires 2 arguments, found 1"),
    ("kprobe:f { (1,2)++; }", 1, 17, "increment/decrement requires a variable or map"),
    ("kprobe:f { for ($x : 5) {} }", 1, 22, "expected a map or a range (start..end) in for loop"),
    ("kprobe:f { let @x = 1; }", 1, 16, "map declarations (`let @m = hash(N);`) are only allowed at the top level"),
    ("kprobe:f { $x = 0x; }", 1, 17, "invalid integer '0x'"),
    ("kprobe:f { $x = 18446744073709551616; }", 1, 17, "integer literal out of range: the maximum is 18446744073709551615"),
    ("kprobe:f { $x = 1e30; }", 1, 17, "integer literal out of range: the maximum is 18446744073709551615"),
    ("kprobe:f { $x = 12e3; }", 1, 17, "the coefficient of a scientific literal must be 1-9"),
    ("kprobe:f { $x = 1_; }", 1, 17, "trailing underscore in integer literal"),
    ("kprobe:f { $x = 0x10zz; }", 1, 21, "invalid integer suffix 'zz'"),
    ("kprobe:f { $x = 99999999999999999999ms; }", 1, 17, "integer literal out of range: the maximum is 18446744073709551615"),
    ("kprobe:f { print(\"\\777\"); }", 1, 19, "octal escape sequence out of range '\\777'"),
    ("kprobe:f { print(\"\\x\"); }", 1, 19, "invalid hex escape sequence"),
    ("kprobe:f { print(\"abc", 1, 18, "unterminated string"),
    ("kprobe:f { $ = 1; }", 1, 12, "expected identifier after '$'"),
    ("kprobe:f { $0; }", 1, 12, "positional parameter $0 is out of range"),
    ("kprobe:f { $99999999999; }", 1, 12, "positional parameter $99999999999 is out of range"),
    ("kprobe:f { @x[] = 1; }", 1, 15, "expected a map key"),
    ("kprobe:f { @x[1 = 2; }", 1, 16, "expected ']'"),
    ("kprobe:f { f(1, 2; }", 1, 18, "expected ',' or ')' in argument list"),
    ("kprobe:f { f(1 2); }", 1, 15, "expected ',' or ')' in argument list"),
    ("kprobe:f { $x = (1, 2; }", 1, 22, "expected ')'"),
    ("kprobe:f { $x = (a = 1, a = 2); }", 1, 25, "duplicate field 'a' in record"),
    ("kprobe:f { $x = $y.; }", 1, 20, "expected field name after '.'"),
    ("kprobe:f { $x = $y->; }", 1, 21, "expected field name after '->'"),
    ("kprobe:f { $x = $y[1; }", 1, 21, "expected ']'"),
    ("kprobe:f { $x = 1 ? 2; }", 1, 22, "expected ':'"),
    ("kprobe:f { if (1) { } else 3; }", 1, 27, "expected '{' or 'if' after 'else'"),
    ("kprobe:f { if (1 { } }", 1, 17, "expected ')'"),
    ("kprobe:f { if 1 > 2 { } }", 1, 17, "expected '{' after the condition of 'if'"),
    ("kprobe:f { while $i < 3 { } }", 1, 21, "expected '{' after the condition of 'while'"),
    ("BEGIN { $x = 'a'; }", 1, 14, "character literals are not supported"),
    ("x*:f { }", 1, 1, "no probe type matches 'x*'"),
    ("printf(\"hi\");\nBEGIN { }", 1, 1, "statements must be inside a probe's body"),
    ("@x = 1;", 1, 1, "statements must be inside a probe's body"),
    ("kprobe: vfs_read { }", 1, 8, "empty function in attach point"),
    ("uretprobe:/bin/x@a.c:10 { }", 1, 1, "only uprobe takes a source location"),
    ("uprobe:/bin/x@a.c:ten { }", 1, 19, "invalid line number: invalid integer 'ten'"),
    ("kprobe:$a { }", 1, 8, "invalid positional parameter '$a' in attach point"),
    ("uprobe:/bin/x:f$0 { }", 1, 16, "invalid positional parameter '$0' in attach point"),
    ("k:f { print((hello=1,)); }", 1, 22, "expected field name"),
    ("kprobe:f /pid = 1/ { }", 1, 15, "assignment is not allowed in a predicate"),
    ("BEGIN { $x = 1K; }", 1, 15, "invalid integer suffix 'K'"),
    ("BEGIN { $x = 0b101; }", 1, 15, "invalid integer suffix 'b101'"),
    ("kprobe:f { while ($i < 3 { } }", 1, 25, "expected ')'"),
    ("kprobe:f { unroll(3) $x = 1; }", 1, 21, "expected '{'"),
    ("kprobe:f { for ($i 0..10) { } }", 1, 19, "expected ':'"),
    ("kprobe:f { for (i : 0..10) { } }", 1, 17, "expected a variable in for loop"),
    ("kprobe:f { for ($kv : @m[1]) { } }", 1, 23, "expected a map or a range (start..end) in for loop"),
    ("kprobe:f { return 1 2; }", 1, 20, "expected ';'"),
    ("kprobe:f { let x = 1; }", 1, 15, "expected a variable after 'let'"),
    ("kprobe:f { let $x: = 1; }", 1, 19, "expected a type name"),
    ("kprobe:f { let $x: struct = 1; }", 1, 26, "expected a name after 'struct'"),
    ("kprobe:f { $x = (uint8[)1; }", 1, 24, "expected expression"),
    ("kprobe:f { $x = sizeof(; }", 1, 24, "expected expression"),
    ("kprobe:f { $x = offsetof(struct S); }", 1, 32, "expected ','"),
    ("kprobe:f { $x = offsetof(struct S, ); }", 1, 35, "expected field name"),
    ("kprobe:f { import foo; }", 1, 18, "expected a string after 'import'"),
    ("kprobe:f { import \"x\" }", 1, 22, "expected ';' after import"),
    ("kprobe:f /pid == 1 { }", 1, 19, "expected '/' to close the predicate"),
    ("kprobe:f /pid == 1/ ", 1, 20, "expected '{' to start the probe's body"),
    ("kprobe:f,, { }", 1, 10, "expected an attach point"),
    ("kprobe:f { } }", 1, 13, "expected a probe, macro, function or map declaration"),
    ("kprobe:a:b:c { }", 1, 1, "kprobe probe type requires 1 or 2 arguments, found 3"),
    ("kretprobe:f+0x10 { }", 1, 11, "kretprobe probes do not take an offset"),
    ("kprobe:f+1+2 { }", 1, 8, "an attach point takes at most one offset"),
    ("kprobe:f+zz { }", 1, 8, "invalid offset 'zz': invalid integer 'zz'"),
    ("uprobe:/bin/bash { }", 1, 1, "uprobe probe type requires 2 or 3 arguments, found 1"),
    ("usdt:a { }", 1, 1, "usdt probe type requires 2 or 3 arguments, found 1"),
    ("tracepoint:a:b:c { }", 1, 1, "tracepoint probe type requires 2 arguments, found 3"),
    ("rawtracepoint:a:b:c { }", 1, 1, "rawtracepoint probe type requires 1 or 2 arguments, found 3"),
    ("fentry:a:b:c { }", 1, 1, "only the 'bpf' form of this probe takes 3 arguments"),
    ("fentry:bpf { }", 1, 1, "the 'bpf' form of this probe requires a program name"),
    ("interval:100 { }", 1, 10, "invalid rate of interval probe: minimum is 1000 (1us), found 100 nanoseconds"),
    ("interval:s:0 { }", 1, 12, "interval probe rate must not be 0"),
    ("interval:s:abc { }", 1, 12, "invalid rate of interval probe 'abc': invalid integer 'abc'"),
    ("profile:hz:99:1 { }", 1, 1, "profile probe type requires 1 or 2 arguments, found 3"),
    ("software:cpu-clock:x { }", 1, 20, "invalid count 'x': invalid integer 'x'"),
    ("watchpoint:0x1000:8 { }", 1, 1, "watchpoint probe type requires 3 arguments, found 2"),
    ("watchpoint:0x1000:8:q { }", 1, 21, "invalid watchpoint mode 'q'"),
    ("iter:task* { }", 1, 6, "iter probes do not support wildcards"),
    ("BEGIN:x { }", 1, 1, "begin probe type requires 0 arguments, found 1"),
    ("self:signal { }", 1, 1, "self probe type requires 2 arguments, found 1"),
    ("self:signal:SIGUSR2 { }", 1, 13, "SIGUSR2 is not a supported signal"),
    ("self:timer:SIGUSR1 { }", 1, 6, "timer is not a supported trigger"),
    ("kprobe:\"f { }", 1, 1, "unterminated quote in attach point"),
    (":f { }", 1, 1, "expected a probe, macro, function or map declaration"),
    ("kprobe:f { @x = count() } kprobe:g { $x = ; } kprobe:h { @y = ; }", 1, 42, "expected expression"),
    ("kprobe:f { } #include <x.h>", 1, 14, "C definitions must appear before probes, macros, functions and map declarations"),
    ("kprobe:f { } struct S { int a; }", 1, 14, "C definitions must appear before probes, macros, functions and map declarations"),
    ("kprobe:f { } config = { a = 1 }", 1, 14, "config must appear before probes, macros, functions and map declarations"),
    ("kprobe:f { } import \"a.bt\";", 1, 14, "imports must appear before probes, macros, functions and map declarations"),
    ("let $x = 1;", 1, 5, "top-level let statements must be map declarations"),
    ("let @m = hash(;", 1, 15, "expected the maximum number of entries"),
    ("let @m = hash(10)", 1, 18, "expected ';'"),
    ("let @m hash(10);", 1, 7, "expected '='"),
    ("macro (x) { }", 1, 6, "expected a macro name"),
    ("macro m(pid) { }", 1, 9, "builtin 'pid' can't be used as a macro parameter"),
    ("macro m(1) { }", 1, 9, "expected a macro parameter ($var, @map or name)"),
    ("macro m(x { }", 1, 10, "expected ')'"),
    ("fn f($a): int32 { }", 1, 8, "expected ':'"),
    ("fn f(a: int32): int32 { }", 1, 6, "expected a parameter ($name: type)"),
    ("fn f($a: int32) int32 { }", 1, 16, "expected ':'"),
    ("config = { a = }", 1, 15, "expected a string, integer, boolean or name"),
    ("config = { a 1 }", 1, 13, "expected '='"),
    ("config = { a = 1 b = 2 }", 1, 17, "expected ';' or '}' in config block"),
    ("config = { = 1 }", 1, 11, "expected a config key"),
    ("import x;", 1, 7, "expected a string after 'import'"),
    ("import \"a.bt\"", 1, 14, "expected ';' after import"),
    ("struct S { int a; char *p q; }", 1, 26, "expected ';'"),
    ("struct S { int a[x]; }", 1, 18, "expected an array length"),
    ("struct S { int a : x; }", 1, 19, "expected a bit-field width"),
    ("struct S { int (*f; }", 1, 19, "expected ')'"),
    ("struct S __attribute__(packed) { int a; }", 1, 23, "expected '((' after __attribute__"),
    ("enum E { A = , B }", 1, 13, "expected expression"),
    ("struct S { int a;", 1, 18, "expected '}' to close the definition"),
    ("kprobe:f { print(1) print(2); }", 1, 20, "expected ';'"),
    ("kprobe:f { @x = count(); @y = hist( }", 1, 36, "expected expression"),
    ("kprobe:f { $x = \"a\" \"b\"; }", 1, 20, "expected ';'"),
    ("kprobe:f { $x = -; }", 1, 18, "expected expression"),
    ("kprobe:f { $x = !; }", 1, 18, "expected expression"),
    ("kprobe:f { $x = ++1; }", 1, 19, "increment/decrement requires a variable or map"),
    ("kprobe:f { $x = (struct task_struct *); }", 1, 39, "expected an expression after the cast to 'struct task_struct *'"),
    ("BEGIN {\n  $x = 1\n  $y = 2;\n}", 2, 9, "expected ';'"),
    ("kprobe:vfs_read\n{\n  @x = count(;\n}", 3, 14, "expected expression"),
    ("tracepoint:syscalls:sys_enter_openat {\n  printf(\"%s\\n\", str(args.filename);\n}", 2, 36, "expected ',' or ')' in argument list"),
    ("BEGIN {\n  if ($x == 1) {\n    print(1);\n  \n}", 5, 2, "expected '}'"),
    ("#include <linux/sched.h>\nkprobe:f { $x = 1; }\nkprobe:g { $y = ; }", 3, 16, "expected expression"),
    ("k:f { @[comm] = count(); }\nkprbe:g { }", 2, 1, "unknown probe type 'kprbe'"),
    ("interval:1s { print(@x); }\ninterval:hz { }", 2, 10, "invalid rate of interval probe 'hz': invalid integer 'hz'"),
    ("uprobe:/bin/bash:readline { $x = (struct foo *; }", 1, 41, "expected ')'"),
    ("kprobe:f { $x = 1; } \n\n  kprobe:g /comm == \"bash\"/ { @[tid] = hist(arg2) }\nEND { clear(@) ; print(@x[1,]); }", 4, 29, "expected expression"),
];

fn errors(text: &str) -> (SourceFile, Vec<Diagnostic>) {
    let src = SourceFile::new("t.bt", text);
    let mut d: Vec<Diagnostic> = syntax::parse(&src)
        .diagnostics
        .into_iter()
        .filter(Diagnostic::is_error)
        .collect();
    d.sort_by_key(|d| d.span.start);
    (src, d)
}

#[test]
fn every_invalid_script_reports_the_expected_first_error() {
    assert!(CASES.len() >= 80, "only {} cases", CASES.len());
    let mut failures = Vec::new();
    for &(text, line, col, msg) in CASES {
        let (src, diags) = errors(text);
        let got = diags.first().map(|d| {
            let (l, c) = src.line_col(d.span.start);
            (l, c, d.message.clone())
        });
        if got != Some((line, col, msg.to_string())) {
            failures.push(format!(
                "{text:?}\n  expected {line}:{col} {msg}\n  got      {got:?}"
            ));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

#[test]
fn independent_errors_in_one_script_are_all_reported() {
    let (src, diags) = errors(
        "kprobe:f { $a = 1 $b = 2; }\nkprobe:g { @x = count(; }\nkprbe:h { }\nkprobe:i { print(\"\\q\"); }\n",
    );
    let got: Vec<(usize, usize, &str)> = diags
        .iter()
        .map(|d| {
            let (l, c) = src.line_col(d.span.start);
            (l, c, d.message.as_str())
        })
        .collect();
    assert_eq!(
        got,
        [
            (1, 18, "expected ';'"),
            (2, 23, "expected expression"),
            (3, 1, "unknown probe type 'kprbe'"),
            (4, 19, "invalid escape character '\\q'"),
        ]
    );
}

#[test]
fn rendered_errors_show_file_line_column_source_and_caret() {
    let (src, diags) = errors("BEGIN {\n  printf(\"%d\\n\", pid)\n  exit();\n}\n");
    let text = strobe::diag::render_all(&diags, &src);
    assert_eq!(
        text,
        "t.bt:2:22-23: ERROR: expected ';'\n  printf(\"%d\\n\", pid)\n                     ~\nnote: found 'exit'\n"
    );
}

#[test]
fn unknown_probe_type_suggests_the_nearest_name() {
    for (typo, want) in [
        ("kprob", "kprobe"),
        ("tracepont", "tracepoint"),
        ("BEGN", "BEGIN"),
    ] {
        let (_, d) = errors(&format!("{typo}:f {{ }}"));
        assert_eq!(
            d[0].help.as_deref(),
            Some(format!("did you mean '{want}'?").as_str())
        );
    }
}

#[test]
fn unclosed_block_points_back_at_its_opening_brace() {
    let (src, d) = errors("kprobe:f {\n  if (1) {\n    exit();\n}\n");
    assert_eq!(d.len(), 1);
    assert_eq!(d[0].message, "expected '}'");
    let (line, col) = src.line_col(d[0].labels[0].0.start);
    assert_eq!((line, col), (1, 10));
}

#[test]
fn nesting_beyond_the_limit_is_an_error_not_a_crash() {
    let deep = format!(
        "kprobe:f {{ $x = {}1{}; }}",
        "(".repeat(5000),
        ")".repeat(5000)
    );
    let (_, d) = errors(&deep);
    assert_eq!(d.len(), 1);
    assert!(
        d[0].message.starts_with("nesting too deep"),
        "{}",
        d[0].message
    );
}
