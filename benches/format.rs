//! Output formatting throughput: printf records rendered per second (decode + format), map
//! printing and histogram tables. Prints one JSON object per line: name, value, unit, target.

use std::hint::black_box;
use std::time::Instant;

use strobe::runtime::format::agg::{Agg, Num};
use strobe::runtime::format::hist::HistKind;
use strobe::runtime::format::{
    FieldType, MapSnapshot, MapValue, NoResolver, OutputFormat, Printer, PrintfCall, TextStyle,
    Value,
};

fn report(name: &str, value: f64, unit: &str, target: &str) {
    println!(
        "{{\"name\": \"{name}\", \"value\": {value:.1}, \"unit\": \"{unit}\", \"target\": \"{target}\"}}"
    );
}

fn printf_rate() {
    let call = PrintfCall::new(
        "%s pid=%d ret=%ld fd=%-4u %x\n",
        vec![
            FieldType::Str { size: 16 },
            FieldType::Int {
                bytes: 4,
                signed: true,
            },
            FieldType::Int {
                bytes: 8,
                signed: true,
            },
            FieldType::Int {
                bytes: 4,
                signed: false,
            },
            FieldType::Int {
                bytes: 8,
                signed: false,
            },
        ],
    )
    .expect("valid call");
    let mut rec = vec![0u8; call.args_size()];
    rec[..4].copy_from_slice(b"bash");
    let offs = call.offsets();
    rec[offs[1]..offs[1] + 4].copy_from_slice(&4242i32.to_le_bytes());
    rec[offs[2]..offs[2] + 8].copy_from_slice(&(-11i64).to_le_bytes());
    rec[offs[3]..offs[3] + 4].copy_from_slice(&3u32.to_le_bytes());
    rec[offs[4]..offs[4] + 8].copy_from_slice(&0xdeadbeefu64.to_le_bytes());
    let mut out = Vec::with_capacity(1 << 20);
    let n = 1_000_000;
    let t = Instant::now();
    for _ in 0..n {
        out.clear();
        call.render_into(black_box(&rec), &NoResolver, TextStyle::default(), &mut out)
            .expect("renders");
        black_box(&out);
    }
    let secs = t.elapsed().as_secs_f64();
    report("printf_render", n as f64 / secs, "records/s", ">= 1000000");
}

fn map_print() {
    let entries = (0..10_000)
        .map(|i| {
            (
                vec![Value::str(format!("key{i}")), Value::Int(i)],
                MapValue::Agg(Agg::Count((i * 7919 % 10_007) as u64)),
            )
        })
        .collect();
    let m = MapSnapshot {
        name: "@c".into(),
        entries,
    };
    let p = Printer::new(OutputFormat::Text);
    let mut out = Vec::new();
    let reps = 20;
    let t = Instant::now();
    for _ in 0..reps {
        out.clear();
        p.map(&mut out, black_box(&m), 0, 0);
    }
    let ms = t.elapsed().as_secs_f64() * 1e3 / reps as f64;
    report("map_print_10k_entries", ms, "ms", "<= 20");
}

fn hist_print() {
    let kind = HistKind::Log2 { k: 0 };
    let counts: Vec<u64> = (0..65).map(|i| (i * 37 % 101) as u64).collect();
    let m = MapSnapshot {
        name: "@h".into(),
        entries: vec![(vec![], MapValue::Agg(Agg::Hist { kind, counts }))],
    };
    let _ = Num::U(0);
    let p = Printer::new(OutputFormat::Text);
    let mut out = Vec::new();
    let reps = 20_000;
    let t = Instant::now();
    for _ in 0..reps {
        out.clear();
        p.map(&mut out, black_box(&m), 0, 0);
    }
    let us = t.elapsed().as_secs_f64() * 1e6 / reps as f64;
    report("hist_print_65_buckets", us, "us", "<= 50");
}

fn main() {
    printf_rate();
    map_print();
    hist_print();
}
