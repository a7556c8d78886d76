//! `tracepoint:`: with a `*` kind and no category, every category; `-lv` lists the format's
//! fields as tracefs gives them.

use std::fmt::Write;

use super::Hooks;
use crate::kernel::info::KernelInfo;
use crate::kernel::tracefs::FieldLayout;
use crate::sema::expand::{Target, TargetKind};
use crate::syntax::ast::ProbeKind;

pub(super) const TRACEPOINT: Hooks = Hooks {
    kinds: &[ProbeKind::Tracepoint],
    pattern: |_, rest, any_kind| {
        if any_kind {
            super::in_every_file(rest)
        } else {
            rest.to_string()
        }
    },
    arg_lines,
    ..super::PLAIN
};

fn arg_lines(_: ProbeKind, t: &Target, k: &dyn KernelInfo) -> Vec<String> {
    let mut lines = Vec::new();
    if let TargetKind::Tracepoint { category, name } = &t.kind {
        if let Ok(f) = k.tracepoint_format(category, name) {
            for fl in &f.fields {
                let mut s = String::from("    ");
                match fl.layout {
                    FieldLayout::Scalar => {
                        let _ = write!(s, "{} {}", fl.type_text, fl.name);
                    }
                    FieldLayout::Array { len } => {
                        let _ = write!(s, "{} {}[{len}]", fl.type_text, fl.name);
                    }
                    FieldLayout::FlexibleArray => {
                        let _ = write!(s, "{} {}[]", fl.type_text, fl.name);
                    }
                    FieldLayout::DataLoc | FieldLayout::RelLoc => {
                        let _ = write!(s, "__data_loc {}[] {}", fl.type_text, fl.name);
                    }
                }
                lines.push(s);
            }
        }
    }
    lines
}
