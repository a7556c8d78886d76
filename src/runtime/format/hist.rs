//! `hist()` and `lhist()`: the bucket index functions (which the code generator must compute
//! identically in BPF) and bpftrace's ASCII tables and JSON arrays.
//!
//! Input: a histogram kind and the per-bucket counts, already summed over CPUs.
//! Output: rows `"{label:<16}{count:>8} |{bar:<52}|\n"` from the first to the last non-empty
//! bucket (bar = count / max * 52, truncated, computed in `f32` as bpftrace does), or JSON
//! `[{"min": …, "max": …, "count": …}, …]`.
//!
//! Log2 buckets (`hist(v, k)`, k = 0..=5, bpftrace's `log2` helper): bucket 0 holds v < 0;
//! for 0 <= v < 2^k bucket v + 1; above that each power of two is split into 2^k buckets:
//! with `l` the index of v's top set bit, `b` the k bits below it,
//! bucket = ((l - k + 1) << k) + b + 1. With k = 0: 0 → 1, 1 → 2, [2^p, 2^(p+1)) → p + 2.
//! Linear buckets (`lhist(v, min, max, step)`): 0 when v < min; 1 + (max - min) / step when
//! v > max; else 1 + (v - min) / step.
//!
//! Labels follow bpftrace 0.17, except: log2 labels past 2^40 use `P`/`E` suffixes and exact
//! 64-bit arithmetic (0.17 overflowed there), and lhist labels use `K`/`M` suffixes only when
//! the step is a multiple of 1024 (0.17 used them for any multiple of 1024, e.g. `[1K, 1536)`)
//! — both as current bpftrace does.
//! Invariant: no panics for any counts, k or range; an all-zero histogram prints nothing.

use super::value::write_display;
pub use crate::plan::agg::{
    linear_bucket, linear_bucket_count, log2_bucket, log2_bucket_count, HistKind, MAX_LOG2_K,
};

/// Exclusive upper bound of log2 bucket `i` (= lower bound of bucket i + 1), exact.
fn log2_upper(i: usize, k: u32) -> u128 {
    let n = 1usize << k;
    if i < n {
        return i as u128;
    }
    let power = (i >> k) - 1;
    let interval = (i & (n - 1)) as u128;
    (1u128 << power.min(126)) * (n as u128 + interval)
}

/// Text label of log2 boundary `i` (bpftrace's `hist_index_label`): plain numbers up to
/// 2^(k+1), then the largest power-of-1024 suffix.
fn log2_label(out: &mut Vec<u8>, i: usize, k: u32) {
    if i <= (2usize << k) {
        write_display(out, i);
        return;
    }
    let n = 1u128 << k;
    let mut power = ((i >> k) - 1).min(126);
    let interval = (i as u128) & (n - 1);
    let decade = (power / 10).min(6);
    power -= 10 * decade;
    write_display(out, (1u128 << power) * (n + interval));
    if decade > 0 {
        out.push(b"KMGTPE"[decade - 1]);
    }
}

/// Text label of an lhist boundary.
fn linear_label(out: &mut Vec<u8>, number: i128, step: i64) {
    const KILO: i128 = 1024;
    const MEGA: i128 = 1024 * 1024;
    if step % 1024 != 0 || number == 0 {
        write_display(out, number);
    } else if number % MEGA == 0 {
        write_display(out, format_args!("{}M", number / MEGA));
    } else if number % KILO == 0 {
        write_display(out, format_args!("{}K", number / KILO));
    } else {
        write_display(out, number);
    }
}

/// The range of bucket indices to print: first to last non-zero, within the kind's buckets.
fn used_range(kind: &HistKind, counts: &[u64]) -> Option<(usize, usize)> {
    let n = counts.len().min(kind.bucket_count());
    let first = counts[..n].iter().position(|&c| c > 0)?;
    let last = counts[..n].iter().rposition(|&c| c > 0)?;
    Some((first, last))
}

/// Writes the bucket header (`(..., 0)`, `[0]`, `[4, 8)`, `[100, ...)`) for bucket `i`.
fn write_header(out: &mut Vec<u8>, kind: &HistKind, i: usize) {
    match *kind {
        HistKind::Log2 { k } => {
            let k = k.min(MAX_LOG2_K) as u32;
            if i == 0 {
                out.extend_from_slice(b"(..., 0)");
            } else if log2_upper(i, k) - log2_upper(i - 1, k) == 1 {
                write_display(out, format_args!("[{}]", log2_upper(i - 1, k)));
            } else {
                out.push(b'[');
                log2_label(out, i - 1, k);
                out.extend_from_slice(b", ");
                log2_label(out, i, k);
                out.push(b')');
            }
        }
        HistKind::Linear { min, max, step } => {
            let buckets = linear_bucket_count(min, max, step) - 2;
            if i == 0 {
                out.extend_from_slice(b"(..., ");
                linear_label(out, min as i128, step);
                out.push(b')');
            } else if i == buckets + 1 {
                out.push(b'[');
                linear_label(out, max as i128, step);
                out.extend_from_slice(b", ...)");
            } else {
                let lo = (i as i128 - 1) * step as i128 + min as i128;
                out.push(b'[');
                linear_label(out, lo, step);
                out.extend_from_slice(b", ");
                linear_label(out, lo + step as i128, step);
                out.push(b')');
            }
        }
    }
}

/// Appends bpftrace's ASCII table for one histogram. `div` divides the printed log2 counts
/// (`print(@h, 0, div)`; 0 means 1); lhist ignores it, as bpftrace does. Bars are computed
/// from the undivided counts, as bpftrace 0.17 does.
pub fn write_hist_text(out: &mut Vec<u8>, kind: &HistKind, counts: &[u64], div: u64) {
    let Some((first, last)) = used_range(kind, counts) else {
        return;
    };
    let div = if matches!(kind, HistKind::Linear { .. }) {
        1
    } else {
        div.max(1)
    };
    let max = counts[first..=last]
        .iter()
        .copied()
        .max()
        .unwrap_or(1)
        .max(1);
    let mut header = Vec::with_capacity(24);
    for (i, &c) in counts.iter().enumerate().take(last + 1).skip(first) {
        header.clear();
        write_header(&mut header, kind, i);
        out.extend_from_slice(&header);
        out.resize(out.len() + 16usize.saturating_sub(header.len()), b' ');
        write_display(out, format_args!("{:>8} |", c / div));
        let bar = ((c as f32 / max as f32) * 52.0) as usize;
        let bar = bar.min(52);
        out.resize(out.len() + bar, b'@');
        out.resize(out.len() + (52 - bar), b' ');
        out.extend_from_slice(b"|\n");
    }
}

/// Appends bpftrace 0.17's JSON array for one histogram: `[{"min": a, "max": b, "count": c},
/// …]` with inclusive bounds; the below-range bucket has only `max`, lhist's above-range
/// bucket only `min`. An empty histogram is `[]`.
pub fn write_hist_json(out: &mut Vec<u8>, kind: &HistKind, counts: &[u64], div: u64) {
    out.push(b'[');
    if let Some((first, last)) = used_range(kind, counts) {
        for (i, &c) in counts.iter().enumerate().take(last + 1).skip(first) {
            if i > first {
                out.extend_from_slice(b", ");
            }
            out.push(b'{');
            match *kind {
                HistKind::Log2 { k } => {
                    let k = k.min(MAX_LOG2_K) as u32;
                    if i == 0 {
                        out.extend_from_slice(b"\"max\": -1, ");
                    } else {
                        let lo = log2_upper(i - 1, k);
                        let hi = log2_upper(i, k) - 1;
                        write_display(out, format_args!("\"min\": {lo}, \"max\": {hi}, "));
                    }
                    write_display(out, format_args!("\"count\": {}", c / div.max(1)));
                }
                HistKind::Linear { min, max, step } => {
                    let buckets = linear_bucket_count(min, max, step) - 2;
                    if i == 0 {
                        write_display(out, format_args!("\"max\": {}, ", min as i128 - 1));
                    } else if i == buckets + 1 {
                        write_display(out, format_args!("\"min\": {max}, "));
                    } else {
                        let lo = (i as i128 - 1) * step as i128 + min as i128;
                        let hi = lo + step as i128 - 1;
                        write_display(out, format_args!("\"min\": {lo}, \"max\": {hi}, "));
                    }
                    write_display(out, format_args!("\"count\": {c}"));
                }
            }
            out.push(b'}');
        }
    }
    out.push(b']');
}

#[cfg(test)]
mod tests;
