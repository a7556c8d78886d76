//! `assert(cond, msg)`: when `cond` is false, the error `assert failed: MSG` (an `errorf`
//! record located at the `errorf` call of strobe's `stdlib/base.bt`, which shows what
//! `assert` does as a macro) and exit code 1.

use super::calls::{lower_exit, new_record, submit_record};
use super::expr::lower_expr;
use super::{Lower, LowerError, Val};
use crate::codegen::emit::control::jump_if_false;
use crate::codegen::emit::output::EventKind;
use crate::codegen::emit::Value;
use crate::diag::{SourceFile, Span};
use crate::syntax::ast::Expr;

/// The span of the `errorf(…)` call in strobe's `stdlib/base.bt`.
fn errorf_site(text: &str) -> Option<Span> {
    let start = text.find("errorf(\"assert failed")?;
    let end = start + text[start..].find(");")? + 1;
    Some(Span::new(start, end))
}

pub(crate) fn assert(lw: &mut Lower<'_>, e: &Expr, args: &[Expr]) -> Result<Val, LowerError> {
    let Some(fid) = lw.cp.format_of.get(&e.id).copied() else {
        return Err(LowerError::unsupported(
            "assert without a checked format",
            e.span,
        ));
    };
    let cond = lower_expr(lw, &args[0])?.value();
    let failed = lw.b.label();
    let end = lw.b.label();
    jump_if_false(&mut lw.b, cond, failed);
    lw.b.ja(end);
    lw.b.bind(failed);

    let call = lw.cp.formats[fid.0 as usize].printf.clone();
    let id = lw.script.events.printf.len() as u32;
    lw.script.events.printf.push(call.clone());
    let (name, text) = crate::builtins::STDLIB_BASE;
    let site = errorf_site(text).expect("internal error: stdlib/base.bt lacks assert's errorf");
    let mut diag = crate::plan::PrintfDiag {
        id,
        error: true,
        span: e.span,
        expanded_from: std::iter::once(e.span)
            .chain(lw.macros.iter().rev().map(|f| f.call_span()))
            .collect(),
        ..Default::default()
    };
    diag.set_location(&SourceFile::new(name, text), site);
    lw.script.events.printf_diag.push(diag);
    let rec = new_record(lw, e.span, EventKind::Printf, id, &call.args)?;
    if let Some(f) = call.args.first() {
        if !super::store::write_direct(lw, &args[1], rec.arg(0), f)? {
            super::store::store_expr(lw, rec.arg(0), f, &args[1])?;
        }
    }
    submit_record(lw, &rec);
    lower_exit(lw, e.span, Value::Imm(1))?;
    lw.b.bind(end);
    Ok(Val::None)
}

#[cfg(test)]
mod tests {
    #[test]
    fn the_errorf_site_is_where_bpftrace_reports_it() {
        let (name, text) = crate::builtins::STDLIB_BASE;
        let site = super::errorf_site(text).unwrap();
        let src = crate::diag::SourceFile::new(name, text);
        assert_eq!(src.line_col(site.start), (6, 5));
        assert_eq!(src.line_col(site.end), (6, 37));
    }
}
