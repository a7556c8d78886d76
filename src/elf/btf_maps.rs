//! BTF-defined maps (libbpf's `SEC(".maps")` convention), both ways: their shapes read from an
//! object's `.BTF` section with [`crate::btf::Btf`] (an object's `.BTF` is standalone BTF), and
//! `.BTF` written for a list of maps with [`BtfBuilder`]. This module only knows how libbpf
//! spells a map definition.
//!
//! Reading — input: the raw `.BTF` bytes; output: one `MapDef` per variable of the `.maps`
//! DATASEC. libbpf encodes `__uint(field, N)` as a member of type `int (*)[N]` and
//! `__type(field, T)` as `T *`, so integers are read from array lengths and key/value sizes
//! from the pointee's size. Invariants: bytes are untrusted; parsing and type chains are
//! bounded by `crate::btf`, and every problem is a [`BtfError`], never a panic.
//!
//! Writing — input: `MapDef`s; output: the `.BTF` blob and where each map's variable lies in
//! the `.maps` section. Each map is a global VAR of an anonymous struct of `int (*name)[N]`
//! members, as clang emits for `__uint(name, N)` (see libbpf's `bpf_helpers.h`), and the
//! DATASEC `.maps` lists them. Invariant: `map_shapes(encode_maps(m).btf) == m`.

use std::collections::HashMap;

use crate::asm::MapDef;
use crate::btf::encode::{BtfBuilder, EncodeError, MemberDef};
use crate::btf::{Btf, BtfError, TypeKind};

/// `int (*)[N]` → N.
fn uint_field(btf: &Btf, member_type: u32) -> Result<u32, BtfError> {
    Ok(btf.array_info(btf.pointee(member_type)?)?.len)
}

/// `T *` → sizeof(T).
fn pointee_size(btf: &Btf, member_type: u32) -> Result<u32, BtfError> {
    btf.size_of(btf.pointee(member_type)?)
}

/// The map described by the (anonymous) struct `struct_id`; a non-struct gives an all-zero
/// shape, as libbpf would reject it later with a better message than ours.
fn map_def(btf: &Btf, name: &str, struct_id: u32) -> Result<MapDef, BtfError> {
    let mut def = MapDef {
        name: name.to_string(),
        ..MapDef::default()
    };
    let TypeKind::Struct(members) = btf.resolve(struct_id)?.kind else {
        return Ok(def);
    };
    for m in members.iter() {
        let ty = m.type_id;
        match m.name {
            "type" => def.map_type = uint_field(btf, ty)?,
            "max_entries" => def.max_entries = uint_field(btf, ty)?,
            "map_flags" => def.flags = uint_field(btf, ty)?,
            "key_size" => def.key_size = uint_field(btf, ty)?,
            "value_size" => def.value_size = uint_field(btf, ty)?,
            "key" => def.key_size = pointee_size(btf, ty)?,
            "value" => def.value_size = pointee_size(btf, ty)?,
            _ => {}
        }
    }
    Ok(def)
}

/// Every map of the `.maps` DATASEC, in section order; empty when there is none.
pub fn map_shapes(btf: &[u8]) -> Result<Vec<MapDef>, BtfError> {
    let btf = Btf::parse(btf)?;
    let mut maps = Vec::new();
    for t in btf.types() {
        let TypeKind::Datasec(sec) = t.kind else {
            continue;
        };
        if t.name != ".maps" {
            continue;
        }
        for entry in sec.entries() {
            let var = btf.type_by_id(entry.type_id)?;
            if let TypeKind::Var { type_id, .. } = var.kind {
                maps.push(map_def(&btf, var.name, type_id)?);
            }
        }
    }
    Ok(maps)
}

/// A written `.BTF` for some maps, and the layout of their `.maps` section.
pub(crate) struct EncodedMaps {
    pub btf: Vec<u8>,
    /// (byte offset in `.maps`, size) of each map's variable, in the order of the input.
    pub vars: Vec<(u32, u32)>,
    /// Size of the `.maps` section (the variables are zero-filled in it, as clang leaves them).
    pub section_size: u32,
}

/// Size of a member of pointer type: BPF is a 64-bit target.
const PTR_SIZE: u32 = 8;

/// The `.BTF` describing `maps` as libbpf 1.x expects them in `.maps`.
///
/// `type` and `max_entries` are always written; `key_size`, `value_size` and `map_flags` only
/// when non-zero, as a C source leaves out a field it does not need (libbpf reads an absent
/// field as 0, and so does [`map_shapes`]). Sizes are written as `key_size`/`value_size`
/// rather than `key`/`value` pointer types because a `MapDef` knows sizes, not types.
pub(crate) fn encode_maps(maps: &[MapDef]) -> Result<EncodedMaps, EncodeError> {
    let mut b = BtfBuilder::new();
    let int = b.add_int("int", 4, true);
    // clang's index type for arrays; the kernel accepts any regular integer there.
    let index = b.add_int("__ARRAY_SIZE_TYPE__", 4, false);
    // One `int (*)[n]` per distinct n, shared by every member that needs it.
    let mut uint_types: HashMap<u32, u32> = HashMap::new();
    let mut uint_type = |b: &mut BtfBuilder, n: u32| {
        *uint_types.entry(n).or_insert_with(|| {
            let array = b.add_array(int, index, n);
            b.add_ptr(array)
        })
    };
    let mut entries = Vec::with_capacity(maps.len());
    let mut vars = Vec::with_capacity(maps.len());
    let mut offset = 0u32;
    for map in maps {
        let fields = [
            ("type", map.map_type, true),
            ("key_size", map.key_size, false),
            ("value_size", map.value_size, false),
            ("max_entries", map.max_entries, true),
            ("map_flags", map.flags, false),
        ];
        let mut members = Vec::with_capacity(fields.len());
        for (name, value, always) in fields {
            if always || value != 0 {
                let ty = uint_type(&mut b, value);
                members.push(MemberDef::new(name, ty, PTR_SIZE * members.len() as u32));
            }
        }
        let size = PTR_SIZE * members.len() as u32;
        let shape = b.add_struct("", size, &members);
        // Linkage 1: BTF_VAR_GLOBAL_ALLOCATED, the only one libbpf accepts in `.maps`.
        let var = b.add_var(&map.name, shape, 1);
        entries.push((var, offset, size));
        vars.push((offset, size));
        offset = offset.checked_add(size).ok_or(EncodeError::TooLarge)?;
    }
    b.add_datasec(".maps", offset, &entries);
    Ok(EncodedMaps {
        btf: b.finish()?,
        vars,
        section_size: offset,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::btf::encode::{BtfBuilder, MemberDef};

    #[test]
    fn reads_uint_and_type_members_of_a_maps_datasec() {
        let mut b = BtfBuilder::new();
        let int = b.add_int("int", 4, true);
        let hash = b.add_array(int, int, 1); // BPF_MAP_TYPE_HASH
        let type_field = b.add_ptr(hash);
        let key_field = b.add_ptr(int);
        let u64_ = b.add_int("__u64", 8, false);
        let u64_typedef = b.add_typedef("__u64", u64_);
        let value_field = b.add_ptr(u64_typedef);
        let entries = b.add_array(int, int, 1024);
        let entries_field = b.add_ptr(entries);
        let shape = b.add_struct(
            "",
            32,
            &[
                MemberDef::new("type", type_field, 0),
                MemberDef::new("key", key_field, 8),
                MemberDef::new("value", value_field, 16),
                MemberDef::new("max_entries", entries_field, 24),
            ],
        );
        let counts = b.add_var("counts", shape, 1);
        b.add_datasec(".maps", 32, &[(counts, 0, 32)]);
        let maps = map_shapes(&b.finish().unwrap()).unwrap();
        assert_eq!(
            maps,
            vec![MapDef {
                name: "counts".into(),
                map_type: 1,
                key_size: 4,
                value_size: 8,
                max_entries: 1024,
                flags: 0,
            }]
        );
    }

    #[test]
    fn encoded_maps_read_back_with_zero_fields_left_out() {
        let maps = vec![
            MapDef {
                name: "full".into(),
                map_type: 1,
                key_size: 4,
                value_size: 8,
                max_entries: 1024,
                flags: 1,
            },
            MapDef {
                name: "ring".into(),
                map_type: 27,
                max_entries: 4096,
                ..MapDef::default()
            },
            MapDef {
                name: "zero".into(),
                ..MapDef::default()
            },
        ];
        let enc = encode_maps(&maps).unwrap();
        assert_eq!(map_shapes(&enc.btf).unwrap(), maps);
        // 5, 2 and 2 pointer members; variables packed in order.
        assert_eq!(enc.vars, [(0, 40), (40, 16), (56, 16)]);
        assert_eq!(enc.section_size, 72);
        let btf = Btf::parse(enc.btf.clone()).unwrap();
        let members = |name: &str| -> Vec<String> {
            let var = btf.types().find(|t| t.name == name).unwrap();
            let TypeKind::Var { type_id, .. } = var.kind else {
                panic!("{name} is not a VAR");
            };
            let TypeKind::Struct(m) = btf.resolve(type_id).unwrap().kind else {
                panic!("{name} is not a struct");
            };
            m.iter().map(|m| m.name.to_string()).collect()
        };
        assert_eq!(
            members("full"),
            ["type", "key_size", "value_size", "max_entries", "map_flags"]
        );
        assert_eq!(members("ring"), ["type", "max_entries"]);
    }

    #[test]
    fn no_maps_encode_an_empty_datasec() {
        let enc = encode_maps(&[]).unwrap();
        assert_eq!(map_shapes(&enc.btf).unwrap(), []);
        assert_eq!((enc.vars.len(), enc.section_size), (0, 0));
    }

    #[test]
    fn rejects_garbage_and_loops_without_panicking() {
        assert!(matches!(map_shapes(&[]), Err(BtfError::TooShort { .. })));
        assert!(matches!(
            map_shapes(&[0, 0, 1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0]),
            Err(BtfError::BadMagic { magic: 0 })
        ));
        // A map whose `type` member is a typedef of itself.
        let mut b = BtfBuilder::new();
        let looped = b.next_id();
        b.add_typedef("t", looped);
        let shape = b.add_struct("", 8, &[MemberDef::new("type", looped, 0)]);
        let m = b.add_var("m", shape, 1);
        b.add_datasec(".maps", 8, &[(m, 0, 8)]);
        let bytes = b.finish().unwrap();
        assert!(matches!(map_shapes(&bytes), Err(BtfError::TooDeep { .. })));
        for cut in 0..bytes.len() {
            let _ = map_shapes(&bytes[..cut]);
        }
    }
}
