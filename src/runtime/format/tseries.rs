//! `tseries()` maps: reading a bucket's per-CPU slots, choosing the intervals shown, and
//! bpftrace's graph and JSON array.
//!
//! Input: each bucket's per-CPU slots as `TSeriesKind` lays them out (`[value, meta, epoch]`
//! words). A bucket reads as its newest epoch over the CPUs, the slots of that epoch combined
//! (last value: the latest write by its time stamp; sum and avg: added, avg then divided by
//! the count, truncating; min/max); a bucket no CPU wrote reads as epoch 0 with value 0, as
//! bpftrace reads it.
//! Window: the map's newest epoch over every key is the last interval shown; the
//! `num_intervals - 1` before it are the others, each key starting at its first interval with
//! data, intervals without data shown as `-` (text) or left out (JSON). A map whose newest
//! epoch is 0 (never written, or after `zero()`) shows no intervals. bpftrace computes the
//! first interval with unsigned wrap-around, which shows nothing when fewer intervals than
//! `num_intervals` have passed since epoch 0 (only a test clock gets there); strobe starts at
//! epoch 0 instead.
//! Text (per key): a header with the smallest and largest value, a `hh:mm:ss[.unit]` column
//! (the unit from the spacing of the intervals shown: s, ms, μs or ns), one row per interval
//! in local time with a 53-column plot (`*` at the value's position, `.` at zero when the range
//! spans it) and the value, and the same bounds below. Point positions are computed in `f32`
//! as bpftrace does. JSON: `[{"interval_start":"YYYY-MM-DD HH:MM:SS.nnnnnnnnn","value":N},…]`
//! with the start in UTC.
//! Invariant: never panics for any slots, epochs or values.

use std::collections::BTreeMap;

use super::agg::Num;
use super::time::Tm;
use super::value::write_display;
pub use crate::plan::agg::{TSeriesAgg, TSeriesKind};

/// One key's time series as read from the kernel: each bucket's epoch and value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TSeries {
    pub kind: TSeriesKind,
    /// Epoch → value; at most one entry per bucket.
    pub points: BTreeMap<u64, Num>,
}

/// One interval shown: its epoch and value (`None`: no data in it).
pub type Row = (u64, Option<Num>);

fn words(bytes: &[u8]) -> Vec<u64> {
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
        .collect()
}

impl TSeries {
    pub fn new(kind: TSeriesKind) -> TSeries {
        TSeries {
            kind,
            points: BTreeMap::new(),
        }
    }

    /// Adds one bucket, given as its per-CPU slots (see the module documentation). A second
    /// bucket with the same epoch (only unwritten buckets, epoch 0, can repeat) is ignored.
    pub fn add_bucket(&mut self, per_cpu: &[u8]) {
        let (epoch, v) = reduce_bucket(&self.kind, per_cpu);
        self.points.entry(epoch).or_insert(v);
    }

    /// The newest epoch with data (0 when none).
    pub fn latest(&self) -> u64 {
        self.points.keys().next_back().copied().unwrap_or(0)
    }

    /// The intervals shown when the map's newest epoch is `last` (see the module doc).
    pub fn rows(&self, last: u64) -> Vec<Row> {
        if last == 0 {
            return Vec::new();
        }
        let n = u64::from(self.kind.num_intervals.max(1));
        let first = last.saturating_sub(n - 1);
        let start = self
            .points
            .range(first..=last)
            .next()
            .map_or(last, |(e, _)| *e);
        (start..=last)
            .map(|e| (e, self.points.get(&e).copied()))
            .collect()
    }

    /// Nanoseconds since the Unix epoch at which interval `epoch` starts.
    pub fn start_ns(&self, epoch: u64) -> u64 {
        epoch.saturating_mul(self.kind.interval_ns)
    }
}

/// One bucket's value: the newest epoch over the CPUs' slots and the slots of that epoch
/// combined; `(0, 0)` when no CPU wrote it.
pub fn reduce_bucket(kind: &TSeriesKind, per_cpu: &[u8]) -> (u64, Num) {
    let w = words(per_cpu);
    let slots: Vec<&[u64]> = w.chunks_exact(3).filter(|s| s[2] != 0).collect();
    let num = |v: u64| {
        if kind.signed {
            Num::I(v as i64)
        } else {
            Num::U(v)
        }
    };
    let Some(latest) = slots.iter().map(|s| s[2]).max() else {
        return (0, num(0));
    };
    let mut value: Option<u64> = None;
    let mut meta = 0u64;
    for s in slots.iter().filter(|s| s[2] == latest) {
        let (v, m) = (s[0], s[1]);
        value = Some(match (value, kind.agg) {
            (None, _) => {
                meta = m;
                v
            }
            (Some(cur), TSeriesAgg::Last) => {
                if m > meta {
                    meta = m;
                    v
                } else {
                    cur
                }
            }
            (Some(cur), TSeriesAgg::Sum) => cur.wrapping_add(v),
            (Some(cur), TSeriesAgg::Avg) => {
                meta = meta.wrapping_add(m);
                cur.wrapping_add(v)
            }
            (Some(cur), TSeriesAgg::Min | TSeriesAgg::Max) => {
                let less = if kind.signed {
                    (v as i64) < (cur as i64)
                } else {
                    v < cur
                };
                if less == (kind.agg == TSeriesAgg::Min) && v != cur {
                    v
                } else {
                    cur
                }
            }
        });
    }
    let v = value.unwrap_or(0);
    let v = match kind.agg {
        TSeriesAgg::Avg if meta == 0 => 0,
        TSeriesAgg::Avg if kind.signed => {
            ((v as i64 as i128) / (meta as i64 as i128)) as i64 as u64
        }
        TSeriesAgg::Avg => v / meta,
        _ => v,
    };
    (latest, num(v))
}

/// The display unit of intervals `spacing_ns` apart: digits after the seconds and its name.
fn unit(spacing_ns: u64) -> (usize, &'static str) {
    match spacing_ns {
        s if s >= 1_000_000_000 => (0, "s"),
        s if s >= 1_000_000 => (3, "ms"),
        s if s >= 1_000 => (6, "μs"),
        _ => (9, "ns"),
    }
}

/// bpftrace's signed distance `a - b` between two values of a series.
fn distance(a: Option<Num>, b: Option<Num>) -> i64 {
    let other = match b {
        Some(Num::I(x)) => x,
        Some(Num::U(x)) => x as i64,
        None => return 0,
    };
    match a {
        Some(Num::U(v)) => {
            if other < 0 {
                (other.unsigned_abs().wrapping_add(v)) as i64
            } else if v > other as u64 {
                (v - other as u64) as i64
            } else {
                -((other as u64 - v) as i64)
            }
        }
        Some(Num::I(v)) => v.wrapping_sub(other),
        None => 0,
    }
}

fn write_bound(out: &mut Vec<u8>, v: Option<Num>) {
    match v {
        Some(n) => write_display(out, n),
        None => out.extend_from_slice(b"null"),
    }
}

/// Writes the header/footer line of bounds after `indent` spaces.
fn write_bounds(out: &mut Vec<u8>, indent: usize, min: Option<Num>, max: Option<Num>) {
    out.resize(out.len() + indent, b' ');
    let mut lo = Vec::new();
    write_bound(&mut lo, min);
    let mut hi = Vec::new();
    write_bound(&mut hi, max);
    let lo_len = lo.len();
    out.extend_from_slice(&lo);
    out.resize(out.len() + PADDING.saturating_sub(lo_len), b' ');
    out.resize(
        out.len() + (GRAPH_WIDTH - PADDING).saturating_sub(hi.len()),
        b' ',
    );
    out.extend_from_slice(&hi);
    out.push(b'\n');
}

const GRAPH_WIDTH: usize = 53;
const PADDING: usize = 21;

/// Appends the graph of `rows` of series `ts` (see the module documentation), with times in
/// the zone `utc_offset(unix_seconds)` seconds east of UTC.
pub fn write_tseries_text_in(
    out: &mut Vec<u8>,
    ts: &TSeries,
    rows: &[Row],
    utc_offset: &dyn Fn(i64) -> i64,
) {
    let (Some(front), Some(back)) = (rows.first(), rows.last()) else {
        out.extend_from_slice(b"<no data>");
        return;
    };
    let (mut min, mut max) = (front.1, front.1);
    for v in rows.iter().filter_map(|r| r.1) {
        let k = v.key();
        if min.map_or(true, |m| k < m.key()) {
            min = Some(v);
        }
        if max.map_or(true, |m| k > m.key()) {
            max = Some(v);
        }
    }
    if min == max {
        // Room on both sides of a flat line, unless at the type's edge.
        min = min.map(|m| match m {
            Num::U(v) => Num::U(v.saturating_sub(1)),
            Num::I(v) => Num::I(v.saturating_sub(1)),
        });
        max = max.map(|m| match m {
            Num::U(v) => Num::U(v.saturating_add(1)),
            Num::I(v) => Num::I(v.saturating_add(1)),
        });
    }
    let spacing =
        ts.start_ns(back.0).saturating_sub(ts.start_ns(front.0)) / (rows.len() as u64 - 1).max(1);
    let (digits, unit_name) = unit(spacing);
    let mut time_fmt = String::from("hh:mm:ss");
    let mut time_size = time_fmt.len();
    if digits > 0 {
        time_fmt.push('.');
        time_fmt.push_str(unit_name);
        time_size += 1 + digits;
    }
    write_bounds(out, time_size + 1, min, max);
    out.extend_from_slice(time_fmt.as_bytes());
    out.resize(
        out.len() + (time_size + 1).saturating_sub(time_fmt.len()),
        b' ',
    );
    out.push(b'|');
    out.resize(out.len() + GRAPH_WIDTH - 2, b'_');
    out.extend_from_slice(b"|\n");

    let zero = Some(Num::I(0));
    let span = distance(min, max) as f32;
    let mut zero_offset = 0usize;
    if distance(min, zero) < 0 && distance(zero, max) < 0 {
        zero_offset = ((GRAPH_WIDTH as f32 * distance(min, zero) as f32) / span) as usize;
    }
    for &(epoch, v) in rows {
        let ns = ts.start_ns(epoch);
        let secs = (ns / 1_000_000_000) as i64;
        let frac = ns % 1_000_000_000;
        let tm = Tm::from_unix(secs, utc_offset(secs), "");
        write_display(
            out,
            format_args!("{:02}:{:02}:{:02}", tm.hour, tm.min, tm.sec),
        );
        match digits {
            3 => write_display(out, format_args!(".{:03}", frac / 1_000_000)),
            6 => write_display(out, format_args!(".{:06}", frac / 1_000)),
            9 => write_display(out, format_args!(".{frac:09}")),
            _ => {}
        }
        out.push(b' ');
        let mut line = [b' '; GRAPH_WIDTH];
        line[0] = b'|';
        line[GRAPH_WIDTH - 1] = b'|';
        if zero_offset > 0 && zero_offset < GRAPH_WIDTH {
            line[zero_offset] = b'.';
        }
        match v {
            Some(n) => {
                let at = if min == max {
                    (GRAPH_WIDTH / 2) as i64
                } else {
                    (((GRAPH_WIDTH - 1) as f32 * distance(min, Some(n)) as f32) / span) as i64
                };
                line[at.clamp(0, GRAPH_WIDTH as i64 - 1) as usize] = b'*';
                out.extend_from_slice(&line);
                out.push(b' ');
                write_display(out, n);
            }
            None => {
                out.extend_from_slice(&line);
                out.extend_from_slice(b" -");
            }
        }
        out.push(b'\n');
    }
    out.resize(out.len() + time_size + 1, b' ');
    out.push(b'v');
    out.resize(out.len() + GRAPH_WIDTH - 2, b'_');
    out.extend_from_slice(b"v\n");
    write_bounds(out, time_size + 1, min, max);
}

/// [`write_tseries_text_in`] in the host's local time zone.
pub fn write_tseries_text(out: &mut Vec<u8>, ts: &TSeries, rows: &[Row]) {
    write_tseries_text_in(out, ts, rows, &|secs| {
        super::time::local_offset(secs).map_or(0, |o| o.0)
    });
}

/// Appends the JSON array of `rows` (intervals without data left out).
pub fn write_tseries_json(out: &mut Vec<u8>, ts: &TSeries, rows: &[Row]) {
    out.push(b'[');
    let mut first = true;
    for &(epoch, v) in rows {
        let Some(v) = v else {
            continue;
        };
        if !first {
            out.push(b',');
        }
        first = false;
        let ns = ts.start_ns(epoch);
        let tm = Tm::from_unix((ns / 1_000_000_000) as i64, 0, "UTC");
        write_display(
            out,
            format_args!(
                "{{\"interval_start\":\"{:04}-{:02}-{:02} {:02}:{:02}:{:02}.{:09}\",\"value\":{v}}}",
                tm.year,
                tm.mon + 1,
                tm.mday,
                tm.hour,
                tm.min,
                tm.sec,
                ns % 1_000_000_000
            ),
        );
    }
    out.push(b']');
}

#[cfg(test)]
mod tests;
