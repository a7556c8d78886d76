//! Syscall-layer costs on this machine, one JSON object per line: map update/lookup per
//! element, batch lookup per element, a raw_tp program load (verifier included), a test run,
//! and the full feature probe. Needs CAP_BPF; prints a skip line otherwise.

use std::time::Instant;

use strobe::asm::{Insn, Reg};
use strobe::btf::Btf;
use strobe::kernel::features::probe;
use strobe::sys::{
    Map, MapCreateOptions, MapType, Prog, ProgLoadOptions, ProgType, TestRunOptions, UpdateFlags,
};

fn emit(name: &str, value: f64, unit: &str, target: &str) {
    println!(
        "{{\"name\":\"{name}\",\"value\":{value:.1},\"unit\":\"{unit}\",\"target\":\"{target}\"}}"
    );
}

fn main() {
    let m = match Map::create(
        MapType::Hash,
        &MapCreateOptions {
            name: "bench",
            key_size: 8,
            value_size: 8,
            max_entries: 100_000,
            ..Default::default()
        },
    ) {
        Ok(m) => m,
        Err(e) => {
            println!("{{\"name\":\"sys_ops\",\"skipped\":\"{e}\"}}");
            return;
        }
    };
    let n = 100_000u64;
    let t = Instant::now();
    for k in 0..n {
        m.update(&k.to_ne_bytes(), &k.to_ne_bytes(), UpdateFlags::empty())
            .unwrap();
    }
    emit(
        "map_update",
        t.elapsed().as_nanos() as f64 / n as f64,
        "ns/op",
        "none",
    );
    let mut v = [0u8; 8];
    let t = Instant::now();
    for k in 0..n {
        m.lookup(&k.to_ne_bytes(), &mut v).unwrap();
    }
    emit(
        "map_lookup",
        t.elapsed().as_nanos() as f64 / n as f64,
        "ns/op",
        "none",
    );
    let t = Instant::now();
    let mut token: Option<Vec<u8>> = None;
    let mut seen = 0u64;
    loop {
        let mut out = vec![0u8; m.batch_token_len()];
        let mut keys = vec![0u8; 8 * 4096];
        let mut vals = vec![0u8; 8 * 4096];
        let b = m
            .lookup_batch(token.as_deref(), &mut out, &mut keys, &mut vals)
            .unwrap();
        seen += u64::from(b.count);
        if b.done {
            break;
        }
        token = Some(out);
    }
    assert_eq!(seen, n);
    emit(
        "map_lookup_batch",
        t.elapsed().as_nanos() as f64 / n as f64,
        "ns/elem",
        "none",
    );

    let insns = [Insn::mov64_imm(Reg::R0, 1), Insn::exit()];
    let reps = 200;
    let t = Instant::now();
    let mut last = None;
    for _ in 0..reps {
        last = Some(Prog::load(&ProgLoadOptions::new(ProgType::RawTracepoint, &insns)).unwrap());
    }
    emit(
        "prog_load_2insn",
        t.elapsed().as_micros() as f64 / reps as f64,
        "us/op",
        "none",
    );
    let p = last.unwrap();
    let t = Instant::now();
    for _ in 0..10_000 {
        p.test_run(&mut TestRunOptions::raw_tp(&[0])).unwrap();
    }
    emit(
        "raw_tp_test_run",
        t.elapsed().as_nanos() as f64 / 10_000.0,
        "ns/op",
        "none",
    );
    let t = Instant::now();
    let _ = probe(&Btf::from_vmlinux().expect("vmlinux BTF"));
    emit(
        "feature_probe",
        t.elapsed().as_millis() as f64,
        "ms",
        "none",
    );
}
