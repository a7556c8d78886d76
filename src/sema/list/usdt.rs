//! `usdt:`: a pattern without a binary means every binary; listed sorted, once however many
//! sites a probe has (as bpftrace lists them); `-lv` lists the note's argument specs.

use super::Hooks;
use crate::kernel::info::KernelInfo;
use crate::sema::expand::{Target, TargetKind};
use crate::syntax::ast::ProbeKind;

pub(super) const USDT: Hooks = Hooks {
    kinds: &[ProbeKind::Usdt],
    pattern: |_, rest, _| super::in_every_file(rest),
    once_per_name: true,
    arg_lines,
    ..super::PLAIN
};

fn arg_lines(_: ProbeKind, t: &Target, _k: &dyn KernelInfo) -> Vec<String> {
    let mut lines = Vec::new();
    if let TargetKind::Usdt { note, .. } = &t.kind {
        for (i, a) in note.args.split_whitespace().enumerate() {
            lines.push(format!("    arg{i}: {a}"));
        }
    }
    lines
}
