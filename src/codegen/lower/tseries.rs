//! The clock `tseries()` reads: software TAI as bpftrace's (the boot clock plus the offset of
//! CLOCK_TAI from CLOCK_BOOTTIME, read when the script is compiled), or, with the
//! `dummy_ts_map` test hook, the value of that scalar map (0 while unset; the checker made
//! sure it is a keyless map of an unsigned integer).

use super::{Lower, LowerError};
use crate::codegen::emit::maps::{lookup_or_zero, Key};
use crate::codegen::emit::{IntTy, Value};
use crate::diag::Span;

/// The current time for a time series update, in nanoseconds.
pub(crate) fn now(lw: &mut Lower<'_>, span: Span) -> Result<Value, LowerError> {
    if let Some(name) = lw.dummy_ts_map.clone() {
        if lw.cp.map(&name).is_none() {
            return Err(LowerError::unsupported(
                format!("the dummy_ts_map {name} (not a map of this script)"),
                span,
            ));
        }
        let key = Key::new(&mut lw.b, &[]);
        key.set_int(&mut lw.b, 0, Value::Imm(0));
        let map = lw.b.map(&name);
        return Ok(lookup_or_zero(&mut lw.b, map, key.place, IntTy::U64));
    }
    let boot = crate::codegen::emit::builtins::boot_ns(&mut lw.b);
    Ok(crate::codegen::emit::arith::binop(
        &mut lw.b,
        crate::codegen::emit::arith::BinOp::Add,
        boot,
        Value::Imm(super::calls::tai_minus_boot_ns()),
        IntTy::U64,
    ))
}
