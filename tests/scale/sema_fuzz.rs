//! The checker never panics: every example, and thousands of deterministic mutations of them
//! that still parse, are checked against the mock kernel (and must not panic whatever errors
//! they produce).

use strobe::diag::SourceFile;
use strobe::kernel::info::MockKernel;
use strobe::sema::{check, CheckOptions};

/// A small deterministic generator (no dependency, reproducible failures).
struct Lcg(u64);

impl Lcg {
    fn next(&mut self) -> u64 {
        self.0 = self
            .0
            .wrapping_mul(6364136223846793005)
            .wrapping_add(1442695040888963407);
        self.0 >> 33
    }
    fn below(&mut self, n: usize) -> usize {
        (self.next() as usize) % n.max(1)
    }
}

const PIECES: &[&str] = &[
    "args.",
    "->",
    "$1",
    "@m",
    "[1]",
    "count()",
    "(",
    ")",
    "\"s\"",
    "0",
    "-",
    "retval",
    "*",
    "comm",
    "(struct file *)",
    ".0",
    "hist(",
    ",",
    "arg0",
    "$x",
    "printf(\"%d\", ",
    "&",
    "sizeof(",
];

#[test]
fn checking_mutated_examples_never_panics() {
    let kernel = MockKernel::fixture();
    let opts = CheckOptions {
        params: vec!["1".into(), "x".into()],
        ..CheckOptions::default()
    };
    let mut texts = Vec::new();
    for e in std::fs::read_dir("examples").expect("examples/") {
        let p = e.expect("entry").path();
        if p.extension().is_some_and(|x| x == "bt") {
            texts.push(std::fs::read_to_string(&p).expect("readable"));
        }
    }
    let mut rng = Lcg(0x5eed);
    let mut checked = 0;
    for round in 0..3000 {
        let base = &texts[round % texts.len()];
        let mut t = base.clone();
        for _ in 0..1 + rng.below(3) {
            let mut at = rng.below(t.len());
            while !t.is_char_boundary(at) {
                at -= 1;
            }
            if rng.below(2) == 0 {
                t.insert_str(at, PIECES[rng.below(PIECES.len())]);
            } else {
                let mut end = (at + 1 + rng.below(6)).min(t.len());
                while !t.is_char_boundary(end) {
                    end -= 1;
                }
                t.replace_range(at..end, "");
            }
        }
        let src = SourceFile::new("m.bt", t);
        let parsed = strobe::syntax::parse(&src);
        if !parsed.has_errors() {
            checked += 1;
        }
        // Partial trees after parse errors must not make the checker panic either.
        let _ = check(&parsed.program, &kernel, &opts);
    }
    assert!(checked > 100, "only {checked} mutations parsed cleanly");
}

/// Huge inputs that parse: checked (no panic, errors allowed) at a small and an 8× size, with
/// the time ratio near-linear (a quadratic pass shows as ~64) and a generous absolute bound.
#[test]
fn checking_huge_inputs_stays_near_linear() {
    let kernel = MockKernel::fixture();
    let opts = CheckOptions::default();
    let shapes: [Shape; 5] = [
        ("statements", |n| {
            format!(
                "BEGIN {{ {} }}",
                "@x = 1; $y = @x + 2; @h = hist($y);".repeat(n)
            )
        }),
        ("distinct maps", |n| {
            let body: String = (0..n).map(|i| format!("@m{i}[{i}] = count(); ")).collect();
            format!("BEGIN {{ {body} }}")
        }),
        ("distinct variables", |n| {
            let body: String = (0..n).map(|i| format!("$v{i} = {i}; ")).collect();
            format!("BEGIN {{ {body} }}")
        }),
        ("probes", |n| "BEGIN { @[1] = count(); }\n".repeat(n)),
        ("unknown names", |n| {
            let body: String = (0..n).map(|i| format!("$x = nosuch_{i}(); ")).collect();
            format!("BEGIN {{ {body} }}")
        }),
    ];
    for (what, make) in shapes {
        let time = |n: usize| {
            let src = SourceFile::new("huge.bt", make(n));
            let parsed = strobe::syntax::parse(&src);
            (0..3)
                .map(|_| {
                    // CPU time: another process's load must not look like a quadratic pass.
                    let t = strobe_testkit::thread_cpu_seconds();
                    std::hint::black_box(check(&parsed.program, &kernel, &opts));
                    strobe_testkit::thread_cpu_seconds() - t
                })
                .fold(f64::MAX, f64::min)
        };
        let (a, b) = (time(500), time(4_000));
        assert!(b < 30.0, "{what}: 4k took {b:.1} s");
        assert!(b / a.max(1e-3) < 32.0, "{what}: 4k took {:.1}× 500", b / a);
    }
}

/// A named generator of an input of size `n`.
type Shape = (&'static str, fn(usize) -> String);
