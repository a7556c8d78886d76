//! The script's map table: the ring buffer, the lost-records and map-full counters, then one
//! map per script map in the checker's order (so script map `MapId(i)` is entry
//! [`FIRST_SCRIPT_MAP`]` + i` of [`CompiledScript::maps`](crate::plan::CompiledScript)).
//!
//! Layouts: integer keys and plain integer values are widened to 8 bytes (bpftrace does the
//! same, and the checker may unify several widths into one map); aggregations are per-CPU hash
//! maps with the slot layouts of `runtime::format::agg`; a histogram's key gets the trailing
//! bucket index (`emit::maps::hist_key_fields`).

use super::{DROPS, LOST, RINGBUF, SCRATCH, SCRATCH_SIZE};
use crate::asm::isa::MapType;
use crate::codegen::emit::maps::hist_key_fields;
use crate::plan::agg::AggKind;
use crate::plan::layout::FieldType;
use crate::plan::{MapRole, MapSpec, MapValueSpec};
use crate::sema::{CheckedProgram, MapId, MapInfo, Type};

/// Index of the first script map in the table.
pub const FIRST_SCRIPT_MAP: usize = 4;

/// Ring buffer size: bpftrace's default perf/ring space is a few MiB; 1 MiB keeps memory low
/// and holds ~30k typical records between two reads.
const RING_SIZE: u32 = 1 << 20;

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
        Some(AggKind::Hist(_)) => hist_key_fields(&k),
        _ => k,
    }
}

/// Bytes of one value slot of aggregation `a`.
fn agg_value_size(a: AggKind) -> u32 {
    match a {
        AggKind::Count | AggKind::Sum { .. } | AggKind::Hist(_) => 8,
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
    for m in &cp.maps {
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
            _ => m.max_entries,
        }
        .clamp(1, u32::MAX as u64) as u32;
        out.push(MapSpec {
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
        });
    }
    out
}
