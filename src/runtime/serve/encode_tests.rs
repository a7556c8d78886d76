use super::*;
use crate::runtime::format::agg::Num;

fn map(name: &str, labels: &[&str], value: MapValueSpec) -> MetricMap {
    MetricMap {
        map: name.into(),
        base: metric_base(name),
        labels: labels.iter().map(|s| s.to_string()).collect(),
        value,
    }
}

fn s(text: &str) -> Value {
    Value::Str {
        bytes: text.as_bytes().to_vec(),
        truncated: false,
    }
}

fn encode(m: &MetricMap, entries: &[(Vec<Value>, MapValue)]) -> String {
    let mut out = String::new();
    write_map(&mut out, m, entries);
    out
}

#[test]
fn label_values_escape_backslash_quote_and_newline() {
    let m = map("@c", &["comm"], MapValueSpec::Agg(AggKind::Count));
    let out = encode(&m, &[(vec![s("a\\b\"c\nd")], MapValue::Agg(Agg::Count(2)))]);
    assert!(
        out.contains("strobe_c_total{comm=\"a\\\\b\\\"c\\nd\"} 2\n"),
        "{out}"
    );
    // Invalid UTF-8 becomes U+FFFD, so the exposition stays UTF-8.
    let bad = Value::Str {
        bytes: vec![b'x', 0xff],
        truncated: false,
    };
    let out = encode(&m, &[(vec![bad], MapValue::Agg(Agg::Count(1)))]);
    assert!(out.contains("comm=\"x\u{fffd}\""), "{out}");
}

#[test]
fn help_escapes_backslash_and_newline_only() {
    let mut out = String::new();
    write_header(&mut out, "m", Kind::Gauge, "a\\b\n\"c\"");
    assert_eq!(out, "# HELP m a\\\\b\\n\"c\"\n# TYPE m gauge\n");
}

#[test]
fn empty_maps_have_only_help_and_type() {
    for value in [
        MapValueSpec::Agg(AggKind::Count),
        MapValueSpec::Agg(AggKind::Hist(HistKind::Log2 { k: 0 })),
        MapValueSpec::Agg(AggKind::Stats { signed: true }),
    ] {
        let out = encode(&map("@e", &[], value), &[]);
        assert!(
            out.lines()
                .all(|l| l.starts_with("# HELP ") || l.starts_with("# TYPE ")),
            "{out}"
        );
        assert!(out.contains("# TYPE strobe_e"), "{out}");
    }
}

#[test]
fn averages_of_nothing_and_unset_min_max_are_left_out_not_nan() {
    let avg = map(
        "@a",
        &["k"],
        MapValueSpec::Agg(AggKind::Avg { signed: true }),
    );
    let out = encode(
        &avg,
        &[
            (
                vec![Value::Int(1)],
                MapValue::Agg(Agg::Avg {
                    total: Num::I(0),
                    count: 0,
                }),
            ),
            (
                vec![Value::Int(2)],
                MapValue::Agg(Agg::Avg {
                    total: Num::I(-7),
                    count: 2,
                }),
            ),
        ],
    );
    assert!(!out.contains("NaN") && !out.contains("k=\"1\""), "{out}");
    assert!(out.contains("strobe_a{k=\"2\"} -3\n"), "{out}");
    let stats = map(
        "@st",
        &[],
        MapValueSpec::Agg(AggKind::Stats { signed: false }),
    );
    let out = encode(
        &stats,
        &[(
            vec![],
            MapValue::Agg(Agg::Stats {
                total: Num::U(0),
                count: 0,
            }),
        )],
    );
    assert!(
        out.contains("strobe_st_count 0\nstrobe_st_sum 0\n"),
        "{out}"
    );
    assert!(
        !out.contains("NaN") && !out.contains("\nstrobe_st_avg "),
        "{out}"
    );
    let min = map("@m", &[], MapValueSpec::Agg(AggKind::Min { signed: true }));
    let out = encode(&min, &[(vec![], MapValue::Agg(Agg::Min(None)))]);
    assert!(!out.contains("\nstrobe_m "), "{out}");
}

#[test]
fn huge_counts_and_negative_sums_are_exact() {
    let c = map("@c", &[], MapValueSpec::Agg(AggKind::Count));
    let out = encode(&c, &[(vec![], MapValue::Agg(Agg::Count(u64::MAX)))]);
    assert!(
        out.contains("strobe_c_total 18446744073709551615\n"),
        "{out}"
    );
    let sum = map("@s", &[], MapValueSpec::Agg(AggKind::Sum { signed: true }));
    assert_eq!(sum.kind(), Kind::Gauge, "a signed sum can go down");
    let out = encode(&sum, &[(vec![], MapValue::Agg(Agg::Sum(Num::I(i64::MIN))))]);
    assert!(out.contains("strobe_s -9223372036854775808\n"), "{out}");
    let h = map(
        "@h",
        &[],
        MapValueSpec::Agg(AggKind::Hist(HistKind::Log2 { k: 0 })),
    );
    let out = encode(
        &h,
        &[(
            vec![],
            MapValue::Agg(Agg::Hist {
                kind: HistKind::Log2 { k: 0 },
                counts: vec![0, u64::MAX, u64::MAX],
            }),
        )],
    );
    assert!(
        out.contains("strobe_h_bucket{le=\"1\"} 36893488147419103230\n"),
        "{out}"
    );
    assert!(
        out.contains("strobe_h_count 36893488147419103230\n"),
        "{out}"
    );
    assert!(!out.contains("_sum"), "hist() keeps no sum: {out}");
}

#[test]
fn histogram_buckets_are_cumulative_up_to_the_last_used_one() {
    let kind = HistKind::Log2 { k: 0 };
    let h = map("@lat", &["op"], MapValueSpec::Agg(AggKind::Hist(kind)));
    // Values 0 (bucket 1), 1 (bucket 2), 5 (bucket 4: [4, 8)).
    let mut counts = vec![0u64; kind.bucket_count()];
    counts[1] = 1;
    counts[2] = 2;
    counts[4] = 3;
    let out = encode(
        &h,
        &[(vec![s("rd")], MapValue::Agg(Agg::Hist { kind, counts }))],
    );
    let want = "\
# HELP strobe_lat strobe map @lat (hist())
# TYPE strobe_lat histogram
strobe_lat_bucket{op=\"rd\",le=\"-1\"} 0
strobe_lat_bucket{op=\"rd\",le=\"0\"} 1
strobe_lat_bucket{op=\"rd\",le=\"1\"} 3
strobe_lat_bucket{op=\"rd\",le=\"3\"} 3
strobe_lat_bucket{op=\"rd\",le=\"7\"} 6
strobe_lat_bucket{op=\"rd\",le=\"+Inf\"} 6
strobe_lat_count{op=\"rd\"} 6
";
    assert_eq!(out, want);
}

#[test]
fn bucket_bounds_match_the_bucket_functions() {
    let mut values: Vec<i64> = (-3..300).collect();
    for p in 0..63 {
        let x = 1i64 << p;
        values.extend([x - 1, x, x + 1, x | (x >> 1), x | (x >> 2)]);
    }
    values.push(i64::MAX);
    let kinds = (0..=5).map(|k| HistKind::Log2 { k }).chain([
        HistKind::Linear {
            min: 0,
            max: 100,
            step: 10,
        },
        HistKind::Linear {
            min: -50,
            max: 47,
            step: 7,
        },
    ]);
    for kind in kinds {
        for &v in &values {
            let i = kind.bucket(v);
            if let Some(le) = bucket_le(&kind, i) {
                assert!((v as i128) <= le, "{kind:?} v={v} bucket {i} le {le}");
            } else {
                assert_eq!(
                    i + 1,
                    kind.bucket_count(),
                    "{kind:?} v={v}: only the last is open"
                );
            }
            if i > 0 {
                let below = bucket_le(&kind, i - 1).expect("an earlier bucket is bounded");
                assert!(
                    (v as i128) > below,
                    "{kind:?} v={v} bucket {i} below {below}"
                );
            }
        }
    }
}

#[test]
fn metric_names_are_sanitised() {
    assert_eq!(metric_base("@"), "strobe_at");
    assert_eq!(metric_base("@bytes_read"), "strobe_bytes_read");
    assert_eq!(metric_base("@a-b.c"), "strobe_a_b_c");
    assert_eq!(metric_base("@Ü"), "strobe__");
    assert!(valid_label_name("comm") && valid_label_name("_x1"));
    assert!(!valid_label_name("1x") && !valid_label_name("__x") && !valid_label_name("a-b"));
    assert!(!valid_label_name(""));
}

#[test]
fn strings_are_info_style_gauges() {
    let m = map(
        "@name",
        &["pid"],
        MapValueSpec::Plain(crate::runtime::format::FieldType::Str { size: 16 }),
    );
    let out = encode(&m, &[(vec![Value::UInt(7)], MapValue::Plain(s("sh")))]);
    assert!(
        out.contains("strobe_name{pid=\"7\",value=\"sh\"} 1\n"),
        "{out}"
    );
}

#[test]
fn entries_are_written_in_key_order() {
    let m = map("@c", &["k"], MapValueSpec::Agg(AggKind::Count));
    let out = encode(
        &m,
        &[
            (vec![Value::Int(10)], MapValue::Agg(Agg::Count(1))),
            (vec![Value::Int(-2)], MapValue::Agg(Agg::Count(1))),
            (vec![Value::Int(3)], MapValue::Agg(Agg::Count(1))),
        ],
    );
    let keys: Vec<&str> = out
        .lines()
        .filter(|l| !l.starts_with('#'))
        .map(|l| l.split('"').nth(1).unwrap_or(""))
        .collect();
    assert_eq!(keys, ["-2", "3", "10"]);
}

#[test]
fn serve_flags_parse() {
    use crate::runtime::serve::{looks_like_addr, parse_addr, parse_labels};
    assert!(looks_like_addr("9435") && looks_like_addr("0.0.0.0:9435"));
    assert!(looks_like_addr("[::1]:9435") && looks_like_addr("localhost:1"));
    assert!(!looks_like_addr("script.bt") && !looks_like_addr("/tmp/x:1/a.bt"));
    assert_eq!(parse_addr("9").unwrap()[0].to_string(), "127.0.0.1:9");
    assert_eq!(parse_addr(":10").unwrap()[0].to_string(), "127.0.0.1:10");
    assert!(parse_addr("nohost").is_err());
    let l = parse_labels(&["@bytes=comm,pid".into(), "x=a".into()]).unwrap();
    assert_eq!(l["@bytes"], ["comm", "pid"]);
    assert_eq!(l["@x"], ["a"]);
    assert!(parse_labels(&["@b=le".into()]).is_err());
    assert!(parse_labels(&["@b=a,a".into()]).is_err());
    assert!(parse_labels(&["@b".into()]).is_err());
    assert!(parse_labels(&["@b=__x".into()]).is_err());
}

#[test]
fn http_request_lines_parse() {
    use crate::runtime::serve::http::parse_head;
    assert_eq!(
        parse_head(b"GET /metrics?x=1 HTTP/1.1\r\nHost: a\r\n\r\n"),
        Ok(("GET".into(), "/metrics".into()))
    );
    assert_eq!(parse_head(b"GET /metrics\r\n\r\n"), Err(400));
    assert_eq!(parse_head(b"GET / SPDY/3\r\n\r\n"), Err(400));
    assert_eq!(parse_head(&[0xff, b' ', b'/', b' ', b'H']), Err(400));
}

#[test]
fn tseries_is_a_gauge_of_the_newest_interval_in_the_window() {
    use crate::plan::agg::{TSeriesAgg, TSeriesKind};
    use crate::runtime::format::tseries::TSeries;
    let kind = TSeriesKind {
        interval_ns: 1_000_000_000,
        num_intervals: 3,
        agg: TSeriesAgg::Sum,
        signed: true,
    };
    let m = map("@t", &["k"], MapValueSpec::Agg(AggKind::TSeries(kind)));
    assert_eq!(m.kind(), Kind::Gauge);
    let ts = |points: &[(u64, i64)]| {
        let mut t = TSeries::new(kind);
        for &(e, v) in points {
            t.points.insert(e, Num::I(v));
        }
        MapValue::Agg(Agg::TSeries(t))
    };
    let out = encode(
        &m,
        &[
            // Newest interval with data wins, even when the map's newest is later.
            (vec![s("a")], ts(&[(8, 1), (9, -4)])),
            (vec![s("b")], ts(&[(10, 7)])),
            // Nothing in the window (epochs 8..=10): no sample.
            (vec![s("c")], ts(&[(2, 5)])),
        ],
    );
    assert!(out.contains("# TYPE strobe_t gauge\n"), "{out}");
    assert!(out.contains("strobe_t{k=\"a\"} -4\n"), "{out}");
    assert!(out.contains("strobe_t{k=\"b\"} 7\n"), "{out}");
    assert!(!out.contains("k=\"c\""), "{out}");
    assert!(out.contains("(tseries())"), "{out}");
}
