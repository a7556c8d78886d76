//! `fentry:`/`fexit:`: `-lv` lists the BTF prototype's parameters and return type.

use super::Hooks;
use crate::kernel::info::KernelInfo;
use crate::sema::expand::{Target, TargetKind};
use crate::syntax::ast::ProbeKind;

pub(super) const FENTRY: Hooks = Hooks {
    kinds: &[ProbeKind::Fentry, ProbeKind::Fexit],
    arg_lines,
    ..super::PLAIN
};
pub(super) const FEXIT: Hooks = FENTRY;

fn arg_lines(_: ProbeKind, t: &Target, k: &dyn KernelInfo) -> Vec<String> {
    let mut lines = Vec::new();
    if let TargetKind::KernelFunc {
        module,
        func,
        btf_id,
        ..
    } = &t.kind
    {
        let Ok(btf) = k.btf(module.as_deref()) else {
            return lines;
        };
        let Some(id) = btf_id.or_else(|| btf.find_func(func)) else {
            return lines;
        };
        if let Ok(p) = btf.func_proto(id) {
            for prm in p.params() {
                lines.push(format!(
                    "    {} {}",
                    btf.type_to_string(prm.type_id),
                    prm.name
                ));
            }
            // A void function has no return value to list (bpftrace's rule).
            if p.ret != 0 {
                lines.push(format!("    {} retval", btf.type_to_string(p.ret)));
            }
        }
    }
    lines
}
