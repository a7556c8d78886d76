//! Maps and aggregations of generated code, checked in the kernel: every aggregation's per-CPU
//! layout merged with `runtime::format::agg` against a model computed in Rust, hist/lhist
//! bucket edges against `runtime::format::hist`, tuple and string keys laid out like
//! `tuple_offsets`, lookup/delete/exists, and map-full drop accounting.

use crate::codegen_support;

use std::collections::BTreeMap;

use codegen_support::{available, map, percpu_sum, store_out, Env};
use strobe::codegen::emit::agg::update_agg;
use strobe::codegen::emit::builtins::ctx_u64;
use strobe::codegen::emit::maps::{self, hist_key_fields, Counter, Key};
use strobe::codegen::emit::mem::write_str;
use strobe::codegen::emit::{control, IntTy, Value};
use strobe::codegen::Builder;
use strobe::runtime::format::agg::{Agg, AggKind, Num};
use strobe::runtime::format::decode::{tuple_offsets, FieldType};
use strobe::runtime::format::hist::{linear_bucket, log2_bucket, HistKind};
use strobe::sys::MapType;

const U64: FieldType = FieldType::Int {
    bytes: 8,
    signed: false,
};

/// A program doing `@agg[arg0] = kind(arg1)` on per-CPU hash `agg`, dropping into `drops[1]`.
fn agg_program(env: &mut Env, kind: AggKind, value_words: u32) -> codegen_support::Loaded {
    env.add(
        "agg",
        map(MapType::PercpuHash, "agg", 8, 8 * value_words, 64),
    );
    env.add("drops", map(MapType::PercpuArray, "drops", 4, 8, 2));
    let mut b = Builder::new();
    let m = b.map("agg");
    let d = b.map("drops");
    let k = ctx_u64(&mut b, 0, IntTy::U64);
    let v = ctx_u64(&mut b, 1, IntTy::I64);
    let key = Key::new(&mut b, &[U64]);
    key.set_int(&mut b, 0, k);
    update_agg(&mut b, m, &key, kind, v, Some(Counter::percpu(d, 1)));
    b.exit(0);
    env.load(b)
}

const SAMPLES: [(u64, i64); 12] = [
    (1, 5),
    (2, -3),
    (1, 7),
    (1, -2),
    (3, 0),
    (2, i64::MAX),
    (2, i64::MIN),
    (1, 100),
    (3, 9),
    (4, -1),
    (4, -1),
    (1, 5),
];

#[test]
fn every_scalar_aggregation_merges_to_the_rust_model() {
    if !available("every_scalar_aggregation_merges_to_the_rust_model") {
        return;
    }
    let kinds = [
        AggKind::Count,
        AggKind::Sum { signed: true },
        AggKind::Min { signed: true },
        AggKind::Max { signed: true },
        AggKind::Min { signed: false },
        AggKind::Max { signed: false },
        AggKind::Avg { signed: true },
        AggKind::Stats { signed: true },
    ];
    for kind in kinds {
        let words = match kind {
            AggKind::Count | AggKind::Sum { .. } => 1,
            _ => 2,
        };
        let mut env = Env::new();
        let p = agg_program(&mut env, kind, words);
        for (k, v) in SAMPLES {
            p.run(&[k, v as u64]);
        }
        let m = env.get("agg");
        for key in 1u64..=4 {
            let vals: Vec<i64> = SAMPLES.iter().filter(|s| s.0 == key).map(|s| s.1).collect();
            let raw = m.lookup_vec(&key.to_le_bytes()).unwrap().unwrap();
            let got = kind.merge(&raw);
            let signed = !matches!(
                kind,
                AggKind::Min { signed: false } | AggKind::Max { signed: false }
            );
            let num = |v: i64| if signed { Num::I(v) } else { Num::U(v as u64) };
            let total = vals.iter().fold(0i64, |a, v| a.wrapping_add(*v));
            let want = match kind {
                AggKind::Count => Agg::Count(vals.len() as u64),
                AggKind::Sum { .. } => Agg::Sum(Num::I(total)),
                AggKind::Min { signed: true } => Agg::Min(vals.iter().min().map(|v| num(*v))),
                AggKind::Max { signed: true } => Agg::Max(vals.iter().max().map(|v| num(*v))),
                AggKind::Min { signed: false } => {
                    Agg::Min(vals.iter().map(|v| *v as u64).min().map(Num::U))
                }
                AggKind::Max { signed: false } => {
                    Agg::Max(vals.iter().map(|v| *v as u64).max().map(Num::U))
                }
                AggKind::Avg { .. } => Agg::Avg {
                    total: Num::I(total),
                    count: vals.len() as u64,
                },
                AggKind::Stats { .. } => Agg::Stats {
                    total: Num::I(total),
                    count: vals.len() as u64,
                },
                AggKind::Hist(_) | AggKind::TSeries(_) => unreachable!(),
            };
            assert_eq!(got, want, "{kind:?} key {key}");
        }
        assert_eq!(
            percpu_sum(env.get("drops"), &1u32.to_le_bytes()).unwrap()[0],
            0
        );
    }
}

/// Values around every log2 edge for `k`, plus extremes.
fn log2_edges(k: u8) -> Vec<i64> {
    let mut v = vec![i64::MIN, -100, -1, 0, 1, 2, 3, i64::MAX, i64::MAX - 1];
    for p in 0..63 {
        let base = 1i64 << p;
        v.extend([base - 1, base, base.wrapping_add(1)]);
        let sub = base >> k.min(p as u8);
        if sub > 0 {
            v.extend([
                base.wrapping_add(sub - 1),
                base.wrapping_add(sub),
                base.wrapping_add(sub.wrapping_mul(2).wrapping_sub(1)),
            ]);
        }
    }
    v
}

fn bucket_counts(m: &strobe::sys::Map) -> BTreeMap<u64, u64> {
    m.keys()
        .unwrap()
        .into_iter()
        .map(|k| {
            let b = u64::from_le_bytes(k[..8].try_into().unwrap());
            (b, percpu_sum(m, &k).unwrap()[0])
        })
        .collect()
}

#[test]
fn hist_buckets_match_format_hist_at_every_edge_for_every_k() {
    if !available("hist_buckets_match_format_hist_at_every_edge_for_every_k") {
        return;
    }
    for k in 0..=5u8 {
        let mut env = Env::new();
        env.add("h", map(MapType::PercpuHash, "h", 8, 8, 4096));
        let mut b = Builder::new();
        let m = b.map("h");
        let v = ctx_u64(&mut b, 0, IntTy::I64);
        let key = Key::new(&mut b, &hist_key_fields(&[]));
        update_agg(
            &mut b,
            m,
            &key,
            AggKind::Hist(HistKind::Log2 { k }),
            v,
            None,
        );
        b.exit(0);
        let p = env.load(b);
        let mut want: BTreeMap<u64, u64> = BTreeMap::new();
        for v in log2_edges(k) {
            p.run(&[v as u64]);
            *want.entry(log2_bucket(v, k) as u64).or_default() += 1;
        }
        assert_eq!(bucket_counts(env.get("h")), want, "hist k={k}");
    }
}

#[test]
fn lhist_buckets_match_format_hist_at_range_edges() {
    if !available("lhist_buckets_match_format_hist_at_range_edges") {
        return;
    }
    let ranges = [
        (0i64, 100i64, 10i64),
        (-50, 50, 7),
        (1000, 1_000_000, 1000),
        (0, 10, 3),
        (-(1 << 40), 1 << 40, 1 << 33),
    ];
    for (min, max, step) in ranges {
        let mut env = Env::new();
        env.add("h", map(MapType::PercpuHash, "h", 8, 8, 4096));
        let mut b = Builder::new();
        let m = b.map("h");
        let v = ctx_u64(&mut b, 0, IntTy::I64);
        let key = Key::new(&mut b, &hist_key_fields(&[]));
        let kind = AggKind::Hist(HistKind::Linear { min, max, step });
        update_agg(&mut b, m, &key, kind, v, None);
        b.exit(0);
        let p = env.load(b);
        let mut want: BTreeMap<u64, u64> = BTreeMap::new();
        let mut values = vec![
            i64::MIN,
            i64::MAX,
            min - 1,
            min,
            min + 1,
            max - 1,
            max,
            max + 1,
        ];
        let mut x = min;
        while x <= max {
            values.extend([x - 1, x, x + 1, x + step - 1]);
            x = x.saturating_add(step);
            if values.len() > 2000 {
                break;
            }
        }
        for v in values {
            p.run(&[v as u64]);
            *want
                .entry(linear_bucket(v, min, max, step) as u64)
                .or_default() += 1;
        }
        assert_eq!(
            bucket_counts(env.get("h")),
            want,
            "lhist({min}, {max}, {step})"
        );
    }
}

/// The key `(u32 a, str[16] s, u64 c)` as userspace lays it out.
fn tuple_key(a: u32, s: &str, c: u64) -> Vec<u8> {
    let fields = [
        FieldType::Int {
            bytes: 4,
            signed: false,
        },
        FieldType::Str { size: 16 },
        U64,
    ];
    let off = tuple_offsets(&fields);
    let mut k = vec![0u8; FieldType::Tuple(fields.to_vec()).size()];
    k[off[0]..off[0] + 4].copy_from_slice(&a.to_le_bytes());
    k[off[1]..off[1] + s.len()].copy_from_slice(s.as_bytes());
    k[off[2]..off[2] + 8].copy_from_slice(&c.to_le_bytes());
    k
}

#[test]
fn tuple_keys_with_strings_match_userspace_layout_and_delete_and_exists_work() {
    if !available("tuple_keys_with_strings_match_userspace_layout_and_delete_and_exists_work") {
        return;
    }
    let mut env = Env::new();
    let key_size = tuple_key(0, "", 0).len() as u32;
    assert_eq!(key_size, 32);
    env.add("m", map(MapType::Hash, "m", key_size, 8, 16));
    // op 0: @m[a, s, c] = v; op 1: out = (exists, delete, lookup-or-zero)
    let mut b = Builder::new();
    let m = b.map("m");
    let op = ctx_u64(&mut b, 0, IntTy::U64);
    let a = ctx_u64(&mut b, 1, IntTy::U32);
    let which = ctx_u64(&mut b, 2, IntTy::U64);
    let c = ctx_u64(&mut b, 3, IntTy::U64);
    let v = ctx_u64(&mut b, 4, IntTy::I64);
    let fields = [
        FieldType::Int {
            bytes: 4,
            signed: false,
        },
        FieldType::Str { size: 16 },
        U64,
    ];
    let key = Key::new(&mut b, &fields);
    key.set_int(&mut b, 0, a);
    let place = key.field(1);
    control::if_else(
        &mut b,
        which,
        |b| write_str(b, place, b"beta-gamma", 16),
        |b: &mut Builder| write_str(b, place, b"alpha", 16),
    );
    key.set_int(&mut b, 2, c);
    let is_write = strobe::codegen::emit::arith::compare(
        &mut b,
        strobe::codegen::emit::arith::CmpOp::Eq,
        op,
        Value::Imm(0),
        false,
    );
    control::if_else(
        &mut b,
        is_write,
        |b| maps::store(b, m, key.place, v, IntTy::I64, None),
        |b: &mut Builder| {
            let before = maps::lookup_or_zero(b, m, key.place, IntTy::I64);
            store_out(b, 0, before);
            let e = maps::exists(b, m, key.place);
            store_out(b, 1, e);
            let d = maps::delete(b, m, key.place);
            store_out(b, 2, d);
            let e = maps::exists(b, m, key.place);
            store_out(b, 3, e);
        },
    );
    b.exit(0);
    let p = env.load(b);
    let rows = [
        (7u32, 0u64, 99u64, -5i64),
        (7, 1, 99, 12),
        (8, 0, u64::MAX, i64::MIN),
        (u32::MAX, 1, 0, 1),
    ];
    for (a, which, c, v) in rows {
        p.run(&[0, a as u64, which, c, v as u64]);
    }
    let mm = env.get("m");
    assert_eq!(mm.keys().unwrap().len(), rows.len());
    for (a, which, c, v) in rows {
        let s = if which != 0 { "beta-gamma" } else { "alpha" };
        let got = mm.lookup_vec(&tuple_key(a, s, c)).unwrap();
        assert_eq!(got, Some(v.to_le_bytes().to_vec()), "key ({a}, {s}, {c})");
    }
    // Read, check existence, delete, check again — for a present and an absent key.
    p.run(&[1, 7, 1, 99, 0]);
    assert_eq!(&env.out()[..4], &[12, 1, 1, 0]);
    p.run(&[1, 7, 1, 99, 0]);
    assert_eq!(&env.out()[..4], &[0, 0, 0, 0]);
    assert_eq!(mm.keys().unwrap().len(), rows.len() - 1);
}

#[test]
fn updates_of_a_full_map_are_counted_as_drops() {
    if !available("updates_of_a_full_map_are_counted_as_drops") {
        return;
    }
    let mut env = Env::new();
    env.add("small", map(MapType::Hash, "small", 8, 8, 2));
    // A plain array: the branch-free atomic counter.
    env.add("drops", map(MapType::Array, "drops", 4, 8 * 4, 1));
    let mut b = Builder::new();
    let m = b.map("small");
    let d = b.map("drops");
    let k = ctx_u64(&mut b, 0, IntTy::U64);
    let key = Key::int(&mut b, k, IntTy::U64);
    maps::store(
        &mut b,
        m,
        key.place,
        Value::Imm(1),
        IntTy::U64,
        Some(Counter::global(d, 3)),
    );
    b.exit(0);
    let p = env.load(b);
    for k in [1u64, 2, 3, 4, 1, 2, 5] {
        p.run(&[k]);
    }
    // Keys 1 and 2 fit; 3, 4 and 5 do not (re-storing 1 and 2 is not a drop).
    let words = env
        .get("drops")
        .lookup_vec(&0u32.to_le_bytes())
        .unwrap()
        .unwrap();
    let drops = u64::from_le_bytes(words[24..32].try_into().unwrap());
    assert_eq!(drops, 3);
    assert_eq!(env.get("small").keys().unwrap().len(), 2);
}

#[test]
fn aggregation_under_a_full_map_counts_drops() {
    if !available("aggregation_under_a_full_map_counts_drops") {
        return;
    }
    let mut env = Env::new();
    env.add("agg", map(MapType::PercpuHash, "agg", 8, 8, 1));
    env.add("drops", map(MapType::PercpuArray, "drops", 4, 8, 2));
    let mut b = Builder::new();
    let m = b.map("agg");
    let d = b.map("drops");
    let k = ctx_u64(&mut b, 0, IntTy::U64);
    let key = Key::new(&mut b, &[U64]);
    key.set_int(&mut b, 0, k);
    update_agg(
        &mut b,
        m,
        &key,
        AggKind::Count,
        Value::Imm(0),
        Some(Counter::percpu(d, 0)),
    );
    b.exit(0);
    let p = env.load(b);
    for k in [10u64, 10, 11, 12, 10] {
        p.run(&[k]);
    }
    assert_eq!(
        percpu_sum(env.get("drops"), &0u32.to_le_bytes()).unwrap()[0],
        2
    );
    assert_eq!(
        percpu_sum(env.get("agg"), &10u64.to_le_bytes()).unwrap()[0],
        3
    );
}

#[test]
fn keyed_histograms_put_the_bucket_after_the_user_key_with_zeroed_padding() {
    if !available("keyed_histograms_put_the_bucket_after_the_user_key_with_zeroed_padding") {
        return;
    }
    let user = [FieldType::Int {
        bytes: 4,
        signed: false,
    }];
    let fields = hist_key_fields(&user);
    let off = tuple_offsets(&fields);
    assert_eq!(off, [0, 8]);
    let mut env = Env::new();
    env.add("h", map(MapType::PercpuHash, "h", 16, 8, 256));
    let mut b = Builder::new();
    let m = b.map("h");
    let k = ctx_u64(&mut b, 0, IntTy::U32);
    let v = ctx_u64(&mut b, 1, IntTy::I64);
    let key = Key::new(&mut b, &fields);
    key.set_int(&mut b, 0, k);
    let kind = AggKind::Hist(HistKind::Linear {
        min: 0,
        max: 100,
        step: 10,
    });
    update_agg(&mut b, m, &key, kind, v, None);
    b.exit(0);
    let p = env.load(b);
    let samples = [
        (1u32, 5i64),
        (1, 15),
        (2, 15),
        (1, 5),
        (2, -1),
        (2, 1000),
        (7, 99),
    ];
    for (k, v) in samples {
        p.run(&[k as u64 | 0xdead_0000_0000, v as u64]);
    }
    let mut want: BTreeMap<Vec<u8>, u64> = BTreeMap::new();
    for (k, v) in samples {
        let mut key = vec![0u8; 16];
        key[..4].copy_from_slice(&k.to_le_bytes());
        key[8..].copy_from_slice(&(linear_bucket(v, 0, 100, 10) as u64).to_le_bytes());
        *want.entry(key).or_default() += 1;
    }
    let m = env.get("h");
    let got: BTreeMap<Vec<u8>, u64> = m
        .keys()
        .unwrap()
        .into_iter()
        .map(|k| {
            let n = percpu_sum(m, &k).unwrap()[0];
            (k, n)
        })
        .collect();
    assert_eq!(got, want);
}
