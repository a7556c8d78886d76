//! Type resolution for the checker: skipping typedefs and qualifiers, sizes, pointer targets,
//! integer/array details, member lookup through anonymous structs/unions, prototypes of
//! functions and of raw tracepoints (`btf_trace_<name>`).
//! Input: type ids. Output: ids, views and layouts; a bad or cyclic chain is a [`BtfError`].

use super::types::{ArrayInfo, FuncProto, IntInfo, Members, Param, Type, TypeKind};
use super::{Btf, BtfError, Enumerators};

/// Longest typedef/qualifier chain or member nesting followed before giving up; real kernel
/// BTF stays far below this, malformed BTF may loop.
const MAX_DEPTH: usize = 64;

/// Most struct/union levels one member search visits: bounds breadth as well as depth, since
/// malformed BTF can nest a struct in itself through several anonymous members.
const MEMBER_BUDGET: usize = 10_000;

/// Pointer size: strobe targets 64-bit kernels only.
pub const POINTER_SIZE: u32 = 8;

/// A member found by name, possibly inside anonymous structs/unions.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct MemberRef<'a> {
    pub name: &'a str,
    pub type_id: u32,
    /// Bit offset from the start of the outermost struct searched (anonymous levels added).
    pub bit_offset: u32,
    /// Bitfield width in bits, 0 for an ordinary member.
    pub bitfield_size: u32,
}

impl MemberRef<'_> {
    /// Byte offset, for a non-bitfield member.
    pub fn byte_offset(&self) -> u32 {
        self.bit_offset / 8
    }
}

impl Btf {
    fn expect<'a>(&'a self, t: Type<'a>, expected: &'static str) -> BtfError {
        BtfError::UnexpectedKind {
            id: t.id,
            expected,
            found: t.kind.kind_name(),
        }
    }

    /// Follows const/volatile/restrict/type tags (and typedefs when `typedefs`) from `id`,
    /// passing each type tag's name to `on_tag`; returns the first other type.
    fn follow<'a>(
        &'a self,
        id: u32,
        typedefs: bool,
        mut on_tag: impl FnMut(&'a str),
    ) -> Result<Type<'a>, BtfError> {
        let mut t = self.type_by_id(id)?;
        for _ in 0..MAX_DEPTH {
            match t.kind {
                TypeKind::TypeTag(n) => {
                    on_tag(t.name);
                    t = self.type_by_id(n)?;
                }
                TypeKind::Const(n) | TypeKind::Volatile(n) | TypeKind::Restrict(n) => {
                    t = self.type_by_id(n)?
                }
                TypeKind::Typedef(n) if typedefs => t = self.type_by_id(n)?,
                _ => return Ok(t),
            }
        }
        Err(BtfError::TooDeep { id })
    }

    /// Follows const/volatile/restrict/type tags (not typedefs) to the qualified type.
    pub fn skip_qualifiers(&self, id: u32) -> Result<Type<'_>, BtfError> {
        self.follow(id, false, |_| {})
    }

    /// Follows typedefs, qualifiers and type tags to the underlying type.
    pub fn resolve(&self, id: u32) -> Result<Type<'_>, BtfError> {
        self.follow(id, true, |_| {})
    }

    /// Size in bytes of a value of type `id`.
    pub fn size_of(&self, id: u32) -> Result<u32, BtfError> {
        let mut id = id;
        let mut mul: u64 = 1;
        for _ in 0..MAX_DEPTH {
            let t = self.resolve(id)?;
            let size = match t.kind {
                TypeKind::Int(i) => i.size,
                TypeKind::Ptr(_) => POINTER_SIZE,
                TypeKind::Struct(m) | TypeKind::Union(m) => m.size,
                TypeKind::Enum(e) | TypeKind::Enum64(e) => e.size,
                TypeKind::Float { size } => size,
                TypeKind::Datasec(d) => d.size,
                TypeKind::Var { type_id, .. } => {
                    id = type_id;
                    continue;
                }
                TypeKind::Array(a) => {
                    mul = mul
                        .checked_mul(u64::from(a.len))
                        .ok_or(BtfError::SizeOverflow { id })?;
                    id = a.elem;
                    continue;
                }
                _ => {
                    return Err(BtfError::NoSize {
                        id: t.id,
                        kind: t.kind.kind_name(),
                    })
                }
            };
            let total = mul
                .checked_mul(u64::from(size))
                .ok_or(BtfError::SizeOverflow { id })?;
            return u32::try_from(total).map_err(|_| BtfError::SizeOverflow { id });
        }
        Err(BtfError::TooDeep { id })
    }

    /// The type a pointer (after typedefs/qualifiers) points to.
    pub fn pointee(&self, id: u32) -> Result<u32, BtfError> {
        let t = self.resolve(id)?;
        match t.kind {
            TypeKind::Ptr(target) => Ok(target),
            _ => Err(self.expect(t, "pointer")),
        }
    }

    /// Type tags (`user`, `rcu`, `percpu`, …) on `id` itself, found while following its
    /// typedef/qualifier chain. For a pointer's target pass [`Btf::pointee`]'s result: a
    /// `char __user *` is a PTR to TYPE_TAG(`user`) to `char`, on kernels built with tags.
    pub fn type_tags(&self, id: u32) -> Result<Vec<&str>, BtfError> {
        let mut tags = Vec::new();
        self.follow(id, true, |tag| tags.push(tag))?;
        Ok(tags)
    }

    /// Whether pointer `id` points to user memory (its target carries the `user` type tag),
    /// so reads through it need bpf_probe_read_user. `false` when the kernel's BTF has no
    /// type tags at all — callers then fall back to other knowledge.
    pub fn is_user_pointer(&self, id: u32) -> Result<bool, BtfError> {
        Ok(self.type_tags(self.pointee(id)?)?.contains(&"user"))
    }

    /// Integer details of `id` (after typedefs/qualifiers).
    pub fn int_info(&self, id: u32) -> Result<IntInfo, BtfError> {
        let t = self.resolve(id)?;
        match t.kind {
            TypeKind::Int(i) => Ok(i),
            _ => Err(self.expect(t, "integer")),
        }
    }

    /// Array details of `id` (after typedefs/qualifiers).
    pub fn array_info(&self, id: u32) -> Result<ArrayInfo, BtfError> {
        let t = self.resolve(id)?;
        match t.kind {
            TypeKind::Array(a) => Ok(a),
            _ => Err(self.expect(t, "array")),
        }
    }

    /// Members of the struct or union `id` (after typedefs/qualifiers).
    pub fn members(&self, id: u32) -> Result<Members<'_>, BtfError> {
        let t = self.resolve(id)?;
        match t.kind {
            TypeKind::Struct(m) | TypeKind::Union(m) => Ok(m),
            _ => Err(self.expect(t, "struct or union")),
        }
    }

    /// Enumerators of the enum `id` (after typedefs/qualifiers).
    pub fn enumerators(&self, id: u32) -> Result<Enumerators<'_>, BtfError> {
        let t = self.resolve(id)?;
        match t.kind {
            TypeKind::Enum(e) | TypeKind::Enum64(e) => Ok(e),
            _ => Err(self.expect(t, "enum")),
        }
    }

    /// The value of the enumerator called `name` in any enum of this object (own types, then
    /// the base's), and the id of its enum: bpftrace lets scripts use the kernel's enum
    /// constants (`TCP_ESTABLISHED`) as integers. A linear scan (vmlinux has ~2.5k enums);
    /// it runs only for identifiers nothing else defines.
    pub fn find_enumerator(&self, name: &str) -> Option<(i128, u32)> {
        for id in self.first_id..=self.last_id() {
            let Ok(t) = self.type_by_id(id) else { continue };
            if let TypeKind::Enum(e) | TypeKind::Enum64(e) = t.kind {
                if let Some(en) = e.iter().find(|en| en.name == name) {
                    return Some((en.value, id));
                }
            }
        }
        self.base.as_ref()?.find_enumerator(name)
    }

    /// Finds member `name` of struct/union `id`, looking through anonymous struct/union
    /// members as C does (`task_struct` reaches fields of unnamed inner structs directly).
    /// `Ok(None)` when there is no such member.
    pub fn find_member(&self, id: u32, name: &str) -> Result<Option<MemberRef<'_>>, BtfError> {
        let members = self.members(id)?;
        self.find_member_in(members, name, 0, &mut MEMBER_BUDGET.clone(), 0)
    }

    fn find_member_in<'a>(
        &'a self,
        members: Members<'a>,
        name: &str,
        base_bits: u32,
        budget: &mut usize,
        depth: usize,
    ) -> Result<Option<MemberRef<'a>>, BtfError> {
        if *budget == 0 || depth > MAX_DEPTH {
            return Err(BtfError::TooDeep { id: 0 });
        }
        *budget -= 1;
        for m in members.iter() {
            if m.name == name {
                return Ok(Some(MemberRef {
                    name: m.name,
                    type_id: m.type_id,
                    bit_offset: base_bits.saturating_add(m.bit_offset),
                    bitfield_size: m.bitfield_size,
                }));
            }
        }
        for m in members.iter() {
            if !m.name.is_empty() {
                continue;
            }
            let inner = match self.resolve(m.type_id)?.kind {
                TypeKind::Struct(i) | TypeKind::Union(i) => i,
                _ => continue,
            };
            let at = base_bits.saturating_add(m.bit_offset);
            if let Some(found) = self.find_member_in(inner, name, at, budget, depth + 1)? {
                return Ok(Some(found));
            }
        }
        Ok(None)
    }

    /// Names of all members reachable from struct/union `id`, anonymous members flattened,
    /// in declaration order (for "available fields" hints).
    pub fn member_names(&self, id: u32) -> Result<Vec<&str>, BtfError> {
        let mut out = Vec::new();
        self.collect_member_names(self.members(id)?, &mut out, &mut MEMBER_BUDGET.clone(), 0)?;
        Ok(out)
    }

    fn collect_member_names<'a>(
        &'a self,
        members: Members<'a>,
        out: &mut Vec<&'a str>,
        budget: &mut usize,
        depth: usize,
    ) -> Result<(), BtfError> {
        if *budget == 0 || depth > MAX_DEPTH {
            return Err(BtfError::TooDeep { id: 0 });
        }
        *budget -= 1;
        for m in members.iter() {
            if !m.name.is_empty() {
                out.push(m.name);
            } else if let TypeKind::Struct(i) | TypeKind::Union(i) = self.resolve(m.type_id)?.kind {
                self.collect_member_names(i, out, budget, depth + 1)?;
            }
        }
        Ok(())
    }

    /// The prototype of a FUNC (or of a FUNC_PROTO id itself).
    pub fn func_proto(&self, id: u32) -> Result<FuncProto<'_>, BtfError> {
        let t = self.type_by_id(id)?;
        let t = match t.kind {
            TypeKind::Func { proto, .. } => self.type_by_id(proto)?,
            _ => t,
        };
        match t.kind {
            TypeKind::FuncProto(p) => Ok(p),
            _ => Err(self.expect(t, "function or prototype")),
        }
    }

    /// The prototype of the function called `name`.
    pub fn func_proto_by_name(&self, name: &str) -> Result<FuncProto<'_>, BtfError> {
        let id = self.find_func(name).ok_or_else(|| BtfError::NotFound {
            what: "function",
            name: name.to_string(),
        })?;
        self.func_proto(id)
    }

    /// Arguments of raw tracepoint `name`. Types come from the kernel's `btf_trace_<name>`
    /// typedef (a pointer to a FUNC_PROTO whose first parameter is the `void *` context, dropped
    /// here; see `include/trace/bpf_probe.h`). That prototype has no parameter names, so names
    /// come from the `__bpf_trace_<name>` (or, 6.4+, `__probestub_<name>`) function with the
    /// same parameters; a name stays "" when neither exists or the parameter lists disagree.
    pub fn raw_tracepoint_args(&self, name: &str) -> Result<Vec<Param<'_>>, BtfError> {
        let tname = format!("btf_trace_{name}");
        let id = self.find_typedef(&tname).ok_or(BtfError::NotFound {
            what: "raw tracepoint typedef",
            name: tname,
        })?;
        let proto = self.func_proto(self.pointee(id)?)?;
        let mut args: Vec<Param<'_>> = proto.params().skip(1).collect();
        for prefix in ["__bpf_trace_", "__probestub_"] {
            let Some(f) = self.find_func(&format!("{prefix}{name}")) else {
                continue;
            };
            let Ok(named) = self.func_proto(f) else {
                continue;
            };
            if named.len() != proto.len() {
                continue;
            }
            for (a, n) in args.iter_mut().zip(named.params().skip(1)) {
                if a.name.is_empty() {
                    a.name = n.name;
                }
            }
            break;
        }
        Ok(args)
    }
}
