//! Aggregations: `count()`, `sum()`, `min()`, `max()`, `avg()`, `stats()`, `hist()`, `lhist()`.
//! Valid only as a map's assigned value; the map then holds per-CPU slots laid out as in
//! [`crate::runtime::format::agg`].

use super::{func, Builtin, CallCtx, RuleError};
use crate::plan::agg::AggKind;
use crate::plan::agg::{HistKind, MAX_LOG2_K};
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
    Ok(Type::Agg(match c.name {
        "sum" => AggKind::Sum { signed },
        "min" => AggKind::Min { signed },
        "max" => AggKind::Max { signed },
        "avg" => AggKind::Avg { signed },
        _ => AggKind::Stats { signed },
    }))
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

pub const BUILTINS: &[Builtin] = &[
    agg(func("count", 0, 0, count, "count events")),
    agg(func("sum", 1, 1, sum, "sum of values")),
    agg(func("min", 1, 1, sum, "minimum value")),
    agg(func("max", 1, 1, sum, "maximum value")),
    agg(func("avg", 1, 1, sum, "average value")),
    agg(func("stats", 1, 1, sum, "count, average and total")),
    agg(func("hist", 1, 2, hist, "log2 histogram")),
    agg(func("lhist", 4, 4, lhist, "linear histogram")),
];
