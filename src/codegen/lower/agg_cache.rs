//! A per-CPU last-key cache in front of keyed `count()` and `sum()` maps
//! (`@[comm] = count()`, `@s[tid] = sum(args.id)`): an event whose key is the one this CPU saw
//! last adds to a per-CPU array slot (a lookup the verifier inlines: no helper call, no
//! hashing), instead of paying a hash lookup. Events come in runs of one key per CPU (a thread
//! makes many system calls in a time slice), so most events take that path.
//!
//! The cache ([`MapRole::AggCache`]) is a one-element per-CPU array; each CPU's value is the
//! state (`VALID`, `BUSY`), the delta counted since the key was cached, and the key
//! ([`AggCache`]). A program:
//! - state `VALID` and the same key: marks the entry busy, adds to the delta, marks it valid.
//! - state `VALID` and another key (a miss): moves the delta to the map (zeroed in the entry
//!   first), then updates the map for the new key exactly as without a cache (lookup, add or
//!   insert, a refused insert counted as a drop) and caches that key with a zero delta when the
//!   update went in; so a cached key is always in the map, and the map fills and refuses keys
//!   as it would without the cache.
//! - state 0 (empty): as a miss without a delta to move.
//! - state `BUSY` (a program this one interrupted on the same CPU is using the entry, or
//!   userspace disabled the cache): the update without the cache.
//!
//! The state is read and written with plain loads and stores: tracepoint programs run with
//! preemption off (the kernel's tracepoint and syscall-tracepoint BPF stubs disable it), so on
//! one CPU another program can only interrupt this one and finishes before it resumes; one
//! that starts between this program's state load and its busy store leaves the entry
//! consistent, and this one reads the key and delta again after marking it busy.
//!
//! Userspace adds each CPU's delta to that CPU's value of the cached key when it reads the map
//! (`runtime::snapshot::MapParts::entries`), after reading the map. With `--serve`, whose
//! scrapes read the maps while the probes run, it disables every entry before arming.
//!
//! Only maps whose every use is such an update get a cache: a read, `delete`, `has_key`,
//! `len`, `for`, `print`, `clear` or `zero` in the program would see the map without the
//! deltas. Keys must be a multiple of 8 bytes (compared a word at a time) and at most 64, and
//! every update must be in a tracepoint or raw tracepoint probe (see [`cached_maps`]).

use super::{Lower, LowerError};
use crate::asm::isa::{AluOp, JmpOp, MapType, Size};
use crate::codegen::emit::maps::{lookup, update, Key, BPF_ANY};
use crate::codegen::emit::mem::store_int;
use crate::codegen::emit::{Place, Value};
use crate::plan::agg::AggKind;
use crate::plan::layout::FieldType;
use crate::plan::{AggCache, MapRole, MapSpec};
use crate::sema::{CheckedProgram, MapInfo};
use std::collections::BTreeSet;

/// The largest key cached (8 words compared per event).
const MAX_KEY: u32 = 64;

/// The cache map's name for script map `name`.
pub fn cache_map_name(name: &str) -> String {
    format!("{name}#last")
}

/// The bytes of `m`'s key as stored.
fn key_size(m: &MapInfo) -> u32 {
    FieldType::Tuple(super::maps::stored_key_fields(m)).size() as u32
}

fn shape_fits(m: &MapInfo) -> bool {
    let size = key_size(m);
    matches!(m.agg, Some(AggKind::Count | AggKind::Sum { .. }))
        && !m.keys.is_empty()
        && m.declared_kind.is_none()
        && size > 0
        && size % 8 == 0
        && size <= MAX_KEY
}

/// The maps that get a cache (see the module documentation), leaving out `classed` ones.
pub fn cached_maps(
    cp: &CheckedProgram,
    classed: &std::collections::BTreeMap<String, u32>,
) -> BTreeSet<String> {
    let uses = super::map_uses::map_uses(cp, false, |m, _, _| {
        matches!(m.agg, Some(AggKind::Count | AggKind::Sum { .. }))
    });
    // Tracepoints only: their programs fire the most, and kprobe and fentry programs keep
    // within bpftrace 0.17's instruction counts (`tests/lower_golden/sizes.txt`), which the
    // cache's ~60 instructions would pass.
    let traced = |i: usize| {
        cp.probes
            .iter()
            .filter(|p| p.index == i)
            .all(|p| p.attach.iter().all(|at| at.kind.info().facts.agg_cache))
    };
    let sites_fit = |name: &str| {
        uses.updates
            .iter()
            .filter(|(m, _)| m == name)
            .all(|(_, p)| p.is_some_and(traced))
    };
    cp.maps
        .iter()
        .filter(|m| {
            shape_fits(m)
                && !classed.contains_key(&m.name)
                && uses.only_updates(&m.name)
                && sites_fit(&m.name)
        })
        .map(|m| m.name.clone())
        .collect()
}

/// The cache maps of `cached` (appended after every other map, so script map `MapId(i)`
/// keeps its index).
pub fn cache_map_specs(cp: &CheckedProgram, cached: &BTreeSet<String>) -> Vec<MapSpec> {
    cp.maps
        .iter()
        .filter(|m| cached.contains(&m.name))
        .map(|m| {
            let c = AggCache {
                of: m.name.clone(),
                key_size: key_size(m),
            };
            MapSpec {
                name: cache_map_name(&m.name),
                map_type: MapType::PercpuArray,
                key_size: 4,
                value_size: c.value_size(),
                max_entries: 1,
                role: MapRole::AggCache(c),
            }
        })
        .collect()
}

/// `@m[key] = count()` or `sum(v)` (`v` evaluated, `key` built) for cached map `info`, whose
/// map is `map` in the builder's table.
pub(crate) fn update_cached(
    lw: &mut Lower<'_>,
    info: &MapInfo,
    map: usize,
    key: &Key,
    agg: AggKind,
    v: Value,
) -> Result<(), LowerError> {
    let drops = lw.drops();
    let cache = lw.b.map(&cache_map_name(&info.name));
    let b = &mut lw.b;
    let words = key.size.div_ceil(8) as i32;
    let key_off = AggCache::KEY_OFF as i32;
    let delta_off = AggCache::DELTA_OFF as i32;
    let (valid, busy) = (AggCache::VALID as i32, AggCache::BUSY as i32);
    let val = match agg {
        AggKind::Count => b.constant(1),
        _ => v.reg(b),
    };
    let index = b.slot(4, 4);
    b.store(Size::W, index, 0, 0);
    let c = lookup(b, cache, Place::new(index, 0));
    let (slow, done, other, miss, refill) = (b.label(), b.label(), b.label(), b.label(), b.label());
    b.jmp64(JmpOp::Jeq, c, 0, slow);
    let state = b.vreg();
    b.load(Size::Dw, state, c, 0);
    b.jmp64(JmpOp::Jne, state, valid, other);
    // Valid and idle: ours until the end (a program interrupting this one takes `slow`).
    b.store(Size::Dw, c, 0, valid | busy);
    for i in 0..words {
        let (k, ck) = (b.vreg(), b.vreg());
        b.load(Size::Dw, k, key.place.mem(), key.place.off + 8 * i);
        b.load(Size::Dw, ck, c, key_off + 8 * i);
        b.jmp64(JmpOp::Jne, k, ck, miss);
    }
    // The same key: count here.
    let d = b.vreg();
    b.load(Size::Dw, d, c, delta_off);
    b.alu(true, AluOp::Add, d, val);
    b.store(Size::Dw, c, delta_off, d);
    b.store(Size::Dw, c, 0, valid);
    b.ja(done);

    b.bind(other);
    // Busy (an interrupted program's, or disabled): without the cache. Empty: take it.
    b.jmp64(JmpOp::Jne, state, 0, slow);
    b.store(Size::Dw, c, 0, busy);
    b.ja(refill);

    b.bind(miss);
    // Move the old key's delta to the map (zeroed here first: a reader between the two
    // misses it once rather than counting it twice).
    let d = b.vreg();
    b.load(Size::Dw, d, c, delta_off);
    b.jmp64(JmpOp::Jeq, d, 0, refill);
    b.store(Size::Dw, c, delta_off, 0);
    let old = b.slot(key.size, 8);
    for i in 0..words {
        let w = b.vreg();
        b.load(Size::Dw, w, c, key_off + 8 * i);
        b.store(Size::Dw, old, 8 * i, w);
    }
    add_or_insert(b, map, Place::new(old, 0), d, drops, refill);
    b.ja(refill);

    // The new key, as without a cache (`slow` comes here with no entry); cached once it is
    // in the map.
    let entry = b.vreg();
    let update_new = b.label();
    b.bind(refill);
    b.mov(entry, c);
    b.ja(update_new);
    b.bind(slow);
    b.mov_const(entry, 0);
    b.bind(update_new);
    let failed = b.label();
    add_or_insert(b, map, key.place, val, drops, failed);
    b.jmp64(JmpOp::Jeq, entry, 0, done);
    for i in 0..words {
        let w = b.vreg();
        b.load(Size::Dw, w, key.place.mem(), key.place.off + 8 * i);
        b.store(Size::Dw, entry, key_off + 8 * i, w);
    }
    b.store(Size::Dw, entry, delta_off, 0);
    b.store(Size::Dw, entry, 0, valid);
    b.ja(done);
    b.bind(failed);
    b.jmp64(JmpOp::Jeq, entry, 0, done);
    b.store(Size::Dw, entry, 0, 0);
    b.bind(done);
    Ok(())
}

/// Adds `n` to this CPU's value under `key` in `map`, or inserts it; falls through when the
/// value is in the map, jumps to `refused` (after counting a drop) when the insert failed.
fn add_or_insert(
    b: &mut crate::codegen::Builder,
    map: usize,
    key: Place,
    n: crate::codegen::VReg,
    drops: crate::codegen::emit::maps::Counter,
    refused: crate::codegen::Label,
) {
    let p = lookup(b, map, key);
    let (insert, ok) = (b.label(), b.label());
    b.jmp64(JmpOp::Jeq, p, 0, insert);
    b.atomic_add(Size::Dw, p, 0, n);
    b.ja(ok);
    b.bind(insert);
    let init = b.slot(8, 8);
    store_int(b, Place::new(init, 0), Value::Reg(n), 8);
    let r = update(b, map, key, Place::new(init, 0), BPF_ANY, Some(drops));
    b.jmp64(JmpOp::Jne, r, 0, refused);
    b.bind(ok);
}
