//! Expected texts come from bpftrace 0.17 runs on the project host (see tests/format/ for the
//! full goldens and the commands that produced them).

use super::*;
use crate::runtime::format::hist::HistKind;
use crate::runtime::format::stack::{Frame, Stack, StackMode, Sym};

fn text(map: &MapSnapshot, top: usize, div: u64) -> String {
    let mut out = Vec::new();
    write_map_text(&mut out, map, top, div, TextStyle::default());
    String::from_utf8(out).unwrap()
}

fn counts(name: &str, kv: &[(i64, u64)]) -> MapSnapshot {
    MapSnapshot {
        name: name.into(),
        entries: kv
            .iter()
            .map(|&(k, v)| (vec![Value::Int(k)], MapValue::Agg(Agg::Count(v))))
            .collect(),
    }
}

#[test]
fn count_maps_sort_by_value_and_apply_top_and_div() {
    let m = counts("@a", &[(3, 3), (1, 1), (2, 2)]);
    assert_eq!(text(&m, 0, 0), "@a[1]: 1\n@a[2]: 2\n@a[3]: 3\n");
    assert_eq!(text(&m, 2, 0), "@a[2]: 2\n@a[3]: 3\n");
    assert_eq!(text(&m, 0, 2), "@a[1]: 0\n@a[2]: 1\n@a[3]: 1\n");
    assert_eq!(text(&m, 9, 0), "@a[1]: 1\n@a[2]: 2\n@a[3]: 3\n");
}

#[test]
fn equal_values_order_by_key() {
    let m = counts("@a", &[(3, 1), (-1, 1), (2, 1)]);
    assert_eq!(text(&m, 0, 0), "@a[-1]: 1\n@a[2]: 1\n@a[3]: 1\n");
}

#[test]
fn scalar_and_tuple_keys() {
    let m = MapSnapshot {
        name: "@z".into(),
        entries: vec![
            (
                vec![Value::Int(2), Value::str("y")],
                MapValue::Plain(Value::Int(2)),
            ),
            (
                vec![Value::Int(1), Value::str("x")],
                MapValue::Plain(Value::Int(1)),
            ),
        ],
    };
    assert_eq!(text(&m, 0, 0), "@z[1, x]: 1\n@z[2, y]: 2\n");
    let s = MapSnapshot {
        name: "@tu".into(),
        entries: vec![(
            vec![],
            MapValue::Plain(Value::Tuple(vec![
                Value::Int(1),
                Value::str("two"),
                Value::Int(-3),
            ])),
        )],
    };
    assert_eq!(text(&s, 0, 0), "@tu: (1, two, -3)\n");
}

#[test]
fn string_valued_maps_sort_by_key() {
    let m = MapSnapshot {
        name: "@s".into(),
        entries: vec![
            (vec![Value::str("b")], MapValue::Plain(Value::str("1"))),
            (vec![Value::str("ab")], MapValue::Plain(Value::str("2"))),
            (vec![Value::str("a")], MapValue::Plain(Value::str("3"))),
        ],
    };
    assert_eq!(text(&m, 0, 0), "@s[a]: 3\n@s[ab]: 2\n@s[b]: 1\n");
}

#[test]
fn stats_and_avg_maps_end_with_a_blank_line() {
    let m = MapSnapshot {
        name: "@st".into(),
        entries: vec![
            (
                vec![Value::str("b")],
                MapValue::Agg(Agg::Stats {
                    total: Num::I(103),
                    count: 2,
                }),
            ),
            (
                vec![Value::str("a")],
                MapValue::Agg(Agg::Stats {
                    total: Num::I(1),
                    count: 1,
                }),
            ),
        ],
    };
    assert_eq!(
        text(&m, 0, 0),
        "@st[a]: { .count = 1, .average = 1, .total = 1 }\n@st[b]: { .count = 2, .average = 51, .total = 103 }\n\n"
    );
    let a = MapSnapshot {
        name: "@av".into(),
        entries: vec![
            (
                vec![Value::Int(1)],
                MapValue::Agg(Agg::Avg {
                    total: Num::I(3),
                    count: 1,
                }),
            ),
            (
                vec![Value::Int(2)],
                MapValue::Agg(Agg::Avg {
                    total: Num::I(21),
                    count: 2,
                }),
            ),
        ],
    };
    assert_eq!(text(&a, 1, 0), "@av[2]: 10\n\n");
    assert_eq!(text(&a, 0, 2), "@av[1]: 1\n@av[2]: 5\n\n");
}

#[test]
fn empty_maps_print_only_their_trailer() {
    assert_eq!(text(&MapSnapshot::default(), 0, 0), "\n");
}

#[test]
fn hist_maps_separate_entries_with_blank_lines() {
    let kind = HistKind::Log2 { k: 0 };
    let mut x = vec![0u64; 65];
    x[2] = 1;
    let mut y = vec![0u64; 65];
    y[3] = 1;
    y[4] = 1;
    let m = MapSnapshot {
        name: "@hk".into(),
        entries: vec![
            (
                vec![Value::str("y")],
                MapValue::Agg(Agg::Hist { kind, counts: y }),
            ),
            (
                vec![Value::str("x")],
                MapValue::Agg(Agg::Hist { kind, counts: x }),
            ),
        ],
    };
    let bar52 = "@".repeat(52);
    assert_eq!(
        text(&m, 0, 0),
        format!(
            "@hk[x]:\n[1]                    1 |{bar52}|\n\n\
             @hk[y]:\n[2, 4)                 1 |{bar52}|\n[4, 8)                 1 |{bar52}|\n\n"
        )
    );
}

#[test]
fn stack_keys_and_values_print_on_their_own_lines() {
    let st = Stack {
        frames: vec![Frame {
            addr: 0x10,
            sym: Some(Sym {
                name: "f".into(),
                offset: 1,
                module: None,
                ..Default::default()
            }),
        }],
        mode: StackMode::Bpftrace,
        user: false,
    };
    let m = MapSnapshot {
        name: "@k".into(),
        entries: vec![(vec![Value::Stack(st.clone())], MapValue::Agg(Agg::Count(3)))],
    };
    assert_eq!(text(&m, 0, 0), "@k[\n    f+1\n]: 3\n");
    let v = MapSnapshot {
        name: "@v".into(),
        entries: vec![
            (
                vec![Value::Int(1)],
                MapValue::Plain(Value::Stack(st.clone())),
            ),
            (vec![Value::Int(2)], MapValue::Plain(Value::Stack(st))),
        ],
    };
    assert_eq!(
        text(&v, 0, 0),
        "@v[1]: \n        f+1\n@v[2]: \n        f+1\n\n"
    );
}

#[test]
fn extreme_values_do_not_panic() {
    let m = MapSnapshot {
        name: "@".into(),
        entries: vec![
            (
                vec![Value::UInt(u64::MAX)],
                MapValue::Agg(Agg::Sum(Num::U(u64::MAX))),
            ),
            (
                vec![Value::Int(i64::MIN)],
                MapValue::Agg(Agg::Sum(Num::I(i64::MIN))),
            ),
            (vec![Value::Int(0)], MapValue::Agg(Agg::Min(None))),
        ],
    };
    assert_eq!(
        text(&m, 0, 0),
        "@[-9223372036854775808]: -9223372036854775808\n@[0]: 0\n@[18446744073709551615]: 18446744073709551615\n"
    );
}
