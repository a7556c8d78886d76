//! fentry/fexit: a kernel function's parameters and return type from its BTF prototype, and
//! the prototype's shapes (where each argument and the return value sit in the context),
//! converted once per distinct prototype ([`super::super::proto_cache`]).

use super::{
    Btf, BtfClass, FactClass, Hooks, ProbeContext, ProbeKind, Read, TargetArgs, TargetKind,
};
use crate::sema::proto_cache::ProtoCache;
use std::sync::Arc;

/// The shape class of BTF type `id` (what grouping and the argument slots need).
pub(in crate::sema) fn fact_class(btf: &Btf, id: u32) -> FactClass {
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

/// The arguments of kernel function `func` (BTF id `btf_id` when expansion found it) for
/// target `name`; `convert`: give them script types (the probe reads `args`/`retval`).
pub(super) fn args(
    protos: &mut ProtoCache,
    btf: &Arc<Btf>,
    module: Option<&str>,
    func: &str,
    btf_id: Option<u32>,
    name: &str,
    convert: bool,
) -> Result<TargetArgs, String> {
    let id = btf_id
        .or_else(|| btf.find_func(func))
        .ok_or_else(|| format!("no BTF for function {func}"))?;
    protos.func_args(btf, module, id, name, convert)
}

pub(super) const FENTRY: Hooks = Hooks {
    kinds: &[ProbeKind::Fentry, ProbeKind::Fexit],
    target_args,
};
pub(super) const FEXIT: Hooks = FENTRY;

/// A BTF function's parameters and return type; `fentry:bpf:` targets have no `args`
/// (bpftrace has none for these either).
fn target_args(_: &mut ProbeContext, r: &mut Read<'_>) -> Result<TargetArgs, String> {
    match &r.t.kind {
        TargetKind::KernelFunc {
            module,
            func,
            btf_id,
            ..
        } => {
            let b = r.btf(module.as_deref())?;
            args(
                r.protos,
                &b,
                module.as_deref(),
                func,
                *btf_id,
                &r.t.name,
                r.uses_args,
            )
        }
        _ => Ok(r.plain()),
    }
}
