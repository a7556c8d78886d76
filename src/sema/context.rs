//! Per-probe context: what `args`, `args.NAME`, `argN`, `retval` and `func` mean in a probe,
//! built from its expanded targets — BTF prototypes (fentry/fexit), `btf_trace_<name>`
//! (rawtracepoint), tracefs formats (tracepoint).
//!
//! Input: the probe's attach points with their [`Target`]s and a [`KernelInfo`]. Output: a
//! [`ProbeContext`] the type rules query; per target, the named arguments with their types, so
//! a field missing in some targets of a wildcard is a warning naming them.
//! Invariant: building a context never fails; a target whose prototype/format cannot be read
//! has no arguments and is named in [`ProbeContext::unreadable`].

use std::sync::Arc;

use super::ctypes::btf_to_type;
use super::expand::{Target, TargetKind};
use super::types::{AddrSpace, Type};
use crate::btf::{Btf, TypeClass as BtfClass};
use crate::kernel::info::KernelInfo;
use crate::kernel::tracefs::{Field, FieldLayout};
use crate::syntax::ast::ProbeKind;
use crate::template::{TargetProto, TypeClass as FactClass};

/// Probe kinds that have `args`.
pub const ARGS_KINDS: &[ProbeKind] = &[
    ProbeKind::Tracepoint,
    ProbeKind::RawTracepoint,
    ProbeKind::Fentry,
    ProbeKind::Fexit,
    ProbeKind::Uprobe,
];

/// Probe kinds that have `retval`.
pub const RETVAL_KINDS: &[ProbeKind] =
    &[ProbeKind::Fexit, ProbeKind::Kretprobe, ProbeKind::Uretprobe];

/// Probe kinds that have `arg0`…`argN`.
pub const ARGN_KINDS: &[ProbeKind] = &[
    ProbeKind::Kprobe,
    ProbeKind::Uprobe,
    ProbeKind::Usdt,
    ProbeKind::RawTracepoint,
];

/// Probe kinds that have `func`.
pub const FUNC_KINDS: &[ProbeKind] = &[
    ProbeKind::Kprobe,
    ProbeKind::Kretprobe,
    ProbeKind::Uprobe,
    ProbeKind::Uretprobe,
    ProbeKind::Fentry,
    ProbeKind::Fexit,
    ProbeKind::Usdt,
];

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

/// A uprobe target's parameters (`args`) and return type (`retval`) from the binary's DWARF.
fn user_args(
    path: &std::path::Path,
    func: &str,
    name: &str,
    kind: ProbeKind,
) -> Result<TargetArgs, String> {
    let info = crate::dwarf::for_binary(path).map_err(|e| e.to_string())?;
    let f = info
        .function(func)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("no DWARF for function {func} in {}", path.display()))?;
    let btf = info.btf();
    let module = crate::dwarf::module_name(path);
    let mut out = TargetArgs {
        name: name.to_string(),
        ..TargetArgs::default()
    };
    if kind == ProbeKind::Uprobe {
        let args = f.params.iter().map(|p| {
            let ty = btf_to_type(&btf, Some(&module), p.type_id, AddrSpace::User)
                // A struct or union passed by value is in registers or on the stack in ways
                // the calling convention decides per type: not read.
                .filter(|t| !matches!(t, Type::CStruct(_)));
            (p.name.clone(), ty)
        });
        out.args = Arc::new(args.collect());
    }
    out.retval = btf_to_type(&btf, Some(&module), f.ret, AddrSpace::User)
        .filter(|t| t.is_scalar() || matches!(t, Type::Pointer { .. }));
    Ok(out)
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

/// The type of tracepoint field `f`. A pointer to a struct or union (`struct
/// __kernel_timespec *rqtp`) points at the kernel BTF's type of that name when there is one,
/// so its members can be read (`args.rqtp->tv_sec`, as bpftrace allows); otherwise it is
/// an opaque pointer.
fn tracepoint_field_type(
    f: &Field,
    category: &str,
    max_strlen: usize,
    btf: Option<&Btf>,
) -> Option<Type> {
    let space = if category == "syscalls" {
        AddrSpace::User
    } else {
        AddrSpace::Kernel
    };
    match f.layout {
        FieldLayout::DataLoc | FieldLayout::RelLoc | FieldLayout::FlexibleArray
            if f.type_text == "char" =>
        {
            return Some(Type::Str { size: max_strlen })
        }
        FieldLayout::Array { len } if f.type_text == "char" => {
            return Some(Type::Str { size: len as usize })
        }
        _ => {}
    }
    let t = f.type_text.trim();
    if t.ends_with('*') {
        // `const char *const *argv`: one pointer per `*`, qualifiers dropped.
        let mut base = t;
        let mut depth = 0;
        while let Some(rest) = base.strip_suffix('*') {
            depth += 1;
            let rest = rest.trim_end();
            base = match rest.strip_suffix("const") {
                Some(r) if r.is_empty() || r.ends_with([' ', '*']) => r.trim_end(),
                _ => rest,
            };
        }
        let base = base.trim().trim_start_matches("const ").trim();
        let pointee = super::ctypes::named_type(base, max_strlen)
            .filter(|t| !t.is_string())
            .or_else(|| {
                let b = btf?;
                let id = match base.split_once(' ') {
                    Some(("struct", n)) => b.find_struct(n.trim())?,
                    Some(("union", n)) => b.find_union(n.trim())?,
                    _ => return None,
                };
                btf_to_type(b, None, id, space)
            });
        let mut ty = match pointee {
            Some(Type::None) | None => Type::Pointer {
                pointee: super::types::Pointee::Opaque,
                space,
            },
            Some(p) => Type::ptr_to(p, space),
        };
        for _ in 1..depth {
            ty = Type::ptr_to(ty, space);
        }
        return Some(ty);
    }
    let scalar = match (f.size, f.layout) {
        (_, FieldLayout::Array { len }) if len > 0 => {
            let elem = (f.size / len).clamp(1, 8) as u8;
            return Some(Type::Array {
                elem: Box::new(Type::Int {
                    bytes: elem,
                    signed: f.signed,
                }),
                len: len as usize,
            });
        }
        (1 | 2 | 4 | 8, FieldLayout::Scalar) => Type::Int {
            bytes: f.size as u8,
            signed: f.signed,
        },
        _ => return None,
    };
    if let (Some(name), Some(b), Type::Int { bytes, signed }) =
        (t.strip_prefix("enum "), btf, &scalar)
    {
        // `enum skb_drop_reason reason`: printed by enumerator name when the kernel's BTF has
        // the enum; the record's size and signedness stay tracefs'.
        if let Some(Type::Enum {
            name, ty, variants, ..
        }) = b
            .find_enum(name.trim())
            .and_then(|id| btf_to_type(b, None, id, space))
        {
            return Some(Type::Enum {
                name,
                ty,
                bytes: *bytes,
                signed: *signed,
                variants,
            });
        }
    }
    Some(if t == "bool" { Type::Bool } else { scalar })
}

pub(super) fn fact_class(btf: &Btf, id: u32) -> FactClass {
    match btf.classify(id) {
        Ok(BtfClass::Void) => FactClass::Void,
        Ok(BtfClass::Int { size, signed, .. }) | Ok(BtfClass::Enum { size, signed }) => {
            FactClass::Int { size, signed }
        }
        Ok(BtfClass::Pointer { .. }) => FactClass::Pointer,
        Ok(BtfClass::Float { size }) => FactClass::Float { size },
        Ok(BtfClass::Record {
            size, union: false, ..
        }) => FactClass::Struct { size },
        Ok(BtfClass::Record {
            size, union: true, ..
        }) => FactClass::Union { size },
        _ => FactClass::Other,
    }
}

/// The grouping prototype of an fentry/fexit target (parameter and return shapes from BTF),
/// without converting its types to script types: what the lowering needs per target, at a
/// fraction of a [`ProbeContext`]'s cost under `fentry:*`.
pub fn fentry_proto(kernel: &dyn KernelInfo, t: &Target) -> Option<TargetProto> {
    let TargetKind::KernelFunc {
        module,
        func,
        btf_id,
        ..
    } = &t.kind
    else {
        return None;
    };
    let btf = kernel.btf(module.as_deref()).ok()?;
    let id = btf_id.or_else(|| btf.find_func(func))?;
    let proto = btf.func_proto(id).ok()?;
    Some(TargetProto {
        name: t.name.clone(),
        params: proto
            .params()
            .map(|p| (p.name.to_string(), fact_class(&btf, p.type_id)))
            .collect(),
        ret: fact_class(&btf, proto.ret),
    })
}

impl ProbeContext {
    /// Builds the context of a probe from its attach points' kinds and targets.
    /// `uses_args`: the probe reads `args` or `retval` ([`super::proto_cache::reads_args`]);
    /// without it fentry/fexit targets get no script types (shapes only) and
    /// uprobe targets get no DWARF prototype.
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
                        match user_args(path, func, &t.name, *kind) {
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
                        cx.unreadable.push((t.name.clone(), why));
                        cx.targets.push(TargetArgs {
                            name: t.name.clone(),
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
        Ok(Some(match (&t.kind, kind) {
            (
                TargetKind::KernelFunc {
                    module,
                    func,
                    btf_id,
                    ..
                },
                ProbeKind::Fentry | ProbeKind::Fexit,
            ) => {
                let b = btf(module.as_deref())?;
                let id = btf_id
                    .or_else(|| b.find_func(func))
                    .ok_or_else(|| format!("no BTF for function {func}"))?;
                protos.func_args(&b, module.as_deref(), id, &t.name, uses_args)?
            }
            (TargetKind::KernelFunc { module, func, .. }, ProbeKind::Kretprobe) => {
                // kretprobe's retval has the function's return type when BTF knows it.
                let retval = btf(module.as_deref())
                    .ok()
                    .and_then(|b| {
                        let p = b.func_proto_by_name(func).ok()?;
                        btf_to_type(&b, module.as_deref(), p.ret, AddrSpace::Kernel)
                    })
                    .filter(|t| t.is_scalar())
                    .unwrap_or(Type::I64);
                TargetArgs {
                    name: t.name.clone(),
                    retval: Some(retval),
                    ..TargetArgs::default()
                }
            }
            (TargetKind::Tracepoint { category, name }, _) => {
                let f = kernel
                    .tracepoint_format(category, name)
                    .map_err(|e| e.to_string())?;
                let vmlinux = btf(None).ok();
                TargetArgs {
                    name: t.name.clone(),
                    args: Arc::new(
                        f.fields
                            .iter()
                            .map(|fl| {
                                (
                                    fl.name.clone(),
                                    tracepoint_field_type(
                                        fl,
                                        category,
                                        max_strlen,
                                        vmlinux.as_deref(),
                                    ),
                                )
                            })
                            .collect(),
                    ),
                    ..TargetArgs::default()
                }
            }
            (TargetKind::RawTracepoint { module, name }, _) => {
                let b = btf(module.as_deref())?;
                let params = b.raw_tracepoint_args(name).map_err(|e| e.to_string())?;
                TargetArgs {
                    name: t.name.clone(),
                    args: Arc::new(
                        params
                            .iter()
                            .map(|p| {
                                (
                                    p.name.to_string(),
                                    btf_to_type(
                                        &b,
                                        module.as_deref(),
                                        p.type_id,
                                        AddrSpace::Kernel,
                                    ),
                                )
                            })
                            .collect(),
                    ),
                    ..TargetArgs::default()
                }
            }
            (_, ProbeKind::Iter) => {
                let iter = t.name.strip_prefix("iter:").unwrap_or(&t.name);
                let iter = iter.split(':').next().unwrap_or(iter);
                if let Ok(b) = btf(None) {
                    if let Some(id) = b.find_struct(&format!("bpf_iter__{iter}")) {
                        self.iter_ctx_set(btf_to_type(&b, None, id, AddrSpace::Kernel));
                    }
                }
                TargetArgs {
                    name: t.name.clone(),
                    ..TargetArgs::default()
                }
            }
            _ => TargetArgs {
                name: t.name.clone(),
                retval: Some(Type::U64),
                ..TargetArgs::default()
            },
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
        match self.kinds.first() {
            Some(ProbeKind::Uprobe | ProbeKind::Uretprobe) => Type::USym,
            // fentry/fexit clones share one program: the name comes from bpf_get_func_ip at
            // run time, symbolized like a kprobe's.
            Some(
                ProbeKind::Kprobe | ProbeKind::Kretprobe | ProbeKind::Fentry | ProbeKind::Fexit,
            ) => Type::KSym,
            _ => Type::Str { size: 128 },
        }
    }
}
