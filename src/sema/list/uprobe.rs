//! `uprobe:`/`uretprobe:`: a pattern without a binary means every binary; `-lv` lists a
//! uprobe's DWARF parameters.

use super::Hooks;
use crate::kernel::info::KernelInfo;
use crate::sema::expand::{Target, TargetKind};
use crate::syntax::ast::ProbeKind;

pub(super) const UPROBE: Hooks = Hooks {
    kinds: &[ProbeKind::Uprobe, ProbeKind::Uretprobe],
    // `uprobe:PATTERN` is the function in every binary; `uretprobe:` patterns are expanded
    // as written.
    pattern: |kind, rest, _| {
        if kind.info().facts.retprobe {
            rest.to_string()
        } else {
            super::in_every_file(rest)
        }
    },
    arg_lines,
    ..super::PLAIN
};
pub(super) const URETPROBE: Hooks = UPROBE;

fn arg_lines(kind: ProbeKind, t: &Target, _k: &dyn KernelInfo) -> Vec<String> {
    let mut lines = Vec::new();
    match &t.kind {
        TargetKind::User { path, func, .. } if !kind.info().facts.retprobe && !func.is_empty() => {
            // The function's DWARF parameters, as bpftrace lists them (`    int* n`).
            let f = crate::dwarf::for_binary(path)
                .ok()
                .and_then(|d| d.function(func).ok().flatten());
            for p in f.iter().flat_map(|f| &f.params) {
                lines.push(format!("    {} {}", p.type_name, p.name));
            }
        }
        _ => {}
    }
    lines
}
