//! Shared helpers for the checker tests: check a script against the mock kernel.

#![allow(dead_code)]

use strobe::diag::{Diagnostic, SourceFile};
use strobe::kernel::info::MockKernel;
use strobe::sema::{check, CheckOptions, CheckOutput};

/// Parses (must succeed) and checks `text` against [`MockKernel::fixture`].
pub fn check_text(text: &str, opts: &CheckOptions) -> (SourceFile, CheckOutput) {
    let src = SourceFile::new("t.bt", text);
    let program = match strobe::syntax::parse_ok(&src) {
        Ok(p) => p,
        Err(d) => panic!(
            "{text}: parse failed:\n{}",
            strobe::diag::render_all(&d, &src)
        ),
    };
    let out = check(&program, &MockKernel::fixture(), opts);
    (src, out)
}

/// `line:col: message` of a diagnostic.
pub fn located(src: &SourceFile, d: &Diagnostic) -> String {
    let (l, c) = src.line_col(d.span.start);
    format!("{l}:{c}: {}", d.message)
}

/// The first error of `text` as `line:col: message`, or "" when it checks clean.
pub fn first_error(text: &str) -> String {
    let (src, out) = check_text(text, &CheckOptions::default());
    out.diagnostics
        .iter()
        .find(|d| d.is_error())
        .map(|d| located(&src, d))
        .unwrap_or_default()
}
