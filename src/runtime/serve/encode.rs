//! The Prometheus text exposition format (version 0.0.4) of a script's maps.
//!
//! Input: a [`MetricMap`] (the map's metric name, label names and value kind) and its entries
//! as [`crate::runtime::format::MapSnapshot`] holds them. Output: one metric family: `# HELP`,
//! `# TYPE`, then one sample line per entry (several for histograms and `stats()`), entries
//! in key order. The mapping (docs/prometheus.md has the table):
//!
//! | value                          | family                                            |
//! |--------------------------------|---------------------------------------------------|
//! | `count()`, unsigned `sum()`    | counter `strobe_<map>_total`                      |
//! | signed `sum()`                 | gauge `strobe_<map>` (it can go down)             |
//! | `min()`, `max()`, `avg()`      | gauge `strobe_<map>`                              |
//! | `stats()`                      | summary `strobe_<map>` (`_count`, `_sum`) and gauge `strobe_<map>_avg` |
//! | `hist()`, `lhist()`            | histogram `strobe_<map>` (`_bucket{le}`, `_count`) |
//! | `tseries()`                    | gauge `strobe_<map>`: the newest interval with data in the window `print()` shows (it may still be filling) |
//! | an integer or bool             | gauge `strobe_<map>`                              |
//! | any other value (string, …)    | gauge `strobe_<map>{…,value="text"} 1`            |
//!
//! Histograms have no `_sum`: strobe's `hist()`/`lhist()` keep only bucket counts, and a sum
//! guessed from bucket bounds would be a plausible wrong number. Bucket bounds are exact for
//! integers: the log2 bucket `[2^p, 2^(p+1))` is `le="2^(p+1)-1"`; buckets are written from
//! the first one up to the last non-empty one, then `+Inf` (the total).
//! An entry with no value yet (`min()`/`max()` never set, `avg()` of nothing) is left out, so
//! no sample is ever NaN. Invariant: the output is valid UTF-8 exposition text for any
//! entries (label values escaped; invalid UTF-8 replaced by U+FFFD); never panics.

use std::fmt::Write as _;

use crate::plan::MapValueSpec;
use crate::runtime::format::agg::{average, Agg, AggKind};
use crate::runtime::format::hist::HistKind;
use crate::runtime::format::maps::{cmp_keys, write_key_field, MapValue};
use crate::runtime::format::{TextStyle, Value};

/// Label names strobe writes itself, which `--serve-labels` may not use.
pub const RESERVED_LABELS: &[&str] = &["le", "quantile", "value"];

/// How one script map is exposed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MetricMap {
    /// The script's name for it (`@name`, `@` alone for the unnamed map).
    pub map: String,
    /// The family name without suffixes: `strobe_<map>` sanitised (see [`metric_base`]).
    pub base: String,
    /// One label name per key field (`key0`, `key1`, … unless named).
    pub labels: Vec<String>,
    pub value: MapValueSpec,
}

/// What a family is in Prometheus terms.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Kind {
    Counter,
    Gauge,
    Summary,
    Histogram,
}

impl Kind {
    fn name(self) -> &'static str {
        match self {
            Kind::Counter => "counter",
            Kind::Gauge => "gauge",
            Kind::Summary => "summary",
            Kind::Histogram => "histogram",
        }
    }
}

/// `strobe_<map>` with every character outside `[A-Za-z0-9_]` as `_`; the unnamed map `@`
/// is `strobe_at` (as its kernel name is `at`).
pub fn metric_base(map: &str) -> String {
    let name = map.trim_start_matches('@');
    let mut s = String::from("strobe_");
    if name.is_empty() {
        s.push_str("at");
    }
    s.extend(name.chars().map(|c| {
        if c.is_ascii_alphanumeric() || c == '_' {
            c
        } else {
            '_'
        }
    }));
    s
}

/// Whether `s` is a label name Prometheus accepts and does not reserve (`__` prefix).
pub fn valid_label_name(s: &str) -> bool {
    let mut chars = s.chars();
    matches!(chars.next(), Some(c) if c.is_ascii_alphabetic() || c == '_')
        && chars.all(|c| c.is_ascii_alphanumeric() || c == '_')
        && !s.starts_with("__")
}

impl MetricMap {
    /// The family's type, decided by the map's value kind (so an empty map has one too).
    pub fn kind(&self) -> Kind {
        match &self.value {
            MapValueSpec::Agg(AggKind::Count | AggKind::Sum { signed: false }) => Kind::Counter,
            MapValueSpec::Agg(AggKind::Stats { .. }) => Kind::Summary,
            MapValueSpec::Agg(AggKind::Hist(_)) => Kind::Histogram,
            _ => Kind::Gauge,
        }
    }

    /// Every metric name the family writes (for collision checks).
    pub fn names(&self) -> Vec<String> {
        let b = &self.base;
        match self.kind() {
            Kind::Counter => vec![format!("{b}_total")],
            Kind::Gauge => vec![b.clone()],
            Kind::Summary => vec![
                b.clone(),
                format!("{b}_count"),
                format!("{b}_sum"),
                format!("{b}_avg"),
            ],
            Kind::Histogram => vec![b.clone(), format!("{b}_bucket"), format!("{b}_count")],
        }
    }

    fn what(&self) -> String {
        let agg = match &self.value {
            MapValueSpec::Agg(AggKind::Count) => "count()",
            MapValueSpec::Agg(AggKind::Sum { .. }) => "sum()",
            MapValueSpec::Agg(AggKind::Min { .. }) => "min()",
            MapValueSpec::Agg(AggKind::Max { .. }) => "max()",
            MapValueSpec::Agg(AggKind::Avg { .. }) => "avg()",
            MapValueSpec::Agg(AggKind::Stats { .. }) => "stats()",
            MapValueSpec::Agg(AggKind::Hist(HistKind::Log2 { .. })) => "hist()",
            MapValueSpec::Agg(AggKind::Hist(HistKind::Linear { .. })) => "lhist()",
            MapValueSpec::Agg(AggKind::TSeries(_)) => "tseries()",
            MapValueSpec::Plain(_) => "assigned values",
        };
        format!("strobe map {} ({agg})", self.map)
    }
}

/// Appends `s` escaped for a label value: `\` → `\\`, `"` → `\"`, newline → `\n`.
pub fn escape_label_value(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '"' => out.push_str("\\\""),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// Appends `s` escaped for a `# HELP` docstring: `\` → `\\`, newline → `\n`.
pub fn escape_help(out: &mut String, s: &str) {
    for c in s.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            c => out.push(c),
        }
    }
}

/// Writes `# HELP` and `# TYPE` for `name`.
pub fn write_header(out: &mut String, name: &str, kind: Kind, help: &str) {
    out.push_str("# HELP ");
    out.push_str(name);
    out.push(' ');
    escape_help(out, help);
    let _ = writeln!(out, "\n# TYPE {name} {}", kind.name());
}

/// A key field's text as a label value (strings as they are, other values as bpftrace prints
/// them in a map key).
fn label_text(v: &Value) -> String {
    match v {
        Value::Str { bytes, .. } | Value::Symbol(bytes) => String::from_utf8_lossy(bytes).into(),
        _ => {
            let mut b = Vec::new();
            write_key_field(&mut b, v, TextStyle::default());
            String::from_utf8_lossy(&b).into()
        }
    }
}

/// `a="x",b="y"`: the label pairs of one entry, escaped (empty without labels).
pub fn label_body(names: &[String], values: &[String]) -> String {
    let mut s = String::new();
    for (i, (n, v)) in names.iter().zip(values).enumerate() {
        if i > 0 {
            s.push(',');
        }
        s.push_str(n);
        s.push_str("=\"");
        escape_label_value(&mut s, v);
        s.push('"');
    }
    s
}

/// One sample line: `name{body,extra="v"} value` (no braces when there are no labels).
pub fn write_sample(
    out: &mut String,
    name: &str,
    body: &str,
    extra: Option<(&str, &str)>,
    value: impl std::fmt::Display,
) {
    out.push_str(name);
    if !body.is_empty() || extra.is_some() {
        out.push('{');
        out.push_str(body);
        if let Some((n, v)) = extra {
            if !body.is_empty() {
                out.push(',');
            }
            out.push_str(n);
            out.push_str("=\"");
            escape_label_value(out, v);
            out.push('"');
        }
        out.push('}');
    }
    let _ = writeln!(out, " {value}");
}

/// Writes the family of `m` with `entries` (any order; written in key order).
pub fn write_map(out: &mut String, m: &MetricMap, entries: &[(Vec<Value>, MapValue)]) {
    let kind = m.kind();
    let help = m.what();
    let b = &m.base;
    let total_name = format!("{b}_total");
    let main = if kind == Kind::Counter {
        &total_name
    } else {
        b
    };
    write_header(out, main, kind, &help);
    let mut sorted: Vec<&(Vec<Value>, MapValue)> = entries.iter().collect();
    sorted.sort_by(|x, y| cmp_keys(&x.0, &y.0));
    let mut avgs = Vec::new();
    let last = entries
        .iter()
        .filter_map(|e| match &e.1 {
            MapValue::Agg(Agg::TSeries(t)) => Some(t.latest()),
            _ => None,
        })
        .max()
        .unwrap_or(0);
    for (keys, value) in sorted {
        let texts: Vec<String> = keys.iter().map(label_text).collect();
        let body = label_body(&m.labels, &texts);
        match value {
            MapValue::Agg(Agg::Count(n)) => write_sample(out, main, &body, None, n),
            MapValue::Agg(Agg::Sum(n)) => write_sample(out, main, &body, None, n),
            MapValue::Agg(Agg::Min(n) | Agg::Max(n)) => {
                if let Some(n) = n {
                    write_sample(out, main, &body, None, n);
                }
            }
            MapValue::Agg(Agg::Avg { total, count }) => {
                if *count > 0 {
                    write_sample(out, main, &body, None, average(*total, *count));
                }
            }
            MapValue::Agg(Agg::Stats { total, count }) => {
                write_sample(out, &format!("{b}_count"), &body, None, count);
                write_sample(out, &format!("{b}_sum"), &body, None, total);
                if *count > 0 {
                    avgs.push((body, average(*total, *count)));
                }
            }
            MapValue::Agg(Agg::Hist { kind: hk, counts }) => {
                write_hist(out, b, &body, hk, counts);
            }
            MapValue::Agg(Agg::TSeries(t)) => {
                if let Some(v) = t.rows(last).iter().rev().find_map(|r| r.1) {
                    write_sample(out, main, &body, None, v);
                }
            }
            MapValue::Plain(v) => match v {
                Value::Int(i) => write_sample(out, main, &body, None, i),
                Value::UInt(u) => write_sample(out, main, &body, None, u),
                Value::Bool(x) => write_sample(out, main, &body, None, *x as u8),
                other => {
                    let text = label_text(other);
                    write_sample(out, main, &body, Some(("value", &text)), 1);
                }
            },
        }
    }
    if kind == Kind::Summary {
        let name = format!("{b}_avg");
        write_header(
            out,
            &name,
            Kind::Gauge,
            &format!("{help}: total / count, truncated"),
        );
        for (body, avg) in avgs {
            write_sample(out, &name, &body, None, avg);
        }
    }
}

/// Exclusive upper bound of log2 bucket `i` of `hist(v, k)` (see `format::hist`), exact.
fn log2_upper(i: usize, k: u8) -> i128 {
    let k = k.min(crate::runtime::format::hist::MAX_LOG2_K) as u32;
    let n = 1usize << k;
    if i < n {
        return i as i128;
    }
    let power = ((i >> k) - 1).min(100) as u32;
    let interval = (i & (n - 1)) as i128;
    (1i128 << power) * (n as i128 + interval)
}

/// The inclusive upper bound (`le`) of bucket `i`, or `None` for the last bucket of an
/// `lhist()`, which holds everything from its start up (only `+Inf` bounds it).
pub fn bucket_le(kind: &HistKind, i: usize) -> Option<i128> {
    match *kind {
        HistKind::Log2 { k } => Some(log2_upper(i, k) - 1),
        HistKind::Linear { min, step, .. } => {
            if i + 1 >= kind.bucket_count() {
                return None;
            }
            Some(min as i128 + i as i128 * step as i128 - 1)
        }
    }
}

fn write_hist(out: &mut String, b: &str, body: &str, kind: &HistKind, counts: &[u64]) {
    let total: u128 = counts.iter().map(|&c| c as u128).sum();
    let last = counts.iter().rposition(|&c| c != 0).unwrap_or(0);
    let name = format!("{b}_bucket");
    let mut cumulative: u128 = 0;
    let mut le = String::new();
    for (i, &c) in counts.iter().enumerate().take(last + 1) {
        let Some(bound) = bucket_le(kind, i) else {
            break;
        };
        cumulative += c as u128;
        le.clear();
        let _ = write!(le, "{bound}");
        write_sample(out, &name, body, Some(("le", &le)), cumulative);
    }
    write_sample(out, &name, body, Some(("le", "+Inf")), total);
    write_sample(out, &format!("{b}_count"), body, None, total);
}

#[cfg(test)]
#[path = "encode_tests.rs"]
mod tests;
