use super::*;

const MS: u64 = 1_000_000;

fn kind(interval_ns: u64, n: u32, agg: TSeriesAgg, signed: bool) -> TSeriesKind {
    TSeriesKind {
        interval_ns,
        num_intervals: n,
        agg,
        signed,
    }
}

/// Per-CPU slots `[value, meta, epoch]` as the kernel returns them.
fn slots(s: &[[u64; 3]]) -> Vec<u8> {
    s.iter().flatten().flat_map(|w| w.to_le_bytes()).collect()
}

fn series(k: TSeriesKind, points: &[(u64, i64)]) -> TSeries {
    let mut t = TSeries::new(k);
    for &(e, v) in points {
        t.points.insert(
            e,
            if k.signed {
                Num::I(v)
            } else {
                Num::U(v as u64)
            },
        );
    }
    t
}

fn text(t: &TSeries, last: u64) -> String {
    let mut out = Vec::new();
    write_tseries_text_in(&mut out, t, &t.rows(last), &|_| 0);
    String::from_utf8(out).unwrap()
}

fn json(t: &TSeries, last: u64) -> String {
    let mut out = Vec::new();
    write_tseries_json(&mut out, t, &t.rows(last));
    String::from_utf8(out).unwrap()
}

/// The graph's fixed lines around `rows`, for a `hh:mm:ss.ms` column.
fn graph_ms(lo: &str, hi: &str, rows: &[&str]) -> String {
    let bounds = format!("{}{lo:<21}{hi:>32}\n", " ".repeat(13));
    let mut s = bounds.clone();
    s += &format!("hh:mm:ss.ms  |{}|\n", "_".repeat(51));
    for r in rows {
        s += r;
        s.push('\n');
    }
    s += &format!("{}v{}v\n", " ".repeat(13), "_".repeat(51));
    s += &bounds;
    s
}

/// A plot line: `|`, then `at` → `*`, `dot` → `.`, as bpftrace draws it.
fn plot(at: Option<usize>, dot: Option<usize>) -> String {
    let mut l = vec![b' '; 53];
    l[0] = b'|';
    l[52] = b'|';
    if let Some(d) = dot {
        l[d] = b'.';
    }
    if let Some(a) = at {
        l[a] = b'*';
    }
    String::from_utf8(l).unwrap()
}

#[test]
fn bucket_reads_newest_epoch_over_cpus() {
    let k = kind(MS, 5, TSeriesAgg::Last, true);
    // CPU 1 wrote a newer interval; CPU 2 never wrote.
    let b = slots(&[[7, 100, 3], [9, 200, 8], [0, 0, 0]]);
    assert_eq!(reduce_bucket(&k, &b), (8, Num::I(9)));
    // Same epoch on two CPUs: the later write (meta = its time) wins.
    let b = slots(&[[7, 300, 8], [9, 200, 8]]);
    assert_eq!(reduce_bucket(&k, &b), (8, Num::I(7)));
    // Never written: epoch 0, value 0 (as bpftrace reads it).
    assert_eq!(reduce_bucket(&k, &slots(&[[0; 3], [0; 3]])), (0, Num::I(0)));
    assert_eq!(reduce_bucket(&k, &[]), (0, Num::I(0)));
}

#[test]
fn bucket_combines_cpus_of_one_epoch_per_aggregation() {
    let b = slots(&[[10, 2, 4], [-4i64 as u64, 1, 4], [100, 5, 3]]);
    let r = |agg, signed| reduce_bucket(&kind(MS, 5, agg, signed), &b).1;
    assert_eq!(r(TSeriesAgg::Sum, true), Num::I(6));
    // avg: (10 + -4) / (2 + 1), truncated toward zero.
    assert_eq!(r(TSeriesAgg::Avg, true), Num::I(2));
    assert_eq!(r(TSeriesAgg::Min, true), Num::I(-4));
    assert_eq!(r(TSeriesAgg::Max, true), Num::I(10));
    // Unsigned: -4 is a huge value.
    assert_eq!(r(TSeriesAgg::Min, false), Num::U(10));
    assert_eq!(r(TSeriesAgg::Max, false), Num::U(-4i64 as u64));
    let neg = slots(&[[-7i64 as u64, 2, 9]]);
    assert_eq!(
        reduce_bucket(&kind(MS, 5, TSeriesAgg::Avg, true), &neg).1,
        Num::I(-3)
    );
    // A count of 0 cannot come from the kernel; it still does not divide by zero.
    let z = slots(&[[5, 0, 9]]);
    assert_eq!(
        reduce_bucket(&kind(MS, 5, TSeriesAgg::Avg, false), &z).1,
        Num::U(0)
    );
}

#[test]
fn rows_end_at_the_maps_newest_interval() {
    let k = kind(MS, 5, TSeriesAgg::Last, false);
    let a = series(k, &[(11, 1), (12, 2), (13, 3), (14, 4), (15, 5)]);
    let b = series(k, &[(12, 1), (13, 2), (14, 3), (15, 4), (16, 5)]);
    let last = a.latest().max(b.latest());
    assert_eq!(last, 16);
    let u = |v| Some(Num::U(v));
    assert_eq!(
        a.rows(last),
        vec![(12, u(2)), (13, u(3)), (14, u(4)), (15, u(5)), (16, None)]
    );
    assert_eq!(b.rows(last).len(), 5);
    // A key that starts later starts at its first interval with data.
    let c = series(k, &[(15, 9)]);
    assert_eq!(c.rows(last), vec![(15, u(9)), (16, None)]);
    // A key with nothing in the window shows the last interval only, empty.
    let stale = series(k, &[(2, 9)]);
    assert_eq!(stale.rows(last), vec![(16, None)]);
    // Nothing written (or zero()ed): no rows.
    assert_eq!(series(k, &[(0, 0)]).rows(0), Vec::<Row>::new());
    // Fewer intervals than the series holds since epoch 0: from epoch 0.
    assert_eq!(series(k, &[(0, 0), (2, 5)]).rows(2).len(), 3);
}

#[test]
fn text_graph_places_points_between_bounds() {
    // 5 ms-intervals of two keys (bpftrace's own print test, at UTC).
    let k = kind(MS, 5, TSeriesAgg::Last, false);
    let e0 = 173_482_610_888_837 / MS;
    let a = series(k, &(1..=5).map(|i| (e0 + i, i as i64)).collect::<Vec<_>>());
    let b = series(
        k,
        &(2..=6).map(|i| (e0 + i, i as i64 - 1)).collect::<Vec<_>>(),
    );
    let last = e0 + 6;
    let row = |t: u64, at: Option<usize>, v: &str| format!("00:11:22.{t} {} {v}", plot(at, None));
    assert_eq!(
        text(&a, last),
        graph_ms(
            "2",
            "5",
            &[
                &row(612, Some(0), "2"),
                &row(613, Some(17), "3"),
                &row(614, Some(34), "4"),
                &row(615, Some(52), "5"),
                &row(616, None, "-"),
            ]
        )
    );
    assert_eq!(
        text(&b, last),
        graph_ms(
            "1",
            "5",
            &[
                &row(612, Some(0), "1"),
                &row(613, Some(13), "2"),
                &row(614, Some(26), "3"),
                &row(615, Some(39), "4"),
                &row(616, Some(52), "5"),
            ]
        )
    );
}

#[test]
fn text_graph_marks_zero_and_widens_a_flat_line() {
    let k = kind(100 * MS, 20, TSeriesAgg::Last, true);
    let z = series(k, &[(1, -5), (2, 0), (3, 5)]);
    let row = |t: &str, at, v: &str| format!("00:00:00.{t} {} {v}", plot(Some(at), Some(26)));
    assert_eq!(
        text(&z, 3),
        graph_ms(
            "-5",
            "5",
            &[
                &row("100", 0, "-5"),
                &row("200", 26, "0"),
                &row("300", 52, "5"),
            ]
        )
    );
    // All values equal: one below and one above where the type allows (not below 0).
    let flat = series(
        kind(100 * MS, 5, TSeriesAgg::Last, false),
        &[(5, 0), (6, 0)],
    );
    let row = |t: &str| format!("00:00:00.{t} {} 0", plot(Some(0), None));
    assert_eq!(
        text(&flat, 6),
        graph_ms("0", "1", &[&row("500"), &row("600")])
    );
    let flat = series(kind(100 * MS, 5, TSeriesAgg::Last, true), &[(5, 9), (6, 9)]);
    let row = |t: &str| format!("00:00:00.{t} {} 9", plot(Some(26), None));
    assert_eq!(
        text(&flat, 6),
        graph_ms("8", "10", &[&row("500"), &row("600")])
    );
}

#[test]
fn text_time_column_follows_the_interval() {
    let one = |interval, epoch| {
        let t = series(
            kind(interval, 3, TSeriesAgg::Sum, false),
            &[(epoch, 1), (epoch + 1, 2)],
        );
        text(&t, epoch + 1)
    };
    let s = one(1_000_000_000, 3_661);
    assert!(s.contains("\nhh:mm:ss |"), "{s}");
    assert!(s.contains("\n01:01:01 * "), "{s}");
    // μ is two bytes: the column is padded by bytes, as bpftrace's setw does.
    let s = one(100_000, 10);
    assert!(s.contains("\nhh:mm:ss.μs    |"), "{s}");
    assert!(s.contains("\n00:00:00.001000 * "), "{s}");
    let s = one(10, 7);
    assert!(s.contains("\nhh:mm:ss.ns        |"), "{s}");
    assert!(s.contains("\n00:00:00.000000070 * "), "{s}");
    // One interval: no spacing to go by, so nanoseconds.
    let t = series(kind(1_000_000_000, 1, TSeriesAgg::Last, true), &[(5, 2)]);
    assert!(text(&t, 5).contains("\n00:00:05.000000000 |"));
}

#[test]
fn text_without_rows_says_so() {
    let t = series(kind(MS, 5, TSeriesAgg::Avg, true), &[(0, 0)]);
    assert_eq!(text(&t, 0), "<no data>");
}

#[test]
fn json_lists_intervals_with_data_in_utc() {
    let k = kind(100 * MS, 10, TSeriesAgg::Last, true);
    let t = series(k, &[(0, 0), (1, 5), (4, -2)]);
    assert_eq!(
        json(&t, 5),
        "[{\"interval_start\":\"1970-01-01 00:00:00.000000000\",\"value\":0},\
         {\"interval_start\":\"1970-01-01 00:00:00.100000000\",\"value\":5},\
         {\"interval_start\":\"1970-01-01 00:00:00.400000000\",\"value\":-2}]"
    );
    assert_eq!(json(&t, 0), "[]");
    let late = series(k, &[(17_649_052_790, 3)]);
    assert_eq!(
        json(&late, 17_649_052_790),
        "[{\"interval_start\":\"2025-12-05 03:27:59.000000000\",\"value\":3}]"
    );
}

#[test]
fn extreme_values_never_panic() {
    for signed in [false, true] {
        let k = kind(1, 3, TSeriesAgg::Max, signed);
        let t = series(
            k,
            &[
                (u64::MAX - 2, i64::MIN),
                (u64::MAX - 1, i64::MAX),
                (u64::MAX, -1),
            ],
        );
        let s = text(&t, u64::MAX);
        assert!(s.contains('*'));
        let _ = json(&t, u64::MAX);
        let k = kind(u64::MAX, 1_000_000, TSeriesAgg::Avg, signed);
        let t = series(k, &[(u64::MAX, 1)]);
        let _ = text(&t, u64::MAX);
    }
}
