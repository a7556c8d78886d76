//! What the checker needs to know about a BTF type to give it a script type, and member access
//! the way bpftrace allows it (`.` and `->` both dereference a pointer to a struct).
//! Input: type ids. Output: [`TypeClass`] and [`MemberAccess`]; errors are [`BtfError`]s whose
//! `NotFound` names the member and the struct, for diagnostics.

use super::resolve::MemberRef;
use super::types::TypeKind;
use super::{Btf, BtfError};

/// A type reduced to what matters for values: typedefs and qualifiers removed.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TypeClass {
    Void,
    /// An integer (also `_Bool` with `bool` set, and `char` with `char` set).
    Int {
        size: u32,
        signed: bool,
        bool: bool,
        char: bool,
    },
    Enum {
        size: u32,
        signed: bool,
    },
    Float {
        size: u32,
    },
    /// A pointer to `target` (an unresolved id: print it, or classify it in turn).
    Pointer {
        target: u32,
    },
    Array {
        elem: u32,
        len: u32,
    },
    /// A struct or union (`id` is the resolved record's id).
    Record {
        id: u32,
        size: u32,
        union: bool,
    },
    /// A forward declaration: a struct/union whose layout BTF does not have.
    Opaque {
        union: bool,
    },
    /// A function or prototype (only meaningful behind a pointer).
    Function,
    /// Variables, data sections and tags: not value types.
    Other,
}

/// The result of `base.member` / `base->member`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemberAccess<'a> {
    /// The struct/union the member was found in (resolved id).
    pub record: u32,
    /// Whether `base` was a pointer that had to be dereferenced first.
    pub through_pointer: bool,
    pub member: MemberRef<'a>,
}

impl Btf {
    /// Classifies `id` after removing typedefs, qualifiers and type tags.
    pub fn classify(&self, id: u32) -> Result<TypeClass, BtfError> {
        let t = self.resolve(id)?;
        Ok(match t.kind {
            TypeKind::Void => TypeClass::Void,
            TypeKind::Int(i) => TypeClass::Int {
                size: i.size,
                signed: i.signed,
                bool: i.bool,
                char: i.char || (i.size == 1 && t.name.contains("char")),
            },
            TypeKind::Enum(e) | TypeKind::Enum64(e) => TypeClass::Enum {
                size: e.size,
                signed: e.signed,
            },
            TypeKind::Float { size } => TypeClass::Float { size },
            TypeKind::Ptr(target) => TypeClass::Pointer { target },
            TypeKind::Array(a) => TypeClass::Array {
                elem: a.elem,
                len: a.len,
            },
            TypeKind::Struct(m) => TypeClass::Record {
                id: t.id,
                size: m.size,
                union: false,
            },
            TypeKind::Union(m) => TypeClass::Record {
                id: t.id,
                size: m.size,
                union: true,
            },
            TypeKind::Fwd { union } => TypeClass::Opaque { union },
            TypeKind::Func { .. } | TypeKind::FuncProto(_) => TypeClass::Function,
            _ => TypeClass::Other,
        })
    }

    /// Whether `id` is a character array (`char comm[16]`) or a pointer to characters
    /// (`const char *`): the types bpftrace treats as strings when printed with `str()`.
    pub fn is_char_array_or_pointer(&self, id: u32) -> Result<bool, BtfError> {
        let inner = match self.classify(id)? {
            TypeClass::Array { elem, .. } => elem,
            TypeClass::Pointer { target } => target,
            _ => return Ok(false),
        };
        Ok(matches!(
            self.classify(inner)?,
            TypeClass::Int { char: true, .. }
        ))
    }

    /// Member access as bpftrace allows it: `base` may be a struct/union or a pointer to one
    /// (both `.` and `->` dereference), typedefs and qualifiers are looked through, and members
    /// of anonymous inner structs/unions are found. A missing member is
    /// [`BtfError::NoMember`] naming the struct (list candidates with [`Btf::member_names`]).
    pub fn access_member(&self, base: u32, name: &str) -> Result<MemberAccess<'_>, BtfError> {
        let (record, through_pointer) = match self.classify(base)? {
            TypeClass::Record { id, .. } => (id, false),
            TypeClass::Pointer { target } => match self.classify(target)? {
                TypeClass::Record { id, .. } => (id, true),
                _ => return Err(self.not_a_record(base)),
            },
            _ => return Err(self.not_a_record(base)),
        };
        match self.find_member(record, name)? {
            Some(member) => Ok(MemberAccess {
                record,
                through_pointer,
                member,
            }),
            None => Err(BtfError::NoMember {
                record: self.type_to_string(record),
                member: name.to_string(),
            }),
        }
    }

    fn not_a_record(&self, id: u32) -> BtfError {
        let found = self
            .resolve(id)
            .map_or("invalid type", |t| t.kind.kind_name());
        BtfError::UnexpectedKind {
            id,
            expected: "struct, union or pointer to one",
            found,
        }
    }
}
