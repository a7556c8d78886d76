//! kprobe/kretprobe targets: kernel functions from `available_filter_functions` when readable,
//! else from BTF; an address; kretprobes leave out the functions bpftrace bans.

use super::{glob, has_wildcard, Cx, ExpandError, KernelInfo, Target, TargetKind};

/// Functions a kretprobe must not attach to: the return trampoline takes these locks itself
/// (bpftrace's list).
const BANNED_KRETPROBES: &[&str] = &[
    "_raw_spin_lock",
    "_raw_spin_lock_irqsave",
    "_raw_spin_unlock_irqrestore",
    "queued_spin_lock_slowpath",
];

pub(super) fn expand(
    cx: &Cx<'_>,
    module: Option<&str>,
    func: &str,
    offset: Option<u64>,
    address: Option<u64>,
) -> Result<Vec<Target>, ExpandError> {
    let kind_name = cx.kind_name;
    if let Some(addr) = address {
        return Ok(vec![Target {
            name: format!("{kind_name}:0x{addr:x}"),
            kind: TargetKind::KernelFunc {
                module: None,
                func: String::new(),
                btf_id: None,
                offset: Some(addr),
            },
        }]);
    }
    let mut ts = kprobe_targets(cx.k, kind_name, module, func, offset, &cx.probe)?;
    if cx.ap.kind == crate::syntax::ast::ProbeKind::Kretprobe {
        // A return probe on these can lock the machine up (bpftrace bans them):
        // named alone it is an error, a wildcard leaves them out.
        if !has_wildcard(func) && BANNED_KRETPROBES.contains(&func) {
            return Err(ExpandError::Banned {
                probe: cx.probe.clone(),
            });
        }
        ts.retain(|t| match &t.kind {
            TargetKind::KernelFunc { func, .. } => !BANNED_KRETPROBES.contains(&func.as_str()),
            _ => true,
        });
    }
    Ok(ts)
}

fn kprobe_targets(
    k: &dyn KernelInfo,
    kind_name: &str,
    module: Option<&str>,
    func: &str,
    offset: Option<u64>,
    probe: &str,
) -> Result<Vec<Target>, ExpandError> {
    let g = glob(probe, func)?;
    let name = |m: &Option<String>, f: &str| match m {
        Some(m) => format!("{kind_name}:{m}:{f}"),
        None => format!("{kind_name}:{f}"),
    };
    let funcs: Vec<(Option<String>, String, Option<u32>)> = match k.kprobe_functions() {
        Some(list) => list
            .into_iter()
            .filter(|(m, f)| g.matches(f) && (module.is_none() || m.as_deref() == module))
            .map(|(m, f)| (m, f, None))
            .collect(),
        // available_filter_functions unreadable (lockdown): BTF functions are the best guess.
        None => k
            .btf_functions(module, &g)
            .map_err(|source| ExpandError::Kernel {
                probe: probe.to_string(),
                source,
            })?
            .into_iter()
            .map(|f| (f.module, f.name, Some(f.btf_id)))
            .collect(),
    };
    Ok(funcs
        .into_iter()
        .map(|(m, f, id)| Target {
            name: name(&m, &f),
            kind: TargetKind::KernelFunc {
                module: m,
                func: f,
                btf_id: id,
                offset,
            },
        })
        .collect())
}
