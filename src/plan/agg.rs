//! Aggregation and histogram kinds (decided by the checker) and the histogram bucket
//! functions the code generator must compute identically in BPF. The bucket rules, the
//! per-CPU slot layouts and the merge are described in `runtime::format::hist` and
//! `runtime::format::agg`.

/// Which aggregation a map holds (decided by the checker from the script).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AggKind {
    Count,
    Sum { signed: bool },
    Min { signed: bool },
    Max { signed: bool },
    Avg { signed: bool },
    Stats { signed: bool },
    Hist(HistKind),
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
