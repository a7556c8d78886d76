//! strobe's formatter against bpftrace 0.17's output (tests/format/*.golden). Each case replays
//! the golden's script through a tiny in-test model of the maps (using strobe's bucket and
//! merge functions) and prints with strobe's `Printer`; the result must equal the golden byte
//! for byte. `format_oracle.rs` checks the goldens themselves against live bpftrace.

use crate::format_support;

use std::collections::BTreeMap;

use strobe::runtime::format::agg::{Agg, Num};
use strobe::runtime::format::hist::HistKind;
use strobe::runtime::format::net::{ipv4_from_int, ipv6_text};
use strobe::runtime::format::{
    FormatString, MapSnapshot, MapValue, OutputFormat, Printer, TextStyle, Value,
};

/// A replay of a bpftrace script's effects: maps updated as the kernel would, output printed
/// by strobe.
struct Sim {
    p: Printer,
    out: Vec<u8>,
    maps: BTreeMap<String, MapSnapshot>,
}

fn int(v: i64) -> Value {
    Value::Int(v)
}

fn s(v: &str) -> Value {
    Value::str(v)
}

impl Sim {
    fn new(format: OutputFormat) -> Sim {
        let p = Printer::new(format);
        // The goldens are bpftrace 0.17's stdout, which starts with its banner; strobe prints
        // current bpftrace's `Attached 1 probe` on stderr instead (tested in its own module).
        let out = match format {
            OutputFormat::Text => b"Attaching 1 probe...\n".to_vec(),
            OutputFormat::Json => {
                b"{\"type\": \"attached_probes\", \"data\": {\"probes\": 1}}\n".to_vec()
            }
        };
        Sim {
            p,
            out,
            maps: BTreeMap::new(),
        }
    }

    fn text() -> Sim {
        Sim::new(OutputFormat::Text)
    }

    fn json() -> Sim {
        Sim::new(OutputFormat::Json)
    }

    fn map(&mut self, name: &str) -> &mut MapSnapshot {
        self.maps
            .entry(name.to_string())
            .or_insert_with(|| MapSnapshot {
                name: name.to_string(),
                entries: Vec::new(),
            })
    }

    fn agg(&mut self, name: &str, keys: Vec<Value>, a: Agg) {
        let m = self.map(name);
        match m.entries.iter_mut().find(|e| e.0 == keys) {
            Some((_, MapValue::Agg(old))) => old.combine(&a),
            _ => m.entries.push((keys, MapValue::Agg(a))),
        }
    }

    fn assign(&mut self, name: &str, keys: Vec<Value>, v: Value) {
        let m = self.map(name);
        m.entries.retain(|e| e.0 != keys);
        m.entries.push((keys, MapValue::Plain(v)));
    }

    fn count(&mut self, name: &str, keys: Vec<Value>) {
        self.agg(name, keys, Agg::Count(1));
    }

    fn sum(&mut self, name: &str, keys: Vec<Value>, v: i64) {
        self.agg(name, keys, Agg::Sum(Num::I(v)));
    }

    fn avg(&mut self, name: &str, keys: Vec<Value>, v: i64) {
        self.agg(
            name,
            keys,
            Agg::Avg {
                total: Num::I(v),
                count: 1,
            },
        );
    }

    fn stats(&mut self, name: &str, keys: Vec<Value>, v: i64) {
        self.agg(
            name,
            keys,
            Agg::Stats {
                total: Num::I(v),
                count: 1,
            },
        );
    }

    fn histogram(&mut self, name: &str, keys: Vec<Value>, kind: HistKind, v: i64) {
        let mut counts = vec![0; kind.bucket_count()];
        counts[kind.bucket(v)] = 1;
        self.agg(name, keys, Agg::Hist { kind, counts });
    }

    fn hist(&mut self, name: &str, keys: Vec<Value>, v: i64) {
        self.histogram(name, keys, HistKind::Log2 { k: 0 }, v);
    }

    fn lhist(&mut self, name: &str, v: i64, min: i64, max: i64, step: i64) {
        self.histogram(name, vec![], HistKind::Linear { min, max, step }, v);
    }

    fn printf(&mut self, fmt: &str, args: &[Value]) {
        let text = FormatString::parse(fmt)
            .expect("format parses")
            .render(args, TextStyle::default());
        self.p.printf(&mut self.out, &text);
    }

    fn print(&mut self, name: &str, top: usize, div: u64) {
        let m = self.maps[name].clone();
        self.p.map(&mut self.out, &m, top, div);
    }

    fn value(&mut self, v: Value) {
        self.p.value(&mut self.out, &v);
    }

    fn clear(&mut self, name: &str) {
        self.map(name).entries.clear();
    }

    fn exit(mut self) -> Vec<u8> {
        let maps: Vec<MapSnapshot> = self.maps.values().cloned().collect();
        self.p.exit_maps(&mut self.out, &maps);
        self.out
    }
}

fn check(name: &str, got: Vec<u8>) {
    let g = format_support::load(name);
    format_support::assert_same(name, &got, &g.body);
}

#[test]
fn printf_ints() {
    let mut t = Sim::text();
    t.printf(
        "%d|%u|%x|%X|%o|%p\n",
        &[int(-5), int(-5), int(-5), int(-5), int(8), int(4096)],
    );
    t.printf(
        "%ld|%lu|%llu|%lld|%lx|%zd|%jd\n",
        &[
            int(-1),
            int(-1),
            int(-1),
            int(-1),
            int(-1),
            int(1 << 40),
            int(1 << 40),
        ],
    );
    t.printf(
        "%hhd|%hd|%hhu|%hu|%d|%u\n",
        &[
            int(255),
            int(70000),
            int(-5),
            int(-5),
            int(1 << 40),
            int(1 << 40),
        ],
    );
    t.printf(
        "[%5d][%05d][%-5d][%08.3d][%.5d][%5x][%-8x][%08x]\n",
        &[
            int(-5),
            int(-5),
            int(-5),
            int(-5),
            int(-5),
            int(255),
            int(255),
            int(255),
        ],
    );
    check("printf_ints", t.exit());
}

#[test]
fn printf_strings() {
    let mut t = Sim::text();
    t.printf(
        "%%|%.3s|%-10s|%10s|%-5.2s|%s\n",
        &[s("abcdef"), s("ab"), s("ab"), s("xyz"), s("plain")],
    );
    t.printf(
        "%c%c%c|%5s %04x\n",
        &[int(104), int(105), int(33), s("ba"), int(2)],
    );
    t.printf(
        "%r|%r\n",
        &[
            Value::Buf(b"ab\n\x01\xff\"\\".to_vec()),
            Value::Buf(b"x\0y".to_vec()),
        ],
    );
    let v6 = |a: &str| ipv6_text(&a.parse::<std::net::Ipv6Addr>().unwrap().octets());
    t.printf(
        "%s|%s|%s\n",
        &[
            Value::Symbol(ipv4_from_int(0x0100007f).into()),
            Value::Symbol(v6("fe80::1").into()),
            Value::Symbol(v6("2001:db8::ff00:42:8329").into()),
        ],
    );
    check("printf_strings", t.exit());
}

#[test]
fn hist() {
    let mut t = Sim::text();
    for v in [-3, 0, 1, 2, 3, 5, 1000, 1000, 1023, 1024] {
        t.hist("@h", vec![], v);
    }
    check("hist", t.exit());
}

#[test]
fn hist_large() {
    let mut t = Sim::text();
    for v in [70000, 5000000, 3000000000] {
        t.hist("@g", vec![], v);
    }
    check("hist_large", t.exit());
}

#[test]
fn hist_keyed() {
    let mut t = Sim::text();
    t.hist("@hk", vec![s("x")], 1);
    t.hist("@hk", vec![s("y")], 3);
    t.hist("@hk", vec![s("y")], 300);
    t.hist("@hk", vec![s("y")], 300);
    t.print("@hk", 1, 0);
    t.print("@hk", 0, 2);
    check("hist_keyed", t.exit());
}

#[test]
fn lhist() {
    let mut t = Sim::text();
    for v in [-5, 0, 55, 100, 1000] {
        t.lhist("@l", v, 0, 100, 10);
    }
    t.lhist("@k", 2048, 0, 4096, 1024);
    t.lhist("@k", 5000, 0, 4096, 1024);
    t.lhist("@m", 3145728, 0, 4194304, 1048576);
    check("lhist", t.exit());
}

#[test]
fn count_maps() {
    let mut t = Sim::text();
    for k in [1, 2, 2, 3, 3, 3] {
        t.count("@a", vec![int(k)]);
    }
    t.print("@a", 2, 0);
    t.print("@a", 0, 2);
    t.print("@a", 0, 0);
    t.assign("@z", vec![int(1), s("x")], int(1));
    t.assign("@z", vec![int(2), s("y")], int(2));
    t.print("@z", 0, 0);
    t.sum("@s", vec![s("b")], 5);
    t.sum("@s", vec![s("a")], 7);
    t.sum("@s", vec![s("c")], -2);
    t.print("@s", 0, 0);
    t.clear("@a");
    t.clear("@z");
    t.clear("@s");
    check("count_maps", t.exit());
}

#[test]
fn stats_avg() {
    let mut t = Sim::text();
    t.stats("@st", vec![s("a")], 1);
    t.stats("@st", vec![s("b")], 100);
    t.stats("@st", vec![s("b")], 3);
    t.print("@st", 0, 0);
    t.avg("@av", vec![int(1)], 3);
    t.avg("@av", vec![int(2)], 10);
    t.avg("@av", vec![int(2)], 11);
    t.print("@av", 1, 0);
    t.print("@av", 0, 2);
    t.stats("@s", vec![], 10);
    t.stats("@s", vec![], 3);
    t.avg("@a", vec![], 10);
    t.avg("@a", vec![], 5);
    check("stats_avg", t.exit());
}

#[test]
fn exit_mixed() {
    let mut t = Sim::text();
    t.avg("@a", vec![], 10);
    t.avg("@a", vec![], 5);
    t.count("@c", vec![int(1)]);
    t.hist("@h", vec![], 5);
    t.hist("@h", vec![], 0);
    t.agg("@mn", vec![], Agg::Min(Some(Num::I(3))));
    t.agg("@mx", vec![], Agg::Max(Some(Num::I(9))));
    t.stats("@s", vec![], 10);
    t.stats("@s", vec![], 3);
    t.sum("@x", vec![s("a"), int(1)], 5);
    t.sum("@x", vec![s("b"), int(2)], 3);
    check("exit_mixed", t.exit());
}

#[test]
fn print_values() {
    let mut t = Sim::text();
    let tu = Value::Tuple(vec![int(1), s("two"), int(-3)]);
    t.assign("@tu", vec![], tu);
    t.print("@tu", 0, 0);
    t.value(Value::Tuple(vec![int(5), s("x")]));
    t.value(int(7));
    t.value(s("str"));
    t.assign("@str", vec![s("abcdefghijklmnop")], int(1));
    t.assign("@i", vec![], int(42));
    t.assign("@neg", vec![], int(-42));
    check("print_values", t.exit());
}

#[test]
fn json_maps() {
    let mut j = Sim::json();
    for k in [1, 2, 2] {
        j.count("@a", vec![int(k)]);
    }
    j.print("@a", 1, 0);
    j.assign("@z", vec![int(1), s("x")], int(1));
    j.assign("@z", vec![int(2), s("y")], int(2));
    j.stats("@st", vec![s("a")], 1);
    j.stats("@st", vec![s("b")], 100);
    j.stats("@st", vec![s("b")], 3);
    j.avg("@av", vec![int(1)], 3);
    j.hist("@hk", vec![s("x")], 1);
    j.hist("@hk", vec![s("y")], -3);
    j.hist("@hk", vec![s("y")], 300);
    j.assign("@tu", vec![], Value::Tuple(vec![int(1), s("two"), int(-3)]));
    check("json_maps", j.exit());
}

#[test]
fn json_messages() {
    let mut j = Sim::json();
    j.printf("a\tb\n", &[]);
    j.printf("%d %s\\\n", &[int(5), s("q\"uote")]);
    j.value(Value::Tuple(vec![int(1), s("x")]));
    j.value(int(3));
    j.value(s("s"));
    j.hist("@h", vec![], 3);
    for v in [5, -1, 50] {
        j.lhist("@l", v, 0, 10, 2);
    }
    j.stats("@st", vec![], 4);
    j.avg("@a", vec![], 8);
    j.count("@m", vec![int(1), s("k")]);
    check("json_messages", j.exit());
}

#[test]
fn printf_misc() {
    let mut t = Sim::text();
    t.printf(
        "[%p][%-12p][%5c][%-3c]\n",
        &[int(0), int(255), int(65), int(66)],
    );
    t.printf("[%s][%d]\n", &[s(""), int(0)]);
    t.printf(
        "[%.0d][%3.1x][%-5d][%x]\n",
        &[int(0), int(10), int(3), int(0)],
    );
    check("printf_misc", t.exit());
}

#[test]
fn lhist_uneven() {
    let mut t = Sim::text();
    for v in [22, 30, 3] {
        t.lhist("@c", v, 0, 25, 10);
    }
    t.lhist("@z", 0, 0, 10, 1);
    check("lhist_uneven", t.exit());
}

#[test]
fn every_golden_has_a_case() {
    let cases = [
        "count_maps",
        "exit_mixed",
        "hist",
        "hist_keyed",
        "hist_large",
        "json_maps",
        "json_messages",
        "lhist",
        "lhist_uneven",
        "print_values",
        "printf_ints",
        "printf_misc",
        "printf_strings",
        "stats_avg",
    ];
    assert_eq!(format_support::all_names(), cases);
}
