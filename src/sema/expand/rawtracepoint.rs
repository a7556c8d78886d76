//! Raw tracepoint targets: BTF's `btf_trace_<name>` typedefs (of vmlinux or a module).

use super::{
    Cx, ExpandError, Glob, KernelInfo, KernelInfoError, Kind, Target, TargetKind, TypeKind,
};

pub(super) fn expand(
    cx: &Cx<'_>,
    module: Option<&str>,
    name: &str,
) -> Result<Vec<Target>, ExpandError> {
    raw_tracepoints(cx.k, module, name).map_err(|e| cx.kerr(e))
}

fn raw_tracepoints(
    k: &dyn KernelInfo,
    module: Option<&str>,
    pattern: &str,
) -> Result<Vec<Target>, KernelInfoError> {
    let g = Glob::new(pattern).map_err(|e| KernelInfoError::Unavailable {
        what: "raw tracepoint pattern".into(),
        reason: e.to_string(),
    })?;
    let btf = k.btf(module)?;
    let mut names: Vec<&str> = Vec::new();
    if g.is_literal() {
        if btf
            .find_type(Kind::Typedef, &format!("btf_trace_{pattern}"))
            .is_some()
        {
            names.push(pattern);
        }
    } else {
        for t in btf.types() {
            if let TypeKind::Typedef(_) = t.kind {
                if let Some(n) = t.name.strip_prefix("btf_trace_") {
                    if g.matches(n) {
                        names.push(n);
                    }
                }
            }
        }
        names.sort_unstable();
        names.dedup();
    }
    let m = module.unwrap_or("vmlinux");
    Ok(names
        .into_iter()
        .map(|n| Target {
            name: format!("rawtracepoint:{m}:{n}"),
            kind: TargetKind::RawTracepoint {
                module: module.filter(|m| *m != "vmlinux").map(str::to_string),
                name: n.to_string(),
            },
        })
        .collect())
}
