//! Aggregation values and their per-CPU merge. bpftrace keeps aggregations in per-CPU maps and
//! merges the CPUs' slots in userspace when printing; strobe's code generator uses the layouts
//! below (one slot per CPU, each slot as the kernel returns it from a per-CPU lookup: the
//! value size rounded up to 8 bytes, slots back to back):
//!
//! | aggregation          | slot (little-endian u64 words) | merge                              |
//! |----------------------|--------------------------------|------------------------------------|
//! | `count()`            | `[n]`                          | wrapping sum                       |
//! | `sum(v)`             | `[total]`                      | wrapping sum (signed or unsigned)  |
//! | `min(v)` / `max(v)`  | `[value, is_set]`              | min/max over slots with is_set ≠ 0 |
//! | `avg(v)` / `stats(v)`| `[total, count]`               | sums; average = total / count      |
//! | `hist` / `lhist`     | one map key per bucket, `[n]`  | wrapping sum per bucket            |
//! | `tseries`            | one map key per interval bucket, `[value, meta, epoch]` | see `format::tseries` |
//!
//! This is current bpftrace's layout. Invariant: merging never panics or overflows (wrapping,
//! like the kernel's own adds); a short or ragged buffer merges the complete slots only.

use super::hist::HistKind;
use super::tseries::TSeries;
pub use crate::plan::agg::AggKind;

/// A 64-bit integer with the signedness of the script expression it came from.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Num {
    I(i64),
    U(u64),
}

impl Num {
    /// Divides for `print(@m, top, div)`; `div` 0 means 1. Signed values divide as signed.
    pub fn div_by(self, div: u64) -> Num {
        let div = div.max(1);
        match self {
            Num::I(v) => Num::I(if div > i64::MAX as u64 {
                0
            } else {
                v / div as i64
            }),
            Num::U(v) => Num::U(v / div),
        }
    }

    /// A total order across signedness: compare mathematically.
    pub fn key(self) -> i128 {
        match self {
            Num::I(v) => v as i128,
            Num::U(v) => v as i128,
        }
    }
}

impl std::fmt::Display for Num {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Num::I(v) => v.fmt(f),
            Num::U(v) => v.fmt(f),
        }
    }
}

/// One merged aggregation value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Agg {
    Count(u64),
    Sum(Num),
    /// `None` when no CPU ever set it.
    Min(Option<Num>),
    Max(Option<Num>),
    Avg {
        total: Num,
        count: u64,
    },
    Stats {
        total: Num,
        count: u64,
    },
    Hist {
        kind: HistKind,
        counts: Vec<u64>,
    },
    TSeries(TSeries),
}

fn words(bytes: &[u8]) -> impl Iterator<Item = u64> + '_ {
    bytes
        .chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap_or([0; 8])))
}

/// Sum of the per-CPU `u64` slots (count, sum, one hist bucket), wrapping.
pub fn merge_sum(per_cpu: &[u8]) -> u64 {
    words(per_cpu).fold(0u64, |a, w| a.wrapping_add(w))
}

/// Merges `[value, is_set]` slots; `None` when no slot is set.
pub fn merge_min_max(per_cpu: &[u8], signed: bool, max: bool) -> Option<Num> {
    let mut best: Option<Num> = None;
    let w: Vec<u64> = words(per_cpu).collect();
    for slot in w.chunks_exact(2) {
        if slot[1] == 0 {
            continue;
        }
        let v = if signed {
            Num::I(slot[0] as i64)
        } else {
            Num::U(slot[0])
        };
        best = match best {
            None => Some(v),
            Some(b) if (max && v.key() > b.key()) || (!max && v.key() < b.key()) => Some(v),
            keep => keep,
        };
    }
    best
}

/// Merges `[total, count]` slots into (total, count), wrapping.
pub fn merge_total_count(per_cpu: &[u8], signed: bool) -> (Num, u64) {
    let w: Vec<u64> = words(per_cpu).collect();
    let (mut total, mut count) = (0u64, 0u64);
    for slot in w.chunks_exact(2) {
        total = total.wrapping_add(slot[0]);
        count = count.wrapping_add(slot[1]);
    }
    let total = if signed {
        Num::I(total as i64)
    } else {
        Num::U(total)
    };
    (total, count)
}

/// Average as bpftrace computes it: integer division truncating toward zero, 0 when count is 0.
pub fn average(total: Num, count: u64) -> Num {
    if count == 0 {
        return match total {
            Num::I(_) => Num::I(0),
            Num::U(_) => Num::U(0),
        };
    }
    match total {
        // Mathematical quotient; it fits i64 unless total = i64::MIN and count = 1 … which
        // still fits. i128 keeps a count above i64::MAX from overflowing.
        Num::I(t) => Num::I((t as i128 / count as i128) as i64),
        Num::U(t) => Num::U(t / count),
    }
}

impl AggKind {
    /// Merges one map value's per-CPU slots (not used for histograms and time series, whose
    /// buckets are separate map keys: see [`merge_hist_bucket`] and [`TSeries::add_bucket`];
    /// for those this is the empty value).
    pub fn merge(&self, per_cpu: &[u8]) -> Agg {
        match *self {
            AggKind::Count => Agg::Count(merge_sum(per_cpu)),
            AggKind::Sum { signed } => {
                let s = merge_sum(per_cpu);
                Agg::Sum(if signed { Num::I(s as i64) } else { Num::U(s) })
            }
            AggKind::Min { signed } => Agg::Min(merge_min_max(per_cpu, signed, false)),
            AggKind::Max { signed } => Agg::Max(merge_min_max(per_cpu, signed, true)),
            AggKind::Avg { signed } => {
                let (total, count) = merge_total_count(per_cpu, signed);
                Agg::Avg { total, count }
            }
            AggKind::Stats { signed } => {
                let (total, count) = merge_total_count(per_cpu, signed);
                Agg::Stats { total, count }
            }
            AggKind::Hist(kind) => Agg::Hist {
                kind,
                counts: vec![0; kind.bucket_count().min(1 << 16)],
            },
            AggKind::TSeries(kind) => Agg::TSeries(TSeries::new(kind)),
        }
    }
}

/// Adds one bucket's per-CPU slots into a histogram's counts (ignores out-of-range buckets).
pub fn merge_hist_bucket(counts: &mut Vec<u64>, kind: &HistKind, bucket: u64, per_cpu: &[u8]) {
    let n = kind.bucket_count();
    let Ok(b) = usize::try_from(bucket) else {
        return;
    };
    if b >= n {
        return;
    }
    if counts.len() <= b {
        counts.resize(b + 1, 0);
    }
    counts[b] = counts[b].wrapping_add(merge_sum(per_cpu));
}

impl Agg {
    /// The number maps are sorted by: the value; for avg/stats the average; for histograms
    /// the total count.
    pub fn sort_key(&self) -> i128 {
        match self {
            Agg::Count(n) => *n as i128,
            Agg::Sum(n) => n.key(),
            Agg::Min(n) | Agg::Max(n) => n.map_or(0, Num::key),
            Agg::Avg { total, count } | Agg::Stats { total, count } => {
                average(*total, *count).key()
            }
            Agg::Hist { counts, .. } => counts.iter().map(|&c| c as i128).sum(),
            Agg::TSeries(t) => t.latest() as i128,
        }
    }

    /// Merges another CPU's or snapshot's value of the same kind into this one.
    pub fn combine(&mut self, other: &Agg) {
        fn add(a: Num, b: Num) -> Num {
            match (a, b) {
                (Num::I(x), y) => Num::I(x.wrapping_add(y.key() as i64)),
                (Num::U(x), y) => Num::U(x.wrapping_add(y.key() as u64)),
            }
        }
        match (self, other) {
            (Agg::Count(a), Agg::Count(b)) => *a = a.wrapping_add(*b),
            (Agg::Sum(a), Agg::Sum(b)) => *a = add(*a, *b),
            (Agg::Min(a), Agg::Min(b)) => {
                *a = match (*a, *b) {
                    (Some(x), Some(y)) => Some(if y.key() < x.key() { y } else { x }),
                    (x, y) => x.or(y),
                }
            }
            (Agg::Max(a), Agg::Max(b)) => {
                *a = match (*a, *b) {
                    (Some(x), Some(y)) => Some(if y.key() > x.key() { y } else { x }),
                    (x, y) => x.or(y),
                }
            }
            (Agg::Avg { total, count }, Agg::Avg { total: t, count: c })
            | (Agg::Stats { total, count }, Agg::Stats { total: t, count: c }) => {
                *total = add(*total, *t);
                *count = count.wrapping_add(*c);
            }
            (Agg::Hist { counts, .. }, Agg::Hist { counts: o, .. }) => {
                if counts.len() < o.len() {
                    counts.resize(o.len(), 0);
                }
                for (a, b) in counts.iter_mut().zip(o) {
                    *a = a.wrapping_add(*b);
                }
            }
            _ => {}
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn slots(ws: &[u64]) -> Vec<u8> {
        ws.iter().flat_map(|w| w.to_le_bytes()).collect()
    }

    #[test]
    fn count_and_sum_add_every_cpu_wrapping() {
        assert_eq!(AggKind::Count.merge(&slots(&[1, 2, 3])), Agg::Count(6));
        assert_eq!(AggKind::Count.merge(&slots(&[u64::MAX, 2])), Agg::Count(1));
        assert_eq!(
            AggKind::Sum { signed: true }.merge(&slots(&[-5i64 as u64, 2])),
            Agg::Sum(Num::I(-3))
        );
        assert_eq!(AggKind::Count.merge(&[1, 2, 3]), Agg::Count(0));
    }

    #[test]
    fn min_max_skip_unset_cpus() {
        let s = slots(&[0, 0, -4i64 as u64, 1, 7, 1]);
        assert_eq!(merge_min_max(&s, true, true), Some(Num::I(7)));
        assert_eq!(merge_min_max(&s, true, false), Some(Num::I(-4)));
        assert_eq!(merge_min_max(&slots(&[9, 0]), true, true), None);
        assert_eq!(
            merge_min_max(&slots(&[u64::MAX, 1, 1, 1]), false, true),
            Some(Num::U(u64::MAX))
        );
    }

    #[test]
    fn averages_truncate_toward_zero() {
        let (t, c) = merge_total_count(&slots(&[10, 1, 3, 1]), true);
        assert_eq!((t, c), (Num::I(13), 2));
        assert_eq!(average(t, c), Num::I(6));
        assert_eq!(average(Num::I(-7), 2), Num::I(-3));
        assert_eq!(average(Num::I(i64::MIN), 1), Num::I(i64::MIN));
        assert_eq!(average(Num::U(5), 0), Num::U(0));
        assert_eq!(average(Num::U(u64::MAX), u64::MAX), Num::U(1));
    }

    #[test]
    fn hist_buckets_merge_and_ignore_out_of_range() {
        let kind = HistKind::Log2 { k: 0 };
        let mut counts = Vec::new();
        merge_hist_bucket(&mut counts, &kind, 3, &slots(&[1, 2]));
        merge_hist_bucket(&mut counts, &kind, 3, &slots(&[4]));
        merge_hist_bucket(&mut counts, &kind, 65, &slots(&[4]));
        merge_hist_bucket(&mut counts, &kind, u64::MAX, &slots(&[4]));
        assert_eq!(counts, vec![0, 0, 0, 7]);
    }

    #[test]
    fn combine_merges_snapshots() {
        let mut a = Agg::Min(None);
        a.combine(&Agg::Min(Some(Num::I(3))));
        a.combine(&Agg::Min(Some(Num::I(-1))));
        assert_eq!(a, Agg::Min(Some(Num::I(-1))));
        let mut s = Agg::Stats {
            total: Num::I(1),
            count: 1,
        };
        s.combine(&Agg::Stats {
            total: Num::I(5),
            count: 2,
        });
        assert_eq!(s.sort_key(), 2);
    }

    #[test]
    fn division_by_zero_means_one() {
        assert_eq!(Num::U(7).div_by(0), Num::U(7));
        assert_eq!(Num::I(-7).div_by(2), Num::I(-3));
        assert_eq!(Num::I(-7).div_by(u64::MAX), Num::I(0));
    }
}
