//! The script language: the AST with spans ([`ast`]), attach points and probe kinds
//! ([`attach`]), the parser ([`parser`]), a visitor ([`visit`]) and the `-d ast` printer
//! (`print`).
//!
//! Input: script text in a [`SourceFile`]. Output: a [`Program`] plus diagnostics.
//! Entry points: [`parse`] for a whole script, [`parse_expression`] for one expression.

pub mod ast;
pub mod attach;
pub mod parser;
pub mod print;
pub mod visit;

pub use parser::{parse_expression, Parsed};

use crate::diag::SourceFile;
use ast::Program;

/// Parses a whole script: always returns a tree (partial on errors) and every diagnostic.
pub fn parse(src: &SourceFile) -> Parsed {
    parser::parse_program(src)
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
