//! rawtracepoint: the arguments of BTF's `btf_trace_<name>` (after the `void *__data` the
//! kernel passes internally), named and typed.

use super::{
    btf_to_type, AddrSpace, Btf, Hooks, ProbeContext, ProbeKind, Read, TargetArgs, TargetKind,
};

pub(super) fn args(
    target: &str,
    btf: &Btf,
    module: Option<&str>,
    name: &str,
) -> Result<TargetArgs, String> {
    let params = btf.raw_tracepoint_args(name).map_err(|e| e.to_string())?;
    Ok(TargetArgs {
        name: target.to_string(),
        args: std::sync::Arc::new(
            params
                .iter()
                .map(|p| {
                    (
                        p.name.to_string(),
                        btf_to_type(btf, module, p.type_id, AddrSpace::Kernel),
                    )
                })
                .collect(),
        ),
        ..TargetArgs::default()
    })
}

pub(super) const RAWTRACEPOINT: Hooks = Hooks {
    kinds: &[ProbeKind::RawTracepoint],
    target_args,
};

fn target_args(_: &mut ProbeContext, r: &mut Read<'_>) -> Result<TargetArgs, String> {
    match &r.t.kind {
        TargetKind::RawTracepoint { module, name } => {
            let b = r.btf(module.as_deref())?;
            args(&r.t.name, &b, module.as_deref(), name)
        }
        _ => Ok(r.plain()),
    }
}
