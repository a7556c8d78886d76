//! C types in scripts: BTF types and the script's own `struct`/`union` definitions turned into
//! [`Type`]s, member lookup on both, and the type names scripts write in casts and `let`
//! declarations (`uint32`, `u64`, `string[64]`, `struct task_struct *`).
//!
//! Input: a BTF object and type id, or the script's C type definitions. Output: [`Type`]s and
//! [`Member`]s. Invariant: never panics on malformed BTF; an unresolvable type is `None`.

use std::sync::Arc;

use crate::btf::{Btf, TypeClass, TypeKind};
use crate::plan::layout::{FieldType, StructField, StructLayout};
use crate::syntax::ast::{CType, CTypeBody, CTypeDef, CTypeExpr, CTypeKind};

use super::types::{AddrSpace, CTypeRef, EnumVariants, Pointee, StructType, Type};

/// Deepest pointer chain converted (`char ***…`): deeper pointees become opaque.
const MAX_DEPTH: usize = 8;

/// A struct/union member resolved to a script type.
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    pub name: String,
    pub ty: Type,
    /// Byte offset from the start of the struct.
    pub offset: u32,
    /// Bitfield width, 0 for a plain member.
    pub bits: u32,
}

/// A BTF type as a script type; `space` is the address space of the value it came from (a
/// pointer read from user memory points into user memory).
pub fn btf_to_type(btf: &Btf, module: Option<&str>, id: u32, space: AddrSpace) -> Option<Type> {
    convert(btf, module, id, space, 0)
}

fn user_tagged(btf: &Btf, mut id: u32) -> bool {
    for _ in 0..MAX_DEPTH {
        let Ok(t) = btf.type_by_id(id) else {
            return false;
        };
        match t.kind {
            TypeKind::TypeTag(n) if t.name == "user" => return n != u32::MAX,
            TypeKind::TypeTag(n)
            | TypeKind::Const(n)
            | TypeKind::Volatile(n)
            | TypeKind::Restrict(n) => id = n,
            _ => return false,
        }
    }
    false
}

fn record_name(btf: &Btf, id: u32, union: bool) -> String {
    let name = btf.type_by_id(id).map(|t| t.name).unwrap_or("");
    let kw = if union { "union" } else { "struct" };
    if name.is_empty() {
        format!("{kw} (anonymous)")
    } else {
        format!("{kw} {name}")
    }
}

/// The enumerators of BTF enum `id` (empty when it is not one).
fn btf_enumerators(btf: &Btf, id: u32) -> EnumVariants {
    let list = match btf.resolve(id).map(|t| t.kind) {
        Ok(TypeKind::Enum(e) | TypeKind::Enum64(e)) => e
            .iter()
            .map(|en| (en.value as i64, en.name.to_string()))
            .collect(),
        _ => Vec::new(),
    };
    std::sync::Arc::new(list)
}

fn convert(
    btf: &Btf,
    module: Option<&str>,
    id: u32,
    space: AddrSpace,
    depth: usize,
) -> Option<Type> {
    let module_s = module.map(str::to_string);
    Some(match btf.classify(id).ok()? {
        TypeClass::Void => Type::None,
        TypeClass::Int { bool: true, .. } => Type::Bool,
        TypeClass::Int { size, signed, .. } => Type::Int {
            bytes: size.clamp(1, 8) as u8,
            signed,
        },
        TypeClass::Enum { size, signed } => Type::Enum {
            name: format!("enum {}", btf.resolve(id).map(|t| t.name).unwrap_or("")),
            ty: CTypeRef::Btf {
                module: module_s,
                id: btf.resolve(id).map(|t| t.id).unwrap_or(id),
            },
            bytes: size.clamp(1, 8) as u8,
            signed,
            variants: btf_enumerators(btf, id),
        },
        TypeClass::Pointer { target } => {
            let space = if user_tagged(btf, target) {
                AddrSpace::User
            } else {
                space
            };
            let pointee = if depth >= MAX_DEPTH {
                Pointee::Opaque
            } else {
                match convert(btf, module, target, space, depth + 1) {
                    Some(Type::None) | None => Pointee::Opaque,
                    Some(t) => Pointee::Type(Box::new(t)),
                }
            };
            Type::Pointer { pointee, space }
        }
        TypeClass::Array { elem, len } => {
            if matches!(btf.classify(elem).ok()?, TypeClass::Int { char: true, .. }) {
                Type::Str { size: len as usize }
            } else {
                let e = convert(btf, module, elem, space, depth + 1)?;
                Type::Array {
                    elem: Box::new(e),
                    len: len as usize,
                }
            }
        }
        TypeClass::Record { id, size, union } => Type::CStruct(StructType {
            name: record_name(btf, id, union),
            ty: CTypeRef::Btf {
                module: module_s,
                id,
            },
            size,
            union,
            layout: btf_layout(btf, id, &mut LAYOUT_BUDGET.clone(), 0).map(Arc::new),
        }),
        TypeClass::Opaque { union } => Type::CStruct(StructType {
            name: format!(
                "{} {}",
                if union { "union" } else { "struct" },
                btf.type_by_id(id).map(|t| t.name).unwrap_or("")
            ),
            ty: CTypeRef::Btf {
                module: module_s,
                id,
            },
            size: 0,
            union,
            layout: None,
        }),
        TypeClass::Float { .. } | TypeClass::Function | TypeClass::Other => return None,
    })
}

/// Most members one struct value's layout may have, nested ones included (a guard against
/// malformed BTF; `struct task_struct` has about a thousand).
const LAYOUT_BUDGET: usize = 20_000;

/// Deepest nesting of struct members by value followed when laying a struct out.
const LAYOUT_DEPTH: usize = 32;

/// The layout of BTF struct/union `id` for copying and printing whole values: `None` when a
/// member cannot be laid out (an incomplete type, a bitfield wider than it can be read).
fn btf_layout(btf: &Btf, id: u32, budget: &mut usize, depth: usize) -> Option<StructLayout> {
    if depth > LAYOUT_DEPTH {
        return None;
    }
    let members = btf.members(id).ok()?;
    let mut fields = Vec::new();
    let mut align = 1;
    for m in members.iter() {
        *budget = budget.checked_sub(1)?;
        let ty = btf_field(btf, m.type_id, budget, depth + 1)?;
        align = align.max(ty.align());
        let offset = (m.bit_offset / 8) as usize;
        if m.name.is_empty() {
            // An anonymous inner struct/union: its members are the outer one's.
            if let FieldType::Struct(inner) = ty {
                fields.extend(inner.fields.iter().cloned().map(|mut f| {
                    f.offset += offset;
                    f
                }));
            }
            continue;
        }
        let bits = if m.bitfield_size != 0 {
            let shift = m.bit_offset % 8;
            if !matches!(ty, FieldType::Int { .. }) || shift + m.bitfield_size > 64 {
                return None;
            }
            Some((shift as u8, m.bitfield_size as u8))
        } else {
            None
        };
        fields.push(StructField {
            name: m.name.to_string(),
            offset,
            ty,
            bits,
        });
    }
    Some(StructLayout {
        size: members.size as usize,
        align,
        fields,
    })
}

/// The stored form of a struct member of BTF type `id`.
fn btf_field(btf: &Btf, id: u32, budget: &mut usize, depth: usize) -> Option<FieldType> {
    Some(match btf.classify(id).ok()? {
        TypeClass::Int { bool: true, .. } => FieldType::Bool,
        TypeClass::Enum {
            size: size @ (1 | 2 | 4 | 8),
            signed,
        } => FieldType::Enum {
            bytes: size as u8,
            signed,
            variants: btf_enumerators(btf, id),
        },
        TypeClass::Int { size, signed, .. } | TypeClass::Enum { size, signed } => match size {
            1 | 2 | 4 | 8 => FieldType::Int {
                bytes: size as u8,
                signed,
            },
            n => FieldType::Opaque {
                size: n as usize,
                align: (n as usize).clamp(1, 8),
            },
        },
        TypeClass::Float { size } => FieldType::Opaque {
            size: size as usize,
            align: (size as usize).clamp(1, 8),
        },
        TypeClass::Pointer { .. } => FieldType::Pointer,
        TypeClass::Array { elem, len } => {
            if matches!(btf.classify(elem).ok()?, TypeClass::Int { char: true, .. }) {
                FieldType::Str { size: len as usize }
            } else {
                FieldType::Array {
                    elem: Box::new(btf_field(btf, elem, budget, depth + 1)?),
                    len: len as usize,
                }
            }
        }
        TypeClass::Record { id, .. } => {
            FieldType::Struct(Arc::new(btf_layout(btf, id, budget, depth)?))
        }
        TypeClass::Void | TypeClass::Opaque { .. } | TypeClass::Function | TypeClass::Other => {
            return None
        }
    })
}

/// Finds a struct/union by its script spelling in BTF: `struct task_struct` → its id.
pub fn find_btf_record(btf: &Btf, kind: CTypeKind, name: &str) -> Option<u32> {
    match kind {
        CTypeKind::Struct => btf.find_struct(name),
        CTypeKind::Union => btf.find_union(name),
        CTypeKind::Enum => btf.find_enum(name),
    }
}

/// Members of a BTF struct/union (direct and through anonymous inner records), for messages.
pub fn btf_member_names(btf: &Btf, id: u32) -> Vec<String> {
    btf.member_names(id)
        .map(|v| v.into_iter().map(str::to_string).collect())
        .unwrap_or_default()
}

/// Looks up member `name` of BTF record `id`.
pub fn btf_member(
    btf: &Btf,
    module: Option<&str>,
    id: u32,
    name: &str,
    space: AddrSpace,
) -> Option<Member> {
    let m = btf.find_member(id, name).ok()??;
    Some(Member {
        name: name.to_string(),
        ty: btf_to_type(btf, module, m.type_id, space)?,
        offset: m.byte_offset(),
        bits: m.bitfield_size,
    })
}

/// The integer/bool/string types scripts name: bpftrace's (`uint32`, `int8`, `bool`,
/// `string`) and the C/kernel ones (`u64`, `s32`, `int`, `unsigned long`, `size_t`, `pid_t`).
pub fn named_type(name: &str, max_strlen: usize) -> Option<Type> {
    let int = |bytes: u8, signed: bool| Type::Int { bytes, signed };
    Some(match name {
        "bool" | "_Bool" => Type::Bool,
        "string" => Type::Str { size: max_strlen },
        "void" => Type::None,
        "int8" | "s8" | "__s8" | "int8_t" | "char" | "signed char" => int(1, true),
        "uint8" | "u8" | "__u8" | "uint8_t" | "unsigned char" => int(1, false),
        "int16" | "s16" | "__s16" | "int16_t" | "short" | "short int" | "signed short" => {
            int(2, true)
        }
        "uint16" | "u16" | "__u16" | "uint16_t" | "unsigned short" | "unsigned short int"
        | "umode_t" => int(2, false),
        "int32" | "s32" | "__s32" | "int32_t" | "int" | "signed int" | "signed" | "pid_t"
        | "uid_t" | "gid_t" => int(4, true),
        "uint32" | "u32" | "__u32" | "uint32_t" | "unsigned int" | "unsigned" | "__be32" => {
            int(4, false)
        }
        "int64" | "s64" | "__s64" | "int64_t" | "long" | "long int" | "long long"
        | "long long int" | "signed long" | "ssize_t" | "loff_t" | "time64_t" => int(8, true),
        "uint64"
        | "u64"
        | "__u64"
        | "uint64_t"
        | "unsigned long"
        | "unsigned long int"
        | "unsigned long long"
        | "unsigned long long int"
        | "size_t"
        | "uintptr_t" => int(8, false),
        "inet" => Type::Inet,
        "buffer" => Type::Buf { capacity: 64 },
        _ => return None,
    })
}

/// A script enum's enumerators: each takes its literal value (`A = 5`, `B = -1`, `C = B`) or
/// one more than the previous. A value the checker would have to compute (`A = 1 << 3`)
/// leaves the enumerator out: such values print as numbers.
fn script_enumerators(body: &CTypeBody) -> EnumVariants {
    use crate::syntax::ast::{ExprKind, UnaryOp};
    let mut out: Vec<(i64, String)> = Vec::new();
    if let CTypeBody::Enumerators(es) = body {
        let mut next = Some(0i64);
        for en in es {
            if let Some(v) = &en.value {
                next = match &v.kind {
                    ExprKind::Int(l) => Some(l.value as i64),
                    ExprKind::Unary {
                        op: UnaryOp::Neg,
                        expr,
                    } => match &expr.kind {
                        ExprKind::Int(l) => Some((l.value as i64).wrapping_neg()),
                        _ => None,
                    },
                    ExprKind::Ident(n) => out.iter().find(|(_, m)| m == n).map(|(v, _)| *v),
                    _ => None,
                };
            }
            if let Some(v) = next {
                out.push((v, en.name.name.clone()));
            }
            next = next.map(|v| v.wrapping_add(1));
        }
    }
    std::sync::Arc::new(out)
}

/// The size of C floating-point type `name`.
fn float_size(name: &str) -> Option<u32> {
    match name {
        "float" => Some(4),
        "double" => Some(8),
        "long double" => Some(16),
        _ => None,
    }
}

/// The script's own C types: layouts computed once with C rules.
#[derive(Clone, Debug, Default)]
pub struct ScriptTypes {
    /// `(kind, name, size, align, members)` in definition order (anonymous ones included).
    pub defs: Vec<ScriptType>,
}

#[derive(Clone, Debug)]
pub struct ScriptType {
    pub kind: CTypeKind,
    pub name: Option<String>,
    pub size: u32,
    pub align: u32,
    pub members: Vec<Member>,
    /// An enum's enumerators with the values their literals give (empty otherwise).
    pub enumerators: EnumVariants,
    /// The layout of whole values (`None` for enums, forward declarations and definitions
    /// with members strobe cannot lay out).
    pub layout: Option<Arc<StructLayout>>,
}

impl ScriptTypes {
    /// Lays out every definition; types referring to BTF records use `btf` when given.
    pub fn build<'a>(
        defs: impl Iterator<Item = &'a CTypeDef>,
        btf: Option<&Btf>,
        max_strlen: usize,
    ) -> ScriptTypes {
        let mut out = ScriptTypes::default();
        for d in defs {
            out.add(d, btf, max_strlen);
        }
        out
    }

    fn add(&mut self, d: &CTypeDef, btf: Option<&Btf>, max_strlen: usize) -> usize {
        let mut members = Vec::new();
        let mut fields = Vec::new();
        let mut laid_out = true;
        let union = d.kind == CTypeKind::Union;
        let packed = d.attributes.iter().any(|a| a.contains("packed"));
        // Position in bits: C packs adjacent bitfields into units of their declared type.
        let (mut bit, mut align, mut size) = (0u64, 1u32, 0u32);
        if let CTypeBody::Fields(fields_ast) = &d.body {
            for f in fields_ast {
                let (ty, fsize, falign) = self.field_type(&f.ty, btf, max_strlen);
                let falign = if packed { 1 } else { falign.max(1) };
                let unit = u64::from(fsize.max(1)) * 8;
                let (off, shift) = match f.bitfield {
                    _ if union => {
                        size = size.max(fsize);
                        (0, 0)
                    }
                    Some(0) => {
                        bit = bit.div_ceil(unit) * unit;
                        continue;
                    }
                    Some(w) => {
                        let w = u64::from(w);
                        if !packed && bit / unit != (bit + w - 1) / unit {
                            bit = bit.div_ceil(unit) * unit;
                        }
                        let at = bit;
                        bit += w;
                        ((at / 8) as u32, (at % 8) as u8)
                    }
                    None => {
                        let a = u64::from(falign) * 8;
                        bit = bit.div_ceil(a) * a;
                        let at = bit;
                        bit += u64::from(fsize) * 8;
                        ((at / 8) as u32, 0)
                    }
                };
                align = align.max(falign);
                let stored = match &f.ty.kind {
                    CTypeExpr::Named(n) if float_size(n).is_some() => Some(FieldType::Opaque {
                        size: fsize as usize,
                        align: falign as usize,
                    }),
                    _ => ty.field_type(),
                };
                laid_out &= stored.is_some();
                if let Some(n) = &f.name {
                    let bits = match (f.bitfield, &stored) {
                        (Some(w), Some(FieldType::Int { .. }))
                            if u32::from(shift) + w <= 64 && w > 0 =>
                        {
                            Some((shift, w as u8))
                        }
                        (Some(_), _) => {
                            laid_out = false;
                            None
                        }
                        _ => None,
                    };
                    members.push(Member {
                        name: n.name.clone(),
                        ty,
                        offset: off,
                        bits: f.bitfield.unwrap_or(0),
                    });
                    if let Some(st) = stored {
                        fields.push(StructField {
                            name: n.name.clone(),
                            offset: off as usize,
                            ty: st,
                            bits,
                        });
                    }
                } else if let Type::CStruct(StructType {
                    ty: CTypeRef::Script { index },
                    ..
                }) = ty
                {
                    // Anonymous inner record: its members are reachable directly.
                    let inner = self.defs[index].members.clone();
                    members.extend(inner.into_iter().map(|mut m| {
                        m.offset += off;
                        m
                    }));
                    if let Some(FieldType::Struct(l)) = stored {
                        fields.extend(l.fields.iter().cloned().map(|mut m| {
                            m.offset += off as usize;
                            m
                        }));
                    }
                }
            }
        }
        let raw = if union { size } else { bit.div_ceil(8) as u32 };
        let size = if d.kind == CTypeKind::Enum {
            4
        } else {
            raw.div_ceil(align) * align
        };
        let align = if d.kind == CTypeKind::Enum { 4 } else { align };
        let layout = (laid_out
            && d.kind != CTypeKind::Enum
            && matches!(d.body, CTypeBody::Fields(_)))
        .then(|| {
            Arc::new(StructLayout {
                size: size as usize,
                align: align as usize,
                fields,
            })
        });
        self.defs.push(ScriptType {
            kind: d.kind,
            name: d.name.as_ref().map(|n| n.name.clone()),
            size,
            align,
            members,
            enumerators: script_enumerators(&d.body),
            layout,
        });
        self.defs.len() - 1
    }

    fn field_type(&mut self, t: &CType, btf: Option<&Btf>, max_strlen: usize) -> (Type, u32, u32) {
        match &t.kind {
            // Floats have no script type: their bytes are kept (and print as none).
            CTypeExpr::Named(n) if float_size(n).is_some() => {
                let s = float_size(n).unwrap_or(8);
                let ty = Type::Array {
                    elem: Box::new(Type::U8),
                    len: s as usize,
                };
                (ty, s, s.min(8))
            }
            CTypeExpr::Named(n) => {
                let ty = named_type(n, max_strlen).unwrap_or(Type::I64);
                let s = ty.size() as u32;
                (ty, s, s.max(1))
            }
            CTypeExpr::Tagged(k, n) => match self.find(*k, n) {
                Some(i) => (self.struct_type(i), self.defs[i].size, self.defs[i].align),
                None => {
                    let bt = btf.and_then(|b| {
                        let id = find_btf_record(b, *k, n)?;
                        btf_to_type(b, None, id, AddrSpace::Kernel)
                    });
                    let s = bt.as_ref().map_or(0, |t| t.size() as u32);
                    (bt.unwrap_or(Type::None), s, 8)
                }
            },
            CTypeExpr::Inline(def) => {
                let i = self.add(def, btf, max_strlen);
                (self.struct_type(i), self.defs[i].size, self.defs[i].align)
            }
            CTypeExpr::Pointer(inner) => {
                let (it, _, _) = self.field_type(inner, btf, max_strlen);
                let pointee = match it {
                    Type::None => Pointee::Opaque,
                    t => Pointee::Type(Box::new(t)),
                };
                (
                    Type::Pointer {
                        pointee,
                        space: AddrSpace::Kernel,
                    },
                    8,
                    8,
                )
            }
            CTypeExpr::Array(inner, len) => {
                let (it, s, a) = self.field_type(inner, btf, max_strlen);
                let len = len.unwrap_or(0) as usize;
                let ty = if it == Type::I8 {
                    Type::Str { size: len }
                } else {
                    Type::Array {
                        elem: Box::new(it),
                        len,
                    }
                };
                (ty, s * len as u32, a)
            }
            CTypeExpr::FuncPtr(_) => (Type::void_ptr(), 8, 8),
        }
    }

    /// The definition called `name` of kind `kind`.
    pub fn find(&self, kind: CTypeKind, name: &str) -> Option<usize> {
        self.defs
            .iter()
            .rposition(|d| d.kind == kind && d.name.as_deref() == Some(name))
    }

    /// The value type of definition `i`.
    pub fn struct_type(&self, i: usize) -> Type {
        let d = &self.defs[i];
        if d.kind == CTypeKind::Enum {
            return Type::Enum {
                name: format!("enum {}", d.name.as_deref().unwrap_or("")),
                ty: CTypeRef::Script { index: i },
                bytes: 4,
                signed: false,
                variants: d.enumerators.clone(),
            };
        }
        Type::CStruct(StructType {
            name: format!(
                "{} {}",
                d.kind.keyword(),
                d.name.as_deref().unwrap_or("(anonymous)")
            ),
            ty: CTypeRef::Script { index: i },
            size: d.size,
            union: d.kind == CTypeKind::Union,
            layout: d.layout.clone(),
        })
    }
}
