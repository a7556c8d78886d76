//! iter: `ctx` points at BTF's `struct bpf_iter__<name>`; the program loads against the
//! `bpf_iter_<name>` function.

use std::sync::Arc;

use super::{btf_to_type, AddrSpace, Btf, Hooks, ProbeContext, ProbeKind, Read, TargetArgs, Type};

/// The target's arguments (its BTF function id) and the type of `ctx`'s object, if known.
pub(super) fn args(target: &str, btf: Option<Arc<Btf>>) -> (TargetArgs, Option<Type>) {
    let iter = target.strip_prefix("iter:").unwrap_or(target);
    let iter = iter.split(':').next().unwrap_or(iter);
    let mut btf_id = None;
    let mut ctx = None;
    if let Some(b) = btf {
        if let Some(id) = b.find_struct(&format!("bpf_iter__{iter}")) {
            ctx = btf_to_type(&b, None, id, AddrSpace::Kernel);
        }
        btf_id = b.find_func(&format!("bpf_iter_{iter}"));
    }
    let args = TargetArgs {
        name: target.to_string(),
        btf_id,
        ..TargetArgs::default()
    };
    (args, ctx)
}

pub(super) const ITER: Hooks = Hooks {
    kinds: &[ProbeKind::Iter],
    target_args,
};

/// The iterator's context fields; its typed `ctx` goes to the probe's context.
fn target_args(cx: &mut ProbeContext, r: &mut Read<'_>) -> Result<TargetArgs, String> {
    let (args, ctx) = args(&r.t.name, r.btf(None).ok());
    cx.iter_ctx_set(ctx);
    Ok(args)
}
