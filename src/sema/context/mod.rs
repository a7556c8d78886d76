//! Per-probe context: what `args`, `args.NAME`, `argN`, `retval` and `func` mean in a probe,
//! built from its expanded targets — BTF prototypes (fentry/fexit), `btf_trace_<name>`
//! (rawtracepoint), tracefs formats (tracepoint), DWARF (uprobes); each kind's reading is in
//! its own file beside this one, named as in [`crate::kinds`].
//!
//! Input: the probe's attach points with their [`Target`]s and a [`KernelInfo`]. Output: a
//! [`ProbeContext`] the type rules query; per target, the named arguments with their types, so
//! a field missing in some targets of a wildcard is a warning naming them.
//! Invariant: building a context never fails; a target whose prototype/format cannot be read
//! has no arguments and is named in [`ProbeContext::unreadable`].

use std::sync::Arc;

crate::kinds::kind_modules!();
pub(super) use fentry::fact_class;

use super::ctypes::btf_to_type;
use super::expand::{Target, TargetKind};
use super::types::{AddrSpace, Type};
use crate::btf::{Btf, TypeClass as BtfClass};
use crate::kernel::info::KernelInfo;
use crate::kernel::tracefs::{Field, FieldLayout};
use crate::syntax::ast::ProbeKind;
use crate::template::{TargetProto, TypeClass as FactClass};

/// What reading one target's arguments has at hand.
struct Read<'a> {
    kind: ProbeKind,
    t: &'a Target,
    kernel: &'a dyn KernelInfo,
    max_strlen: usize,
    protos: &'a mut super::proto_cache::ProtoCache,
    /// The probe reads `args` or `retval` ([`ProbeContext::build`]).
    uses_args: bool,
}

impl Read<'_> {
    fn btf(&self, module: Option<&str>) -> Result<Arc<Btf>, String> {
        self.kernel.btf(module).map_err(|e| e.to_string())
    }

    /// What kinds whose programs see only registers have: no `args`, `retval` the raw
    /// return register.
    fn plain(&self) -> TargetArgs {
        TargetArgs {
            name: self.t.name.clone(),
            retval: Some(Type::U64),
            ..TargetArgs::default()
        }
    }
}

/// How a kind reads its targets' arguments, from the kind's file here.
struct Hooks {
    /// The kinds it is for (none: [`PLAIN`], any kind without a file here).
    kinds: &'static [ProbeKind],
    /// One target's arguments (an error: why they could not be read).
    target_args: fn(&mut ProbeContext, &mut Read<'_>) -> Result<TargetArgs, String>,
}

/// Kinds whose programs see only registers (or nothing): [`Read::plain`].
const PLAIN: Hooks = Hooks {
    kinds: &[],
    target_args: |_, r| Ok(r.plain()),
};

/// The readers, one per kind in [`crate::kinds::KINDS`]' order.
const READERS: [&Hooks; crate::kinds::KINDS.len()] = crate::kinds::kind_table!();

/// One target's arguments.
#[derive(Clone, Debug, Default)]
pub struct TargetArgs {
    /// Full probe name of the target (`fentry:vmlinux:vfs_read`).
    pub name: String,
    /// Named arguments in order, with their types (`None`: a type strobe cannot hold); shared
    /// by the targets of one prototype ([`super::proto_cache`]).
    pub args: Arc<Vec<(String, Option<Type>)>>,
    pub retval: Option<Type>,
    /// Fact shapes, for grouping (fentry/fexit).
    pub proto: Option<TargetProto>,
    /// A tracepoint's fields as tracefs' format gives them (offsets and sizes in the record).
    pub fields: Vec<Field>,
    /// Why the target's arguments could not be read, if they could not.
    pub unreadable: Option<String>,
    /// The BTF function an iterator's program loads against (`bpf_iter_NAME` in vmlinux).
    pub btf_id: Option<u32>,
}

/// What a probe's body can refer to.
#[derive(Clone, Debug, Default)]
pub struct ProbeContext {
    /// The kinds of the probe's attach points (a probe may mix them).
    pub kinds: Vec<ProbeKind>,
    /// Per target of every attach point, in order.
    pub targets: Vec<TargetArgs>,
    /// Targets whose arguments could not be read, with why.
    pub unreadable: Vec<(String, String)>,
    /// `ctx` of an iter probe: a pointer to BTF's `struct bpf_iter__<name>`.
    pub iter_ctx: Option<Type>,
    /// The binaries of uprobe/uretprobe targets, whose DWARF types casts may name.
    pub user_binaries: Vec<std::path::PathBuf>,
}

/// The result of looking `args.NAME` up across a probe's targets.
#[derive(Clone, Debug, PartialEq)]
pub enum ArgLookup {
    /// Found (in at least one target): its type, and the targets lacking it.
    Found { ty: Type, missing_in: Vec<String> },
    /// Found but of a type strobe cannot hold.
    Unsupported,
    /// In no target: the names of the first target's arguments.
    Missing { available: Vec<String> },
}

impl ProbeContext {
    /// Builds the context of a probe from its attach points' kinds and targets.
    /// `uses_args`: the probe reads `args` or `retval` ([`super::proto_cache::reads_args`]);
    /// without it fentry/fexit targets get no script types (shapes only) and uprobe targets
    /// get no DWARF prototype.
    pub fn build(
        attach: &[(ProbeKind, Vec<Target>)],
        kernel: &dyn KernelInfo,
        max_strlen: usize,
        uses_args: bool,
    ) -> ProbeContext {
        let mut cx = ProbeContext::default();
        let mut protos = super::proto_cache::ProtoCache::default();
        for (kind, targets) in attach {
            if !cx.kinds.contains(kind) {
                cx.kinds.push(*kind);
            }
            for t in targets {
                if let TargetKind::User { path, .. } = &t.kind {
                    if !cx.user_binaries.contains(path) {
                        cx.user_binaries.push(path.clone());
                    }
                }
                let mut read = Read {
                    kind: *kind,
                    t,
                    kernel,
                    max_strlen,
                    protos: &mut protos,
                    uses_args,
                };
                let hooks = READERS[*kind as usize];
                debug_assert!(hooks.kinds.is_empty() || hooks.kinds.contains(kind));
                match (hooks.target_args)(&mut cx, &mut read) {
                    Ok(a) => cx.targets.push(a),
                    Err(why) => {
                        cx.unreadable.push((t.name.clone(), why.clone()));
                        cx.targets.push(TargetArgs {
                            name: t.name.clone(),
                            unreadable: Some(why),
                            ..TargetArgs::default()
                        });
                    }
                }
            }
        }
        cx
    }

    pub(super) fn iter_ctx_set(&mut self, t: Option<Type>) {
        if let Some(t) = t {
            self.iter_ctx
                .get_or_insert(Type::ptr_to(t, AddrSpace::Kernel));
        }
    }

    /// `args.NAME` across all targets.
    pub fn arg(&self, name: &str) -> ArgLookup {
        let mut found: Option<Option<Type>> = None;
        let mut missing_in = Vec::new();
        for t in &self.targets {
            match t.args.iter().find(|(n, _)| n == name) {
                Some((_, ty)) => {
                    if found.is_none() {
                        found = Some(ty.clone());
                    }
                }
                None => missing_in.push(t.name.clone()),
            }
        }
        match found {
            Some(Some(ty)) => ArgLookup::Found { ty, missing_in },
            Some(None) => ArgLookup::Unsupported,
            None => ArgLookup::Missing {
                available: self
                    .targets
                    .first()
                    .map(|t| t.args.iter().map(|a| a.0.clone()).collect())
                    .unwrap_or_default(),
            },
        }
    }

    /// `args` as one value: a record of the first target's arguments.
    pub fn args_record(&self) -> Type {
        Type::Record(
            self.targets
                .first()
                .map(|t| {
                    t.args
                        .iter()
                        .map(|(n, ty)| (n.clone(), ty.clone().unwrap_or(Type::U64)))
                        .collect()
                })
                .unwrap_or_default(),
        )
    }

    /// `retval`'s type: the first target's return type (`int64` when unknown).
    pub fn retval(&self) -> Type {
        self.targets
            .iter()
            .find_map(|t| t.retval.clone())
            .filter(|t| !t.is_none())
            .unwrap_or(Type::I64)
    }

    /// `func`'s type for the probe's first kind.
    pub fn func_type(&self) -> Type {
        // fentry/fexit clones share one program: the name comes from bpf_get_func_ip at
        // run time, symbolized like a kprobe's.
        match self.kinds.first().map(|k| k.info()) {
            Some(i) if i.facts.func_symbol && i.user_space() => Type::USym,
            Some(i) if i.facts.func_symbol => Type::KSym,
            _ => Type::Str { size: 128 },
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_reader_table_has_one_entry_per_kind_in_order() {
        for (i, k) in crate::kinds::KINDS.iter().enumerate() {
            let h = READERS[i];
            assert!(
                h.kinds.is_empty() || h.kinds.contains(&k.kind),
                "{} is out of place",
                k.name
            );
        }
    }
}
