//! Every script in examples/ (and the helpers they import) parses without a diagnostic, and
//! the set covers the grammar's main constructs.

use std::path::Path;

use strobe::diag::{render_all, SourceFile};
use strobe::syntax::{self, print::print_program};

fn scripts() -> Vec<std::path::PathBuf> {
    let mut out = Vec::new();
    for dir in ["examples", "examples/lib"] {
        let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join(dir);
        for e in std::fs::read_dir(&dir).expect("examples directory") {
            let p = e.expect("dir entry").path();
            if p.extension().is_some_and(|x| x == "bt") {
                out.push(p);
            }
        }
    }
    out.sort();
    out
}

#[test]
fn all_examples_parse_cleanly() {
    let scripts = scripts();
    assert!(
        scripts.len() >= 30,
        "only {} example scripts",
        scripts.len()
    );
    let mut failures = String::new();
    for p in &scripts {
        let text = std::fs::read_to_string(p).expect("readable example");
        let src = SourceFile::new(p.display().to_string(), text);
        let parsed = syntax::parse(&src);
        if !parsed.diagnostics.is_empty() {
            failures.push_str(&render_all(&parsed.diagnostics, &src));
        }
    }
    assert!(failures.is_empty(), "{failures}");
}

/// The examples together use every kind of node the printer knows about that scripts are
/// expected to use, so a grammar regression shows up here even without a targeted test.
#[test]
fn examples_cover_the_grammar() {
    let mut all = String::new();
    for p in scripts() {
        let text = std::fs::read_to_string(&p).expect("readable example");
        let src = SourceFile::new(p.display().to_string(), text);
        all.push_str(&print_program(&syntax::parse(&src).program, &src));
    }
    let wanted = [
        "Shebang",
        "Preprocessor #include",
        "Preprocessor #define",
        "struct ",
        "union ",
        "enum ",
        "Field ",
        "Config",
        "Import",
        "MapDecl",
        "Macro ",
        "Fn ",
        "Predicate",
        "Let ",
        "Assign =",
        "Assign +=",
        "Assign <<=",
        "ExprStmt",
        "Discard",
        "While",
        "Unroll",
        "For ",
        "Range",
        "Return",
        "Break",
        "Continue",
        "If",
        "Else",
        "Ternary",
        "Cast ",
        "Field ->",
        "Field .",
        "TupleIndex",
        "Index",
        "Tuple",
        "Record",
        "Sizeof",
        "Offsetof",
        "Positional $1",
        "PositionalCount",
        "Unary x++",
        "Unary --",
        "Unary !",
        "Unary ~",
        "Unary -",
        "Binary &&",
        "Binary ||",
        "Binary <<",
        "Int 5000000 (ns)",
        "Str ",
        "Bool true",
        "Map @ ",
        "Tail",
        "(kprobe ",
        "(kretprobe ",
        "(uprobe ",
        "(uretprobe ",
        "(tracepoint ",
        "(rawtracepoint ",
        "(fentry ",
        "(fexit ",
        "(profile ",
        "(interval ",
        "(software ",
        "(iter ",
        "(begin)",
        "(end)",
        "module=vmlinux",
        "unit=hz",
        "value=$2",
    ];
    let missing: Vec<&str> = wanted
        .iter()
        .copied()
        .filter(|w| !all.contains(w))
        .collect();
    assert!(missing.is_empty(), "examples never use: {missing:?}");
}
