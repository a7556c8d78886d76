//! Size classes for aggregation maps keyed by one long string (`@[str(args.filename)] =
//! count()` with bpftrace's 1024-byte `max_strlen`): the kernel hashes and compares the whole
//! key on every lookup, so a 1024-byte key costs a 1024-byte zeroing, a jhash over 1024 bytes
//! and a 1024-byte memcmp per event, however short the string.
//!
//! Such a map gets a second kernel map ([`MapRole::KeyClass`]) whose key holds a
//! [`SHORT_STR_SIZE`]-byte string. The program reads the string into a zeroed `SHORT_STR_SIZE`-byte
//! key first; when `bpf_probe_read_*_str` says it fit with room to spare (its result, the
//! length with the NUL, is below `SHORT_STR_SIZE`; a read error leaves the empty string, which fits
//! too) the update goes to the class map, otherwise the string is read again into the full key
//! (exactly today's bytes) and the update goes to the script map. Which map holds a string is
//! a function of its bytes, so a string lives in exactly one of them and userspace merges the
//! two into one logical map without double counting (`KeyClass::widen`): the class map's key
//! zero-extended is byte for byte the key the script map would hold.
//!
//! The script map's `max_entries` bounds both maps together, as it bounds one map: a plain
//! array slot ([`MapRole::KeyCount`]) counts their elements. An insert (a lookup that missed)
//! checks the count, adds one, and inserts with `BPF_NOEXIST`; a failed insert takes the one
//! back, and when another CPU inserted the same key meanwhile, writes this CPU's slot of that
//! element instead (`BPF_EXIST`); anything else is a drop, as a full map's refusal is. Two CPUs
//! inserting different new keys at the same instant when one slot is left may both pass the
//! check (the program has no atomic fetch on 5.10), so the bound can be passed by at most one
//! key per other CPU racing at that instant; userspace's `clear()` takes one off per deleted
//! element atomically (the slot is mmapped).
//!
//! Only maps whose every use in the program is such an aggregation update with a direct
//! `str(p)` key, or `print`/`clear`/`zero` (done by userspace, which sees the merged map), get
//! a class: a read, `delete`, `has_key`, `for`, `len` or any other key would see only one of
//! the two maps.

use super::calls::{reads_user_expr, str_helper};
use super::{Lower, LowerError};
use crate::asm::isa::{JmpOp, MapType};
use crate::codegen::emit::agg::{update_agg_with, InsertLimit};
use crate::codegen::emit::maps::Key;
use crate::codegen::emit::strings::read_str;
use crate::diag::Span;
use crate::plan::agg::AggKind;
use crate::plan::layout::FieldType;
use crate::plan::{KeyClass, MapRole, MapSpec};
use crate::sema::{CheckedProgram, MapInfo, Type};
use crate::syntax::ast::{Expr, ExprKind};
use std::collections::BTreeMap;

/// Bytes of the class map's string: paths, names and most keys people count fit.
pub const SHORT_STR_SIZE: u32 = 64;

/// Strings at least this large (and a multiple of 8, so fields after them keep their offsets'
/// relation) get a class.
const MIN_FULL_SIZE: u32 = 4 * SHORT_STR_SIZE;

/// The name of the counter array ([`MapRole::KeyCount`]).
pub const KEY_COUNT: &str = "keycount";

/// The class map's name for script map `name`.
pub fn class_map_name(name: &str) -> String {
    format!("{name}#{SHORT_STR_SIZE}")
}

/// The maps that get a class, with their counter slot, by name.
pub fn classed_maps(cp: &CheckedProgram) -> BTreeMap<String, u32> {
    let uses = super::map_uses::map_uses(cp, true, |m, keys, _| match keys {
        [k] => m.agg.is_some() && full_size(m).is_some_and(|n| direct_str(cp, k, n)),
        _ => false,
    });
    cp.maps
        .iter()
        .filter(|m| shape_fits(m) && uses.only_updates(&m.name))
        .enumerate()
        .map(|(i, m)| (m.name.clone(), i as u32))
        .collect()
}

/// The string size of a map whose key and value can be classed.
fn full_size(m: &MapInfo) -> Option<u32> {
    match m.keys.as_slice() {
        [Type::Str { size }] => Some(*size as u32),
        _ => None,
    }
}

fn shape_fits(m: &MapInfo) -> bool {
    let agg_fits = matches!(
        m.agg,
        Some(
            AggKind::Count
                | AggKind::Sum { .. }
                | AggKind::Min { .. }
                | AggKind::Max { .. }
                | AggKind::Avg { .. }
                | AggKind::Stats { .. }
                | AggKind::Hist(_)
        )
    );
    agg_fits
        && m.declared_kind.is_none()
        && full_size(m).is_some_and(|s| s >= MIN_FULL_SIZE && s % 8 == 0)
}

/// Whether `k` is a `str(p)` key the program writes straight into the key
/// (`store::writes_direct`'s condition for a string field of the map's size).
fn direct_str(cp: &CheckedProgram, k: &Expr, size: u32) -> bool {
    match &k.kind {
        ExprKind::Call { name, args } => {
            name.name == "str"
                && args.len() == 1
                && !cp.str_consts.contains_key(&k.id)
                && *cp.type_of(k.id)
                    == (Type::Str {
                        size: size as usize,
                    })
                && super::int_ty(cp.type_of(args[0].id)).is_some()
        }
        _ => false,
    }
}

/// The class maps and the counter array for `classed` (appended after every other map, so
/// script map `MapId(i)` keeps its index).
pub fn class_map_specs(cp: &CheckedProgram, classed: &BTreeMap<String, u32>) -> Vec<MapSpec> {
    if classed.is_empty() {
        return Vec::new();
    }
    let mut out = Vec::new();
    for m in &cp.maps {
        let (Some(&slot), Some(full)) = (classed.get(&m.name), full_size(m)) else {
            continue;
        };
        let key_size = FieldType::Tuple(class_fields(m)).size() as u32;
        let spec = super::maps::map_table_entry(m);
        out.push(MapSpec {
            name: class_map_name(&m.name),
            map_type: MapType::PercpuHash,
            key_size,
            value_size: spec.value_size,
            // Each may hold every element; the counter bounds both together.
            max_entries: spec.max_entries,
            role: MapRole::KeyClass(KeyClass {
                of: m.name.clone(),
                str_size: SHORT_STR_SIZE,
                full_size: full,
                count_slot: slot,
            }),
        });
    }
    out.push(MapSpec {
        name: KEY_COUNT.into(),
        map_type: MapType::Array,
        key_size: 4,
        // One element of a `u64` per map: a direct value pointer (`ld_imm64`) reaches only
        // the first element.
        value_size: 8 * classed.len() as u32,
        max_entries: 1,
        role: MapRole::KeyCount,
    });
    out
}

/// The class map's stored key fields: the script map's with the string shortened.
fn class_fields(m: &MapInfo) -> Vec<FieldType> {
    let mut f = super::maps::stored_key_fields(m);
    f[0] = FieldType::Str {
        size: SHORT_STR_SIZE as usize,
    };
    f
}

/// `@m[str(p)] = agg(v)` for a classed map `info` (`v` already evaluated; see the module
/// documentation).
pub(crate) fn update(
    lw: &mut Lower<'_>,
    info: &MapInfo,
    key_expr: &Expr,
    agg: AggKind,
    v: crate::codegen::emit::Value,
    span: Span,
) -> Result<(), LowerError> {
    let ExprKind::Call { args, .. } = &key_expr.kind else {
        return Err(LowerError::unsupported(
            "internal error: key_class::update without a str() key",
            span,
        ));
    };
    let slot = lw.script.classed_maps[&info.name];
    let user = reads_user_expr(lw, &args[0]);
    let outer = lw.b.span();
    lw.b.set_span(key_expr.span);
    let src = super::expr::lower_expr(lw, &args[0])?.value();
    // Short: the class map's key, zeroed, then the string read into it.
    let small_fields = class_fields(info);
    let small = super::calls::new_key(lw, &small_fields, &[], key_expr.span)?;
    let n = read_str(&mut lw.b, user, small.field(0), SHORT_STR_SIZE, src);
    lw.check_helper(n, str_helper(user), key_expr.span)?;
    lw.b.set_span(outer);
    let long = lw.b.label();
    let done = lw.b.label();
    lw.b.jmp64(JmpOp::Jsge, n, SHORT_STR_SIZE as i32, long);
    let counter = lw.b.map(KEY_COUNT);
    let limit = InsertLimit {
        counter,
        slot,
        max: super::maps::map_table_entry(info).max_entries,
    };
    let drops = lw.drops();
    let class_map = lw.b.map(&class_map_name(&info.name));
    update_agg_with(
        &mut lw.b,
        class_map,
        &small,
        agg,
        v,
        Some(drops),
        Some(limit),
    );
    lw.b.ja(done);
    // Long: exactly the key of a map without classes.
    lw.b.bind(long);
    lw.b.set_span(key_expr.span);
    let fields = super::maps::stored_key_fields(info);
    let full = full_size(info).unwrap_or(0);
    let big: Key = super::calls::new_key(lw, &fields, &[0], key_expr.span)?;
    crate::codegen::emit::mem::zero(&mut lw.b, big.field(0), full);
    super::calls::read_str_typed(lw, user, big.field(0), full, src, key_expr.span)?;
    lw.b.set_span(outer);
    let map = lw.b.map(&info.name);
    update_agg_with(&mut lw.b, map, &big, agg, v, Some(drops), Some(limit));
    lw.b.bind(done);
    Ok(())
}
