//! Aggregations: `count()`, `sum()`, `min()`, `max()`, `avg()`, `stats()`, `hist()`, `lhist()`,
//! `tseries()`. Valid only as a map's assigned value; the map then holds per-CPU slots laid
//! out as in [`crate::runtime::format::agg`] (a time series as [`TSeriesKind`] says).

use super::{func, Builtin, CallCtx, FuncId, RuleError};
use crate::plan::agg::AggKind;
use crate::plan::agg::{HistKind, TSeriesAgg, TSeriesKind, MAX_LOG2_K, MAX_TSERIES_INTERVALS};
use crate::sema::types::Type;

const fn agg(b: Builtin) -> Builtin {
    Builtin {
        aggregation: true,
        ..b
    }
}

fn count(_: &CallCtx<'_>) -> Result<Type, RuleError> {
    Ok(Type::Agg(AggKind::Count))
}

fn signed_arg(c: &CallCtx<'_>) -> Result<bool, RuleError> {
    Ok(c.want_int(0, false)?.is_signed())
}

fn sum(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    let signed = signed_arg(c)?;
    Ok(Type::Agg(AggKind::Sum { signed }))
}

fn min(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    let signed = signed_arg(c)?;
    Ok(Type::Agg(AggKind::Min { signed }))
}

fn max(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    let signed = signed_arg(c)?;
    Ok(Type::Agg(AggKind::Max { signed }))
}

fn avg(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    let signed = signed_arg(c)?;
    Ok(Type::Agg(AggKind::Avg { signed }))
}

fn stats(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    let signed = signed_arg(c)?;
    Ok(Type::Agg(AggKind::Stats { signed }))
}

fn hist(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    c.want_int(0, false)?;
    let k = if c.args.len() > 1 {
        let k = c.int_arg(1, "the bits argument")?;
        if !(0..=MAX_LOG2_K as i64).contains(&k) {
            return Err(RuleError::arg(
                1,
                format!("hist: bits {k} must be between 0 and {MAX_LOG2_K}"),
            ));
        }
        k as u8
    } else {
        0
    };
    Ok(Type::Agg(AggKind::Hist(HistKind::Log2 { k })))
}

fn lhist(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    c.want_int(0, false)?;
    let min = c.int_arg(1, "min")?;
    let max = c.int_arg(2, "max")?;
    let step = c.int_arg(3, "step")?;
    if step <= 0 {
        return Err(RuleError::arg(3, "lhist() step must be >= 1"));
    }
    if min < 0 {
        return Err(RuleError::arg(1, "lhist() min must be non-negative"));
    }
    if min > max {
        return Err(RuleError::arg(2, "lhist() min must be less than max"));
    }
    if (max - min) / step > 1000 {
        return Err(RuleError::call(
            "lhist() too many buckets, must be <= 1000 (max - min) / step",
        ));
    }
    Ok(Type::Agg(AggKind::Hist(HistKind::Linear {
        min,
        max,
        step,
    })))
}

/// bpftrace's name of a type's kind in argument errors (`integer`, `string`, …).
fn kind_name(t: &Type) -> String {
    match t {
        t if t.is_integer() => "integer".into(),
        Type::Str { .. } => "string".into(),
        t if t.is_pointer() => "pointer".into(),
        t => t.to_string(),
    }
}

/// `tseries(v, interval_ns, num_intervals[, agg])`, with bpftrace's checks in its order: the
/// interval and count are non-negative literals, then at least 1 (the count at most a
/// million), then the aggregation's name, then the value's type.
fn tseries(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    let literal = |i: usize, what: &str| match c.args.get(i).and_then(|a| (c.const_int)(a.id)) {
        Some(v) if v >= 0 => Ok(v),
        _ => Err(RuleError::call(format!(
            "tseries: invalid {what} value (must be non-negative literal)"
        ))),
    };
    let interval_ns = literal(1, "interval_ns")?;
    let num_intervals = literal(2, "num_intervals")?;
    if interval_ns == 0 {
        return Err(RuleError::call(
            "tseries() interval_ns must be >= 1 (0 provided)",
        ));
    }
    if num_intervals == 0 {
        return Err(RuleError::call(
            "tseries() num_intervals must be >= 1 (0 provided)",
        ));
    }
    if num_intervals > MAX_TSERIES_INTERVALS {
        return Err(RuleError::call(format!(
            "tseries() num_intervals must be < {MAX_TSERIES_INTERVALS} ({num_intervals} provided)"
        )));
    }
    let agg = match c.args.get(3) {
        None => TSeriesAgg::Last,
        Some(a) => match (c.const_str)(a.id) {
            Some(name) => {
                let name = String::from_utf8_lossy(&name).into_owned();
                TSeriesAgg::from_name(&name).ok_or_else(|| {
                    RuleError::call(format!(
                        "tseries() expects one of the following aggregation functions: {} (\"{name}\" provided)",
                        TSeriesAgg::NAMES.join(", ")
                    ))
                })?
            }
            None => {
                return Err(RuleError::call(format!(
                    "tseries() expects a string literal ({} provided)",
                    kind_name(&c.arg_types[3])
                )))
            }
        },
    };
    let t = &c.arg_types[0];
    if !t.is_integer() {
        return Err(RuleError::call(format!(
            "tseries() only supports integer arguments ({} provided)",
            kind_name(t)
        )));
    }
    Ok(Type::Agg(AggKind::TSeries(TSeriesKind {
        interval_ns: interval_ns as u64,
        num_intervals: num_intervals as u32,
        agg,
        signed: t.is_signed(),
    })))
}

pub const BUILTINS: &[Builtin] = &[
    agg(func(FuncId::Count, "count", 0, 0, count, "count events")),
    agg(func(FuncId::Sum, "sum", 1, 1, sum, "sum of values")),
    agg(func(FuncId::Min, "min", 1, 1, min, "minimum value")),
    agg(func(FuncId::Max, "max", 1, 1, max, "maximum value")),
    agg(func(FuncId::Avg, "avg", 1, 1, avg, "average value")),
    agg(func(
        FuncId::Stats,
        "stats",
        1,
        1,
        stats,
        "count, average and total",
    )),
    agg(func(FuncId::Hist, "hist", 1, 2, hist, "log2 histogram")),
    agg(func(
        FuncId::Lhist,
        "lhist",
        4,
        4,
        lhist,
        "linear histogram",
    )),
    agg(func(
        FuncId::Tseries,
        "tseries",
        3,
        4,
        tseries,
        "time series of a value",
    )),
];
