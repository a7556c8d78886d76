//! `elapsed`: nanoseconds since the script started. The start time lives in a one-entry
//! array map ([`START_MAP`]) that the first BEGIN program writes before anything else runs
//! (the runtime runs BEGIN programs before arming every other probe); a script without BEGIN
//! gets a BEGIN of its own that only does that (so `Attached N probes` counts one more than
//! bpftrace, which writes the start time from userspace).

use super::Lower;
use crate::asm::isa::MapType;
use crate::asm::isa::{Helper, JmpOp, Size};
use crate::builtins::ValueId;
use crate::codegen::emit::{IntTy, Value};
use crate::codegen::Builder;
use crate::plan::{MapRole, MapSpec};
use crate::sema::CheckedProgram;

pub(crate) const START_MAP: &str = "elapsed_start";

/// Whether any probe reads `elapsed` (or calls `elapsed()`), as the checker resolved names.
pub(crate) fn uses_elapsed(cp: &CheckedProgram) -> bool {
    cp.builtins.values().any(|&b| b == ValueId::Elapsed)
}

pub(crate) fn start_map() -> MapSpec {
    MapSpec {
        name: START_MAP.into(),
        map_type: MapType::Array,
        key_size: 4,
        value_size: 8,
        max_entries: 1,
        role: MapRole::Internal,
    }
}

/// Records the start time (at the beginning of the first BEGIN program).
pub(crate) fn record_start(b: &mut Builder) {
    let map = b.map(START_MAP);
    let p = b.vreg();
    b.ld_map_value(p, map, 0);
    let now = b.call(Helper::KtimeGetNs, &[]);
    b.store(Size::Dw, p, 0, now);
}

/// `elapsed`.
pub(crate) fn elapsed(lw: &mut Lower<'_>) -> Value {
    let map = lw.b.map(START_MAP);
    let p = lw.b.vreg();
    lw.b.ld_map_value(p, map, 0);
    let now = lw.b.call(Helper::KtimeGetNs, &[]);
    let start = lw.b.vreg();
    lw.b.load(Size::Dw, start, p, 0);
    let done = lw.b.label();
    // Not started (cannot happen once BEGIN ran): report 0 rather than the uptime.
    lw.b.jmp64(JmpOp::Jne, start, 0, done);
    lw.b.mov(start, now);
    lw.b.bind(done);
    crate::codegen::emit::arith::binop(
        &mut lw.b,
        crate::codegen::emit::arith::BinOp::Sub,
        Value::Reg(now),
        Value::Reg(start),
        IntTy::U64,
    )
}
