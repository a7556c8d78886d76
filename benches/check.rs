//! Checker benchmark (`cargo bench --bench check`): parse + check of a ~200-line script built
//! from the example tools, against this host's BTF and tracefs, with kernel BTF loaded once
//! beforehand (its load is measured separately: it happens once per run of strobe). One JSON
//! object per line. Target: parse + check < 2 ms.

use std::time::{Duration, Instant};

use strobe::diag::{render_all, SourceFile};
use strobe::kernel::info::{HostKernel, KernelInfo};
use strobe::sema::{check, CheckOptions};

/// Example scripts without a top-level preamble, so they concatenate into one valid script.
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

fn median_us(mut v: Vec<Duration>) -> (f64, f64) {
    v.sort_unstable();
    (
        v[v.len() / 2].as_secs_f64() * 1e6,
        v[v.len() * 9 / 10].as_secs_f64() * 1e6,
    )
}

fn main() {
    if !std::path::Path::new("/sys/kernel/btf/vmlinux").exists() {
        println!("{{\"name\":\"check_script\",\"skipped\":\"no /sys/kernel/btf/vmlinux\"}}");
        return;
    }
    let t = Instant::now();
    let kernel = HostKernel::new();
    kernel.btf(None).expect("vmlinux BTF loads");
    let btf_ms = t.elapsed().as_secs_f64() * 1e3;
    println!("{{\"name\":\"btf_load\",\"value\":{btf_ms:.2},\"unit\":\"ms\",\"target\":150}}");

    let text = script();
    let lines = text.lines().count();
    let src = SourceFile::new("bench.bt", text);
    let opts = CheckOptions::default();
    let parsed = strobe::syntax::parse(&src);
    assert!(!parsed.has_errors(), "benchmark script must parse");
    let out = check(&parsed.program, &kernel, &opts);
    assert!(
        !out.has_errors(),
        "benchmark script must check:\n{}",
        render_all(&out.diagnostics, &src)
    );
    for _ in 0..20 {
        let p = strobe::syntax::parse(&src);
        std::hint::black_box(check(&p.program, &kernel, &opts));
    }
    let mut total = Vec::new();
    let mut check_only = Vec::new();
    for _ in 0..200 {
        let t = Instant::now();
        let p = strobe::syntax::parse(std::hint::black_box(&src));
        let t1 = Instant::now();
        std::hint::black_box(check(&p.program, &kernel, &opts));
        check_only.push(t1.elapsed());
        total.push(t.elapsed());
    }
    let (med, p90) = median_us(total);
    let (cmed, _) = median_us(check_only.clone());
    if std::env::var_os("CHECK_BENCH_DIST").is_some() {
        let mut v = check_only.clone();
        v.sort_unstable();
        for q in [10, 50, 70, 80, 85, 88, 90, 95, 99] {
            eprintln!("q{q}: {:?}", v[v.len() * q / 100]);
        }
    }
    println!(
        "{{\"name\":\"parse_and_check_script\",\"lines\":{lines},\"value\":{med:.1},\"p90\":{p90:.1},\"check_only\":{cmed:.1},\"unit\":\"us\",\"target\":2000}}"
    );
}
