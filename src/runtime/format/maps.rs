//! Map printing (`print(@m[, top[, div]])` and the maps printed at exit) in bpftrace's text.
//!
//! Input: a [`MapSnapshot`]: the map's name and its entries (key values, merged value).
//! Output (bpftrace 0.17's layout):
//! - plain and count/sum/min/max maps: `@name[k1, k2]: v` lines, then a newline
//!   (scalar maps: `@name: v`);
//! - avg/stats maps: the same lines (`count N, average A, total T` for stats), then a blank line;
//! - hist/lhist maps: `@name[k]: ` then the table, entries separated by a blank line, then a
//!   blank line;
//! - tseries maps (current bpftrace): `@name[k]:` then the graph (`format::tseries`) and a
//!   blank line, for each key in the order of the keys' bytes (as bpftrace's map of them
//!   sorts), every key's window ending at the map's newest interval; `top` and `div` do not
//!   apply, as in bpftrace;
//! - an empty map prints only its trailing newline(s), as 0.17 does for cleared maps.
//!
//! Order: by value ascending (count, sum, min, max, integers), by average (avg, stats), by total
//! count (histograms); other maps by key (integers numerically, strings bytewise, field by
//! field). bpftrace sorts with an unstable sort, so its order of equal values is unspecified;
//! strobe breaks ties by key so output is deterministic. `top` keeps the last `top` entries
//! after sorting (also for stats maps, as current bpftrace does; 0.17 ignored it there); `div`
//! divides printed values (not stats, not lhist).
//! Deliberate difference from 0.17: maps whose values are `ksym`/`usym`/`inet` get one line per
//! entry (0.17 joined them with nothing: `@k[1]: f@k[2]: g`); only stack values, which end in
//! a newline already, are joined with nothing — as current bpftrace prints them.
//! Invariant: never panics, whatever the entries.

use std::cmp::Ordering;

use super::agg::{average, Agg, Num};
use super::hist::write_hist_text;
use super::tseries::write_tseries_text;
use super::value::{write_display, TextStyle, Value};

/// A map's value: an aggregation or a plainly assigned value (`@x[1] = "s"`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MapValue {
    Agg(Agg),
    Plain(Value),
}

/// One map as read from the kernel and merged over CPUs.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub struct MapSnapshot {
    /// Including the `@` (`@` alone for the unnamed map).
    pub name: String,
    /// Each entry's key fields (empty for a scalar map) and value.
    pub entries: Vec<(Vec<Value>, MapValue)>,
}

/// How a whole map is laid out, decided by its value type.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Layout {
    Plain,
    Stats,
    Hist,
    TSeries,
}

impl MapSnapshot {
    pub(crate) fn layout(&self) -> Layout {
        match self.entries.first().map(|e| &e.1) {
            Some(MapValue::Agg(Agg::Avg { .. } | Agg::Stats { .. })) => Layout::Stats,
            Some(MapValue::Agg(Agg::Hist { .. })) => Layout::Hist,
            Some(MapValue::Agg(Agg::TSeries(_))) => Layout::TSeries,
            _ => Layout::Plain,
        }
    }

    /// A time series map's newest interval over every key (0 when none).
    pub fn tseries_last(&self) -> u64 {
        self.entries
            .iter()
            .filter_map(|e| match &e.1 {
                MapValue::Agg(Agg::TSeries(t)) => Some(t.latest()),
                _ => None,
            })
            .max()
            .unwrap_or(0)
    }

    /// The entries in print order with `top` applied (0 = all). Time series keep the
    /// snapshot's order (by key bytes) and ignore `top`.
    pub fn sorted(&self, top: usize) -> Vec<&(Vec<Value>, MapValue)> {
        let mut v: Vec<&(Vec<Value>, MapValue)> = self.entries.iter().collect();
        if self.layout() == Layout::TSeries {
            return v;
        }
        v.sort_by(|a, b| match (value_key(&a.1), value_key(&b.1)) {
            (Some(x), Some(y)) => x.cmp(&y).then_with(|| cmp_keys(&a.0, &b.0)),
            _ => cmp_keys(&a.0, &b.0),
        });
        if top > 0 && v.len() > top {
            v.drain(..v.len() - top);
        }
        v
    }
}

/// The sort key of a value, or `None` for values bpftrace orders by key.
fn value_key(v: &MapValue) -> Option<i128> {
    match v {
        MapValue::Agg(a) => Some(a.sort_key()),
        MapValue::Plain(Value::Int(i)) => Some(*i as i128),
        MapValue::Plain(Value::UInt(u)) => Some(*u as i128),
        MapValue::Plain(_) => None,
    }
}

/// Key order: field by field; integers numerically, strings bytewise; other kinds are equal.
pub fn cmp_keys(a: &[Value], b: &[Value]) -> Ordering {
    for (x, y) in a.iter().zip(b) {
        let o = match (x, y) {
            (Value::Str { bytes: p, .. }, Value::Str { bytes: q, .. }) => p.cmp(q),
            (Value::Tuple(p), Value::Tuple(q)) => cmp_keys(p, q),
            _ => match (x.as_u64(), y.as_u64()) {
                // bpftrace compares integer keys as signed values of their width.
                (Some(p), Some(q)) => (p as i64).cmp(&(q as i64)),
                _ => Ordering::Equal,
            },
        };
        if o != Ordering::Equal {
            return o;
        }
    }
    a.len().cmp(&b.len())
}

/// Writes `@name` or `@name[k1, k2]`.
pub fn write_map_key(out: &mut Vec<u8>, name: &str, keys: &[Value], style: TextStyle) {
    out.extend_from_slice(name.as_bytes());
    if keys.is_empty() {
        return;
    }
    out.push(b'[');
    for (i, k) in keys.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b", ");
        }
        write_key_field(out, k, style);
    }
    out.push(b']');
}

/// One key field's text: as any value, except that bpftrace 0.17 indents stacks in keys by 4
/// and prints a pointer key in hex (a pointer value is decimal).
pub(crate) fn write_key_field(out: &mut Vec<u8>, k: &Value, style: TextStyle) {
    match k {
        Value::Stack(st) => out.extend_from_slice(&st.render_indented(4)),
        Value::Pointer(p) => out.extend_from_slice(format!("0x{p:x}").as_bytes()),
        _ => k.write_text(out, style),
    }
}

/// Writes one map value's text (`div` applied as bpftrace does).
pub fn write_agg_text(out: &mut Vec<u8>, agg: &Agg, div: u64) {
    match agg {
        Agg::Count(n) => write_display(out, n / div.max(1)),
        Agg::Sum(n) => write_display(out, n.div_by(div)),
        Agg::Min(n) | Agg::Max(n) => write_display(out, n.unwrap_or(Num::I(0)).div_by(div)),
        Agg::Avg { total, count } => write_display(out, average(*total, *count).div_by(div)),
        Agg::Stats { total, count } => write_display(
            out,
            format_args!(
                "{{ .count = {count}, .average = {}, .total = {total} }}",
                average(*total, *count)
            ),
        ),
        Agg::Hist { kind, counts } => write_hist_text(out, kind, counts, div),
        Agg::TSeries(t) => write_tseries_text(out, t, &t.rows(t.latest())),
    }
}

fn write_plain_div(out: &mut Vec<u8>, v: &Value, div: u64, style: TextStyle) {
    match *v {
        Value::Int(i) if div > 1 => write_display(out, Num::I(i).div_by(div)),
        Value::UInt(u) if div > 1 => write_display(out, u / div),
        _ => v.write_text(out, style),
    }
}

/// Appends the map's text as bpftrace prints it for `print(@m, top, div)` and at exit.
pub fn write_map_text(
    out: &mut Vec<u8>,
    map: &MapSnapshot,
    top: usize,
    div: u64,
    style: TextStyle,
) {
    let layout = map.layout();
    let entries = map.sorted(top);
    if layout == Layout::TSeries {
        let last = map.tseries_last();
        for (keys, value) in entries {
            if let MapValue::Agg(Agg::TSeries(t)) = value {
                write_map_key(out, &map.name, keys, style);
                out.extend_from_slice(b":\n");
                write_tseries_text(out, t, &t.rows(last));
                out.extend_from_slice(b"\n");
            }
        }
        return;
    }
    for (i, (keys, value)) in entries.iter().enumerate() {
        if i > 0 {
            let prev_is_stack = matches!(entries[i - 1].1, MapValue::Plain(Value::Stack(_)));
            // Stacks end with a newline already (bpftrace joins them with nothing).
            if layout == Layout::Hist {
                out.extend_from_slice(b"\n");
            } else if !prev_is_stack {
                out.push(b'\n');
            }
        }
        write_map_key(out, &map.name, keys, style);
        // Current bpftrace starts a histogram on the next line with no space after the colon
        // (0.17 wrote `@h: `).
        if layout == Layout::Hist {
            out.extend_from_slice(b":\n");
        } else {
            out.extend_from_slice(b": ");
        }
        match value {
            MapValue::Agg(a) => write_agg_text(out, a, div),
            MapValue::Plain(v) => write_plain_div(out, v, div, style),
        }
    }
    out.push(b'\n');
    if layout == Layout::Stats {
        out.push(b'\n');
    }
}

/// `print(value)`: the value's text and a newline.
pub fn write_value_text(out: &mut Vec<u8>, v: &Value, style: TextStyle) {
    v.write_text(out, style);
    out.push(b'\n');
}

/// What bpftrace prints before the exit-time map dump: two newlines (in text and JSON mode).
pub const EXIT_PREAMBLE: &[u8] = b"\n\n";

#[cfg(test)]
mod tests;
