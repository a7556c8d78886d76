//! Typed, zero-copy views of BTF records: [`Type`] with its [`TypeKind`], and iterators over
//! members, enumerators, parameters and datasec entries that decode on the fly from the blob.
//! Input: a [`Btf`] and a type id. Output: borrowed views; names are `&str` into the blob.

use super::raw::{info_kflag, info_kind, info_vlen, u32_at, Kind, TYPE_LEN};
use super::{Btf, BtfError};

/// One BTF type: its id, its name ("" when anonymous) and what it is.
#[derive(Clone, Copy, Debug)]
pub struct Type<'a> {
    pub id: u32,
    pub name: &'a str,
    pub kind: TypeKind<'a>,
}

/// What a type is, with its kind-specific data decoded.
#[derive(Clone, Copy, Debug)]
pub enum TypeKind<'a> {
    /// Type id 0.
    Void,
    Int(IntInfo),
    /// A pointer to the given type id.
    Ptr(u32),
    Array(ArrayInfo),
    Struct(Members<'a>),
    Union(Members<'a>),
    Enum(Enumerators<'a>),
    Enum64(Enumerators<'a>),
    /// A forward declaration of a struct (or union when `union` is set).
    Fwd {
        union: bool,
    },
    Typedef(u32),
    Volatile(u32),
    Const(u32),
    Restrict(u32),
    /// A type tag (e.g. `user`, `rcu`, `percpu`: the name is the tag) on the given type.
    TypeTag(u32),
    /// A function: its prototype's id and its linkage.
    Func {
        proto: u32,
        linkage: Linkage,
    },
    FuncProto(FuncProto<'a>),
    /// A variable: its type and its linkage (0 static, 1 global, 2 extern).
    Var {
        type_id: u32,
        linkage: u32,
    },
    Datasec(Datasec<'a>),
    Float {
        size: u32,
    },
    /// A declaration tag (the name is the tag) on `target`, or on its member/parameter number
    /// `component` (-1 for the target itself).
    DeclTag {
        target: u32,
        component: i32,
    },
}

impl TypeKind<'_> {
    /// The record's kind; `None` for void.
    pub fn kind(&self) -> Option<Kind> {
        Some(match self {
            TypeKind::Void => return None,
            TypeKind::Int(_) => Kind::Int,
            TypeKind::Ptr(_) => Kind::Ptr,
            TypeKind::Array(_) => Kind::Array,
            TypeKind::Struct(_) => Kind::Struct,
            TypeKind::Union(_) => Kind::Union,
            TypeKind::Enum(_) => Kind::Enum,
            TypeKind::Enum64(_) => Kind::Enum64,
            TypeKind::Fwd { .. } => Kind::Fwd,
            TypeKind::Typedef(_) => Kind::Typedef,
            TypeKind::Volatile(_) => Kind::Volatile,
            TypeKind::Const(_) => Kind::Const,
            TypeKind::Restrict(_) => Kind::Restrict,
            TypeKind::TypeTag(_) => Kind::TypeTag,
            TypeKind::Func { .. } => Kind::Func,
            TypeKind::FuncProto(_) => Kind::FuncProto,
            TypeKind::Var { .. } => Kind::Var,
            TypeKind::Datasec(_) => Kind::Datasec,
            TypeKind::Float { .. } => Kind::Float,
            TypeKind::DeclTag { .. } => Kind::DeclTag,
        })
    }

    /// The kind's name for messages ("void" for id 0).
    pub fn kind_name(&self) -> &'static str {
        self.kind().map_or("void", Kind::name)
    }
}

/// `BTF_KIND_INT` details.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct IntInfo {
    /// Size in bytes.
    pub size: u32,
    /// Number of value bits (≤ size × 8).
    pub bits: u8,
    /// Bit offset of the value inside the storage (legacy bitfields).
    pub offset: u8,
    pub signed: bool,
    pub char: bool,
    pub bool: bool,
}

/// `BTF_KIND_ARRAY` details.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct ArrayInfo {
    pub elem: u32,
    pub index: u32,
    pub len: u32,
}

/// Function linkage (`enum btf_func_linkage`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Linkage {
    Static,
    Global,
    Extern,
    Other(u16),
}

/// Members of a struct or union.
#[derive(Clone, Copy)]
pub struct Members<'a> {
    btf: &'a Btf,
    /// Size of the struct or union in bytes.
    pub size: u32,
    kflag: bool,
    raw: &'a [u8],
}

impl std::fmt::Debug for Members<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// One struct/union member. `bit_offset` is from the start of the enclosing struct;
/// `bitfield_size` is 0 for ordinary members.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Member<'a> {
    pub name: &'a str,
    pub type_id: u32,
    pub bit_offset: u32,
    pub bitfield_size: u32,
}

impl<'a> Members<'a> {
    pub fn len(&self) -> usize {
        self.raw.len() / 12
    }
    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }
    /// Member `i`, with bitfield geometry normalised: with kind_flag the offset word packs
    /// `size << 24 | offset`; without it, a bitfield is an INT member whose `bits`/`offset`
    /// say so (the pre-kind_flag encoding).
    pub fn get(&self, i: usize) -> Option<Member<'a>> {
        let o = i.checked_mul(12)?;
        if o + 12 > self.raw.len() {
            return None;
        }
        let name = self.btf.str_at(u32_at(self.raw, o));
        let type_id = u32_at(self.raw, o + 4);
        let word = u32_at(self.raw, o + 8);
        let (mut bit_offset, mut bitfield_size) = if self.kflag {
            (word & 0xff_ffff, word >> 24)
        } else {
            (word, 0)
        };
        if !self.kflag {
            if let Ok(Type {
                kind: TypeKind::Int(int),
                ..
            }) = self.btf.type_by_id(type_id)
            {
                if int.offset != 0 || u32::from(int.bits) != int.size.saturating_mul(8) {
                    bitfield_size = u32::from(int.bits);
                    bit_offset = bit_offset.saturating_add(u32::from(int.offset));
                }
            }
        }
        Some(Member {
            name,
            type_id,
            bit_offset,
            bitfield_size,
        })
    }
    pub fn iter(&self) -> impl Iterator<Item = Member<'a>> + 'a {
        let this = *self;
        (0..this.len()).filter_map(move |i| this.get(i))
    }
}

/// Values of an enum (32- or 64-bit).
#[derive(Clone, Copy)]
pub struct Enumerators<'a> {
    btf: &'a Btf,
    /// Size of the enum in bytes.
    pub size: u32,
    /// Whether values are signed (kind_flag).
    pub signed: bool,
    is64: bool,
    raw: &'a [u8],
}

impl std::fmt::Debug for Enumerators<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.iter()).finish()
    }
}

/// One enumerator: name and value (exact for both signed and unsigned 64-bit enums).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Enumerator<'a> {
    pub name: &'a str,
    pub value: i128,
}

impl<'a> Enumerators<'a> {
    fn stride(&self) -> usize {
        if self.is64 {
            12
        } else {
            8
        }
    }
    pub fn len(&self) -> usize {
        self.raw.len() / self.stride()
    }
    pub fn is_empty(&self) -> bool {
        self.raw.is_empty()
    }
    pub fn iter(&self) -> impl Iterator<Item = Enumerator<'a>> + 'a {
        let this = *self;
        (0..this.len()).map(move |i| {
            let o = i * this.stride();
            let name = this.btf.str_at(u32_at(this.raw, o));
            let lo = u32_at(this.raw, o + 4);
            let value = if this.is64 {
                let v = (u64::from(u32_at(this.raw, o + 8)) << 32) | u64::from(lo);
                if this.signed {
                    i128::from(v as i64)
                } else {
                    i128::from(v)
                }
            } else if this.signed {
                i128::from(lo as i32)
            } else {
                i128::from(lo)
            };
            Enumerator { name, value }
        })
    }
    /// The value of the enumerator called `name`.
    pub fn value_of(&self, name: &str) -> Option<i128> {
        self.iter().find(|e| e.name == name).map(|e| e.value)
    }
}

/// A function prototype: return type and parameters.
#[derive(Clone, Copy)]
pub struct FuncProto<'a> {
    btf: &'a Btf,
    /// The FUNC_PROTO's own type id.
    pub id: u32,
    /// Return type id (0 = void).
    pub ret: u32,
    raw: &'a [u8],
}

impl std::fmt::Debug for FuncProto<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("FuncProto")
            .field("id", &self.id)
            .field("ret", &self.ret)
            .field("params", &self.params().collect::<Vec<_>>())
            .finish()
    }
}

/// One parameter: its name ("" when BTF has none) and type id. A variadic `...` is the
/// parameter with type id 0 and no name, and is never yielded by [`FuncProto::params`].
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Param<'a> {
    pub name: &'a str,
    pub type_id: u32,
}

impl<'a> FuncProto<'a> {
    fn raw_len(&self) -> usize {
        self.raw.len() / 8
    }
    /// Whether the prototype ends in `...`.
    pub fn is_variadic(&self) -> bool {
        let n = self.raw_len();
        n > 0 && u32_at(self.raw, (n - 1) * 8 + 4) == 0
    }
    /// Number of named/typed parameters (without a trailing `...`).
    pub fn len(&self) -> usize {
        self.raw_len() - usize::from(self.is_variadic())
    }
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }
    /// Parameter `i` (0-based).
    pub fn param(&self, i: usize) -> Option<Param<'a>> {
        if i >= self.len() {
            return None;
        }
        Some(Param {
            name: self.btf.str_at(u32_at(self.raw, i * 8)),
            type_id: u32_at(self.raw, i * 8 + 4),
        })
    }
    pub fn params(&self) -> impl Iterator<Item = Param<'a>> + 'a {
        let this = *self;
        (0..this.len()).filter_map(move |i| this.param(i))
    }
    /// The parameter called `name` and its position.
    pub fn find_param(&self, name: &str) -> Option<(usize, Param<'a>)> {
        self.params().enumerate().find(|(_, p)| p.name == name)
    }
}

/// A data section's variables.
#[derive(Clone, Copy)]
pub struct Datasec<'a> {
    /// Section size in bytes.
    pub size: u32,
    raw: &'a [u8],
}

impl std::fmt::Debug for Datasec<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_list().entries(self.entries()).finish()
    }
}

/// One variable in a data section (`struct btf_var_secinfo`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct DatasecEntry {
    pub type_id: u32,
    pub offset: u32,
    pub size: u32,
}

impl Datasec<'_> {
    pub fn entries(&self) -> impl Iterator<Item = DatasecEntry> + '_ {
        self.raw.chunks_exact(12).map(|c| DatasecEntry {
            type_id: u32_at(c, 0),
            offset: u32_at(c, 4),
            size: u32_at(c, 8),
        })
    }
}

impl Btf {
    /// The type with id `id` (0 is void), own or from the base.
    pub fn type_by_id(&self, id: u32) -> Result<Type<'_>, BtfError> {
        if id == 0 {
            return Ok(Type {
                id: 0,
                name: "void",
                kind: TypeKind::Void,
            });
        }
        if id < self.first_id {
            return match &self.base {
                Some(base) => base.type_by_id(id),
                None => Err(self.bad_id(id)),
            };
        }
        let off = *self
            .offsets
            .get((id - self.first_id) as usize)
            .ok_or_else(|| self.bad_id(id))? as usize;
        Ok(self.decode(id, off))
    }

    fn bad_id(&self, id: u32) -> BtfError {
        BtfError::BadTypeId {
            id,
            last: self.last_id(),
        }
    }

    /// Decodes the (validated) record at absolute offset `off`.
    fn decode(&self, id: u32, off: usize) -> Type<'_> {
        let b: &[u8] = &self.bytes;
        let name = self.str_at(u32_at(b, off));
        let info = u32_at(b, off + 4);
        let st = u32_at(b, off + 8);
        let vlen = info_vlen(info);
        let kflag = info_kflag(info);
        let data = off + TYPE_LEN;
        // `index_types` checked that the record's trailing data is in bounds, and the kind is
        // known; `Void` is an unreachable fallback that keeps this function total.
        let Some(kind) = Kind::from_u32(info_kind(info)) else {
            return Type {
                id,
                name,
                kind: TypeKind::Void,
            };
        };
        let tail = b
            .get(data..data + kind.trailing_len(vlen))
            .unwrap_or_default();
        let kind = match kind {
            Kind::Int => {
                let enc = u32_at(b, data);
                TypeKind::Int(IntInfo {
                    size: st,
                    bits: (enc & 0xff) as u8,
                    offset: ((enc >> 16) & 0xff) as u8,
                    signed: enc & (1 << 24) != 0,
                    char: enc & (2 << 24) != 0,
                    bool: enc & (4 << 24) != 0,
                })
            }
            Kind::Ptr => TypeKind::Ptr(st),
            Kind::Array => TypeKind::Array(ArrayInfo {
                elem: u32_at(b, data),
                index: u32_at(b, data + 4),
                len: u32_at(b, data + 8),
            }),
            Kind::Struct | Kind::Union => {
                let m = Members {
                    btf: self,
                    size: st,
                    kflag,
                    raw: tail,
                };
                if kind == Kind::Struct {
                    TypeKind::Struct(m)
                } else {
                    TypeKind::Union(m)
                }
            }
            Kind::Enum | Kind::Enum64 => {
                let e = Enumerators {
                    btf: self,
                    size: st,
                    signed: kflag,
                    is64: kind == Kind::Enum64,
                    raw: tail,
                };
                if kind == Kind::Enum {
                    TypeKind::Enum(e)
                } else {
                    TypeKind::Enum64(e)
                }
            }
            Kind::Fwd => TypeKind::Fwd { union: kflag },
            Kind::Typedef => TypeKind::Typedef(st),
            Kind::Volatile => TypeKind::Volatile(st),
            Kind::Const => TypeKind::Const(st),
            Kind::Restrict => TypeKind::Restrict(st),
            Kind::TypeTag => TypeKind::TypeTag(st),
            Kind::Func => TypeKind::Func {
                proto: st,
                linkage: match vlen {
                    0 => Linkage::Static,
                    1 => Linkage::Global,
                    2 => Linkage::Extern,
                    n => Linkage::Other(n as u16),
                },
            },
            Kind::FuncProto => TypeKind::FuncProto(FuncProto {
                btf: self,
                id,
                ret: st,
                raw: tail,
            }),
            Kind::Var => TypeKind::Var {
                type_id: st,
                linkage: u32_at(b, data),
            },
            Kind::Datasec => TypeKind::Datasec(Datasec {
                size: st,
                raw: tail,
            }),
            Kind::Float => TypeKind::Float { size: st },
            Kind::DeclTag => TypeKind::DeclTag {
                target: st,
                component: u32_at(b, data) as i32,
            },
        };
        Type { id, name, kind }
    }

    /// This object's own types, in id order.
    pub fn types(&self) -> impl Iterator<Item = Type<'_>> + '_ {
        self.offsets
            .iter()
            .enumerate()
            .map(move |(i, &off)| self.decode(self.first_id + i as u32, off as usize))
    }
}
