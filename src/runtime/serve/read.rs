//! Reading a script map at scrape time: BPF_MAP_LOOKUP_BATCH (5.6+) in chunks, falling back
//! to key iteration (BPF_MAP_GET_NEXT_KEY + lookup) where the kernel or map type refuses
//! batches; then the same decoding and per-CPU merge as the exit-time dump
//! (`runtime::snapshot`).
//!
//! Input: a [`MapSpec`] of a script map and its [`Map`]. Output: the merged entries.
//! Invariants: a key is taken once even if iteration restarts (a key deleted under
//! GET_NEXT_KEY makes the kernel start over), so a histogram bucket is never counted twice;
//! memory is the map's entries plus one chunk of raw bytes.

use std::collections::{BTreeMap, HashSet};

use crate::plan::{KeyClass, MapRole, MapSpec, MapValueSpec};
use crate::runtime::format::agg::{merge_hist_bucket, Agg, AggKind};
use crate::runtime::format::decode::{decode, decode_fields};
use crate::runtime::format::tseries::TSeries;
use crate::runtime::format::{MapValue, Resolver, Value};
use crate::sys::{Map, SysError};

/// Raw bytes read per batch call, at most (keys and values).
const CHUNK_BYTES: usize = 1 << 20;

/// Calls `f` with every (key, value) of `map`. True when batches were used.
pub fn for_each_raw(map: &Map, mut f: impl FnMut(&[u8], &[u8])) -> Result<bool, SysError> {
    match for_each_batch(map, &mut f) {
        Ok(()) => Ok(true),
        Err(BatchFailure::Unsupported) => {
            for_each_iter(map, &mut f)?;
            Ok(false)
        }
        Err(BatchFailure::Sys(e)) => Err(e),
    }
}

enum BatchFailure {
    /// Refused before anything was returned: iterate instead.
    Unsupported,
    Sys(SysError),
}

fn for_each_batch(map: &Map, f: &mut impl FnMut(&[u8], &[u8])) -> Result<(), BatchFailure> {
    let ks = map.key_size() as usize;
    let vs = map.value_buf_len();
    if ks == 0 || vs == 0 {
        return Err(BatchFailure::Unsupported);
    }
    let count = (CHUNK_BYTES / (ks + vs)).clamp(16, 8192);
    let mut keys = vec![0u8; count * ks];
    let mut values = vec![0u8; count * vs];
    let tok = map.batch_token_len();
    let (mut in_tok, mut out_tok) = (vec![0u8; tok], vec![0u8; tok]);
    let mut first = true;
    loop {
        let r = map.lookup_batch(
            (!first).then_some(in_tok.as_slice()),
            &mut out_tok,
            &mut keys,
            &mut values,
        );
        let batch = match r {
            Ok(b) => b,
            // Nothing was handed over yet: EINVAL/ENOTSUPP (no batch ops for this map or
            // kernel), ENOSPC (a hash bucket larger than the chunk).
            Err(_) if first => return Err(BatchFailure::Unsupported),
            Err(e) => return Err(BatchFailure::Sys(e)),
        };
        for i in 0..(batch.count as usize).min(count) {
            f(&keys[i * ks..(i + 1) * ks], &values[i * vs..(i + 1) * vs]);
        }
        if batch.done {
            return Ok(());
        }
        first = false;
        std::mem::swap(&mut in_tok, &mut out_tok);
    }
}

fn for_each_iter(map: &Map, f: &mut impl FnMut(&[u8], &[u8])) -> Result<(), SysError> {
    let mut seen = HashSet::new();
    let mut value = vec![0u8; map.value_buf_len()];
    for k in map.keys()? {
        if !seen.insert(k.clone()) {
            continue;
        }
        if map.lookup(&k, &mut value)? {
            f(&k, &value);
        }
    }
    Ok(())
}

/// The entries of a script map, merged and decoded (empty for other maps).
pub fn entries(
    spec: &MapSpec,
    map: &Map,
    class: Option<(&KeyClass, &Map)>,
    r: &dyn Resolver,
) -> Result<Vec<(Vec<Value>, MapValue)>, SysError> {
    // A class map's keys (`codegen::lower::key_class`) widened to the script map's.
    let for_each_raw = |map: &Map, f: &mut dyn FnMut(&[u8], &[u8])| -> Result<bool, SysError> {
        let batched = for_each_raw(map, &mut *f)?;
        if let Some((c, m)) = class {
            for_each_raw(m, |k, v| f(&c.widen(k), v))?;
        }
        Ok(batched)
    };
    let MapRole::Script { key, value } = &spec.role else {
        return Ok(Vec::new());
    };
    let decode_key = |bytes: &[u8]| -> Vec<Value> {
        if key.is_empty() {
            Vec::new()
        } else {
            decode_fields(key, bytes, r).unwrap_or_default()
        }
    };
    let mut out = Vec::new();
    match value {
        MapValueSpec::Agg(AggKind::Hist(kind)) => {
            let array = map.map_type() == Some(crate::sys::MapType::PercpuArray);
            let mut hists: BTreeMap<Vec<u8>, Vec<u64>> = BTreeMap::new();
            for_each_raw(map, &mut |k, v| {
                if let Some((user, bucket)) =
                    crate::runtime::snapshot::hist_element(key, array, k, v)
                {
                    merge_hist_bucket(hists.entry(user).or_default(), kind, bucket, v);
                }
            })?;
            for (user, counts) in hists {
                out.push((
                    decode_key(&user),
                    MapValue::Agg(Agg::Hist {
                        kind: *kind,
                        counts,
                    }),
                ));
            }
        }
        MapValueSpec::Agg(AggKind::TSeries(kind)) => {
            let bucket_off = crate::runtime::snapshot::hist_bucket_offset(key);
            let mut series: BTreeMap<Vec<u8>, TSeries> = BTreeMap::new();
            for_each_raw(map, &mut |k, v| {
                let user = k[..bucket_off.min(k.len())].to_vec();
                series
                    .entry(user)
                    .or_insert_with(|| TSeries::new(*kind))
                    .add_bucket(v);
            })?;
            for (user, ts) in series {
                out.push((decode_key(&user), MapValue::Agg(Agg::TSeries(ts))));
            }
        }
        MapValueSpec::Agg(agg) => {
            for_each_raw(map, &mut |k, v| {
                out.push((decode_key(k), MapValue::Agg(agg.merge(v))));
            })?;
        }
        MapValueSpec::Plain(ty) => {
            for_each_raw(map, &mut |k, v| {
                let val = decode(ty, v, r).unwrap_or(Value::Int(0));
                out.push((decode_key(k), MapValue::Plain(val)));
            })?;
        }
    }
    Ok(out)
}
