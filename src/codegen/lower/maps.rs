//! The script's map table: the ring buffer, the lost-records and map-full counters, then one
//! map per script map in the checker's order (so script map `MapId(i)` is entry
//! [`FIRST_SCRIPT_MAP`]` + i` of [`CompiledScript::maps`](crate::plan::CompiledScript)).
//!
//! Layouts: integer keys and plain integer values are widened to 8 bytes (bpftrace does the
//! same, and the checker may unify several widths into one map); aggregations are per-CPU hash
//! maps with the slot layouts of `runtime::format::agg`; a histogram's and a time series' key
//! gets the trailing bucket index (`emit::maps::hist_key_fields`).
//!
//! One exception: a keyless `count()` or histogram map ([`slot_maps`]) is a
//! `BPF_MAP_TYPE_PERCPU_ARRAY`, one slot for a count, one per bucket for a histogram (the
//! bucket index is the array index). The verifier inlines its lookup (no hashing, no bucket
//! walk) and the slot always exists, so the insert path is gone. A count slot that never
//! counted reads 0, which the exit dump leaves out as a hash without the element would be; a
//! histogram's zero buckets are left out when it is read (`runtime::snapshot`), so a histogram
//! that never fired prints nothing, as before.

use super::{DROPS, LOST, RINGBUF, SCRATCH, SCRATCH_SIZE};
use crate::asm::isa::MapType;
use crate::builtins::{BuiltinId, FuncId};
use crate::codegen::emit::maps::hist_key_fields;
use crate::plan::agg::AggKind;
use crate::plan::layout::FieldType;
use crate::plan::{MapRole, MapSpec, MapValueSpec};
use crate::sema::{CheckedProgram, MapId, MapInfo, Type};
use crate::syntax::ast::{Expr, ExprKind, ForIter, Stmt, StmtKind};
use crate::syntax::visit::{walk_expr, walk_stmt, Visitor};
use std::collections::BTreeSet;

/// The most bucket keys a keyed time series map is given (see `map_table`).
const TSERIES_MAX_BUCKETS: u64 = 1 << 16;

/// Index of the first script map in the table.
pub const FIRST_SCRIPT_MAP: usize = 4;

/// Ring buffer size: bpftrace's default perf/ring space is a few MiB; 1 MiB keeps memory low
/// and holds ~30k typical records between two reads.
pub(crate) const RING_SIZE: u32 = 1 << 20;

/// The layout of a key or plain value field: top-level integers widened to 8 bytes.
pub fn slot_field(t: &Type) -> FieldType {
    match t.field_type() {
        Some(FieldType::Int { signed, .. }) => FieldType::Int { bytes: 8, signed },
        Some(FieldType::Enum {
            signed, variants, ..
        }) => FieldType::Enum {
            bytes: 8,
            signed,
            variants,
        },
        Some(FieldType::Bool) => FieldType::Int {
            bytes: 8,
            signed: false,
        },
        Some(f) => f,
        None => FieldType::Int {
            bytes: 8,
            signed: false,
        },
    }
}

/// How the runtime decodes a whole map value or a single-field key held in `slot`: a `bool`
/// is kept in an 8-byte slot but prints `true`/`false` (its value is the slot's first byte,
/// little-endian). Only where the field is alone: a `Bool` field would change the offsets of
/// the fields after it.
fn printed_as(t: &Type, slot: FieldType) -> FieldType {
    match t {
        Type::Bool => FieldType::Bool,
        _ => slot,
    }
}

/// The key fields of map `m` (without a histogram's bucket).
pub fn key_fields(m: &MapInfo) -> Vec<FieldType> {
    m.keys.iter().map(slot_field).collect()
}

/// The key fields as stored (with a histogram's bucket index).
pub fn stored_key_fields(m: &MapInfo) -> Vec<FieldType> {
    let k = key_fields(m);
    match m.agg {
        Some(AggKind::Hist(_) | AggKind::TSeries(_)) => hist_key_fields(&k),
        _ => k,
    }
}

/// Bytes of one value slot of aggregation `a`.
fn agg_value_size(a: AggKind) -> u32 {
    match a {
        AggKind::Count | AggKind::Sum { .. } | AggKind::Hist(_) => 8,
        AggKind::TSeries(_) => crate::plan::agg::TSERIES_SLOT_SIZE,
        _ => 16,
    }
}

/// The name templates use for script map `id`.
pub fn map_name(cp: &CheckedProgram, id: MapId) -> String {
    cp.maps[id.0 as usize].name.clone()
}

/// The whole table (see the module documentation).
pub fn map_table(cp: &CheckedProgram) -> Vec<MapSpec> {
    // Plain (not per-CPU) arrays: the program reaches the slot through a direct value pointer
    // (`ld_imm64` map value) instead of a lookup, 6 instructions less at every counted helper
    // call; the atomic add runs only on failure, so CPUs do not share a hot cache line.
    let counter = |name: &str, role| MapSpec {
        name: name.into(),
        map_type: MapType::Array,
        key_size: 4,
        value_size: 8,
        max_entries: 1,
        role,
    };
    let mut out = vec![
        MapSpec {
            name: RINGBUF.into(),
            map_type: MapType::Ringbuf,
            key_size: 0,
            value_size: 0,
            max_entries: RING_SIZE,
            role: MapRole::RingBuf,
        },
        counter(LOST, MapRole::LostCounter),
        counter(DROPS, MapRole::DropCounter),
        MapSpec {
            name: SCRATCH.into(),
            map_type: MapType::PercpuArray,
            key_size: 4,
            value_size: SCRATCH_SIZE,
            max_entries: 1,
            role: MapRole::Internal,
        },
    ];
    let slots = slot_maps(cp);
    for m in &cp.maps {
        if let (true, Some(agg)) = (slots.contains(&m.name), m.agg) {
            let max_entries = match agg {
                AggKind::Hist(h) => h.bucket_count() as u32,
                _ => 1,
            };
            out.push(MapSpec {
                name: m.name.clone(),
                map_type: MapType::PercpuArray,
                key_size: 4,
                value_size: 8,
                max_entries,
                role: MapRole::Script {
                    key: Vec::new(),
                    value: MapValueSpec::Agg(agg),
                },
            });
            continue;
        }
        out.push(map_table_entry(m));
    }
    out
}

/// The kernel map of script map `m` (a hash; see [`slot_maps`] for the array exception).
pub fn map_table_entry(m: &MapInfo) -> MapSpec {
    let key = stored_key_fields(m);
    let key_size = FieldType::Tuple(if key.is_empty() {
        vec![FieldType::Int {
            bytes: 8,
            signed: false,
        }]
    } else {
        key.clone()
    })
    .size()
    .max(1) as u32;
    // `let @m = lruhash(N)`: the kernel evicts the least recently used key when full
    // instead of refusing the new one (the checker matched the kind to the value).
    let lru = matches!(
        m.declared_kind.as_deref(),
        Some("lruhash" | "percpulruhash")
    );
    let (map_type, value_size, value) = match m.agg {
        Some(a) => (
            if lru {
                MapType::LruPercpuHash
            } else {
                MapType::PercpuHash
            },
            agg_value_size(a),
            MapValueSpec::Agg(a),
        ),
        None => {
            let f = slot_field(&m.value);
            (
                if lru { MapType::LruHash } else { MapType::Hash },
                (f.size() as u32).max(1).next_multiple_of(8),
                MapValueSpec::Plain(printed_as(&m.value, f)),
            )
        }
    };
    let max_entries = match m.agg {
        // Every bucket is its own key.
        Some(AggKind::Hist(_)) => m.max_entries.saturating_mul(4),
        // Every interval is its own key: room for all of a scalar series, and for keyed
        // ones as many intervals per key as fit in 64k buckets (at least one full series);
        // an update beyond that is refused and counted as a drop.
        Some(AggKind::TSeries(t)) if m.keys.is_empty() => u64::from(t.num_intervals),
        Some(AggKind::TSeries(t)) => m
            .max_entries
            .saturating_mul(u64::from(t.num_intervals))
            .min(TSERIES_MAX_BUCKETS.max(u64::from(t.num_intervals))),
        _ => m.max_entries,
    }
    .clamp(1, u32::MAX as u64) as u32;
    MapSpec {
        name: m.name.clone(),
        map_type,
        key_size,
        value_size,
        max_entries,
        role: MapRole::Script {
            key: match key_fields(m).as_slice() {
                [one] => vec![printed_as(&m.keys[0], one.clone())],
                _ => key_fields(m),
            },
            value,
        },
    }
}

/// Histograms of at most this many buckets may be per-CPU arrays (every bucket is allocated
/// on every CPU up front; a hash holds only the buckets hit).
const SLOT_HIST_BUCKETS: usize = 1024;

/// The keyless `count()` and histogram maps stored as per-CPU array slots (see the module
/// documentation): not declared with a kind, and never deleted from, iterated, measured or
/// passed to a function or macro in the program (those see an array's always-present element
/// where a hash has none); `print`, `clear` (done by userspace, which zeroes an array) and
/// reads of the value are fine, and so is `zero` for a count (a histogram keeps the hash form
/// there: a zeroed hash histogram still has its keys, a zeroed array none to tell apart).
pub fn slot_maps(cp: &CheckedProgram) -> BTreeSet<String> {
    struct Uses<'c> {
        cp: &'c CheckedProgram,
        any: BTreeSet<String>,
        zeroed: BTreeSet<String>,
    }
    impl Visitor for Uses<'_> {
        fn visit_expr(&mut self, e: &Expr) {
            if let ExprKind::Call { args, .. } = &e.kind {
                for a in args {
                    if let ExprKind::Map { name: m, .. } = &a.kind {
                        // Any other call (builtin, macro, user function) is a use.
                        match self.cp.builtin_of(e.id) {
                            Some(BuiltinId::Func(FuncId::Print | FuncId::Clear)) => {}
                            Some(BuiltinId::Func(FuncId::Zero)) => {
                                self.zeroed.insert(m.name.clone());
                            }
                            _ => {
                                self.any.insert(m.name.clone());
                            }
                        }
                    }
                }
            }
            walk_expr(self, e)
        }
        fn visit_stmt(&mut self, s: &Stmt) {
            if let StmtKind::For {
                iter: ForIter::Map(m),
                ..
            } = &s.kind
            {
                self.any.insert(m.name.clone());
            }
            walk_stmt(self, s)
        }
    }
    let mut uses = Uses {
        cp,
        any: BTreeSet::new(),
        zeroed: BTreeSet::new(),
    };
    uses.visit_program(&cp.program);
    cp.maps
        .iter()
        .filter(|m| {
            let kind_fits = match m.agg {
                // After zero() bpftrace's hash holds a 0 that prints at exit; a slot's 0 is
                // taken for "no element" (`runtime::snapshot`), so a zeroed count stays a hash.
                Some(AggKind::Count) => !uses.zeroed.contains(&m.name),
                Some(AggKind::Hist(h)) => {
                    h.bucket_count() <= SLOT_HIST_BUCKETS && !uses.zeroed.contains(&m.name)
                }
                _ => false,
            };
            m.keys.is_empty()
                && kind_fits
                && m.declared_kind.is_none()
                && !uses.any.contains(&m.name)
        })
        .map(|m| m.name.clone())
        .collect()
}
