//! Compile time against script size (`cargo bench --bench compile_scale`): parse + check +
//! lower (the work of `--dry-run`) of one probe of 1k, 10k and 100k statements mixing map
//! assignments, histograms, keyed counts, branches and locals. One JSON object per line; the
//! last line gives the time ratio per 10× of statements, which stays near 10 when every pass
//! is near-linear (a quadratic pass shows as ~100).

use std::time::Instant;

use strobe::diag::SourceFile;
use strobe::kernel::info::HostKernel;
use strobe::sema::CheckOptions;

/// One probe of `n` statements (the same shape as the scaling tests in tests/compile_scale.rs).
fn script(n: usize) -> String {
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

fn main() {
    let kernel = HostKernel::new();
    let opts = CheckOptions::default();
    let mut times = Vec::new();
    for n in [1_000usize, 10_000, 100_000] {
        let src = SourceFile::new("scale.bt", script(n));
        // Best of a few runs (fewer for the big one): the figure is the pass cost, not noise.
        let runs = if n >= 100_000 { 2 } else { 5 };
        let mut best = f64::MAX;
        let mut insns = 0;
        for _ in 0..runs {
            let t = Instant::now();
            let out = strobe::compile::compile(&src, &kernel, &opts);
            best = best.min(t.elapsed().as_secs_f64() * 1e3);
            let script = out.script.expect("the scaling script compiles");
            insns = script.probes.iter().map(|p| p.template.insns.len()).sum();
        }
        times.push(best);
        println!(
            "{{\"name\":\"compile_statements\",\"statements\":{n},\"value\":{best:.1},\"unit\":\"ms\",\"per_statement_us\":{:.2},\"insns\":{insns}}}",
            best * 1e3 / n as f64
        );
    }
    println!(
        "{{\"name\":\"compile_scaling\",\"ratio_10k_1k\":{:.1},\"ratio_100k_10k\":{:.1},\"target\":\"< 20 per 10x\"}}",
        times[1] / times[0],
        times[2] / times[1]
    );
}
