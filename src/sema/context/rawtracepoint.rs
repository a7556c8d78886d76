//! rawtracepoint: the arguments of BTF's `btf_trace_<name>` (after the `void *__data` the
//! kernel passes internally), named and typed.

use super::{btf_to_type, AddrSpace, Btf, TargetArgs};

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
