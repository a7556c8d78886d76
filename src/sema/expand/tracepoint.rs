//! Tracepoint targets from tracefs (`category:name`, either part a wildcard).

use super::{has_wildcard, Cx, ExpandError, KernelInfoError, Target, TargetKind};

pub(super) fn expand(cx: &Cx<'_>, category: &str, name: &str) -> Result<Vec<Target>, ExpandError> {
    // A literal name needs no directory listing: its (cached) format says it exists.
    if !has_wildcard(category) && !has_wildcard(name) {
        return match cx.k.tracepoint_format(category, name) {
            Ok(_) => Ok(vec![Target {
                name: format!("tracepoint:{category}:{name}"),
                kind: TargetKind::Tracepoint {
                    category: category.to_string(),
                    name: name.to_string(),
                },
            }]),
            Err(KernelInfoError::NoTracepoint { .. }) => Ok(Vec::new()),
            Err(e) => Err(cx.kerr(e)),
        };
    }
    Ok(cx
        .k
        .tracepoints(&format!("{category}:{name}"))
        .map_err(|e| cx.kerr(e))?
        .into_iter()
        .map(|t| Target {
            name: format!("tracepoint:{}:{}", t.category, t.name),
            kind: TargetKind::Tracepoint {
                category: t.category,
                name: t.name,
            },
        })
        .collect())
}
