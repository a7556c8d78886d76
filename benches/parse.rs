//! Parser benchmark: parse a ~200-line script built from the example tools and report the
//! median time per parse as one JSON object per line (`cargo bench --bench parse`).
//! Target: parse + check of a 200-line script under 2 ms in release; parsing alone should use
//! a small fraction of that.

use std::time::{Duration, Instant};

use strobe::diag::SourceFile;

/// Example scripts that have no top-level preamble (C definitions, config, imports), so they
/// can be concatenated into one valid script.
const PARTS: &[&str] = &[
    "opensnoop.bt",
    "syscount.bt",
    "read_size_hist.bt",
    "read_latency.bt",
    "write_latency_lhist.bt",
    "vfsstat.bt",
    "vfscount_fentry.bt",
    "tcp_state.bt",
    "profile_cpu.bt",
    "uprobe_latency.bt",
    "begin_end.bt",
    "interval_summary.bt",
    "tuples.bt",
    "loops.bt",
    "operators.bt",
    "literals.bt",
];

fn script() -> String {
    let dir = std::path::Path::new(env!("CARGO_MANIFEST_DIR")).join("examples");
    let mut out = String::new();
    for p in PARTS {
        let text = std::fs::read_to_string(dir.join(p)).expect("example script");
        for line in text.lines().filter(|l| !l.starts_with("#!")) {
            out.push_str(line);
            out.push('\n');
        }
        if out.lines().count() >= 200 {
            break;
        }
    }
    out
}

fn main() {
    let text = script();
    let lines = text.lines().count();
    let src = SourceFile::new("bench.bt", text);
    let check = strobe::syntax::parse(&src);
    assert!(
        !check.has_errors(),
        "benchmark script must parse: {:?}",
        check.diagnostics
    );

    for _ in 0..50 {
        std::hint::black_box(strobe::syntax::parse(&src));
    }
    let mut samples: Vec<Duration> = (0..500)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(strobe::syntax::parse(std::hint::black_box(&src)));
            t.elapsed()
        })
        .collect();
    samples.sort_unstable();
    let median = samples[samples.len() / 2].as_secs_f64() * 1e6;
    let p90 = samples[samples.len() * 9 / 10].as_secs_f64() * 1e6;
    println!(
        "{{\"name\":\"parse_script\",\"lines\":{lines},\"bytes\":{},\"value\":{median:.1},\"p90\":{p90:.1},\"unit\":\"us\",\"target\":2000}}",
        src.text.len()
    );
}
