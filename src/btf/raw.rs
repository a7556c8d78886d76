//! The on-disk BTF layout (kernel `include/uapi/linux/btf.h`, `Documentation/bpf/btf.rst`):
//! header, kind numbers, per-kind trailing record sizes, and bounds-checked little-endian reads.
//! Input: raw bytes. Output: numbers. Reads past the end yield 0 instead of panicking; callers
//! that need certainty check lengths first (the parser validates every record once).

use super::error::BtfError;

pub const MAGIC: u16 = 0xeb9f;
pub const HEADER_LEN: usize = 24;
/// Size of `struct btf_type`: name_off, info, size/type.
pub const TYPE_LEN: usize = 12;

/// A BTF type kind (`BTF_KIND_*`). Id 0 is `void` and has no kind of its own.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
#[repr(u8)]
pub enum Kind {
    #[doc(alias = "BTF_KIND_INT")]
    Int = 1,
    #[doc(alias = "BTF_KIND_PTR")]
    Ptr = 2,
    #[doc(alias = "BTF_KIND_ARRAY")]
    Array = 3,
    #[doc(alias = "BTF_KIND_STRUCT")]
    Struct = 4,
    #[doc(alias = "BTF_KIND_UNION")]
    Union = 5,
    #[doc(alias = "BTF_KIND_ENUM")]
    Enum = 6,
    #[doc(alias = "BTF_KIND_FWD")]
    Fwd = 7,
    #[doc(alias = "BTF_KIND_TYPEDEF")]
    Typedef = 8,
    #[doc(alias = "BTF_KIND_VOLATILE")]
    Volatile = 9,
    #[doc(alias = "BTF_KIND_CONST")]
    Const = 10,
    #[doc(alias = "BTF_KIND_RESTRICT")]
    Restrict = 11,
    #[doc(alias = "BTF_KIND_FUNC")]
    Func = 12,
    #[doc(alias = "BTF_KIND_FUNC_PROTO")]
    FuncProto = 13,
    #[doc(alias = "BTF_KIND_VAR")]
    Var = 14,
    #[doc(alias = "BTF_KIND_DATASEC")]
    Datasec = 15,
    #[doc(alias = "BTF_KIND_FLOAT")]
    Float = 16,
    #[doc(alias = "BTF_KIND_DECL_TAG")]
    DeclTag = 17,
    #[doc(alias = "BTF_KIND_TYPE_TAG")]
    TypeTag = 18,
    #[doc(alias = "BTF_KIND_ENUM64")]
    Enum64 = 19,
}

impl Kind {
    pub fn from_u32(k: u32) -> Option<Kind> {
        use Kind::*;
        Some(match k {
            1 => Int,
            2 => Ptr,
            3 => Array,
            4 => Struct,
            5 => Union,
            6 => Enum,
            7 => Fwd,
            8 => Typedef,
            9 => Volatile,
            10 => Const,
            11 => Restrict,
            12 => Func,
            13 => FuncProto,
            14 => Var,
            15 => Datasec,
            16 => Float,
            17 => DeclTag,
            18 => TypeTag,
            19 => Enum64,
            _ => return None,
        })
    }

    /// The kind's name as bpftool prints it.
    pub fn name(self) -> &'static str {
        use Kind::*;
        match self {
            Int => "INT",
            Ptr => "PTR",
            Array => "ARRAY",
            Struct => "STRUCT",
            Union => "UNION",
            Enum => "ENUM",
            Fwd => "FWD",
            Typedef => "TYPEDEF",
            Volatile => "VOLATILE",
            Const => "CONST",
            Restrict => "RESTRICT",
            Func => "FUNC",
            FuncProto => "FUNC_PROTO",
            Var => "VAR",
            Datasec => "DATASEC",
            Float => "FLOAT",
            DeclTag => "DECL_TAG",
            TypeTag => "TYPE_TAG",
            Enum64 => "ENUM64",
        }
    }

    /// Bytes that follow the 12-byte `btf_type` for a record of this kind with `vlen` entries.
    pub fn trailing_len(self, vlen: usize) -> usize {
        use Kind::*;
        match self {
            Int | Var | DeclTag => 4,
            Array => 12,
            Struct | Union | Datasec | Enum64 => 12 * vlen,
            Enum | FuncProto => 8 * vlen,
            Ptr | Fwd | Typedef | Volatile | Const | Restrict | Func | Float | TypeTag => 0,
        }
    }
}

/// Little-endian u32 at `off`; 0 when out of bounds (callers validated lengths beforehand).
#[inline(always)]
pub fn u32_at(b: &[u8], off: usize) -> u32 {
    match b.get(off..off.wrapping_add(4)) {
        Some(s) => u32::from_le_bytes([s[0], s[1], s[2], s[3]]),
        None => 0,
    }
}

#[inline(always)]
pub fn info_kind(info: u32) -> u32 {
    (info >> 24) & 0x1f
}
#[inline(always)]
pub fn info_vlen(info: u32) -> usize {
    (info & 0xffff) as usize
}
#[inline(always)]
pub fn info_kflag(info: u32) -> bool {
    info >> 31 != 0
}

/// The parsed header: where the type and string sections lie, as absolute byte ranges.
#[derive(Clone, Copy, Debug)]
pub struct Header {
    pub types: (usize, usize),
    pub strs: (usize, usize),
}

impl Header {
    pub fn parse(b: &[u8]) -> Result<Header, BtfError> {
        if b.len() < HEADER_LEN {
            return Err(BtfError::TooShort {
                len: b.len(),
                needed: HEADER_LEN,
            });
        }
        let magic = u16::from_le_bytes([b[0], b[1]]);
        if magic != MAGIC {
            if magic == MAGIC.swap_bytes() {
                return Err(BtfError::BigEndian);
            }
            return Err(BtfError::BadMagic { magic });
        }
        if b[2] != 1 {
            return Err(BtfError::UnsupportedVersion { version: b[2] });
        }
        let hdr_len = u32_at(b, 4) as u64;
        if hdr_len < HEADER_LEN as u64 || hdr_len > b.len() as u64 {
            return Err(BtfError::SectionOutOfBounds {
                section: "header",
                start: 0,
                len: hdr_len,
                total: b.len(),
            });
        }
        let section = |name, off_at, len_at| -> Result<(usize, usize), BtfError> {
            let start = hdr_len + u32_at(b, off_at) as u64;
            let len = u32_at(b, len_at) as u64;
            if start + len > b.len() as u64 {
                return Err(BtfError::SectionOutOfBounds {
                    section: name,
                    start,
                    len,
                    total: b.len(),
                });
            }
            Ok((start as usize, (start + len) as usize))
        };
        let types = section("type", 8, 12)?;
        let strs = section("string", 16, 20)?;
        if u32_at(b, 8) % 4 != 0 {
            return Err(BtfError::Misaligned {
                offset: u32_at(b, 8),
            });
        }
        Ok(Header { types, strs })
    }
}
