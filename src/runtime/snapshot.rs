//! Reading a script map out of the kernel into a [`MapSnapshot`] the printer prints: keys
//! decoded with the map's key `FieldType`s, per-CPU aggregation slots merged, histogram
//! buckets and time series intervals (one map key each) gathered under their user key. Also
//! `clear()` and `zero()`.
//!
//! Input: a [`MapSpec`] and its [`Map`]. Output: a snapshot, or a [`SysError`] from the
//! kernel. Invariant: bytes that do not decode never panic (short values decode as zeros).

use std::collections::BTreeMap;

use super::format::agg::{merge_hist_bucket, Agg};
use super::format::decode::{decode, decode_fields, tuple_offsets, FieldType};
use super::format::maps::{MapSnapshot, MapValue};
use super::format::tseries::TSeries;
use super::format::{Resolver, Value};
use crate::plan::{MapRole, MapSpec, MapValueSpec};
use crate::runtime::format::agg::AggKind;
use crate::sys::{Map, MapType, SysError, UpdateFlags};

/// Every entry of `map`, merged and decoded; `None` for maps that are not script maps.
pub fn snapshot(
    spec: &MapSpec,
    map: &Map,
    r: &dyn Resolver,
) -> Result<Option<MapSnapshot>, SysError> {
    let MapRole::Script { key, value } = &spec.role else {
        return Ok(None);
    };
    let keys = map.keys()?;
    let mut snap = MapSnapshot {
        name: spec.name.clone(),
        entries: Vec::new(),
    };
    match value {
        MapValueSpec::Agg(AggKind::Hist(kind)) => {
            let array = map.map_type() == Some(MapType::PercpuArray);
            let mut hists: BTreeMap<Vec<u8>, Vec<u64>> = BTreeMap::new();
            for k in keys {
                let Some(v) = map.lookup_vec(&k)? else {
                    continue;
                };
                let Some((user, bucket)) = hist_element(key, array, &k, &v) else {
                    continue;
                };
                let counts = hists.entry(user).or_default();
                merge_hist_bucket(counts, kind, bucket, &v);
            }
            for (user, mut counts) in hists {
                counts.resize(kind.bucket_count().min(1 << 16), 0);
                snap.entries.push((
                    decode_key(key, &user, r),
                    MapValue::Agg(Agg::Hist {
                        kind: *kind,
                        counts,
                    }),
                ));
            }
        }
        MapValueSpec::Agg(AggKind::TSeries(kind)) => {
            let bucket_off = hist_bucket_offset(key);
            let mut series: BTreeMap<Vec<u8>, TSeries> = BTreeMap::new();
            for k in keys {
                let Some(v) = map.lookup_vec(&k)? else {
                    continue;
                };
                let user = k[..bucket_off.min(k.len())].to_vec();
                series
                    .entry(user)
                    .or_insert_with(|| TSeries::new(*kind))
                    .add_bucket(&v);
            }
            // In the order of the keys' bytes, as bpftrace prints them.
            for (user, ts) in series {
                snap.entries
                    .push((decode_key(key, &user, r), MapValue::Agg(Agg::TSeries(ts))));
            }
        }
        MapValueSpec::Agg(agg) => {
            // A keyless count() slot (a per-CPU array, `codegen::lower::maps::slot_maps`) is
            // always there: zero on every CPU is a count that never fired or was cleared, which
            // current bpftrace's hash holds no element for, so it prints nothing.
            let slot = map.map_type() == Some(MapType::PercpuArray);
            for k in keys {
                if let Some(v) = map.lookup_vec(&k)? {
                    if slot && v.iter().all(|&b| b == 0) {
                        continue;
                    }
                    snap.entries
                        .push((decode_key(key, &k, r), MapValue::Agg(agg.merge(&v))));
                }
            }
        }
        MapValueSpec::Plain(ty) => {
            for k in keys {
                if let Some(v) = map.lookup_vec(&k)? {
                    let val = decode(ty, &v, r).unwrap_or(Value::Int(0));
                    snap.entries
                        .push((decode_key(key, &k, r), MapValue::Plain(val)));
                }
            }
        }
    }
    Ok(Some(snap))
}

/// What `print(@m)` shows for a keyless map that holds no value yet: the zero value of its
/// type (`@: 0`, `@: { .count = 0, .average = 0, .total = 0 }`), as bpftrace prints it. `None`
/// for maps with keys and for histograms (nothing to show).
pub fn empty_scalar_entry(spec: &MapSpec, r: &dyn Resolver) -> Option<(Vec<Value>, MapValue)> {
    let MapRole::Script { key, value } = &spec.role else {
        return None;
    };
    if !key.is_empty() {
        return None;
    }
    let v = match value {
        MapValueSpec::Agg(AggKind::Hist(_) | AggKind::TSeries(_)) => return None,
        MapValueSpec::Agg(agg) => MapValue::Agg(agg.merge(&[0u8; 16])),
        MapValueSpec::Plain(ty) => {
            MapValue::Plain(decode(ty, &vec![0u8; ty.size()], r).unwrap_or(Value::Int(0)))
        }
    };
    Some((Vec::new(), v))
}

fn decode_key(fields: &[FieldType], bytes: &[u8], r: &dyn Resolver) -> Vec<Value> {
    if fields.is_empty() {
        return Vec::new();
    }
    decode_fields(fields, bytes, r).unwrap_or_default()
}

/// `clear(@m)`: deletes every key. An array's elements cannot be deleted (a keyless `count()`
/// map is a one-slot per-CPU array, see `codegen::lower::maps`): they are zeroed, which prints
/// the same (nothing at exit, `@: 0` from `print()`, as a count that never fired).
pub fn clear(map: &Map) -> Result<(), SysError> {
    if matches!(map.map_type(), Some(MapType::Array | MapType::PercpuArray)) {
        return zero(map);
    }
    for k in map.keys()? {
        map.delete(&k)?;
    }
    Ok(())
}

/// `zero(@m)`: keeps the keys, sets every value (on every CPU) to zero.
pub fn zero(map: &Map) -> Result<(), SysError> {
    let zeros = vec![0u8; map.value_buf_len()];
    for k in map.keys()? {
        map.update(&k, &zeros, UpdateFlags::empty())?;
    }
    Ok(())
}

/// The user key and bucket index of one element (key `k`, per-CPU value `v`) of a histogram
/// map with user key `key`; `None` for an element to leave out. A keyless histogram may be a
/// per-CPU array indexed by bucket (`array`, see `codegen::lower::maps`): every bucket is
/// present, the unused ones zero, and those are left out, so one that never fired has no
/// entry, as a hash has none.
pub(crate) fn hist_element(
    key: &[FieldType],
    array: bool,
    k: &[u8],
    v: &[u8],
) -> Option<(Vec<u8>, u64)> {
    if array {
        if v.iter().all(|&b| b == 0) {
            return None;
        }
        let index = k.get(..4)?;
        return Some((
            Vec::new(),
            u32::from_le_bytes(index.try_into().ok()?) as u64,
        ));
    }
    let bucket_off = hist_bucket_offset(key);
    let bucket = k
        .get(bucket_off..bucket_off + 8)
        .map_or(0, |b| u64::from_le_bytes(b.try_into().unwrap_or([0; 8])));
    Some((k[..bucket_off.min(k.len())].to_vec(), bucket))
}

/// Where the u64 bucket index sits in a histogram map's key: after the user key, aligned as a
/// C struct member.
pub(crate) fn hist_bucket_offset(key: &[FieldType]) -> usize {
    let mut fields = key.to_vec();
    fields.push(FieldType::Int {
        bytes: 8,
        signed: false,
    });
    *tuple_offsets(&fields).last().unwrap_or(&0)
}
