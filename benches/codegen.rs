//! Code generator throughput: builder → regalloc → stack → peephole → template, for the
//! issue's `@[comm] = count()` and `@bytes = hist(retval)` probes and a 200-term expression
//! that spills. One JSON object per line (name, value, unit, target).

use std::time::Instant;

use strobe::codegen::emit::agg::update_agg;
use strobe::codegen::emit::arith::{binop, BinOp};
use strobe::codegen::emit::builtins::{self, ctx_u64};
use strobe::codegen::emit::maps::{hist_key_fields, Counter, Key};
use strobe::codegen::emit::{IntTy, Value};
use strobe::codegen::{finish, Builder, FinishOptions};
use strobe::runtime::format::agg::AggKind;
use strobe::runtime::format::decode::FieldType;
use strobe::runtime::format::hist::HistKind;
use strobe::template::AttachKind;

fn count_by_comm() -> Builder {
    let mut b = Builder::new();
    let m = b.map("@");
    let d = b.map("drops");
    let key = Key::new_filled(&mut b, &[FieldType::Str { size: 16 }], &[0]);
    builtins::comm(&mut b, key.field(0));
    update_agg(
        &mut b,
        m,
        &key,
        AggKind::Count,
        Value::Imm(0),
        Some(Counter::global(d, 0)),
    );
    b.exit(0);
    b
}

fn hist_retval() -> Builder {
    let mut b = Builder::new();
    let m = b.map("@h");
    let v = ctx_u64(&mut b, 1, IntTy::I64);
    let key = Key::new(&mut b, &hist_key_fields(&[]));
    update_agg(
        &mut b,
        m,
        &key,
        AggKind::Hist(HistKind::Log2 { k: 0 }),
        v,
        None,
    );
    b.exit(0);
    b
}

fn big_expression() -> Builder {
    let mut b = Builder::new();
    let vals: Vec<Value> = (0..8).map(|i| ctx_u64(&mut b, i, IntTy::U64)).collect();
    let _ = builtins::nsecs(&mut b);
    let mut acc = Value::Imm(1);
    for i in 0..200 {
        let op = [BinOp::Add, BinOp::Mul, BinOp::Xor, BinOp::Div][i % 4];
        acc = binop(&mut b, op, acc, vals[i % 8], IntTy::I32);
    }
    let r = acc.reg(&mut b);
    b.exit(r);
    b
}

fn bench(name: &str, make: fn() -> Builder, target: f64) {
    let opts = FinishOptions {
        name: "bench".into(),
        attach: AttachKind::Kprobe { retprobe: false },
        arming_guard: true,
    };
    let insns = finish(make(), &opts).unwrap().template.insns.len();
    let n = 20_000;
    let t = Instant::now();
    for _ in 0..n {
        let c = finish(make(), &opts).unwrap();
        std::hint::black_box(c);
    }
    let per_s = n as f64 / t.elapsed().as_secs_f64();
    println!(
        "{{\"name\": \"codegen_{name}\", \"value\": {per_s:.0}, \"unit\": \"programs/s\", \"target\": {target}, \"insns\": {insns}}}"
    );
}

fn main() {
    bench("count_by_comm", count_by_comm, 10_000.0);
    bench("hist_retval", hist_retval, 10_000.0);
    bench("expr200_spilling", big_expression, 1_000.0);
}
