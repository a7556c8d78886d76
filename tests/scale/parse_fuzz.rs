//! Bounded fuzzing of the parser with proptest (runs in CI in a few seconds): arbitrary text and
//! mutations of the example scripts must never panic, and every diagnostic, the `-d ast`
//! printer and the visitor must cope with whatever tree comes back.

use proptest::prelude::*;

use strobe::diag::{render_all, SourceFile};
use strobe::syntax::{self, print::print_program, visit::Visitor};

fn examples() -> Vec<String> {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut v: Vec<(std::path::PathBuf, String)> = std::fs::read_dir(dir)
        .expect("examples directory")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "bt"))
        .map(|p| {
            let t = std::fs::read_to_string(&p).expect("readable example");
            (p, t)
        })
        .collect();
    v.sort();
    v.into_iter().map(|(_, t)| t).collect()
}

/// Case count: the CI default, or `STROBE_FUZZ_CASES` for longer local runs.
fn cases(default: u32) -> u32 {
    std::env::var("STROBE_FUZZ_CASES")
        .ok()
        .and_then(|v| v.parse().ok())
        .unwrap_or(default)
}

/// Counts expressions and checks that each one's span lies inside the text, on character
/// boundaries.
struct CountExprs<'a>(usize, &'a str);
impl Visitor for CountExprs<'_> {
    fn visit_expr(&mut self, e: &strobe::syntax::ast::Expr) {
        self.0 += 1;
        let (s, t) = (e.span.start as usize, e.span.end as usize);
        assert!(
            s <= t && t <= self.1.len(),
            "span {s}..{t} outside the text"
        );
        assert!(self.1.is_char_boundary(s) && self.1.is_char_boundary(t));
        strobe::syntax::visit::walk_expr(self, e);
    }
}

/// Parses and exercises every consumer of the result; panics are the failures looked for.
fn check(text: &str) {
    let src = SourceFile::new("fuzz.bt", text);
    let parsed = syntax::parse(&src);
    for d in &parsed.diagnostics {
        assert!(d.span.start <= d.span.end, "inverted span {d:?}");
        assert!(d.span.end as usize <= text.len(), "span past the end {d:?}");
    }
    let _ = render_all(&parsed.diagnostics, &src);
    let _ = print_program(&parsed.program, &src);
    let mut v = CountExprs(0, text);
    v.visit_program(&parsed.program);
    assert!(v.0 <= parsed.program.expr_count as usize);
}

/// Pieces of the language, so mutations produce near-valid scripts that reach deep paths.
const TOKENS: &[&str] = &[
    "{",
    "}",
    "(",
    ")",
    "[",
    "]",
    ";",
    ",",
    ":",
    "/",
    "*",
    "-",
    "->",
    ".",
    "..",
    "?",
    "=",
    "==",
    "+=",
    "<<=",
    "++",
    "--",
    "&",
    "&&",
    "!",
    "~",
    "$",
    "$x",
    "$1",
    "$#",
    "@",
    "@m",
    "@m[1]",
    "\"",
    "\"s\\n\"",
    "\\",
    "/*",
    "*/",
    "//",
    "\n",
    " ",
    "0x",
    "1e9",
    "10ms",
    "08",
    "if",
    "else",
    "while",
    "for",
    "unroll",
    "let",
    "return",
    "break",
    "macro",
    "fn",
    "config",
    "import",
    "struct",
    "union",
    "enum",
    "sizeof",
    "offsetof",
    "typeof",
    "#include <x.h>\n",
    "kprobe:",
    "uprobe:/bin/bash:",
    "interval:s:",
    "BEGIN",
    "é",
    "\u{0}",
    "(uint8)",
    "(struct s *)",
];

#[derive(Debug, Clone)]
enum Mutation {
    Delete(usize, usize),
    Insert(usize, usize),
    Duplicate(usize, usize),
    Truncate(usize),
}

fn mutation() -> impl Strategy<Value = Mutation> {
    prop_oneof![
        (any::<usize>(), 0usize..40).prop_map(|(a, n)| Mutation::Delete(a, n)),
        (any::<usize>(), 0..TOKENS.len()).prop_map(|(a, t)| Mutation::Insert(a, t)),
        (any::<usize>(), 0usize..80).prop_map(|(a, n)| Mutation::Duplicate(a, n)),
        any::<usize>().prop_map(Mutation::Truncate),
    ]
}

fn boundary(s: &str, at: usize) -> usize {
    let mut i = at % (s.len() + 1);
    while !s.is_char_boundary(i) {
        i -= 1;
    }
    i
}

fn apply(mut s: String, muts: &[Mutation]) -> String {
    for m in muts {
        match *m {
            Mutation::Delete(a, n) => {
                let a = boundary(&s, a);
                let b = boundary(&s, (a + n).min(s.len()));
                s.replace_range(a..b.max(a), "");
            }
            Mutation::Insert(a, t) => {
                let a = boundary(&s, a);
                s.insert_str(a, TOKENS[t]);
            }
            Mutation::Duplicate(a, n) => {
                let a = boundary(&s, a);
                let b = boundary(&s, (a + n).min(s.len())).max(a);
                let piece = s[a..b].to_string();
                s.insert_str(b, &piece);
            }
            Mutation::Truncate(a) => {
                let a = boundary(&s, a);
                s.truncate(a);
            }
        }
    }
    s
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(400), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,300}") {
        check(&text);
    }

    #[test]
    fn token_soup_never_panics(toks in proptest::collection::vec(0..TOKENS.len(), 0..120)) {
        let text: String = toks.iter().map(|&i| TOKENS[i]).collect::<Vec<_>>().join(" ");
        check(&text);
        let glued: String = toks.iter().map(|&i| TOKENS[i]).collect();
        check(&glued);
    }
}

proptest! {
    #![proptest_config(ProptestConfig { cases: cases(1500), failure_persistence: None, ..ProptestConfig::default() })]

    #[test]
    fn mutated_examples_never_panic(
        pick in any::<usize>(),
        muts in proptest::collection::vec(mutation(), 1..6),
    ) {
        let ex = examples();
        let text = apply(ex[pick % ex.len()].clone(), &muts);
        check(&text);
    }
}

#[test]
fn arbitrary_bytes_as_lossy_text_never_panic() {
    // Deterministic sweep over every single byte value and some two-byte sequences.
    for b in 0u8..=255 {
        check(&String::from_utf8_lossy(&[b]));
        check(&String::from_utf8_lossy(&[b'k', b':', b, b'{', b'}']));
        check(&String::from_utf8_lossy(&[
            b'B', b'E', b'G', b'I', b'N', b'{', b, b'}',
        ]));
    }
}

/// CPU time of this thread: on a busy machine wall-clock time of a long run includes the
/// slices other processes took, which skews a ratio against a short run.
fn thread_cpu_seconds() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime fills the timespec we own.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

/// Huge inputs: generated at a small and an 8× size, parsed (through [`check`]) without
/// panicking, and one 8× input costs under 4× the CPU time of eight small ones (best of three
/// runs; linear is ~1, quadratic ~8).
#[test]
fn huge_inputs_parse_in_near_linear_time() {
    let shapes: [Shape; 7] = [
        ("statements", |n| {
            format!("BEGIN {{ {} }}", "@x = 1; $y = @x + 2;".repeat(n))
        }),
        ("probes", |n| "kprobe:f { @[comm] = count(); }\n".repeat(n)),
        ("long identifier", |n| {
            format!("BEGIN {{ @{} = 1; }}", "a".repeat(n * 20))
        }),
        ("long string", |n| {
            format!("BEGIN {{ printf(\"{}\"); }}", "x".repeat(n * 20))
        }),
        ("long line of non-ASCII strings", |n| {
            format!("BEGIN {{ {} }}", "$s = \"é\"; ".repeat(n))
        }),
        ("long expression", |n| {
            format!("BEGIN {{ $x = 1{}; }}", " + 1".repeat(n))
        }),
        ("deep nesting", |n| {
            format!(
                "BEGIN {{ $x = {}1{}; }}",
                "(".repeat(n / 8),
                ")".repeat(n / 8)
            )
        }),
    ];
    for (what, make) in shapes {
        // CPU time of `reps` parses of the input of size `n`, best of three.
        let time = |n: usize, reps: usize| {
            let text = make(n);
            (0..3)
                .map(|_| {
                    let t = thread_cpu_seconds();
                    for _ in 0..reps {
                        check(&text);
                    }
                    thread_cpu_seconds() - t
                })
                .fold(f64::MAX, f64::min)
        };
        // The same amount of input both ways: 8 × 1k against 1 × 8k.
        let (a, b) = (time(1_000, 8), time(8_000, 1));
        assert!(b < 30.0, "{what}: 8k took {b:.1} s");
        assert!(
            b / a.max(1e-4) < 4.0,
            "{what}: one 8k input took {:.1}× eight 1k ones",
            b / a
        );
    }
}

/// A named generator of an input of size `n`.
type Shape = (&'static str, fn(usize) -> String);
