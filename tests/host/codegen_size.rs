//! Code size of the reference scripts, composed from the emit primitives the way
//! lowering will compose them, loaded in the kernel (so the counts are of verifiable code).
//! Budgets: bpftrace 0.17's instruction counts on 6.1 (issue #5's table) for the program body;
//! the 6-instruction arming guard strobe adds in front is reported separately. The exact
//! counts live in tests/codegen/sizes.txt (`BLESS=1` rewrites it).

use crate::codegen_support;

use codegen_support::{available, map, Env};
use strobe::codegen::emit::agg::update_agg;
use strobe::codegen::emit::arith::{self, CmpOp};
use strobe::codegen::emit::builtins::{self, ctx_u64};
use strobe::codegen::emit::maps::{hist_key_fields, Counter, Key};
use strobe::codegen::emit::output::{submit, EventKind, Record};
use strobe::codegen::emit::{control, strings, IntTy, Value};
use strobe::codegen::Builder;
use strobe::runtime::format::agg::AggKind;
use strobe::runtime::format::decode::FieldType;
use strobe::runtime::format::hist::HistKind;
use strobe::sys::MapType;

/// The arming guard's instructions: these programs end in `r0 = 0; exit`, which the guard
/// branches to (`Template::with_arming_guard`).
const GUARD: usize = 4;
const COMM: FieldType = FieldType::Str { size: 16 };

fn env() -> Env {
    let mut env = Env::new();
    env.add("@", map(MapType::PercpuHash, "@", 16, 8, 128));
    env.add("@k2", map(MapType::PercpuHash, "@k2", 24, 8, 128));
    env.add("@h", map(MapType::PercpuHash, "@h", 8, 8, 128));
    env.add("drops", map(MapType::Array, "drops", 4, 64, 1));
    env.add("rb", map(MapType::Ringbuf, "rb", 0, 0, 1 << 16));
    env
}

/// `@[comm] = count()`
fn count_by_comm(b: &mut Builder) {
    let m = b.map("@");
    let d = b.map("drops");
    let key = Key::new_filled(b, &[COMM], &[0]);
    builtins::comm(b, key.field(0));
    update_agg(
        b,
        m,
        &key,
        AggKind::Count,
        Value::Imm(0),
        Some(Counter::global(d, 0)),
    );
    b.exit(0);
}

/// `printf("%s %s\n", comm, str(args.filename))`
fn printf_comm_filename(b: &mut Builder) {
    let rb = b.map("rb");
    let d = b.map("drops");
    let rec = Record::new(
        b,
        EventKind::Printf,
        0,
        &[COMM, FieldType::Str { size: 64 }],
    )
    .unwrap();
    builtins::comm(b, rec.arg(0));
    let p = ctx_u64(b, 1, IntTy::U64);
    strings::read_str(b, true, rec.arg(1), 64, p);
    submit(b, rb, &rec, Some(Counter::global(d, 1)));
    b.exit(0);
}

/// `@bytes = hist(retval)`
fn hist_retval(b: &mut Builder) {
    let m = b.map("@h");
    let d = b.map("drops");
    let v = ctx_u64(b, 1, IntTy::I64);
    let key = Key::new(b, &hist_key_fields(&[]));
    let kind = AggKind::Hist(HistKind::Log2 { k: 0 });
    update_agg(b, m, &key, kind, v, Some(Counter::global(d, 0)));
    b.exit(0);
}

/// `@[pid, comm] = sum(args.count)`
fn sum_by_pid_comm(b: &mut Builder) {
    let m = b.map("@k2");
    let d = b.map("drops");
    let pid_ty = FieldType::Int {
        bytes: 4,
        signed: false,
    };
    let key = Key::new_filled(b, &[pid_ty, COMM], &[1]);
    let pid = builtins::pid(b);
    key.set_int(b, 0, pid);
    builtins::comm(b, key.field(1));
    let n = ctx_u64(b, 2, IntTy::U64);
    update_agg(
        b,
        m,
        &key,
        AggKind::Sum { signed: false },
        n,
        Some(Counter::global(d, 0)),
    );
    b.exit(0);
}

/// `/args.ret < 0/ { @errs[comm, args.id] = count(); }`
fn errs_by_comm_id(b: &mut Builder) {
    let m = b.map("@k2");
    let d = b.map("drops");
    let ret = ctx_u64(b, 1, IntTy::I64);
    let neg = arith::compare(b, CmpOp::Lt, ret, Value::Imm(0), true);
    control::if_then(b, neg, |b| {
        let key = Key::new_filled(
            b,
            &[
                COMM,
                FieldType::Int {
                    bytes: 8,
                    signed: true,
                },
            ],
            &[0],
        );
        builtins::comm(b, key.field(0));
        let id = ctx_u64(b, 0, IntTy::I64);
        key.set_int(b, 1, id);
        update_agg(
            b,
            m,
            &key,
            AggKind::Count,
            Value::Imm(0),
            Some(Counter::global(d, 0)),
        );
    });
    b.exit(0);
}

#[test]
fn reference_scripts_are_no_larger_than_bpftrace_0_17() {
    if !available("reference_scripts_are_no_larger_than_bpftrace_0_17") {
        return;
    }
    let env = env();
    type Script = (&'static str, fn(&mut Builder), usize);
    let scripts: [Script; 5] = [
        ("@[comm] = count()", count_by_comm, 27),
        (
            "printf(\"%s %s\\n\", comm, str(args.filename))",
            printf_comm_filename,
            53,
        ),
        ("@bytes = hist(retval)", hist_retval, 54),
        ("@[pid, comm] = sum(args.count)", sum_by_pid_comm, 35),
        (
            "/args.ret < 0/ { @errs[comm, args.id] = count() }",
            errs_by_comm_id,
            40,
        ),
    ];
    let mut over = Vec::new();
    let mut golden = String::new();
    for (name, build, budget) in scripts {
        let mut b = Builder::new();
        build(&mut b);
        let p = env.load(b);
        p.run(&[1, (-2i64) as u64, 4096]);
        let body = p.insn_count() - GUARD;
        eprintln!("{body:>4} insns (+{GUARD} guard), bpftrace 0.17: {budget:>3}  {name}");
        if body > budget {
            over.push(format!("{name}: {body} > {budget}"));
        }
        golden.push_str(&format!("{body}\t{name}\n"));
    }
    assert!(over.is_empty(), "over budget: {over:?}");
    // The exact counts are a golden file, so any change in code size shows in review.
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/codegen/sizes.txt");
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(path, &golden).unwrap();
    }
    let want = std::fs::read_to_string(path).unwrap_or_default();
    assert_eq!(
        golden, want,
        "code size changed; review and re-run with BLESS=1"
    );
}
