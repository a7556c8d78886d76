//! The shapes of BTF-defined maps (libbpf's `SEC(".maps")` convention), read from an object's
//! `.BTF` section — just enough BTF to turn each map into a [`MapDef`]; kernel BTF lives in
//! `crate::btf`.
//!
//! Input: the raw `.BTF` bytes (format: the kernel's `Documentation/bpf/btf.rst`). Output: one
//! `MapDef` per variable of the `.maps` DATASEC. libbpf encodes `__uint(field, N)` as a member
//! of type `int (*)[N]` and `__type(field, T)` as `T *`, so integers are read from array
//! lengths and key/value sizes from the pointee's size.
//! Invariants: bytes are untrusted; every read is bounds-checked, type chains are followed at
//! most [`MAX_CHAIN`] steps, and errors are returned, never panics.

use crate::asm::MapDef;

const BTF_MAGIC: u16 = 0xeb9f;
/// How many typedef/const/volatile links we follow before calling it a loop.
pub const MAX_CHAIN: usize = 32;

const KIND_INT: u32 = 1;
const KIND_PTR: u32 = 2;
const KIND_ARRAY: u32 = 3;
const KIND_STRUCT: u32 = 4;
const KIND_UNION: u32 = 5;
const KIND_ENUM: u32 = 6;
const KIND_FWD: u32 = 7;
const KIND_TYPEDEF: u32 = 8;
const KIND_VOLATILE: u32 = 9;
const KIND_CONST: u32 = 10;
const KIND_RESTRICT: u32 = 11;
const KIND_FUNC: u32 = 12;
const KIND_FUNC_PROTO: u32 = 13;
const KIND_VAR: u32 = 14;
const KIND_DATASEC: u32 = 15;
const KIND_FLOAT: u32 = 16;
const KIND_DECL_TAG: u32 = 17;
const KIND_TYPE_TAG: u32 = 18;
const KIND_ENUM64: u32 = 19;

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum BtfMapError {
    #[error("truncated or inconsistent header")]
    BadHeader,
    #[error("bad magic {magic:#06x}")]
    BadMagic { magic: u16 },
    #[error("type #{id} is truncated")]
    TruncatedType { id: u32 },
    #[error("unknown type kind {kind} at type #{id}")]
    UnknownKind { id: u32, kind: u32 },
    #[error("type #{id} does not exist")]
    NoSuchType { id: u32 },
    #[error("type #{id} has no size")]
    Unsized { id: u32 },
    #[error("type chain from #{id} is longer than {MAX_CHAIN} links")]
    Loop { id: u32 },
}

/// One parsed `struct btf_type` with its trailing data.
#[derive(Clone, Copy)]
struct Type<'a> {
    name_off: u32,
    kind: u32,
    vlen: usize,
    size_or_type: u32,
    extra: &'a [u8],
}

struct Btf<'a> {
    types: Vec<Type<'a>>,
    strings: &'a [u8],
}

fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    let s = b.get(off..off.checked_add(4)?)?;
    Some(u32::from_le_bytes([s[0], s[1], s[2], s[3]]))
}

impl<'a> Btf<'a> {
    fn parse(data: &'a [u8]) -> Result<Btf<'a>, BtfMapError> {
        let magic = data
            .get(0..2)
            .map(|b| u16::from_le_bytes([b[0], b[1]]))
            .ok_or(BtfMapError::BadHeader)?;
        if magic != BTF_MAGIC {
            return Err(BtfMapError::BadMagic { magic });
        }
        let field = |i: usize| u32_at(data, 4 + 4 * i).ok_or(BtfMapError::BadHeader);
        let (hdr_len, type_off, type_len, str_off, str_len) =
            (field(0)?, field(1)?, field(2)?, field(3)?, field(4)?);
        let section = |off: u32, len: u32| {
            let start = (hdr_len as usize).checked_add(off as usize)?;
            data.get(start..start.checked_add(len as usize)?)
        };
        let types_data = section(type_off, type_len).ok_or(BtfMapError::BadHeader)?;
        let strings = section(str_off, str_len).ok_or(BtfMapError::BadHeader)?;
        let mut types = Vec::new();
        let mut pos = 0;
        while pos < types_data.len() {
            let id = types.len() as u32 + 1;
            let truncated = BtfMapError::TruncatedType { id };
            let (name_off, info, size_or_type) = match (
                u32_at(types_data, pos),
                u32_at(types_data, pos + 4),
                u32_at(types_data, pos + 8),
            ) {
                (Some(a), Some(b), Some(c)) => (a, b, c),
                _ => return Err(truncated),
            };
            let kind = (info >> 24) & 0x1f;
            let vlen = (info & 0xffff) as usize;
            let extra_len = match kind {
                KIND_INT | KIND_VAR | KIND_DECL_TAG => 4,
                KIND_ARRAY => 12,
                KIND_STRUCT | KIND_UNION | KIND_DATASEC | KIND_ENUM64 => 12 * vlen,
                KIND_ENUM | KIND_FUNC_PROTO => 8 * vlen,
                KIND_PTR | KIND_FWD | KIND_TYPEDEF | KIND_VOLATILE | KIND_CONST | KIND_RESTRICT
                | KIND_FUNC | KIND_FLOAT | KIND_TYPE_TAG => 0,
                _ => return Err(BtfMapError::UnknownKind { id, kind }),
            };
            let start = pos + 12;
            let extra = types_data.get(start..start + extra_len).ok_or(truncated)?;
            types.push(Type {
                name_off,
                kind,
                vlen,
                size_or_type,
                extra,
            });
            pos = start + extra_len;
        }
        Ok(Btf { types, strings })
    }

    fn get(&self, id: u32) -> Result<Type<'a>, BtfMapError> {
        id.checked_sub(1)
            .and_then(|i| self.types.get(i as usize))
            .copied()
            .ok_or(BtfMapError::NoSuchType { id })
    }

    fn name(&self, off: u32) -> &'a str {
        let tail = self.strings.get(off as usize..).unwrap_or(&[]);
        let end = tail.iter().position(|&b| b == 0).unwrap_or(tail.len());
        std::str::from_utf8(&tail[..end]).unwrap_or("")
    }

    /// Follows typedef/const/volatile/restrict/type-tag links to the underlying type.
    fn skip_mods(&self, mut id: u32) -> Result<(u32, Type<'a>), BtfMapError> {
        for _ in 0..MAX_CHAIN {
            let t = self.get(id)?;
            match t.kind {
                KIND_TYPEDEF | KIND_VOLATILE | KIND_CONST | KIND_RESTRICT | KIND_TYPE_TAG => {
                    id = t.size_or_type
                }
                _ => return Ok((id, t)),
            }
        }
        Err(BtfMapError::Loop { id })
    }

    fn size_of(&self, id: u32, depth: usize) -> Result<u32, BtfMapError> {
        if depth > MAX_CHAIN {
            return Err(BtfMapError::Loop { id });
        }
        let (id, t) = self.skip_mods(id)?;
        match t.kind {
            KIND_INT | KIND_STRUCT | KIND_UNION | KIND_ENUM | KIND_ENUM64 | KIND_FLOAT
            | KIND_DATASEC => Ok(t.size_or_type),
            KIND_PTR => Ok(8),
            KIND_ARRAY => {
                let elem = u32_at(t.extra, 0).ok_or(BtfMapError::TruncatedType { id })?;
                let n = u32_at(t.extra, 8).ok_or(BtfMapError::TruncatedType { id })?;
                let elem_size = self.size_of(elem, depth + 1)?;
                elem_size.checked_mul(n).ok_or(BtfMapError::Unsized { id })
            }
            _ => Err(BtfMapError::Unsized { id }),
        }
    }

    /// `int (*)[N]` → N.
    fn uint_field(&self, member_type: u32) -> Result<u32, BtfMapError> {
        let (id, ptr) = self.skip_mods(member_type)?;
        if ptr.kind != KIND_PTR {
            return Err(BtfMapError::Unsized { id });
        }
        let (id, arr) = self.skip_mods(ptr.size_or_type)?;
        if arr.kind != KIND_ARRAY {
            return Err(BtfMapError::Unsized { id });
        }
        u32_at(arr.extra, 8).ok_or(BtfMapError::TruncatedType { id })
    }

    /// `T *` → sizeof(T).
    fn pointee_size(&self, member_type: u32) -> Result<u32, BtfMapError> {
        let (id, ptr) = self.skip_mods(member_type)?;
        if ptr.kind != KIND_PTR {
            return Err(BtfMapError::Unsized { id });
        }
        self.size_of(ptr.size_or_type, 0)
    }

    fn map_def(&self, name: &str, struct_id: u32) -> Result<MapDef, BtfMapError> {
        let (_, st) = self.skip_mods(struct_id)?;
        let mut def = MapDef {
            name: name.to_string(),
            map_type: 0,
            key_size: 0,
            value_size: 0,
            max_entries: 0,
            flags: 0,
        };
        if st.kind != KIND_STRUCT {
            return Ok(def);
        }
        for i in 0..st.vlen {
            let (Some(name_off), Some(ty)) =
                (u32_at(st.extra, 12 * i), u32_at(st.extra, 12 * i + 4))
            else {
                break;
            };
            match self.name(name_off) {
                "type" => def.map_type = self.uint_field(ty)?,
                "max_entries" => def.max_entries = self.uint_field(ty)?,
                "map_flags" => def.flags = self.uint_field(ty)?,
                "key_size" => def.key_size = self.uint_field(ty)?,
                "value_size" => def.value_size = self.uint_field(ty)?,
                "key" => def.key_size = self.pointee_size(ty)?,
                "value" => def.value_size = self.pointee_size(ty)?,
                _ => {}
            }
        }
        Ok(def)
    }
}

/// Every map of the `.maps` DATASEC, in section order; empty when there is none.
pub fn map_shapes(btf: &[u8]) -> Result<Vec<MapDef>, BtfMapError> {
    let btf = Btf::parse(btf)?;
    let mut maps = Vec::new();
    for t in &btf.types {
        if t.kind != KIND_DATASEC || btf.name(t.name_off) != ".maps" {
            continue;
        }
        for i in 0..t.vlen {
            let Some(var_id) = u32_at(t.extra, 12 * i) else {
                break;
            };
            let var = btf.get(var_id)?;
            if var.kind != KIND_VAR {
                continue;
            }
            maps.push(btf.map_def(btf.name(var.name_off), var.size_or_type)?);
        }
    }
    Ok(maps)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Builds a BTF blob from (name, info, size_or_type, extra words) records.
    fn blob(types: &[(u32, u32, u32, &[u32])], strings: &[u8]) -> Vec<u8> {
        let mut t = Vec::new();
        for (name, info, sot, extra) in types {
            for w in [*name, *info, *sot].iter().chain(extra.iter()) {
                t.extend_from_slice(&w.to_le_bytes());
            }
        }
        let mut b = Vec::new();
        b.extend_from_slice(&BTF_MAGIC.to_le_bytes());
        b.extend_from_slice(&[1, 0]);
        for w in [
            24u32,
            0,
            t.len() as u32,
            t.len() as u32,
            strings.len() as u32,
        ] {
            b.extend_from_slice(&w.to_le_bytes());
        }
        b.extend_from_slice(&t);
        b.extend_from_slice(strings);
        b
    }

    fn info(kind: u32, vlen: u32) -> u32 {
        (kind << 24) | vlen
    }

    #[test]
    fn reads_uint_and_type_members_of_a_maps_datasec() {
        // strings: 0 "", 1 "int", 5 "type", 10 "key", 14 "value", 20 "max_entries",
        // 32 "counts", 39 ".maps", 45 "__u64"
        let strings = b"\0int\0type\0key\0value\0max_entries\0counts\0.maps\0__u64\0";
        let types: &[(u32, u32, u32, &[u32])] = &[
            (1, info(KIND_INT, 0), 4, &[32]),           // 1 int
            (0, info(KIND_ARRAY, 0), 0, &[1, 1, 1]),    // 2 int[1] (BPF_MAP_TYPE_HASH)
            (0, info(KIND_PTR, 0), 2, &[]),             // 3 int (*)[1]
            (0, info(KIND_PTR, 0), 1, &[]),             // 4 int *
            (45, info(KIND_INT, 0), 8, &[64]),          // 5 __u64
            (45, info(KIND_TYPEDEF, 0), 5, &[]),        // 6 typedef
            (0, info(KIND_PTR, 0), 6, &[]),             // 7 __u64 *
            (0, info(KIND_ARRAY, 0), 1, &[1, 1, 1024]), // 8 int[1024]
            (0, info(KIND_PTR, 0), 8, &[]),             // 9 int (*)[1024]
            (
                0,
                info(KIND_STRUCT, 4),
                32,
                &[5, 3, 0, 10, 4, 64, 14, 7, 128, 20, 9, 192],
            ), // 10 the anonymous map struct
            (32, info(KIND_VAR, 0), 10, &[1]),          // 11 counts
            (39, info(KIND_DATASEC, 1), 32, &[11, 0, 32]), // 12 .maps
        ];
        let maps = map_shapes(&blob(types, strings)).unwrap();
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
        assert_eq!(map_shapes(&[]), Err(BtfMapError::BadHeader));
        assert_eq!(
            map_shapes(&[0, 0, 1, 0]),
            Err(BtfMapError::BadMagic { magic: 0 })
        );
        // typedef #1 -> #1
        let looped = blob(&[(0, info(KIND_TYPEDEF, 0), 1, &[])], b"\0");
        let btf = Btf::parse(&looped).unwrap();
        assert_eq!(btf.size_of(1, 0), Err(BtfMapError::Loop { id: 1 }));
        for cut in 0..looped.len() {
            let _ = map_shapes(&looped[..cut]);
        }
    }
}
