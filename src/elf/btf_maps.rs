//! The shapes of BTF-defined maps (libbpf's `SEC(".maps")` convention), read from an object's
//! `.BTF` section with [`crate::btf::Btf`] (an object's `.BTF` is standalone BTF); this module
//! only knows how libbpf spells a map definition.
//!
//! Input: the raw `.BTF` bytes. Output: one `MapDef` per variable of the `.maps` DATASEC.
//! libbpf encodes `__uint(field, N)` as a member of type `int (*)[N]` and `__type(field, T)` as
//! `T *`, so integers are read from array lengths and key/value sizes from the pointee's size.
//! Invariants: bytes are untrusted; parsing and type chains are bounded by `crate::btf`, and
//! every problem is a [`BtfError`], never a panic.

use crate::asm::MapDef;
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
