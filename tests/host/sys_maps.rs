//! Host-kernel tests of the map commands: create, update, lookup, delete, next key and batch
//! operations on hash, array, per-CPU and ring buffer maps.

use crate::sys_common;

use strobe::sys::map::possible_cpus;
use strobe::sys::{Errno, Map, MapCreateOptions, MapType, UpdateFlags};

fn opts(key: u32, value: u32, max: u32) -> MapCreateOptions<'static> {
    MapCreateOptions {
        name: "strobe_test",
        key_size: key,
        value_size: value,
        max_entries: max,
        ..Default::default()
    }
}

#[test]
fn hash_map_update_lookup_delete_and_iterate() {
    if !sys_common::can_bpf("hash_map_update_lookup_delete_and_iterate") {
        return;
    }
    let m = Map::create(MapType::Hash, &opts(4, 8, 16)).unwrap();
    for k in 0u32..5 {
        m.update(
            &k.to_ne_bytes(),
            &(u64::from(k) * 100).to_ne_bytes(),
            UpdateFlags::empty(),
        )
        .unwrap();
    }
    assert_eq!(
        m.lookup_vec(&3u32.to_ne_bytes()).unwrap(),
        Some(300u64.to_ne_bytes().to_vec())
    );
    assert_eq!(m.lookup_vec(&99u32.to_ne_bytes()).unwrap(), None);
    // NOEXIST on an existing key is EEXIST.
    let e = m
        .update(&3u32.to_ne_bytes(), &[0; 8], UpdateFlags::NOEXIST)
        .unwrap_err();
    assert_eq!(e.errno, Errno::EEXIST);
    assert!(m.delete(&3u32.to_ne_bytes()).unwrap());
    assert!(!m.delete(&3u32.to_ne_bytes()).unwrap());
    let mut keys: Vec<u32> = m
        .keys()
        .unwrap()
        .iter()
        .map(|k| u32::from_ne_bytes(k[..].try_into().unwrap()))
        .collect();
    keys.sort();
    assert_eq!(keys, vec![0, 1, 2, 4]);
    // Wrong-sized buffers are refused before reaching the kernel.
    assert!(m.lookup_vec(&[0u8; 3]).is_err());
}

#[test]
fn hash_map_batch_lookup_and_delete_drains_everything() {
    if !sys_common::can_bpf("hash_map_batch_lookup_and_delete_drains_everything") {
        return;
    }
    let m = Map::create(MapType::Hash, &opts(4, 8, 64)).unwrap();
    for k in 0u32..40 {
        m.update(
            &k.to_ne_bytes(),
            &u64::from(k + 1).to_ne_bytes(),
            UpdateFlags::empty(),
        )
        .unwrap();
    }
    // Lookup in batches of 16 without deleting.
    let mut seen = Vec::new();
    let mut token: Option<Vec<u8>> = None;
    loop {
        let mut out = vec![0u8; m.batch_token_len()];
        let mut keys = vec![0u8; 16 * 4];
        let mut values = vec![0u8; 16 * 8];
        let b = m
            .lookup_batch(token.as_deref(), &mut out, &mut keys, &mut values)
            .unwrap();
        for i in 0..b.count as usize {
            let k = u32::from_ne_bytes(keys[i * 4..i * 4 + 4].try_into().unwrap());
            let v = u64::from_ne_bytes(values[i * 8..i * 8 + 8].try_into().unwrap());
            assert_eq!(v, u64::from(k) + 1);
            seen.push(k);
        }
        if b.done {
            break;
        }
        token = Some(out);
    }
    seen.sort();
    assert_eq!(seen, (0..40).collect::<Vec<_>>());
    assert_eq!(m.keys().unwrap().len(), 40);

    // Lookup-and-delete with a buffer for everything empties the map.
    let mut out = vec![0u8; m.batch_token_len()];
    let mut keys = vec![0u8; 64 * 4];
    let mut values = vec![0u8; 64 * 8];
    let b = m
        .lookup_and_delete_batch(None, &mut out, &mut keys, &mut values)
        .unwrap();
    assert_eq!(b.count, 40);
    assert!(b.done);
    assert!(m.keys().unwrap().is_empty());
}

#[test]
fn array_map_has_every_index_and_refuses_delete() {
    if !sys_common::can_bpf("array_map_has_every_index_and_refuses_delete") {
        return;
    }
    let m = Map::create(MapType::Array, &opts(4, 8, 4)).unwrap();
    assert_eq!(m.keys().unwrap().len(), 4);
    m.update(
        &2u32.to_ne_bytes(),
        &7u64.to_ne_bytes(),
        UpdateFlags::empty(),
    )
    .unwrap();
    assert_eq!(
        m.lookup_vec(&2u32.to_ne_bytes()).unwrap(),
        Some(7u64.to_ne_bytes().to_vec())
    );
    assert_eq!(m.lookup_vec(&0u32.to_ne_bytes()).unwrap(), Some(vec![0; 8]));
    let e = m.delete(&2u32.to_ne_bytes()).unwrap_err();
    assert_eq!(e.errno, Errno::EINVAL);
    let e = m
        .update(&9u32.to_ne_bytes(), &[0; 8], UpdateFlags::empty())
        .unwrap_err();
    assert_eq!(e.errno, Errno::E2BIG);
    // The generic batch implementation works on arrays too.
    let mut out = vec![0u8; m.batch_token_len()];
    let mut keys = vec![0u8; 4 * 4];
    let mut values = vec![0u8; 4 * 8];
    let b = m
        .lookup_batch(None, &mut out, &mut keys, &mut values)
        .unwrap();
    assert_eq!(b.count, 4);
    assert_eq!(u64::from_ne_bytes(values[16..24].try_into().unwrap()), 7);
}

#[test]
fn percpu_maps_hold_one_value_per_possible_cpu() {
    if !sys_common::can_bpf("percpu_maps_hold_one_value_per_possible_cpu") {
        return;
    }
    let ncpu = possible_cpus();
    for t in [MapType::PercpuArray, MapType::PercpuHash] {
        // A 4-byte value is padded to 8 per CPU.
        let m = Map::create(t, &opts(4, 4, 8)).unwrap();
        assert_eq!(m.value_buf_len(), 8 * ncpu);
        let mut v = vec![0u8; 8 * ncpu];
        for cpu in 0..ncpu {
            v[cpu * 8..cpu * 8 + 4].copy_from_slice(&(cpu as u32 + 10).to_ne_bytes());
        }
        m.update(&1u32.to_ne_bytes(), &v, UpdateFlags::empty())
            .unwrap();
        let got = m.lookup_vec(&1u32.to_ne_bytes()).unwrap().unwrap();
        for cpu in 0..ncpu {
            let x = u32::from_ne_bytes(got[cpu * 8..cpu * 8 + 4].try_into().unwrap());
            assert_eq!(x, cpu as u32 + 10, "{t:?} cpu {cpu}");
        }
    }
}

#[test]
fn ringbuf_map_is_created_and_refuses_element_ops() {
    if !sys_common::can_bpf("ringbuf_map_is_created_and_refuses_element_ops") {
        return;
    }
    // Ring buffers: key and value sizes 0, max_entries a power-of-two multiple of the page size.
    let m = Map::create(MapType::Ringbuf, &opts(0, 0, 1 << 16)).unwrap();
    let info = strobe::sys::info::map_info(std::os::fd::AsFd::as_fd(&m)).unwrap();
    assert_eq!(info.map_type, MapType::Ringbuf as u32);
    assert_eq!(info.max_entries, 1 << 16);
    assert_eq!(info.name, "strobe_test");
    // A size that is not a power of two is refused with a named errno.
    let e = Map::create(MapType::Ringbuf, &opts(0, 0, 3 * 4096)).unwrap_err();
    assert_eq!(e.errno, Errno::EINVAL);
    assert!(e.to_string().contains("EINVAL (Invalid argument)"), "{e}");
    let mut next = [];
    assert!(m.next_key(None, &mut next).is_err());
}
