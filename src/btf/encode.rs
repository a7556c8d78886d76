//! A small BTF encoder: builds BTF blobs type by type, for tests (synthetic fixtures, malformed
//! inputs) and for programs and maps that strobe loads with BPF_BTF_LOAD.
//! Input: `add_*` calls, each returning the new type's id. Output: the little-endian blob from
//! [`BtfBuilder::finish`], in the layout `Btf::parse` reads (`Documentation/bpf/btf.rst`).
//! Strings are deduplicated. Limits the format imposes (vlen ≤ 65535, 24-bit bit offsets with
//! bitfields) are reported by `finish` rather than silently truncated.

use std::collections::HashMap;

use super::raw::{Kind, HEADER_LEN, MAGIC};
use super::types::{IntInfo, Linkage};
use super::Btf;

/// Why a builder cannot produce a valid blob.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum EncodeError {
    #[error("type `{name}` has {count} entries; BTF allows at most 65535")]
    TooManyEntries { name: String, count: usize },
    #[error("member `{member}` has bit offset {bit_offset}, over BTF's 24-bit limit for bitfield structs")]
    BitOffsetTooLarge { member: String, bit_offset: u32 },
    #[error("BTF blob would exceed 4 GiB")]
    TooLarge,
}

/// One struct/union member for [`BtfBuilder::add_struct`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MemberDef<'a> {
    pub name: &'a str,
    pub type_id: u32,
    pub bit_offset: u32,
    /// Bitfield width; 0 for ordinary members.
    pub bitfield_size: u32,
}

impl<'a> MemberDef<'a> {
    /// An ordinary member at `byte_offset`.
    pub fn new(name: &'a str, type_id: u32, byte_offset: u32) -> Self {
        MemberDef {
            name,
            type_id,
            bit_offset: byte_offset * 8,
            bitfield_size: 0,
        }
    }
    /// A bitfield of `bits` bits at `bit_offset`.
    pub fn bitfield(name: &'a str, type_id: u32, bit_offset: u32, bits: u32) -> Self {
        MemberDef {
            name,
            type_id,
            bit_offset,
            bitfield_size: bits,
        }
    }
}

/// Builds a BTF blob.
pub struct BtfBuilder {
    types: Vec<u8>,
    strs: Vec<u8>,
    str_ids: HashMap<String, u32>,
    next_id: u32,
    str_base: u32,
    error: Option<EncodeError>,
}

impl Default for BtfBuilder {
    fn default() -> Self {
        BtfBuilder::new()
    }
}

impl BtfBuilder {
    /// A builder for standalone BTF: ids start at 1, string offset 0 is "".
    pub fn new() -> BtfBuilder {
        let mut str_ids = HashMap::new();
        str_ids.insert(String::new(), 0);
        BtfBuilder {
            types: Vec::new(),
            strs: vec![0],
            str_ids,
            next_id: 1,
            str_base: 0,
            error: None,
        }
    }

    /// A builder for split BTF over `base`: ids and string offsets continue the base's.
    /// Strings are not shared with the base (the kernel accepts duplicates).
    pub fn new_split(base: &Btf) -> BtfBuilder {
        BtfBuilder {
            types: Vec::new(),
            strs: Vec::new(),
            str_ids: HashMap::new(),
            next_id: base.last_id() + 1,
            str_base: base.str_len(),
            error: None,
        }
    }

    /// The id the next `add_*` call will return.
    pub fn next_id(&self) -> u32 {
        self.next_id
    }

    /// Interns `s` and returns its offset in the (logical) string section.
    pub fn add_string(&mut self, s: &str) -> u32 {
        if let Some(&off) = self.str_ids.get(s) {
            return off;
        }
        let off = self.str_base + self.strs.len() as u32;
        self.strs.extend_from_slice(s.as_bytes());
        self.strs.push(0);
        self.str_ids.insert(s.to_string(), off);
        off
    }

    fn fail(&mut self, e: EncodeError) {
        self.error.get_or_insert(e);
    }

    /// Appends a record with explicit fields (tests use it to craft unusual or malformed
    /// records). `info` is the full `btf_type.info` word.
    pub fn add_raw(&mut self, name: &str, info: u32, size_or_type: u32, tail: &[u8]) -> u32 {
        let name_off = self.add_string(name);
        self.types.extend_from_slice(&name_off.to_le_bytes());
        self.types.extend_from_slice(&info.to_le_bytes());
        self.types.extend_from_slice(&size_or_type.to_le_bytes());
        self.types.extend_from_slice(tail);
        let id = self.next_id;
        self.next_id += 1;
        id
    }

    fn add(
        &mut self,
        name: &str,
        kind: Kind,
        vlen: usize,
        kflag: bool,
        st: u32,
        tail: &[u8],
    ) -> u32 {
        if vlen > 0xffff {
            self.fail(EncodeError::TooManyEntries {
                name: name.to_string(),
                count: vlen,
            });
        }
        let info = ((kflag as u32) << 31) | ((kind as u32) << 24) | (vlen as u32 & 0xffff);
        self.add_raw(name, info, st, tail)
    }

    /// An integer type, e.g. `add_int("int", 4, true)`.
    pub fn add_int(&mut self, name: &str, size: u32, signed: bool) -> u32 {
        self.add_int_info(
            name,
            IntInfo {
                size,
                bits: (size * 8).min(255) as u8,
                offset: 0,
                signed,
                char: false,
                bool: false,
            },
        )
    }

    /// An integer type with full encoding details.
    pub fn add_int_info(&mut self, name: &str, i: IntInfo) -> u32 {
        let enc = (u32::from(i.signed) | (u32::from(i.char) << 1) | (u32::from(i.bool) << 2)) << 24
            | (u32::from(i.offset) << 16)
            | u32::from(i.bits);
        self.add(name, Kind::Int, 0, false, i.size, &enc.to_le_bytes())
    }

    pub fn add_ptr(&mut self, target: u32) -> u32 {
        self.add("", Kind::Ptr, 0, false, target, &[])
    }

    pub fn add_array(&mut self, elem: u32, index: u32, len: u32) -> u32 {
        let mut tail = Vec::with_capacity(12);
        for v in [elem, index, len] {
            tail.extend_from_slice(&v.to_le_bytes());
        }
        self.add("", Kind::Array, 0, false, 0, &tail)
    }

    fn composite(&mut self, kind: Kind, name: &str, size: u32, members: &[MemberDef]) -> u32 {
        let kflag = members.iter().any(|m| m.bitfield_size != 0);
        let mut tail = Vec::with_capacity(12 * members.len());
        for m in members {
            let word = if kflag {
                if m.bit_offset > 0xff_ffff || m.bitfield_size > 0xff {
                    self.fail(EncodeError::BitOffsetTooLarge {
                        member: m.name.to_string(),
                        bit_offset: m.bit_offset,
                    });
                }
                (m.bitfield_size << 24) | (m.bit_offset & 0xff_ffff)
            } else {
                m.bit_offset
            };
            let n = self.add_string(m.name);
            for v in [n, m.type_id, word] {
                tail.extend_from_slice(&v.to_le_bytes());
            }
        }
        self.add(name, kind, members.len(), kflag, size, &tail)
    }

    /// A struct; bitfield members switch the record to the kind_flag encoding.
    pub fn add_struct(&mut self, name: &str, size: u32, members: &[MemberDef]) -> u32 {
        self.composite(Kind::Struct, name, size, members)
    }

    pub fn add_union(&mut self, name: &str, size: u32, members: &[MemberDef]) -> u32 {
        self.composite(Kind::Union, name, size, members)
    }

    /// A 32-bit-valued enum of `size` bytes.
    pub fn add_enum(&mut self, name: &str, size: u32, signed: bool, values: &[(&str, i32)]) -> u32 {
        let mut tail = Vec::with_capacity(8 * values.len());
        for (n, v) in values {
            let off = self.add_string(n);
            tail.extend_from_slice(&off.to_le_bytes());
            tail.extend_from_slice(&v.to_le_bytes());
        }
        self.add(name, Kind::Enum, values.len(), signed, size, &tail)
    }

    /// A 64-bit-valued enum.
    pub fn add_enum64(
        &mut self,
        name: &str,
        size: u32,
        signed: bool,
        values: &[(&str, u64)],
    ) -> u32 {
        let mut tail = Vec::with_capacity(12 * values.len());
        for (n, v) in values {
            let off = self.add_string(n);
            tail.extend_from_slice(&off.to_le_bytes());
            tail.extend_from_slice(&(*v as u32).to_le_bytes());
            tail.extend_from_slice(&((*v >> 32) as u32).to_le_bytes());
        }
        self.add(name, Kind::Enum64, values.len(), signed, size, &tail)
    }

    pub fn add_fwd(&mut self, name: &str, union: bool) -> u32 {
        self.add(name, Kind::Fwd, 0, union, 0, &[])
    }

    pub fn add_typedef(&mut self, name: &str, target: u32) -> u32 {
        self.add(name, Kind::Typedef, 0, false, target, &[])
    }

    pub fn add_const(&mut self, target: u32) -> u32 {
        self.add("", Kind::Const, 0, false, target, &[])
    }

    pub fn add_volatile(&mut self, target: u32) -> u32 {
        self.add("", Kind::Volatile, 0, false, target, &[])
    }

    pub fn add_restrict(&mut self, target: u32) -> u32 {
        self.add("", Kind::Restrict, 0, false, target, &[])
    }

    /// A type tag such as `user` on `target`.
    pub fn add_type_tag(&mut self, tag: &str, target: u32) -> u32 {
        self.add(tag, Kind::TypeTag, 0, false, target, &[])
    }

    /// A function prototype; a trailing `("", 0)` parameter marks `...`.
    pub fn add_func_proto(&mut self, ret: u32, params: &[(&str, u32)]) -> u32 {
        let mut tail = Vec::with_capacity(8 * params.len());
        for (n, t) in params {
            let off = self.add_string(n);
            tail.extend_from_slice(&off.to_le_bytes());
            tail.extend_from_slice(&t.to_le_bytes());
        }
        self.add("", Kind::FuncProto, params.len(), false, ret, &tail)
    }

    pub fn add_func(&mut self, name: &str, proto: u32, linkage: Linkage) -> u32 {
        let l = match linkage {
            Linkage::Static => 0,
            Linkage::Global => 1,
            Linkage::Extern => 2,
            Linkage::Other(n) => usize::from(n),
        };
        self.add(name, Kind::Func, l, false, proto, &[])
    }

    /// A variable; linkage 0 static, 1 global, 2 extern.
    pub fn add_var(&mut self, name: &str, type_id: u32, linkage: u32) -> u32 {
        self.add(name, Kind::Var, 0, false, type_id, &linkage.to_le_bytes())
    }

    /// A data section with (var type id, offset, size) entries.
    pub fn add_datasec(&mut self, name: &str, size: u32, entries: &[(u32, u32, u32)]) -> u32 {
        let mut tail = Vec::with_capacity(12 * entries.len());
        for (t, o, s) in entries {
            for v in [t, o, s] {
                tail.extend_from_slice(&v.to_le_bytes());
            }
        }
        self.add(name, Kind::Datasec, entries.len(), false, size, &tail)
    }

    pub fn add_float(&mut self, name: &str, size: u32) -> u32 {
        self.add(name, Kind::Float, 0, false, size, &[])
    }

    /// A declaration tag on `target` (component -1) or on its member/parameter `component`.
    pub fn add_decl_tag(&mut self, tag: &str, target: u32, component: i32) -> u32 {
        self.add(
            tag,
            Kind::DeclTag,
            0,
            false,
            target,
            &component.to_le_bytes(),
        )
    }

    /// The finished blob: header, type section, string section.
    pub fn finish(&self) -> Result<Vec<u8>, EncodeError> {
        if let Some(e) = &self.error {
            return Err(e.clone());
        }
        let tl = u32::try_from(self.types.len()).map_err(|_| EncodeError::TooLarge)?;
        let sl = u32::try_from(self.strs.len()).map_err(|_| EncodeError::TooLarge)?;
        let mut out = Vec::with_capacity(HEADER_LEN + self.types.len() + self.strs.len());
        out.extend_from_slice(&MAGIC.to_le_bytes());
        out.push(1); // version
        out.push(0); // flags
        for v in [HEADER_LEN as u32, 0, tl, tl, sl] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&self.types);
        out.extend_from_slice(&self.strs);
        Ok(out)
    }
}
