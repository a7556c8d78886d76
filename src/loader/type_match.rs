//! The "type matches" relation of CO-RE (`bpf_core_type_matches`, relocation kind 12): a
//! stricter check than "exists" that a local type describes the kernel's, as libbpf defines it
//! in `tools/lib/bpf/relo_core.c`:
//! - typedefs and qualifiers are stripped on both sides, then names must agree (the essential
//!   part, without a `___flavor` suffix; an anonymous target only matches an anonymous local);
//! - kinds must agree, except that behind a pointer a struct/union also matches a forward
//!   declaration of the same flavor, and enum matches enum64;
//! - integers: same size and signedness; arrays: same length and matching elements; pointers:
//!   matching pointees;
//! - structs/unions: every local member exists in the target by name with a matching type —
//!   behind a pointer only names and kinds are compared, not members;
//! - enums: same size, every local enumerator name present in the target (values may differ);
//! - function prototypes: same number of parameters, each and the return type matching.

use crate::btf::{Btf, TypeKind};

/// How deep member and parameter recursion may go before the types count as not matching
/// (BTF can be cyclic through pointers; this also bounds malformed input).
const MAX_LEVEL: u32 = 32;

/// Whether local type `l` matches target type `t`.
pub(crate) fn types_match(local: &Btf, l: u32, target: &Btf, t: u32) -> bool {
    matches(local, l, target, t, false, MAX_LEVEL)
}

fn names_match(local: &str, target: &str) -> bool {
    super::co_re::essential(local) == super::co_re::essential(target)
}

fn matches(local: &Btf, l: u32, target: &Btf, t: u32, behind_ptr: bool, level: u32) -> bool {
    if level == 0 {
        return false;
    }
    let (Ok(lt), Ok(tt)) = (local.resolve(l), target.resolve(t)) else {
        return false;
    };
    if !names_match(lt.name, tt.name) {
        return false;
    }
    let next = level - 1;
    match (lt.kind, tt.kind) {
        (TypeKind::Void, TypeKind::Void) => true,
        (TypeKind::Fwd { union: lu }, TypeKind::Fwd { union: tu }) => lu == tu,
        (TypeKind::Fwd { union }, TypeKind::Struct(_)) => behind_ptr && !union,
        (TypeKind::Fwd { union }, TypeKind::Union(_)) => behind_ptr && union,
        (TypeKind::Struct(_), TypeKind::Fwd { union }) => behind_ptr && !union,
        (TypeKind::Union(_), TypeKind::Fwd { union }) => behind_ptr && union,
        (TypeKind::Struct(lm), TypeKind::Struct(tm))
        | (TypeKind::Union(lm), TypeKind::Union(tm)) => {
            if behind_ptr {
                return true;
            }
            lm.len() <= tm.len()
                && lm.iter().all(|m| {
                    tm.iter().any(|n| {
                        names_match(m.name, n.name)
                            && matches(local, m.type_id, target, n.type_id, false, next)
                    })
                })
        }
        (TypeKind::Enum(le) | TypeKind::Enum64(le), TypeKind::Enum(te) | TypeKind::Enum64(te)) => {
            le.size == te.size
                && le
                    .iter()
                    .all(|a| te.iter().any(|b| names_match(a.name, b.name)))
        }
        (TypeKind::Int(a), TypeKind::Int(b)) => a.size == b.size && a.signed == b.signed,
        (TypeKind::Ptr(a), TypeKind::Ptr(b)) => matches(local, a, target, b, true, next),
        (TypeKind::Array(a), TypeKind::Array(b)) => {
            a.len == b.len && matches(local, a.elem, target, b.elem, behind_ptr, next)
        }
        (TypeKind::FuncProto(a), TypeKind::FuncProto(b)) => {
            let (pa, pb): (Vec<_>, Vec<_>) = (a.params().collect(), b.params().collect());
            pa.len() == pb.len()
                && a.is_variadic() == b.is_variadic()
                && pa
                    .iter()
                    .zip(&pb)
                    .all(|(x, y)| matches(local, x.type_id, target, y.type_id, behind_ptr, next))
                && matches(local, a.ret, target, b.ret, behind_ptr, next)
        }
        _ => false,
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::btf::encode::{BtfBuilder, MemberDef};

    /// A "kernel" with `struct task { int pid; long flags; struct mm *mm; }`, `struct mm`,
    /// and `enum state { RUNNING = 0, SLEEPING = 1 }` (4 bytes).
    fn target() -> Btf {
        let mut b = BtfBuilder::new();
        let int = b.add_int("int", 4, true);
        let long = b.add_int("long", 8, true);
        let mm = b.add_struct("mm", 8, &[MemberDef::new("pgd", long, 0)]);
        let pmm = b.add_ptr(mm);
        b.add_struct(
            "task",
            24,
            &[
                MemberDef::new("pid", int, 0),
                MemberDef::new("flags", long, 8),
                MemberDef::new("mm", pmm, 16),
            ],
        );
        b.add_enum("state", 4, false, &[("RUNNING", 0), ("SLEEPING", 1)]);
        Btf::parse(b.finish().unwrap()).unwrap()
    }

    fn check(build: impl FnOnce(&mut BtfBuilder) -> u32, name: &str) -> bool {
        let mut b = BtfBuilder::new();
        let root = build(&mut b);
        let local = Btf::parse(b.finish().unwrap()).unwrap();
        let target = target();
        let t = target.find_types_named(name)[0];
        types_match(&local, root, &target, t)
    }

    #[test]
    fn a_subset_of_members_with_matching_types_matches() {
        assert!(check(
            |b| {
                let long = b.add_int("long", 8, true);
                let fwd = b.add_fwd("mm", false);
                let p = b.add_ptr(fwd);
                let td = b.add_typedef("long_t", long);
                b.add_struct(
                    "task___mine",
                    16,
                    &[MemberDef::new("mm", p, 0), MemberDef::new("flags", td, 8)],
                )
            },
            "task"
        ));
    }

    #[test]
    fn a_missing_member_or_a_different_width_or_sign_does_not_match() {
        let with_pid = |name: &'static str, size: u32, signed: bool| {
            move |b: &mut BtfBuilder| {
                let i = b.add_int(if size == 4 { "int" } else { "long" }, size, signed);
                b.add_struct("task", 8, &[MemberDef::new(name, i, 0)])
            }
        };
        assert!(check(with_pid("pid", 4, true), "task"));
        assert!(!check(with_pid("tgid", 4, true), "task"));
        assert!(!check(with_pid("pid", 8, true), "task"));
        assert!(!check(
            |b| {
                let u = b.add_int("int", 4, false);
                b.add_struct("task", 8, &[MemberDef::new("pid", u, 0)])
            },
            "task"
        ));
    }

    #[test]
    fn behind_a_pointer_only_names_and_kinds_count() {
        // The local `struct mm` has a member the kernel's lacks: fine behind a pointer...
        let ptr_to_mm = |b: &mut BtfBuilder| {
            let c = b.add_int("char", 1, false);
            let mm = b.add_struct("mm", 1, &[MemberDef::new("nope", c, 0)]);
            let p = b.add_ptr(mm);
            b.add_struct("task", 8, &[MemberDef::new("mm", p, 0)])
        };
        assert!(check(ptr_to_mm, "task"));
        // ...but a union where the kernel has a struct is a different kind.
        assert!(!check(
            |b| {
                let mm = b.add_union("mm", 0, &[]);
                let p = b.add_ptr(mm);
                b.add_struct("task", 8, &[MemberDef::new("mm", p, 0)])
            },
            "task"
        ));
    }

    #[test]
    fn enums_match_by_names_and_size_not_values() {
        assert!(check(
            |b| b.add_enum("state", 4, false, &[("SLEEPING", 7)]),
            "state"
        ));
        assert!(!check(
            |b| b.add_enum("state", 4, false, &[("ZOMBIE", 1)]),
            "state"
        ));
        assert!(!check(
            |b| b.add_enum("state", 8, false, &[("RUNNING", 0)]),
            "state"
        ));
    }
}
