//! The checker's type model: what every script expression's value is, and how a value of each
//! type is laid out in a record or map slot ([`Type::field_type`]).
//!
//! Input: built by the checker from literals, builtins, casts, BTF and tracepoint formats.
//! Output: one [`Type`] per expression in [`super::CheckedProgram::types`], plus key/value types
//! of maps and the argument types of printf-like calls.
//!
//! # For the code generator
//! - Integers are held in 64-bit registers whatever their width; `bytes`/`signed` say how they
//!   were loaded (sign or zero extension) and how they are stored in records and map slots.
//! - [`Type::Str`] is a NUL-terminated string in a buffer of `size` bytes (size includes the
//!   NUL); values of string type live on the BPF stack or in a scratch map, never in registers.
//! - [`Type::Pointer`] is an address in the kernel's or a process's address space
//!   ([`AddrSpace`]): dereferencing it is a `bpf_probe_read_kernel`/`_user`; its pointee is
//!   known as far as BTF or the script says ([`Pointee`]).
//! - [`Type::CStruct`] values (a `struct task_struct` obtained with `*p` or a BTF struct
//!   member that is itself a struct) are *not* copied: the code generator keeps the address and
//!   reads members on access (a variable holds the address); only when such a value is stored
//!   (map key or value, tuple, `print`/printf argument) are its bytes copied, laid out as its
//!   [`StructType::layout`].
//! - Aggregations ([`Type::Agg`]) exist only as map values; the value slot layout is the one in
//!   [`crate::runtime::format::agg`] (per-CPU maps).
//! - [`Type::field_type`] gives each storable type's layout as the runtime decodes it; the code
//!   generator must write values exactly so (sizes and alignment from
//!   [`FieldType::size`]/[`FieldType::align`]).
//!
//! Invariant: `Type` is a plain value (no references into BTF or the AST); BTF types are named
//! by `(module, id)` so they can be resolved again through [`crate::kernel::info::KernelInfo`].

use std::fmt;
use std::sync::Arc;

use crate::plan::agg::AggKind;
use crate::plan::layout::StackMode;
use crate::plan::layout::{FieldType, StructLayout};

/// Which address space a pointer points into: decides `bpf_probe_read_kernel` versus
/// `bpf_probe_read_user` when it is dereferenced.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, Default)]
pub enum AddrSpace {
    #[default]
    Kernel,
    User,
}

/// A C struct, union or enum type: from kernel BTF or defined in the script.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum CTypeRef {
    /// A BTF type: `module` `None` is vmlinux; `id` is the type id in that object (split BTF
    /// ids continue vmlinux's, so a module id is only meaningful with its module).
    Btf { module: Option<String>, id: u32 },
    /// Definition `index` of the script's C types (`CheckedProgram::script_types.defs`,
    /// nested anonymous definitions included).
    Script { index: usize },
}

/// A struct/union value type.
#[derive(Clone, Debug)]
pub struct StructType {
    /// `struct task_struct`, `union bpf_attr`, `struct Foo`.
    pub name: String,
    pub ty: CTypeRef,
    pub size: u32,
    pub union: bool,
    /// Its members' layout for storing and printing whole values; `None` when it has none
    /// (an incomplete type, members strobe cannot lay out). A function of `ty`, so equality
    /// and hashing ignore it.
    pub layout: Option<Arc<StructLayout>>,
}

impl PartialEq for StructType {
    fn eq(&self, o: &StructType) -> bool {
        self.name == o.name && self.ty == o.ty && self.size == o.size && self.union == o.union
    }
}

impl Eq for StructType {}

impl std::hash::Hash for StructType {
    fn hash<H: std::hash::Hasher>(&self, h: &mut H) {
        self.name.hash(h);
        self.ty.hash(h);
        self.size.hash(h);
        self.union.hash(h);
    }
}

/// An enum's enumerators `(value, name)`, shared by every value of the type.
pub type EnumVariants = std::sync::Arc<Vec<(i64, String)>>;

/// What a pointer points to.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum Pointee {
    /// `void *` or a type strobe does not model (functions, floats): not dereferenceable.
    Opaque,
    /// A value type (`int32 *`, `struct task_struct *`, `char *`, `u8 **`).
    Type(Box<Type>),
}

/// The type of a script value.
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Type {
    /// No value: statements, `exit()`, `printf()`, an `if` without a value. bpftrace's `none`
    /// and `void`.
    #[default]
    None,
    /// An integer of 1, 2, 4 or 8 bytes. Literals are `int64`; arithmetic promotes to 64 bits.
    Int {
        bytes: u8,
        signed: bool,
    },
    Bool,
    /// A string in a buffer of `size` bytes including the terminating NUL.
    Str {
        size: usize,
    },
    /// `buf(p, n)`: a length and up to `capacity` bytes.
    Buf {
        capacity: usize,
    },
    /// `(a, b, …)`.
    Tuple(Vec<Type>),
    /// `(name = a, other = b)`: a tuple with field names.
    Record(Vec<(String, Type)>),
    /// An address with what it points to.
    Pointer {
        pointee: Pointee,
        space: AddrSpace,
    },
    /// A struct or union value (see the module doc: kept by address, read on access).
    CStruct(StructType),
    /// A C enum value: an integer printed through its enumerator names where known.
    Enum {
        name: String,
        ty: CTypeRef,
        bytes: u8,
        signed: bool,
        /// The enumerators `(value, name)`, for printing values by name.
        variants: EnumVariants,
    },
    /// A fixed array: `char[16]` members, `int8[4]` casts.
    Array {
        elem: Box<Type>,
        len: usize,
    },
    /// `kstack`/`kstack(mode, limit)`.
    KStack {
        mode: StackMode,
        limit: usize,
    },
    /// `ustack`/`ustack(mode, limit)`.
    UStack {
        mode: StackMode,
        limit: usize,
    },
    /// `ksym(addr)`: an address printed as a kernel symbol.
    KSym,
    /// `usym(addr)`: an address (with pid) printed as a user symbol.
    USym,
    /// `inet`/`ntop()` result: address family and 16 address bytes.
    Inet,
    /// `macaddr()`.
    MacAddr,
    /// `strftime(fmt, ns)`: a wall-clock time printed with `format`.
    Timestamp {
        format: String,
    },
    /// `username`: a uid printed as a user name.
    Username,
    /// `cgroup_path(id[, filter])`: a cgroup id printed as its paths in the cgroup
    /// hierarchies whose names match `filter` (resolved in userspace).
    CgroupPath {
        filter: String,
    },
    /// `probe`: the index of the probe's target, printed as its full name.
    Probe,
    /// `strerror(errno)`: an errno printed as the C library's message for it.
    Strerror,
    /// `syscall_name(nr)`: a system call number printed as its name.
    SyscallName,
    /// `signal_name(sig)`: a signal number printed as its description.
    SignalName,
    /// A `count()`, `sum()`, `hist()`… result: only ever a map value.
    Agg(AggKind),
}

/// Default `kstack`/`ustack` depth, as bpftrace.
pub const DEFAULT_STACK_LIMIT: usize = 127;

impl Type {
    pub const U8: Type = Type::Int {
        bytes: 1,
        signed: false,
    };
    pub const U16: Type = Type::Int {
        bytes: 2,
        signed: false,
    };
    pub const U32: Type = Type::Int {
        bytes: 4,
        signed: false,
    };
    pub const U64: Type = Type::Int {
        bytes: 8,
        signed: false,
    };
    pub const I8: Type = Type::Int {
        bytes: 1,
        signed: true,
    };
    pub const I16: Type = Type::Int {
        bytes: 2,
        signed: true,
    };
    pub const I32: Type = Type::Int {
        bytes: 4,
        signed: true,
    };
    pub const I64: Type = Type::Int {
        bytes: 8,
        signed: true,
    };

    /// An untyped kernel pointer (`void *`).
    pub fn void_ptr() -> Type {
        Type::Pointer {
            pointee: Pointee::Opaque,
            space: AddrSpace::Kernel,
        }
    }

    /// A pointer to `t` in `space`.
    pub fn ptr_to(t: Type, space: AddrSpace) -> Type {
        Type::Pointer {
            pointee: Pointee::Type(Box::new(t)),
            space,
        }
    }

    pub fn is_none(&self) -> bool {
        matches!(self, Type::None)
    }

    /// Integers, bools and enums: what arithmetic and comparisons take.
    pub fn is_integer(&self) -> bool {
        matches!(self, Type::Int { .. } | Type::Bool | Type::Enum { .. })
    }

    pub fn is_pointer(&self) -> bool {
        matches!(self, Type::Pointer { .. })
    }

    /// Integers and pointers: what fits a register and compares as a number.
    pub fn is_scalar(&self) -> bool {
        self.is_integer() || self.is_pointer()
    }

    pub fn is_signed(&self) -> bool {
        matches!(
            self,
            Type::Int { signed: true, .. } | Type::Enum { signed: true, .. }
        )
    }

    pub fn is_string(&self) -> bool {
        matches!(self, Type::Str { .. })
    }

    pub fn is_agg(&self) -> bool {
        matches!(self, Type::Agg(_))
    }

    /// Whether the value can be a map key or value, or a printf/print argument: it has a
    /// record layout.
    pub fn is_storable(&self) -> bool {
        self.field_type().is_some()
    }

    /// The record/map layout of a value of this type, as the runtime decodes it
    /// ([`crate::runtime::format::decode`]). `None` for types with no storable form: `None`,
    /// aggregations (their map layout is [`AggKind`]'s) and struct values without a layout.
    /// Enums are stored as integers.
    pub fn field_type(&self) -> Option<FieldType> {
        Some(match self {
            Type::None | Type::Agg(_) => return None,
            Type::CStruct(s) => FieldType::Struct(s.layout.clone()?),
            Type::Int { bytes, signed } => FieldType::Int {
                bytes: *bytes,
                signed: *signed,
            },
            Type::Enum {
                bytes,
                signed,
                variants,
                ..
            } => FieldType::Enum {
                bytes: *bytes,
                signed: *signed,
                variants: variants.clone(),
            },
            Type::Bool => FieldType::Bool,
            Type::Str { size } => FieldType::Str { size: *size },
            Type::Buf { capacity } => FieldType::Buf {
                capacity: *capacity,
            },
            Type::Tuple(ts) => FieldType::Tuple(
                ts.iter()
                    .map(Type::field_type)
                    .collect::<Option<Vec<_>>>()?,
            ),
            Type::Record(fs) => FieldType::Record(
                fs.iter()
                    .map(|(n, t)| Some((n.clone(), t.field_type()?)))
                    .collect::<Option<Vec<_>>>()?,
            ),
            Type::Pointer { .. } => FieldType::Pointer,
            Type::Array { elem, len } => FieldType::Array {
                elem: Box::new(elem.field_type()?),
                len: *len,
            },
            Type::KStack { mode, limit } => FieldType::KStack {
                limit: *limit,
                mode: *mode,
            },
            Type::UStack { mode, limit } => FieldType::UStack {
                limit: *limit,
                mode: *mode,
            },
            Type::KSym => FieldType::KSym,
            Type::USym => FieldType::USym,
            Type::Inet => FieldType::Inet,
            Type::MacAddr => FieldType::MacAddr,
            Type::Timestamp { format } => FieldType::Timestamp {
                format: format.clone(),
            },
            Type::Username => FieldType::Username,
            // A cgroup id: the runtime prints the paths it resolves (stored as the u64 id).
            Type::CgroupPath { filter } => FieldType::CgroupPath {
                filter: filter.clone(),
            },
            Type::Probe => FieldType::Probe,
            Type::Strerror => FieldType::Strerror,
            Type::SyscallName => FieldType::SyscallName,
            Type::SignalName => FieldType::SignalName,
        })
    }

    /// Size in bytes of the stored value (0 when not storable).
    pub fn size(&self) -> usize {
        match self {
            Type::CStruct(s) => s.size as usize,
            t => t.field_type().map_or(0, |f| f.size()),
        }
    }

    /// Whether a value of `other` can be stored where `self` was established (a map value or
    /// key, a variable): same kind, strings of any size (the slot is the larger), integers of
    /// any width where signedness agrees or the slot is 64-bit. Returns the merged type.
    pub fn unify(&self, other: &Type) -> Option<Type> {
        use Type::*;
        Some(match (self, other) {
            (a, b) if a == b => a.clone(),
            (Int { .. } | Enum { .. }, Int { .. } | Enum { .. }) => {
                let (ab, asg) = int_shape(self);
                let (bb, bsg) = int_shape(other);
                // Mixed signs take the smallest signed type holding both (`int8` and
                // `uint8` → `int16`), `int64` when none does (bpftrace's rule).
                let bytes = match (asg, bsg) {
                    (true, false) if ab <= bb => (bb * 2).min(8),
                    (false, true) if bb <= ab => (ab * 2).min(8),
                    _ => ab.max(bb),
                };
                Int {
                    bytes,
                    signed: asg || bsg,
                }
            }
            (Str { size: a }, Str { size: b }) => Str { size: *a.max(b) },
            (Buf { capacity: a }, Buf { capacity: b }) => Buf {
                capacity: *a.max(b),
            },
            (Tuple(a), Tuple(b)) if a.len() == b.len() => Tuple(
                a.iter()
                    .zip(b)
                    .map(|(x, y)| x.unify(y))
                    .collect::<Option<_>>()?,
            ),
            (Record(a), Record(b))
                if a.len() == b.len() && a.iter().zip(b).all(|(x, y)| x.0 == y.0) =>
            {
                Record(
                    a.iter()
                        .zip(b)
                        .map(|(x, y)| Some((x.0.clone(), x.1.unify(&y.1)?)))
                        .collect::<Option<_>>()?,
                )
            }
            // The same field names in another order: the first order is kept and values are
            // stored by name (current bpftrace).
            (Record(a), Record(b))
                if a.len() == b.len() && a.iter().all(|x| b.iter().any(|y| y.0 == x.0)) =>
            {
                Record(
                    a.iter()
                        .map(|x| {
                            let y = b.iter().find(|y| y.0 == x.0)?;
                            Some((x.0.clone(), x.1.unify(&y.1)?))
                        })
                        .collect::<Option<_>>()?,
                )
            }
            // Pointers of different pointee types share a slot (bpftrace compares sizes only).
            (Pointer { space: s1, .. }, Pointer { space: s2, .. }) if s1 == s2 => self.clone(),
            // A stack is an id in the stack-trace map of its kind and depth: ids of different
            // depths cannot share a slot.
            (KStack { .. }, KStack { .. }) | (UStack { .. }, UStack { .. }) if self == other => {
                self.clone()
            }
            // A time series' interval, length, aggregation and signedness are fixed per map.
            (Agg(AggKind::TSeries(a)), Agg(AggKind::TSeries(b))) if a != b => return Option::None,
            (Agg(a), Agg(b)) if agg_family(a) == agg_family(b) => Agg(*a),
            _ => return Option::None,
        })
    }
}

fn int_shape(t: &Type) -> (u8, bool) {
    match t {
        Type::Int { bytes, signed } | Type::Enum { bytes, signed, .. } => (*bytes, *signed),
        _ => (1, false),
    }
}

fn agg_family(a: &AggKind) -> &'static str {
    match a {
        AggKind::Count => "count",
        AggKind::Sum { .. } => "sum",
        AggKind::Min { .. } => "min",
        AggKind::Max { .. } => "max",
        AggKind::Avg { .. } => "avg",
        AggKind::Stats { .. } => "stats",
        AggKind::Hist(crate::plan::agg::HistKind::Log2 { .. }) => "hist",
        AggKind::Hist(crate::plan::agg::HistKind::Linear { .. }) => "lhist",
        AggKind::TSeries(_) => "tseries",
    }
}

/// bpftrace's spelling of types in messages: `uint64`, `string[16]`, `struct task_struct *`,
/// `count_t`, `(int64,string[16])`.
impl fmt::Display for Type {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Type::None => f.write_str("none"),
            Type::Int { bytes, signed } => {
                write!(
                    f,
                    "{}int{}",
                    if *signed { "" } else { "u" },
                    *bytes as u32 * 8
                )
            }
            Type::Bool => f.write_str("bool"),
            Type::Str { size } => write!(f, "string[{size}]"),
            Type::Buf { capacity } => write!(f, "buffer[{capacity}]"),
            Type::Tuple(ts) => {
                f.write_str("(")?;
                for (i, t) in ts.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{t}")?;
                }
                f.write_str(")")
            }
            Type::Record(fs) => {
                f.write_str("(")?;
                for (i, (n, t)) in fs.iter().enumerate() {
                    if i > 0 {
                        f.write_str(",")?;
                    }
                    write!(f, "{n}={t}")?;
                }
                f.write_str(")")
            }
            Type::Pointer { pointee, .. } => match pointee {
                Pointee::Opaque => f.write_str("void *"),
                Pointee::Type(t) if t.is_pointer() => write!(f, "{t}*"),
                Pointee::Type(t) => write!(f, "{t} *"),
            },
            Type::CStruct(s) => f.write_str(&s.name),
            Type::Enum { name, .. } => f.write_str(name),
            Type::Array { elem, len } => write!(f, "{elem}[{len}]"),
            Type::KStack { .. } => f.write_str("kstack"),
            Type::UStack { .. } => f.write_str("ustack"),
            Type::KSym => f.write_str("ksym_t"),
            Type::USym => f.write_str("usym_t"),
            Type::Inet => f.write_str("inet"),
            Type::MacAddr => f.write_str("mac_address"),
            Type::Timestamp { .. } => f.write_str("timestamp"),
            Type::Username => f.write_str("username"),
            Type::Strerror => f.write_str("strerror_t"),
            Type::SyscallName => f.write_str("syscall_name_t"),
            Type::SignalName => f.write_str("signal_name_t"),
            Type::CgroupPath { .. } => f.write_str("cgroup_path_t"),
            Type::Probe => f.write_str("probe_t"),
            Type::Agg(a) => write!(f, "{}_t", agg_family(a)),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_uses_bpftrace_spellings() {
        assert_eq!(Type::U64.to_string(), "uint64");
        assert_eq!(Type::I32.to_string(), "int32");
        assert_eq!(Type::Str { size: 16 }.to_string(), "string[16]");
        assert_eq!(
            Type::Tuple(vec![Type::I64, Type::Str { size: 8 }]).to_string(),
            "(int64,string[8])"
        );
        assert_eq!(Type::Agg(AggKind::Count).to_string(), "count_t");
        assert_eq!(
            Type::ptr_to(Type::U8, AddrSpace::User).to_string(),
            "uint8 *"
        );
    }

    #[test]
    fn field_types_match_the_runtime_layouts() {
        let t = Type::Tuple(vec![Type::I32, Type::Str { size: 16 }, Type::U64]);
        let f = t.field_type().unwrap();
        assert_eq!(f.size(), 32);
        assert_eq!(Type::Agg(AggKind::Count).field_type(), None);
        assert_eq!(
            Type::KStack {
                mode: StackMode::Bpftrace,
                limit: 4
            }
            .size(),
            8
        );
    }

    #[test]
    fn unify_widens_integers_and_strings_but_not_kinds() {
        assert_eq!(Type::U32.unify(&Type::I64), Some(Type::I64));
        // Mixed signs: a signed type holding both.
        assert_eq!(Type::I8.unify(&Type::U32), Some(Type::I64));
        assert_eq!(Type::I8.unify(&Type::U8), Some(Type::I16));
        assert_eq!(Type::U8.unify(&Type::I32), Some(Type::I32));
        assert_eq!(
            Type::Str { size: 8 }.unify(&Type::Str { size: 64 }),
            Some(Type::Str { size: 64 })
        );
        assert_eq!(Type::U64.unify(&Type::Str { size: 8 }), None);
        assert_eq!(
            Type::Agg(AggKind::Count).unify(&Type::Agg(AggKind::Sum { signed: true })),
            None
        );
    }
}
