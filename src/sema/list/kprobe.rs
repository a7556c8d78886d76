//! `kprobe:`/`kretprobe:`: `-lv` lists the BTF prototype as `argN` or the return type.

use super::Hooks;
use crate::kernel::info::KernelInfo;
use crate::sema::expand::{Target, TargetKind};
use crate::syntax::ast::ProbeKind;

pub(super) const KPROBE: Hooks = Hooks {
    kinds: &[ProbeKind::Kprobe, ProbeKind::Kretprobe],
    arg_lines,
    ..super::PLAIN
};
pub(super) const KRETPROBE: Hooks = KPROBE;

fn arg_lines(kind: ProbeKind, t: &Target, k: &dyn KernelInfo) -> Vec<String> {
    match &t.kind {
        TargetKind::KernelFunc {
            module,
            func,
            btf_id,
            ..
        } => kprobe_arg_lines(kind.info().facts.retprobe, module, func, *btf_id, k),
        _ => Vec::new(),
    }
}

/// `-lv` lines of a kprobe (`    struct file * arg0`: the BTF prototype's parameters as the
/// `argN` builtins number them; floating-point ones travel in other registers and have no
/// `argN`) or a kretprobe (`    ssize_t retval`, `    void`), as bpftrace lists them. A
/// function without BTF (kprobes reach more functions than BTF describes) lists nothing.
fn kprobe_arg_lines(
    retprobe: bool,
    module: &Option<String>,
    func: &str,
    btf_id: Option<u32>,
    k: &dyn KernelInfo,
) -> Vec<String> {
    let Ok(btf) = k.btf(module.as_deref()) else {
        return Vec::new();
    };
    let Some(proto) = btf_id
        .or_else(|| btf.find_func(func))
        .and_then(|id| btf.func_proto(id).ok())
    else {
        return Vec::new();
    };
    if retprobe {
        return vec![if proto.ret == 0 {
            "    void".to_string()
        } else {
            format!("    {} retval", btf.type_to_string(proto.ret))
        }];
    }
    proto
        .params()
        .filter(|prm| {
            !matches!(
                btf.classify(prm.type_id),
                Ok(crate::btf::TypeClass::Float { .. })
            )
        })
        .enumerate()
        .map(|(n, prm)| format!("    {} arg{n}", btf.type_to_string(prm.type_id)))
        .collect()
}
