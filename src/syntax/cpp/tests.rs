//! The preprocessor over headers held in memory.

use super::*;
use std::collections::HashMap as Map;

#[derive(Debug, Default)]
struct MemFiles(Map<PathBuf, String>);

impl HeaderSource for MemFiles {
    fn read(&self, path: &Path) -> Option<String> {
        self.0.get(path).cloned()
    }
}

fn pp(files: &[(&str, &str)], include_dirs: &[&str]) -> Preprocessor {
    let mem = MemFiles(
        files
            .iter()
            .map(|(p, t)| (PathBuf::from(p), t.to_string()))
            .collect(),
    );
    Preprocessor::new(CppOptions {
        include_dirs: include_dirs.iter().map(PathBuf::from).collect(),
        includes: Vec::new(),
        system_dirs: vec![PathBuf::from("/sys-inc")],
        base_dir: PathBuf::from("/script"),
        fallback: true,
        files: Arc::new(mem),
    })
}

fn int(p: &Preprocessor, name: &str) -> Result<i64, String> {
    match p.defs().value(name, &|_| None) {
        Some(Ok(MacroValue::Int(v))) => Ok(v),
        Some(Ok(MacroValue::Str(s))) => Err(format!("string {s:?}")),
        Some(Err(e)) => Err(e),
        None => Err("not a macro".into()),
    }
}

#[test]
fn defines_compose_and_evaluate() {
    let mut p = pp(&[], &[]);
    for d in [
        "define A 3",
        "define B (A + 1)",
        "define SHIFT(x, n) ((x) << (n))",
        "define C SHIFT(B, 2) /* 16 */",
        "define S \"hi\" \" there\"",
    ] {
        p.directive(d).unwrap();
    }
    assert_eq!(int(&p, "B"), Ok(4));
    assert_eq!(int(&p, "C"), Ok(16));
    assert_eq!(
        p.defs().value("S", &|_| None),
        Some(Ok(MacroValue::Str(b"hi there".to_vec())))
    );
    assert_eq!(
        p.defs().call("SHIFT", &[3, 4], &|_| None),
        Some(Ok(MacroValue::Int(48)))
    );
    assert_eq!(
        p.defs().call("SHIFT", &[-1, 1], &|_| None),
        Some(Ok(MacroValue::Int(-2)))
    );
    assert!(p.defs().value("SHIFT", &|_| None).is_none());
    p.directive("define BAD foo + 1").unwrap();
    assert_eq!(
        int(&p, "BAD"),
        Err("foo + 1: unknown identifier 'foo'".into())
    );
    // The script's enums (or the kernel's) resolve names left after expansion.
    assert_eq!(
        p.defs().value("BAD", &|n| (n == "foo").then_some(41)),
        Some(Ok(MacroValue::Int(42)))
    );
    p.directive("undef A").unwrap();
    assert!(int(&p, "B").is_err());
    p.directive("define EMPTY").unwrap();
    assert_eq!(int(&p, "EMPTY"), Err("it expands to nothing".into()));
}

#[test]
fn conditionals_use_full_expressions() {
    let mut p = pp(&[], &[]);
    let mut seen = Vec::new();
    for d in [
        "define V 3",
        "define TWICE(x) ((x) * 2)",
        "if TWICE(V) == 6 && defined(V) && !defined NOPE",
        "define OK1 1",
        "elif 1",
        "define BAD1 1",
        "endif",
        "if UNKNOWN_IS_ZERO",
        "define BAD2 1",
        "elif __has_include(<nope.h>) || __has_attribute(packed)",
        "define BAD3 1",
        "else",
        "define OK2 1",
        "endif",
        "ifdef BPFTRACE_HAVE_BTF",
        "define OK3 1",
        "endif",
    ] {
        p.directive(d).unwrap();
        seen.push(p.active());
    }
    let defined = |n: &str| p.defs().macros.contains_key(n);
    assert!(defined("OK1") && defined("OK2") && defined("OK3"));
    assert!(!defined("BAD1") && !defined("BAD2") && !defined("BAD3"));
    assert_eq!(p.depth(), 0);
}

#[test]
fn directive_errors_are_reported() {
    let mut p = pp(&[], &[]);
    assert!(matches!(p.directive("endif"), Err(CppError::Invalid(_))));
    assert!(matches!(p.directive("if 1 +"), Err(CppError::Invalid(_))));
    assert_eq!(p.depth(), 1, "a failed #if still opens a conditional");
    p.directive("endif").unwrap();
    assert_eq!(
        p.directive("error stop here"),
        Err(CppError::Error("stop here".into()))
    );
    assert!(matches!(p.directive("define 3"), Err(CppError::Invalid(_))));
    assert_eq!(
        p.directive("include <lol/no.h>"),
        Err(CppError::NotFound("lol/no.h".into()))
    );
    // Inactive branches ignore everything but conditionals.
    p.directive("if 0").unwrap();
    p.directive("error not reached").unwrap();
    p.directive("include <lol/no.h>").unwrap();
    p.directive("endif").unwrap();
}

#[test]
fn headers_give_macros_and_enums_through_the_search_path() {
    let files = [
        (
            "/sys-inc/top.h",
            "#ifndef TOP_H\n#define TOP_H\n#include \"inner.h\"\n#include <missing/nested.h>\n\
             #define FROM_TOP (INNER * 2) /* comment */\n\
             enum color { RED, GREEN = 5, BLUE, };\n\
             typedef enum {\n  X_A = FROM_TOP,\n  X_B = 1 << 3,\n} xs_t;\n\
             int f(int a);\nstruct s { enum color c; int x; };\n\
             #endif\n",
        ),
        ("/sys-inc/inner.h", "#pragma once\n#define INNER \\\n  21\n"),
        (
            "/mine/local.h",
            "#define LOCAL 7\n#include_next <local.h>\n",
        ),
        ("/sys-inc/local.h", "#define NEXT 8\n"),
        ("/script/quoted.h", "#define QUOTED 9\n"),
    ];
    let mut p = pp(&files, &["/mine"]);
    p.directive("include <top.h>").unwrap();
    p.directive("include <top.h>").unwrap(); // the guard makes it a no-op
    p.directive("include <local.h>").unwrap();
    p.directive("include \"quoted.h\"").unwrap();
    assert_eq!(int(&p, "FROM_TOP"), Ok(42));
    assert_eq!(int(&p, "LOCAL"), Ok(7));
    assert_eq!(int(&p, "NEXT"), Ok(8));
    assert_eq!(int(&p, "QUOTED"), Ok(9));
    let e = &p.defs().enumerators;
    assert_eq!(
        (e["RED"], e["GREEN"], e["BLUE"], e["X_A"], e["X_B"]),
        (0, 5, 6, 42, 8)
    );
}

#[test]
fn error_in_a_header_fails_and_names_it() {
    let files = [(
        "/sys-inc/bad.h",
        "#if 1\n#error do not include me\n#endif\n",
    )];
    let mut p = pp(&files, &[]);
    let e = p.directive("include <bad.h>").unwrap_err();
    assert_eq!(
        e,
        CppError::Error("do not include me (in /sys-inc/bad.h)".into())
    );
    assert_eq!(p.depth(), 0);
}

#[test]
fn missing_headers_fall_back_to_the_table_or_are_kernel_headers() {
    let mut p = pp(&[], &[]);
    p.directive("include <linux/path.h>").unwrap();
    assert_eq!(p.defs().missing, ["linux/path.h"]);
    if cfg!(target_arch = "x86_64") {
        p.directive("include <errno.h>").unwrap();
        assert_eq!(int(&p, "EPERM"), Ok(1));
        p.directive("include <linux/sched.h>").unwrap();
        assert_eq!(int(&p, "TASK_RUNNING"), Ok(0));
    }
}

#[test]
fn recursion_is_bounded() {
    let files = [(
        "/sys-inc/loop.h",
        "#define DEPTH_MARK 1\n#include <loop.h>\n",
    )];
    let mut p = pp(&files, &[]);
    p.directive("include <loop.h>").unwrap();
    assert_eq!(int(&p, "DEPTH_MARK"), Ok(1));
    p.directive("define A B").unwrap();
    p.directive("define B A").unwrap();
    assert!(int(&p, "A").is_err());
}
