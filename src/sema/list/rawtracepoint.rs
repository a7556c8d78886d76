//! `rawtracepoint:`: `-lv` lists the tracepoint's BTF arguments.

use super::Hooks;
use crate::kernel::info::KernelInfo;
use crate::sema::expand::{Target, TargetKind};
use crate::syntax::ast::ProbeKind;

pub(super) const RAWTRACEPOINT: Hooks = Hooks {
    kinds: &[ProbeKind::RawTracepoint],
    arg_lines,
    ..super::PLAIN
};

fn arg_lines(_: ProbeKind, t: &Target, k: &dyn KernelInfo) -> Vec<String> {
    let mut lines = Vec::new();
    if let TargetKind::RawTracepoint { module, name } = &t.kind {
        let Ok(btf) = k.btf(module.as_deref()) else {
            return lines;
        };
        if let Ok(params) = btf.raw_tracepoint_args(name) {
            for prm in params {
                lines.push(format!(
                    "    {} {}",
                    btf.type_to_string(prm.type_id),
                    prm.name
                ));
            }
        }
    }
    lines
}
