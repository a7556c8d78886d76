//! Aggregation and histogram kinds (decided by the checker) and the histogram bucket
//! functions the code generator must compute identically in BPF. The bucket rules, the
//! per-CPU slot layouts and the merge are described in `runtime::format::hist` and
//! `runtime::format::agg`; the time series contract (bucket choice, slot layout) is
//! [`TSeriesKind`]'s.

/// Which aggregation a map holds (decided by the checker from the script).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AggKind {
    Count,
    Sum {
        signed: bool,
    },
    Min {
        signed: bool,
    },
    Max {
        signed: bool,
    },
    Avg {
        signed: bool,
    },
    Stats {
        signed: bool,
    },
    Hist(HistKind),
    /// `tseries(v, interval, n[, agg])`.
    TSeries(TSeriesKind),
}

/// How the values written into one interval of a time series combine.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TSeriesAgg {
    /// No aggregation function: the last value written wins.
    Last,
    Avg,
    Max,
    Min,
    Sum,
}

impl TSeriesAgg {
    /// The aggregation named by `tseries()`'s fourth argument.
    pub fn from_name(s: &str) -> Option<TSeriesAgg> {
        Some(match s {
            "avg" => TSeriesAgg::Avg,
            "max" => TSeriesAgg::Max,
            "min" => TSeriesAgg::Min,
            "sum" => TSeriesAgg::Sum,
            _ => return None,
        })
    }

    /// The names `from_name` accepts, sorted (as bpftrace lists them in its error).
    pub const NAMES: [&'static str; 4] = ["avg", "max", "min", "sum"];
}

/// A time series map (`tseries(v, interval_ns, num_intervals[, agg])`), the contract between
/// the code generator and the printer:
/// - the clock is software TAI (the boot clock plus the CLOCK_TAI − CLOCK_BOOTTIME offset read
///   when the script is compiled), in nanoseconds, as bpftrace's; `epoch = now / interval_ns`
///   and the value lands in bucket `epoch % num_intervals`;
/// - each bucket is its own map key: the user key plus a trailing `u64` bucket index (as a
///   histogram's, `codegen::emit::maps::hist_key_fields`), in a per-CPU hash map;
/// - each CPU's slot is [`TSERIES_SLOT_SIZE`] bytes, three little-endian `u64` words
///   `[value, meta, epoch]`: `meta` is the write time for [`TSeriesAgg::Last`], 1 once set
///   for min/max, the number of values for avg, 0 for sum. A write whose epoch differs from
///   the slot's resets value and meta first (for `Last` the value is simply overwritten), so a
///   bucket reused by a later interval forgets the older one;
/// - epoch 0 marks a slot never written (a real clock never gives epoch 0).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct TSeriesKind {
    /// Interval length in nanoseconds (≥ 1).
    pub interval_ns: u64,
    /// Number of intervals kept (1..=1_000_000).
    pub num_intervals: u32,
    pub agg: TSeriesAgg,
    /// Whether the values are signed (min/max compare and avg divide accordingly).
    pub signed: bool,
}

/// Bytes of one CPU's slot of a time series bucket: `[value, meta, epoch]`.
pub const TSERIES_SLOT_SIZE: u32 = 24;

/// bpftrace's largest `num_intervals` for `tseries()`.
pub const MAX_TSERIES_INTERVALS: i64 = 1_000_000;

impl TSeriesKind {
    /// The interval number of instant `now_ns`.
    pub fn epoch(&self, now_ns: u64) -> u64 {
        now_ns / self.interval_ns.max(1)
    }

    /// The bucket (map key suffix) interval `epoch` is kept in.
    pub fn bucket(&self, epoch: u64) -> u64 {
        epoch % u64::from(self.num_intervals.max(1))
    }
}

/// Which histogram a map holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum HistKind {
    /// `hist(v[, k])`; `k` is clamped to 0..=5 as bpftrace allows.
    Log2 { k: u8 },
    /// `lhist(v, min, max, step)`; `step` must be positive (the checker ensures it).
    Linear { min: i64, max: i64, step: i64 },
}

/// bpftrace's largest `k` for `hist(v, k)`.
pub const MAX_LOG2_K: u8 = 5;

/// The log2 bucket of `v` (see the module doc). `k` above 5 is treated as 5.
pub fn log2_bucket(v: i64, k: u8) -> usize {
    let k = k.min(MAX_LOG2_K) as u32;
    if v < 0 {
        return 0;
    }
    let n = v as u64;
    let mask = (1u64 << k) - 1;
    if n <= mask {
        return n as usize + 1;
    }
    let l = 63 - n.leading_zeros() - k;
    let x = (n >> l) & mask;
    (((l as u64 + 1) << k) + x + 1) as usize
}

/// Number of log2 buckets: indices 0..=((64 - k) << k).
pub fn log2_bucket_count(k: u8) -> usize {
    let k = k.min(MAX_LOG2_K) as usize;
    ((64 - k) << k) + 1
}

/// The linear bucket of `v` (see the module doc). A non-positive step gives bucket 0.
pub fn linear_bucket(v: i64, min: i64, max: i64, step: i64) -> usize {
    if step <= 0 || v < min {
        return 0;
    }
    let top = if v > max { max } else { v };
    let idx = 1 + (top as i128 - min as i128) / step as i128;
    usize::try_from(idx).unwrap_or(usize::MAX)
}

/// Number of linear buckets: below-range, (max - min) / step in range, at-or-above max.
pub fn linear_bucket_count(min: i64, max: i64, step: i64) -> usize {
    if step <= 0 || max < min {
        return 2;
    }
    let n = (max as i128 - min as i128) / step as i128 + 2;
    usize::try_from(n).unwrap_or(usize::MAX)
}

impl HistKind {
    /// The bucket `v` falls in.
    pub fn bucket(&self, v: i64) -> usize {
        match *self {
            HistKind::Log2 { k } => log2_bucket(v, k),
            HistKind::Linear { min, max, step } => linear_bucket(v, min, max, step),
        }
    }

    /// How many buckets a map of this kind can hold.
    pub fn bucket_count(&self) -> usize {
        match *self {
            HistKind::Log2 { k } => log2_bucket_count(k),
            HistKind::Linear { min, max, step } => linear_bucket_count(min, max, step),
        }
    }
}
