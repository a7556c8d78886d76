//! The script language: the AST with spans ([`ast`]), attach points and probe kinds
//! ([`attach`]), the parser ([`parser`]), a visitor ([`visit`]) and the `-d ast` printer
//! (`print`).
//!
//! Input: script text in a [`SourceFile`]. Output: a [`Program`] plus diagnostics.
//! Entry points: [`parse`] for a whole script (always returns a tree, partial on errors),
//! [`parse_ok`] when only an error-free tree is useful, [`parse_expression`] for one expression.
//!
//! Later passes keep what they learn about expressions in side tables indexed by
//! [`ast::ExprId`] (sized by [`Program::expr_count`]) rather than changing the tree:
//!
//! ```
//! use strobe::diag::SourceFile;
//! use strobe::syntax::{self, ast::ExprKind, visit::{walk_expr, Visitor}};
//!
//! let src = SourceFile::new("t.bt", "kprobe:vfs_read /pid == 42/ { @[comm] = count(); }");
//! let program = syntax::parse_ok(&src).expect("valid script");
//!
//! // A side table: one slot per expression id.
//! struct Calls(Vec<Option<String>>);
//! impl Visitor for Calls {
//!     fn visit_expr(&mut self, e: &syntax::ast::Expr) {
//!         if let ExprKind::Call { name, .. } = &e.kind {
//!             self.0[e.id.index()] = Some(name.name.clone());
//!         }
//!         walk_expr(self, e);
//!     }
//! }
//! let mut calls = Calls(vec![None; program.expr_count as usize]);
//! calls.visit_program(&program);
//! assert_eq!(calls.0.iter().flatten().collect::<Vec<_>>(), ["count"]);
//! ```

pub mod ast;
pub mod attach;
pub mod cpp;
pub mod parser;
pub mod print;
pub mod visit;

pub use parser::{parse_expression, Parsed};

use crate::diag::SourceFile;
use ast::Program;

/// Parses a whole script: always returns a tree (partial on errors) and every diagnostic.
/// `#include`d headers are read from the host's standard directories.
pub fn parse(src: &SourceFile) -> Parsed {
    parser::parse_program(src, &cpp::CppOptions::default())
}

/// [`parse`] with `-I` directories and `--include` files ([`cpp::CppOptions`]).
pub fn parse_with(src: &SourceFile, cpp: &cpp::CppOptions) -> Parsed {
    parser::parse_program(src, cpp)
}

/// [`parse_with`] and the command line's positional parameters, for `$N` in attach points.
pub fn parse_with_params(src: &SourceFile, cpp: &cpp::CppOptions, params: &[String]) -> Parsed {
    parser::parse_program_with_params(src, cpp, params)
}

/// Parses a script and returns the tree only if there was no error.
pub fn parse_ok(src: &SourceFile) -> Result<Program, Vec<crate::diag::Diagnostic>> {
    let p = parse(src);
    if p.has_errors() {
        Err(p.diagnostics)
    } else {
        Ok(p.program)
    }
}
