//! Struct and union members of a type nobody defines, and bpftrace's rule for scripts that
//! redefine a kernel type: once a script defines a struct or union the kernel's BTF also has,
//! bpftrace's C parser takes no type from BTF at all (the two would conflict), so every other
//! record the script's definitions hold by value must be defined in the script too.
//!
//! Input: the program's definitions (its own and its headers') and the kernel BTF. Output:
//! whether BTF may complete the script's types, and one error per member of an incomplete
//! type, in clang's words first (bpftrace's users see those) and then at the member.

use super::ctypes::find_btf_record;
use crate::btf::Btf;
use crate::diag::Diagnostic;
use crate::syntax::ast::{CTypeBody, CTypeDef, CTypeExpr, CTypeKind, Program};

/// The kernel BTF the script's definitions may take member types from: none when a
/// definition redefines a kernel struct or union (see the module documentation).
pub fn member_btf<'b>(program: &Program, btf: Option<&'b Btf>) -> Option<&'b Btf> {
    let b = btf?;
    let redefines = program.type_defs().any(|d| {
        matches!(d.kind, CTypeKind::Struct | CTypeKind::Union)
            && d.name
                .as_ref()
                .is_some_and(|n| find_btf_record(b, d.kind, &n.name).is_some())
    });
    (!redefines).then_some(b)
}

/// An error for each member of the script's definitions whose struct or union type is
/// defined neither by the script, its headers nor (when usable) `btf`.
pub fn incomplete_members(program: &Program, btf: Option<&Btf>) -> Vec<Diagnostic> {
    let defined = |k: CTypeKind, n: &str| {
        program
            .type_defs()
            .chain(&program.header_types)
            .any(|d| d.kind == k && d.name.as_ref().is_some_and(|i| i.name == n))
            || btf.is_some_and(|b| find_btf_record(b, k, n).is_some())
    };
    let mut out = Vec::new();
    for (index, d) in program.type_defs().enumerate() {
        check_def(d, index, &defined, &mut out);
    }
    out
}

fn check_def(
    d: &CTypeDef,
    index: usize,
    defined: &dyn Fn(CTypeKind, &str) -> bool,
    out: &mut Vec<Diagnostic>,
) {
    let CTypeBody::Fields(fields) = &d.body else {
        return;
    };
    for f in fields {
        match &f.ty.kind {
            CTypeExpr::Tagged(k @ (CTypeKind::Struct | CTypeKind::Union), n) if !defined(*k, n) => {
                let what = format!(
                    "{} {n}",
                    if *k == CTypeKind::Union {
                        "union"
                    } else {
                        "struct"
                    }
                );
                let msg = format!("field has incomplete type '{what}'");
                let mut e = Diagnostic::error(f.ty.span, msg.clone());
                // bpftrace's C input: its BTF header's include on line 1, then the script's
                // definitions one per line.
                e.preface = Some(Box::new(format!(
                    "definitions.h:{}:1: error: {msg}",
                    index + 2
                )));
                out.push(e);
            }
            CTypeExpr::Inline(inner) => check_def(inner, index, defined, out),
            _ => {}
        }
    }
}
