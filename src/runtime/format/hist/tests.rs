use super::*;

/// A direct transcription of bpftrace's documented `log2(n, k)` pseudo code, to check the
/// closed form above against.
fn reference_log2(n: i64, k: u32) -> usize {
    if n < 0 {
        return 0;
    }
    let mask = (1u64 << k) - 1;
    let mut n = n as u64;
    if n <= mask {
        return n as usize + 1;
    }
    let n0 = n;
    let mut l = 0u64;
    for i in (0..=5).rev() {
        let threshold = 1u128 << (1u32 << i);
        let shift = ((n as u128 >= threshold) as u64) << i;
        n >>= shift;
        l += shift;
    }
    l -= k as u64;
    let x = (n0 >> l) & mask;
    (((l + 1) << k) + x + 1) as usize
}

#[test]
fn log2_buckets_at_the_edges() {
    assert_eq!(log2_bucket(i64::MIN, 0), 0);
    assert_eq!(log2_bucket(-1, 0), 0);
    assert_eq!(log2_bucket(0, 0), 1);
    assert_eq!(log2_bucket(1, 0), 2);
    assert_eq!(log2_bucket(2, 0), 3);
    assert_eq!(log2_bucket(3, 0), 3);
    assert_eq!(log2_bucket(4, 0), 4);
    assert_eq!(log2_bucket(1023, 0), 11);
    assert_eq!(log2_bucket(1024, 0), 12);
    assert_eq!(log2_bucket(i64::MAX, 0), 64);
    assert_eq!(log2_bucket_count(0), 65);
    for k in 0..=5u8 {
        assert_eq!(log2_bucket(i64::MAX, k) + 1, log2_bucket_count(k), "k={k}");
    }
}

#[test]
fn log2_buckets_match_bpftraces_algorithm_for_every_k() {
    let mut vals: Vec<i64> = vec![i64::MIN, -1, i64::MAX, i64::MAX - 1];
    for p in 0..63 {
        let b = 1i64 << p;
        vals.extend([b - 1, b, b + 1, b + b / 3]);
    }
    for k in 0..=5u32 {
        for &v in &vals {
            assert_eq!(log2_bucket(v, k as u8), reference_log2(v, k), "v={v} k={k}");
        }
    }
}

#[test]
fn log2_buckets_with_k_split_each_power() {
    // k = 2, value 225 = 0b11100001: bucket 1 + 0b11011 = 28 (bpftrace's worked example).
    assert_eq!(log2_bucket(225, 2), 28);
    assert_eq!(log2_bucket(2, 1), 3);
    assert_eq!(log2_bucket(3, 1), 4);
    assert_eq!(log2_bucket(4, 1), 5);
    assert_eq!(log2_bucket(6, 1), 6);
    assert_eq!(log2_bucket(7, 9), log2_bucket(7, 5));
}

#[test]
fn linear_buckets_at_the_edges() {
    assert_eq!(linear_bucket(-5, 0, 100, 10), 0);
    assert_eq!(linear_bucket(0, 0, 100, 10), 1);
    assert_eq!(linear_bucket(9, 0, 100, 10), 1);
    assert_eq!(linear_bucket(99, 0, 100, 10), 10);
    assert_eq!(linear_bucket(100, 0, 100, 10), 11);
    assert_eq!(linear_bucket(i64::MAX, 0, 100, 10), 11);
    assert_eq!(linear_bucket_count(0, 100, 10), 12);
    assert_eq!(linear_bucket(i64::MIN, i64::MIN, i64::MAX, 1 << 62), 1);
    assert_eq!(linear_bucket(i64::MAX, i64::MIN, i64::MAX, 1 << 62), 4);
    assert_eq!(linear_bucket(5, 0, 10, 0), 0);
    assert_eq!(linear_bucket(-3, -10, 10, 5), 2);
}

fn table(kind: HistKind, counts: &[u64]) -> String {
    let mut out = Vec::new();
    write_hist_text(&mut out, &kind, counts, 1);
    String::from_utf8(out).unwrap()
}

#[test]
fn log2_labels_use_binary_suffixes_up_to_exa() {
    let mut counts = vec![0u64; 65];
    counts[64] = 1;
    counts[63] = 2;
    let t = table(HistKind::Log2 { k: 0 }, &counts);
    assert_eq!(
        t,
        "[2E, 4E)               2 |@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@@|\n\
         [4E, 8E)               1 |@@@@@@@@@@@@@@@@@@@@@@@@@@                          |\n"
    );
}

#[test]
fn log2_with_k_labels_single_values_then_ranges() {
    let mut counts = vec![0u64; log2_bucket_count(1)];
    for v in [0, 1, 2, 3, 4, 6] {
        counts[log2_bucket(v, 1)] += 1;
    }
    let t = table(HistKind::Log2 { k: 1 }, &counts);
    let heads: Vec<&str> = t.lines().map(|l| l[..16].trim_end()).collect();
    assert_eq!(heads, ["[0]", "[1]", "[2]", "[3]", "[4, 6)", "[6, 8)"]);
}

#[test]
fn huge_counts_and_empty_histograms_do_not_panic() {
    assert_eq!(table(HistKind::Log2 { k: 0 }, &[]), "");
    assert_eq!(table(HistKind::Log2 { k: 0 }, &[0; 65]), "");
    let t = table(HistKind::Log2 { k: 0 }, &[u64::MAX, 1]);
    assert!(t.starts_with("(..., 0)        18446744073709551615 |@@@@"));
    let t = table(
        HistKind::Linear {
            min: 0,
            max: 10,
            step: 0,
        },
        &[1, 2, 3],
    );
    assert_eq!(t.lines().count(), 2);
}

#[test]
fn lhist_suffixes_only_for_kilo_steps() {
    let kind = HistKind::Linear {
        min: 0,
        max: 4096,
        step: 512,
    };
    let mut counts = vec![0u64; kind.bucket_count()];
    counts[kind.bucket(1100)] = 1;
    assert!(table(kind, &counts).starts_with("[1024, 1536)"));
    let kind = HistKind::Linear {
        min: -2048,
        max: 0,
        step: 1024,
    };
    let mut counts = vec![0u64; kind.bucket_count()];
    counts[kind.bucket(-1)] = 1;
    assert!(table(kind, &counts).starts_with("[-1K, 0)"));
}

#[test]
fn json_bounds_are_inclusive() {
    let mut out = Vec::new();
    let mut counts = vec![0u64; 65];
    counts[0] = 1;
    counts[1] = 2;
    counts[3] = 3;
    write_hist_json(&mut out, &HistKind::Log2 { k: 0 }, &counts, 1);
    assert_eq!(
        String::from_utf8(out).unwrap(),
        "[{\"max\": -1, \"count\": 1}, {\"min\": 0, \"max\": 0, \"count\": 2}, \
         {\"min\": 1, \"max\": 1, \"count\": 0}, {\"min\": 2, \"max\": 3, \"count\": 3}]"
    );
    let mut out = Vec::new();
    write_hist_json(&mut out, &HistKind::Log2 { k: 0 }, &[0, 0], 1);
    assert_eq!(out, b"[]");
}

mod props {
    use super::super::*;
    use proptest::prelude::*;

    proptest! {
        /// Every non-negative value lies inside the bounds its bucket is labelled with.
        #[test]
        fn log2_bucket_bounds_contain_the_value(v in 0i64..=i64::MAX, k in 0u8..=5) {
            let i = log2_bucket(v, k);
            prop_assert!(i >= 1 && i < log2_bucket_count(k));
            let lo = log2_upper(i - 1, k as u32);
            let hi = log2_upper(i, k as u32);
            prop_assert!(lo <= v as u128 && (v as u128) < hi, "v={} i={} [{}, {})", v, i, lo, hi);
        }

        /// Linear buckets are monotonic in the value and stay in range.
        #[test]
        fn linear_buckets_are_monotonic(a in any::<i64>(), b in any::<i64>(),
                                        min in -1000i64..1000, span in 1i64..5000, step in 1i64..700) {
            let max = min + span;
            let (x, y) = if a <= b { (a, b) } else { (b, a) };
            let (bx, by) = (linear_bucket(x, min, max, step), linear_bucket(y, min, max, step));
            prop_assert!(bx <= by);
            prop_assert!(by < linear_bucket_count(min, max, step));
        }

        /// Any counts render without panicking, one line per bucket from first to last used.
        #[test]
        fn any_counts_render(counts in proptest::collection::vec(any::<u64>(), 0..70), k in 0u8..=7, div in any::<u64>()) {
            let mut out = Vec::new();
            write_hist_text(&mut out, &HistKind::Log2 { k }, &counts, div);
            let mut j = Vec::new();
            write_hist_json(&mut j, &HistKind::Log2 { k }, &counts, div);
            prop_assert!(j.starts_with(b"[") && j.ends_with(b"]"));
        }
    }
}
