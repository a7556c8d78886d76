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
use crate::plan::{AggCache, CompiledScript, KeyClass, MapRole, MapSpec, MapValueSpec};
use crate::runtime::format::agg::AggKind;
use crate::sys::{Map, MapType, SysError, UpdateFlags};
use std::sync::atomic::{AtomicU64, Ordering};

/// One element as read: key bytes, per-CPU value bytes.
pub type RawEntry = (Vec<u8>, Vec<u8>);

/// The kernel maps of one script map: the map itself, and for a map keyed by one long string
/// its short-key class with the element counter both share (`codegen::lower::key_class`).
#[derive(Clone, Copy)]
pub struct MapParts<'a> {
    pub main: &'a Map,
    pub class: Option<(&'a KeyClass, &'a Map)>,
    pub count: Option<&'a Map>,
    /// The last-key cache of a count/sum map (`codegen::lower::agg_cache`).
    pub cache: Option<(&'a AggCache, &'a Map)>,
}

/// The map of `script` whose role `pick` accepts, with its kernel map (`maps`, in the same
/// order): a script map's short-key class or last-key cache.
fn companion<'a, T>(
    script: &'a CompiledScript,
    maps: &'a [Map],
    pick: impl Fn(&'a MapRole) -> Option<&'a T>,
) -> Option<(&'a T, &'a Map)> {
    script
        .maps
        .iter()
        .zip(maps)
        .find_map(|(s, m)| pick(&s.role).map(|c| (c, m)))
}

impl<'a> MapParts<'a> {
    /// Script map `i` of `script` (its kernel maps are `maps`, in the same order).
    pub fn of(script: &'a CompiledScript, maps: &'a [Map], i: usize) -> Option<MapParts<'a>> {
        let spec = script.maps.get(i)?;
        let main = maps.get(i)?;
        let class = companion(script, maps, |r| match r {
            MapRole::KeyClass(c) if c.of == spec.name => Some(c),
            _ => None,
        });
        let count = class.and_then(|_| {
            let (j, _) = script.map_with_role(&MapRole::KeyCount)?;
            maps.get(j)
        });
        let cache = companion(script, maps, |r| match r {
            MapRole::AggCache(c) if c.of == spec.name => Some(c),
            _ => None,
        });
        Some(MapParts {
            main,
            class,
            count,
            cache,
        })
    }

    /// A map without a class.
    pub fn single(main: &'a Map) -> MapParts<'a> {
        MapParts {
            main,
            class: None,
            count: None,
            cache: None,
        }
    }

    /// Every (key, per-CPU value) of the logical map, class keys widened to the script map's
    /// key, and each CPU's cached count or sum added to its value of the cached key; a key
    /// deleted between listing and lookup is left out.
    pub fn entries(&self) -> Result<Vec<RawEntry>, SysError> {
        let mut out = Vec::new();
        for k in self.main.keys()? {
            if let Some(v) = self.main.lookup_vec(&k)? {
                out.push((k, v));
            }
        }
        // Read after the map: a program that moves a delta into the map zeroes it in the
        // cache first, so between the two reads it is missed once, never counted twice.
        if let Some((c, m)) = self.cache {
            if let Some(v) = m.lookup_vec(&0u32.to_ne_bytes())? {
                for (cpu, key, delta) in c.pending(&v) {
                    // A cached key is always in the map (it is cached after its insert).
                    let Some((_, value)) = out.iter_mut().find(|(k, _)| k == key) else {
                        continue;
                    };
                    if let Some(w) = value.get_mut(8 * cpu..8 * cpu + 8) {
                        let n = u64::from_ne_bytes(w.try_into().unwrap_or([0; 8]));
                        w.copy_from_slice(&n.wrapping_add(delta).to_ne_bytes());
                    }
                }
            }
        }
        if let Some((c, m)) = self.class {
            for k in m.keys()? {
                if let Some(v) = m.lookup_vec(&k)? {
                    out.push((c.widen(&k), v));
                }
            }
        }
        Ok(out)
    }
}

/// Every entry of `map`, merged and decoded; `None` for maps that are not script maps.
pub fn snapshot(
    spec: &MapSpec,
    map: MapParts<'_>,
    r: &dyn Resolver,
) -> Result<Option<MapSnapshot>, SysError> {
    let MapRole::Script { key, value } = &spec.role else {
        return Ok(None);
    };
    let array = map.main.map_type() == Some(MapType::PercpuArray);
    let entries = map.entries()?;
    let mut snap = MapSnapshot {
        name: spec.name.clone(),
        entries: Vec::new(),
    };
    match value {
        MapValueSpec::Agg(AggKind::Hist(kind)) => {
            let mut hists: BTreeMap<Vec<u8>, Vec<u64>> = BTreeMap::new();
            for (k, v) in entries {
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
            for (k, v) in entries {
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
            for (k, v) in entries {
                if array && v.iter().all(|&b| b == 0) {
                    continue;
                }
                snap.entries
                    .push((decode_key(key, &k, r), MapValue::Agg(agg.merge(&v))));
            }
        }
        MapValueSpec::Plain(ty) => {
            for (k, v) in entries {
                let val = decode(ty, &v, r).unwrap_or(Value::Int(0));
                snap.entries
                    .push((decode_key(key, &k, r), MapValue::Plain(val)));
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
/// A class map's elements are deleted too, and each deleted element of either is taken off
/// their shared count (atomically: programs add to it meanwhile).
pub fn clear(map: MapParts<'_>) -> Result<(), SysError> {
    let main = map.main;
    if matches!(main.map_type(), Some(MapType::Array | MapType::PercpuArray)) {
        return zero(map);
    }
    let count = match (map.class, map.count) {
        (Some((c, _)), Some(counter)) => Some(CountSlot::map(counter, c.count_slot)?),
        _ => None,
    };
    let parts = std::iter::once(main).chain(map.class.map(|(_, m)| m));
    for m in parts {
        for k in m.keys()? {
            m.delete(&k)?;
            if let Some(c) = &count {
                c.take_one();
            }
        }
    }
    Ok(())
}

/// `zero(@m)`: keeps the keys, sets every value (on every CPU) to zero.
pub fn zero(map: MapParts<'_>) -> Result<(), SysError> {
    let parts = std::iter::once(map.main).chain(map.class.map(|(_, m)| m));
    for m in parts {
        let zeros = vec![0u8; m.value_buf_len()];
        for k in m.keys()? {
            m.update(&k, &zeros, UpdateFlags::empty())?;
        }
    }
    Ok(())
}

/// One `u64` slot of the mmapped [`MapRole::KeyCount`] array.
struct CountSlot {
    map: memmap2::MmapRaw,
    slot: usize,
}

impl CountSlot {
    fn map(counter: &Map, slot: u32) -> Result<CountSlot, SysError> {
        use std::os::fd::{AsFd, AsRawFd};
        let len = (8 * (slot as usize + 1)).next_multiple_of(4096);
        let raw = memmap2::MmapOptions::new()
            .len(len)
            .map_raw(counter.as_fd().as_raw_fd())
            .map_err(|e| {
                SysError::bare(
                    "mmap",
                    crate::sys::Errno(e.raw_os_error().unwrap_or(libc::EINVAL)),
                )
            })?;
        Ok(CountSlot {
            map: raw,
            slot: slot as usize,
        })
    }

    fn take_one(&self) {
        // SAFETY: the mapping is at least 8 * (slot + 1) bytes (the array's values, 8 bytes
        // each, page-aligned), lives as long as `self`, and the kernel updates the slot only
        // with atomic instructions.
        let a = unsafe { &*(self.map.as_mut_ptr().add(8 * self.slot) as *const AtomicU64) };
        let _ = a.fetch_update(Ordering::SeqCst, Ordering::SeqCst, |v| v.checked_sub(1));
    }
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
