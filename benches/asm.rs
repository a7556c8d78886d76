//! Assembler and disassembler throughput on a generated 1,000,000-instruction file (every
//! instruction form in turn, with labels and jumps to them). Prints one JSON object per line:
//! `{"name", "value", "unit", "target"}`; the target is 5 M instructions/s each way.
//!
//! `value` is per second of this thread's CPU time (the best of 3 runs), because the machines
//! this runs on are shared and wall time mostly measures the neighbours; `wall_seconds` is
//! printed beside it.

use std::time::Instant;

use strobe::asm::{assemble_insns, disassemble};
use strobe_testkit::forms::all_forms;

const N: usize = 1_000_000;
const TARGET: f64 = 5_000_000.0;

fn corpus() -> (String, usize) {
    let forms = all_forms();
    let mut text = String::with_capacity(N * 28);
    let mut count = 0;
    let mut i = 0;
    while count < N {
        if count % 64 == 0 {
            text.push_str(&format!("L{count}:\n"));
        }
        if count % 64 == 63 {
            text.push_str(&format!("  if r1 > 7 goto L{}\n", count - 63));
            count += 1;
            continue;
        }
        let d = &forms[i % forms.len()];
        i += 1;
        text.push_str("  ");
        text.push_str(&d.to_string());
        text.push('\n');
        count += d.len();
    }
    (text, count)
}

fn report(name: &str, insns: usize, (cpu, wall): (f64, f64)) {
    println!(
        "{{\"name\":\"{name}\",\"value\":{:.0},\"unit\":\"insn/s\",\"target\":{TARGET:.0},\"insns\":{insns},\"cpu_seconds\":{cpu:.4},\"wall_seconds\":{wall:.4}}}",
        insns as f64 / cpu
    );
}

/// This thread's CPU time in seconds.
fn cpu_now() -> f64 {
    let mut ts = libc::timespec {
        tv_sec: 0,
        tv_nsec: 0,
    };
    // SAFETY: clock_gettime writes one timespec into the valid pointer it is given.
    unsafe { libc::clock_gettime(libc::CLOCK_THREAD_CPUTIME_ID, &mut ts) };
    ts.tv_sec as f64 + ts.tv_nsec as f64 * 1e-9
}

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> (T, (f64, f64)) {
    let (mut cpu, mut wall) = (f64::MAX, f64::MAX);
    let mut out = None;
    for _ in 0..runs {
        let (c, t) = (cpu_now(), Instant::now());
        let r = f();
        cpu = cpu.min(cpu_now() - c);
        wall = wall.min(t.elapsed().as_secs_f64());
        out = Some(r);
    }
    (out.expect("at least one run"), (cpu, wall))
}

fn main() {
    let (text, count) = corpus();
    let (insns, t) = best_of(3, || assemble_insns(&text).expect("corpus assembles"));
    assert_eq!(insns.len(), count);
    report("asm_assemble", count, t);
    let (out, t) = best_of(3, || disassemble(&insns));
    assert!(out.len() > count);
    report("asm_disassemble", count, t);
}
