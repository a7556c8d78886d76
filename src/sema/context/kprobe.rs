//! kretprobe: `retval` has the function's return type when BTF knows it (a scalar), else
//! `int64`.

use std::sync::Arc;

use super::{
    btf_to_type, AddrSpace, Btf, Hooks, ProbeContext, ProbeKind, Read, TargetArgs, TargetKind, Type,
};

pub(super) fn kretprobe_args(
    target: &str,
    btf: Option<Arc<Btf>>,
    module: Option<&str>,
    func: &str,
) -> TargetArgs {
    let retval = btf
        .and_then(|b| {
            let p = b.func_proto_by_name(func).ok()?;
            btf_to_type(&b, module, p.ret, AddrSpace::Kernel)
        })
        .filter(|t| t.is_scalar())
        .unwrap_or(Type::I64);
    TargetArgs {
        name: target.to_string(),
        retval: Some(retval),
        ..TargetArgs::default()
    }
}

pub(super) const KPROBE: Hooks = Hooks {
    kinds: &[ProbeKind::Kprobe, ProbeKind::Kretprobe],
    target_args,
};
pub(super) const KRETPROBE: Hooks = KPROBE;

/// A kretprobe's `retval` type; a kprobe's registers only.
fn target_args(_: &mut ProbeContext, r: &mut Read<'_>) -> Result<TargetArgs, String> {
    Ok(match &r.t.kind {
        TargetKind::KernelFunc { module, func, .. } if r.kind.info().facts.retprobe => {
            kretprobe_args(
                &r.t.name,
                r.btf(module.as_deref()).ok(),
                module.as_deref(),
                func,
            )
        }
        _ => r.plain(),
    })
}
