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

mod fentry;
pub(super) use fentry::fact_class;
mod iter;
mod kprobe;
mod rawtracepoint;
mod tracepoint;
mod uprobe;

use super::ctypes::btf_to_type;
use super::expand::{Target, TargetKind};
use super::types::{AddrSpace, Type};
use crate::btf::{Btf, TypeClass as BtfClass};
use crate::kernel::info::KernelInfo;
use crate::kernel::tracefs::{Field, FieldLayout};
use crate::syntax::ast::ProbeKind;
use crate::template::{TargetProto, TypeClass as FactClass};

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
                let r = match (&t.kind, kind) {
                    (
                        TargetKind::User {
                            path,
                            func,
                            offset: None | Some(0),
                            ..
                        },
                        ProbeKind::Uprobe | ProbeKind::Uretprobe,
                    ) if uses_args && !func.is_empty() => {
                        match uprobe::args(path, func, &t.name, *kind) {
                            // Without DWARF a uretprobe's retval is the raw register.
                            Err(_) if *kind == ProbeKind::Uretprobe => {
                                cx.target_args(*kind, t, kernel, max_strlen, &mut protos, uses_args)
                            }
                            r => r.map(Some),
                        }
                    }
                    _ => cx.target_args(*kind, t, kernel, max_strlen, &mut protos, uses_args),
                };
                match r {
                    Ok(Some(a)) => cx.targets.push(a),
                    Ok(None) => {}
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

    fn iter_ctx_set(&mut self, t: Option<Type>) {
        if let Some(t) = t {
            self.iter_ctx
                .get_or_insert(Type::ptr_to(t, AddrSpace::Kernel));
        }
    }

    fn target_args(
        &mut self,
        kind: ProbeKind,
        t: &Target,
        kernel: &dyn KernelInfo,
        max_strlen: usize,
        protos: &mut super::proto_cache::ProtoCache,
        uses_args: bool,
    ) -> Result<Option<TargetArgs>, String> {
        let btf = |m: Option<&str>| -> Result<Arc<Btf>, String> {
            kernel.btf(m).map_err(|e| e.to_string())
        };
        // Kinds whose programs see only registers: `retval` is the raw return register.
        let plain = || TargetArgs {
            name: t.name.clone(),
            retval: Some(Type::U64),
            ..TargetArgs::default()
        };
        Ok(Some(match kind {
            ProbeKind::Fentry | ProbeKind::Fexit => match &t.kind {
                TargetKind::KernelFunc {
                    module,
                    func,
                    btf_id,
                    ..
                } => {
                    let b = btf(module.as_deref())?;
                    fentry::args(
                        protos,
                        &b,
                        module.as_deref(),
                        func,
                        *btf_id,
                        &t.name,
                        uses_args,
                    )?
                }
                // `fentry:bpf:`: no `args` (bpftrace has none for these either).
                _ => plain(),
            },
            ProbeKind::Kretprobe => match &t.kind {
                TargetKind::KernelFunc { module, func, .. } => kprobe::kretprobe_args(
                    &t.name,
                    btf(module.as_deref()).ok(),
                    module.as_deref(),
                    func,
                ),
                _ => plain(),
            },
            ProbeKind::Tracepoint => match &t.kind {
                TargetKind::Tracepoint { category, name } => {
                    tracepoint::args(&t.name, kernel, category, name, max_strlen)?
                }
                _ => plain(),
            },
            ProbeKind::RawTracepoint => match &t.kind {
                TargetKind::RawTracepoint { module, name } => {
                    let b = btf(module.as_deref())?;
                    rawtracepoint::args(&t.name, &b, module.as_deref(), name)?
                }
                _ => plain(),
            },
            ProbeKind::Iter => {
                let (args, ctx) = iter::args(&t.name, btf(None).ok());
                self.iter_ctx_set(ctx);
                args
            }
            ProbeKind::Begin
            | ProbeKind::End
            | ProbeKind::SelfEvent
            | ProbeKind::Test
            | ProbeKind::Bench
            | ProbeKind::Kprobe
            | ProbeKind::Uprobe
            | ProbeKind::Uretprobe
            | ProbeKind::Usdt
            | ProbeKind::Profile
            | ProbeKind::Interval
            | ProbeKind::Software
            | ProbeKind::Hardware
            | ProbeKind::Watchpoint
            | ProbeKind::AsyncWatchpoint => plain(),
        }))
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
