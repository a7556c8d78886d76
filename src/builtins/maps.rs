//! Map operations: `delete`, `clear`, `zero`, `len`, `has_key`.

use super::{func, Builtin, CallCtx, FuncId, RuleError};
use crate::sema::types::Type;

fn none(_: &CallCtx<'_>) -> Result<Type, RuleError> {
    Ok(Type::None)
}
fn len(_: &CallCtx<'_>) -> Result<Type, RuleError> {
    Ok(Type::I64)
}
fn bool_(_: &CallCtx<'_>) -> Result<Type, RuleError> {
    Ok(Type::Bool)
}

const fn map(b: Builtin) -> Builtin {
    Builtin {
        takes_map: true,
        ..b
    }
}

pub const BUILTINS: &[Builtin] = &[
    // `bool`: false when the key was not there (bpftrace's stdlib `delete`).
    map(func(
        FuncId::Delete,
        "delete",
        1,
        2,
        bool_,
        "delete a map element",
    )),
    map(func(
        FuncId::Clear,
        "clear",
        1,
        1,
        none,
        "delete every element of a map",
    )),
    map(func(
        FuncId::Zero,
        "zero",
        1,
        1,
        none,
        "set every value of a map to zero",
    )),
    map(func(
        FuncId::Len,
        "len",
        1,
        1,
        len,
        "number of elements of a map or stack",
    )),
    map(func(
        FuncId::HasKey,
        "has_key",
        2,
        2,
        bool_,
        "whether a map has a key",
    )),
    // check_key(@map, key, "caller"): refuses a map without keys, or a key that does not
    // fit the map's, in the words of `caller` (stdlib macros that take a map and a key).
    map(func(
        FuncId::CheckKey,
        "check_key",
        3,
        3,
        none,
        "check that a key fits a map (for stdlib macros)",
    )),
];
