//! Compile time and memory stay near-linear in the script's size: one probe of many
//! statements, a deeply nested tuple, many maps, and the assembler's unknown-label
//! suggestions, each compared at two sizes (a ratio of the thread's CPU time, so a busy
//! machine does not matter) or bounded generously (about 10× the time measured on a debug
//! build). Quadratic passes took
//! 22 s for 12,800 statements, 25 s for a 65-deep tuple and 70 s for 10,000 unknown labels.

use std::time::{Duration, Instant};

use strobe::diag::SourceFile;
use strobe::kernel::info::MockKernel;
use strobe::sema::CheckOptions;
use strobe_testkit::thread_cpu_seconds as cpu_seconds;

/// One probe of `n` statements mixing the shapes that were quadratic: map assignments,
/// histograms (cross-jumped tails), keyed counts, branches and locals.
fn probe(n: usize) -> String {
    let mut s = String::from("BEGIN {\n");
    for i in 0..n {
        let line = match i % 5 {
            0 => format!("@a = {i};\n"),
            1 => format!("@h = hist({i});\n"),
            2 => format!("@m[{i} % 64] = count();\n"),
            3 => format!("if (pid == {i}) {{ @c = {i}; }}\n"),
            _ => format!("$v = {i} + nsecs;\n"),
        };
        s.push_str(&line);
    }
    s.push_str("}\n");
    s
}

/// Seconds to parse, check and lower `text` (the work of `--dry-run`); panics unless it
/// compiles, or fails with a clear error when `may_fail`.
fn compile_secs(text: String, may_fail: bool) -> f64 {
    let kernel = MockKernel::fixture();
    let src = SourceFile::new("scale.bt", text);
    let t = cpu_seconds();
    let out = strobe::compile::compile(&src, &kernel, &CheckOptions::default());
    let secs = cpu_seconds() - t;
    if !may_fail {
        assert!(
            out.script.is_some(),
            "{}",
            strobe::diag::render_all(&out.diagnostics, &src)
        );
    } else {
        assert!(out.script.is_some() || out.diagnostics.iter().any(|d| d.is_error()));
    }
    secs
}

/// The best of three runs each of a small and an 8× larger input: their time ratio, which is
/// about 8 when linear and about 64 when quadratic.
fn ratio(make: impl Fn(usize) -> String, small: usize, may_fail: bool) -> f64 {
    let best = |n: usize| {
        (0..3)
            .map(|_| compile_secs(make(n), may_fail))
            .fold(f64::MAX, f64::min)
    };
    let a = best(small);
    let b = best(small * 8);
    b / a.max(1e-4)
}

#[test]
fn compile_time_grows_linearly_with_statements() {
    let r = ratio(probe, 2_000, false);
    assert!(r < 32.0, "16k statements took {r:.1}× the time of 2k");
}

#[test]
fn a_20k_statement_probe_compiles_in_bounded_time() {
    let secs = compile_secs(probe(20_000), false);
    assert!(secs < 60.0, "20k statements took {secs:.1} s");
}

#[test]
fn many_distinct_maps_compile_in_linear_time() {
    let maps = |n: usize| {
        let mut s = String::from("BEGIN {\n");
        for i in 0..n {
            s.push_str(&format!("@map_{i} = {i};\n"));
        }
        s + "}\n"
    };
    let r = ratio(maps, 1_000, false);
    assert!(r < 32.0, "8k maps took {r:.1}× the time of 1k");
}

#[test]
fn a_deeply_nested_tuple_is_refused_or_compiled_quickly() {
    // 65 levels: a clear stack-size error, in well under a second on a release build.
    let tuple = |d: usize| {
        format!(
            "BEGIN {{ $t = {}1{}; @m = $t; print(@m); }}",
            "(1,".repeat(d),
            ")".repeat(d)
        )
    };
    let t = Instant::now();
    compile_secs(tuple(65), true);
    assert!(t.elapsed() < Duration::from_secs(20), "{:?}", t.elapsed());
}

#[test]
fn unknown_labels_in_assembly_are_reported_in_linear_time() {
    let source = |n: usize| {
        let mut s = String::from(".text\n");
        for i in 0..n {
            s.push_str(&format!("  goto lab_{i}\n"));
        }
        for i in 0..n {
            s.push_str(&format!("labx_{i}:\n"));
        }
        s + "  exit\n"
    };
    let secs = |n: usize| {
        let src = SourceFile::new("unk.s", source(n));
        let t = cpu_seconds();
        let Err(diags) = strobe::asm::assemble(&src) else {
            panic!("unknown labels must be errors");
        };
        let secs = cpu_seconds() - t;
        assert_eq!(diags.len(), n);
        let first = diags
            .iter()
            .find(|d| d.message == "unknown label `lab_0`")
            .expect("lab_0 reported");
        assert_eq!(first.help.as_deref(), Some("did you mean `labx_0`?"));
        secs
    };
    let a = secs(1_000).min(secs(1_000));
    let b = secs(8_000).min(secs(8_000));
    assert!(
        b / a.max(1e-4) < 24.0,
        "8k unknown labels took {:.1}× 1k",
        b / a
    );
    assert!(b < 30.0, "8k unknown labels took {b:.1} s");
}

/// CPU time of this thread (a ratio of wall-clock times is skewed on a busy machine).
#[test]
fn many_assembly_sections_are_assembled_in_linear_time() {
    // `n` programs in sections of their own, each entered twice.
    let source = |n: usize| {
        let mut s = String::new();
        for i in 0..n {
            s.push_str(&format!(".section raw_tp/s{i}\n  r0 = 0\n"));
        }
        for i in 0..n {
            s.push_str(&format!(".section raw_tp/s{i}\n  exit\n"));
        }
        s
    };
    let secs = |n: usize, reps: usize| {
        let src = SourceFile::new("sections.s", source(n));
        (0..3)
            .map(|_| {
                let t = cpu_seconds();
                for _ in 0..reps {
                    let obj = strobe::asm::assemble(&src).expect("assembles");
                    assert_eq!(obj.sections.len(), n);
                }
                cpu_seconds() - t
            })
            .fold(f64::MAX, f64::min)
    };
    // Equal work both ways: 8 × 1k sections against 1 × 8k (linear ~1, quadratic ~8).
    let (a, b) = (secs(1_000, 8), secs(8_000, 1));
    assert!(
        b / a.max(1e-4) < 4.0,
        "8k sections took {:.1}× 8 × 1k",
        b / a
    );
}
