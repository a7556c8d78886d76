//! The script parser: hand-written recursive descent over the text, with nom recognisers for
//! the lexical pieces (see `lex` and `literal`).
//!
//! Input: a [`SourceFile`]. Output: a [`Program`] (always, possibly partial) and the
//! diagnostics found on the way.
//! Invariants:
//! - no input panics and none recurses without bound: nesting deeper than [`MAX_DEPTH`] is
//!   an error, not a stack overflow, and so is a tree deeper than [`MAX_TREE_DEPTH`] built by
//!   long operator chains (which would overflow the passes that walk it);
//! - errors are recovered at statement and probe boundaries, so independent mistakes are all
//!   reported in one run (up to [`MAX_ERRORS`]); a parse function that returns `Err(Recover)`
//!   has already pushed its diagnostic;
//! - "expected X" errors point just after the last token, where X was missing.
//!
//! Layout: `lex` (whitespace, comments, identifiers, punctuation), `literal` (integers,
//! strings), `expr`, `types` (type references and C definitions), `stmt` (blocks, statements),
//! `probe` (attach points, predicate, body), `top` (program, config, macros, functions, map
//! declarations).

pub(crate) mod expr;
pub(crate) mod lex;
pub mod literal;
pub(crate) mod probe;
pub(crate) mod stmt;
pub(crate) mod top;
pub(crate) mod types;

use crate::diag::{Diagnostic, SourceFile, Span};
use crate::syntax::ast::{Expr, ExprId, ExprKind, Program};

/// Deepest nesting of expressions and blocks accepted.
pub const MAX_DEPTH: u32 = 128;
/// Deepest expression tree accepted, counting both nesting and left-associative chains
/// (`a + b + c …`, `x.a.b.c …`), so passes that walk the tree recursively stay within their
/// stack too.
pub const MAX_TREE_DEPTH: u32 = 500;
/// Parsing stops reporting (and gives up) after this many errors.
pub const MAX_ERRORS: usize = 50;

/// The result of parsing: the tree (partial when there were errors) and every diagnostic.
#[derive(Clone, Debug)]
pub struct Parsed {
    pub program: Program,
    pub diagnostics: Vec<Diagnostic>,
}

impl Parsed {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Parses a whole script, reading the C headers it includes as `cpp` says.
pub fn parse_program(src: &SourceFile, cpp: &crate::syntax::cpp::CppOptions) -> Parsed {
    parse_program_with_params(src, cpp, &[])
}

/// [`parse_program`] with the command line's positional parameters, which attach points may
/// name (`$N` in an attach point is replaced by parameter N's text, as bpftrace does).
pub fn parse_program_with_params(
    src: &SourceFile,
    cpp: &crate::syntax::cpp::CppOptions,
    params: &[String],
) -> Parsed {
    let mut p = Parser::new(&src.text);
    p.cpp = Some(cpp.clone());
    p.params = params.to_vec();
    let program = p.program();
    Parsed {
        program,
        diagnostics: p.diags,
    }
}

/// Parses a single expression (for tests, `-e` snippets of tools, and the checker's constant
/// folding of `#define` values). Trailing text is an error.
pub fn parse_expression(src: &SourceFile) -> (Option<Expr>, Vec<Diagnostic>) {
    let mut p = Parser::new(&src.text);
    let e = p.expr().ok();
    p.skip_layout();
    if e.is_some() && !p.at_end() && p.diags.is_empty() {
        p.error_here("unexpected input after expression");
    }
    (e, p.diags)
}

/// Marker: an error was reported and the caller should recover.
#[derive(Debug)]
pub(crate) struct Recover;

pub(crate) type PResult<T> = Result<T, Recover>;

pub(crate) struct Parser<'s> {
    pub(crate) src: &'s str,
    pub(crate) pos: usize,
    /// End of the last token consumed: where a missing token "was expected".
    pub(crate) last_end: usize,
    pub(crate) diags: Vec<Diagnostic>,
    next_expr: u32,
    depth: u32,
    /// Ancestors of the node being built: `depth` plus the links of open operator chains.
    tree: u32,
    /// Set once MAX_ERRORS is reached or nesting overflowed: everything unwinds.
    pub(crate) gave_up: bool,
    /// Where the script's `#include`s are read from (whole programs only).
    pub(crate) cpp: Option<crate::syntax::cpp::CppOptions>,
    /// The command line's positional parameters: `$N` in an attach point is replaced by
    /// its text before the attach point is split (`BEG$1`, `$1` alone).
    pub(crate) params: Vec<String>,
}

impl<'s> Parser<'s> {
    pub(crate) fn new(src: &'s str) -> Parser<'s> {
        Parser {
            src,
            pos: 0,
            last_end: 0,
            diags: Vec::new(),
            next_expr: 0,
            depth: 0,
            tree: 0,
            gave_up: false,
            cpp: None,
            params: Vec::new(),
        }
    }

    pub(crate) fn rest(&self) -> &'s str {
        &self.src[self.pos..]
    }

    pub(crate) fn at_end(&self) -> bool {
        self.pos >= self.src.len()
    }

    pub(crate) fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    pub(crate) fn peek_at(&self, n: usize) -> Option<char> {
        self.rest().chars().nth(n)
    }

    /// Moves past `n` bytes of the text (a token), recording where it ended.
    pub(crate) fn bump(&mut self, n: usize) {
        self.pos = (self.pos + n).min(self.src.len());
        while !self.src.is_char_boundary(self.pos) {
            self.pos += 1;
        }
        self.last_end = self.pos;
    }

    pub(crate) fn span_from(&self, start: usize) -> Span {
        Span::new(start, self.last_end.max(start))
    }

    pub(crate) fn mk_expr(&mut self, span: Span, kind: ExprKind) -> Expr {
        let id = ExprId(self.next_expr);
        self.next_expr += 1;
        Expr { id, span, kind }
    }

    pub(crate) fn expr_count(&self) -> u32 {
        self.next_expr
    }

    /// Records a diagnostic, unless one was already reported at the same place (cascades).
    pub(crate) fn report(&mut self, d: Diagnostic) {
        if self.gave_up {
            return;
        }
        if self
            .diags
            .iter()
            .any(|o| o.span.start == d.span.start && o.is_error())
        {
            return;
        }
        let span = d.span;
        self.diags.push(d);
        if self.diags.len() >= MAX_ERRORS {
            self.diags.push(Diagnostic {
                severity: crate::diag::Severity::Note,
                ..Diagnostic::error(
                    span,
                    format!("too many errors ({MAX_ERRORS}); stopping here"),
                )
            });
            self.gave_up = true;
        }
    }

    pub(crate) fn error(&mut self, span: Span, msg: impl Into<String>) -> Recover {
        self.report(Diagnostic::error(span, msg));
        Recover
    }

    /// An error about the token at the current position (after layout).
    pub(crate) fn error_here(&mut self, msg: impl Into<String>) -> Recover {
        self.skip_layout();
        let span = self.token_span();
        self.error(span, msg)
    }

    /// "expected X": points just after the previous token, and names what was found instead.
    pub(crate) fn expected(&mut self, what: &str) -> Recover {
        self.skip_layout();
        let found = self.describe_token();
        let at = self.last_end;
        self.report(
            Diagnostic::error(Span::new(at, at), format!("expected {what}"))
                .with_note(format!("found {found}")),
        );
        Recover
    }

    /// The span of the token at the current position (a word, a number, or one character).
    pub(crate) fn token_span(&self) -> Span {
        let rest = self.rest();
        let len = match rest.chars().next() {
            None => 0,
            Some(c) if c.is_ascii_alphanumeric() || c == '_' => lex::word_len(rest),
            Some(c @ ('$' | '@')) => c.len_utf8() + lex::word_len(&rest[1..]),
            Some(c) => c.len_utf8(),
        };
        Span::new(self.pos, self.pos + len)
    }

    pub(crate) fn describe_token(&self) -> String {
        let s = self.token_span();
        if s.is_empty() {
            "end of input".to_string()
        } else {
            format!("'{}'", &self.src[s.start as usize..s.end as usize])
        }
    }

    /// Enters one nesting level; fails (once, loudly) past MAX_DEPTH.
    pub(crate) fn enter(&mut self) -> PResult<()> {
        if self.tree >= MAX_TREE_DEPTH {
            return self.chain_link();
        }
        if self.depth >= MAX_DEPTH {
            if !self.gave_up {
                let span = self.token_span();
                self.report(
                    Diagnostic::error(
                        span,
                        format!("nesting too deep (more than {MAX_DEPTH} levels)"),
                    )
                    .with_help("split the expression with intermediate variables"),
                );
                self.gave_up = true;
            }
            return Err(Recover);
        }
        self.depth += 1;
        self.tree += 1;
        Ok(())
    }

    pub(crate) fn leave(&mut self) {
        self.depth = self.depth.saturating_sub(1);
        self.tree = self.tree.saturating_sub(1);
    }

    /// One more link in a left-associative chain: deepens the tree without recursing.
    pub(crate) fn chain_link(&mut self) -> PResult<()> {
        if self.tree >= MAX_TREE_DEPTH {
            if !self.gave_up {
                let span = self.token_span();
                self.report(
                    Diagnostic::error(
                        span,
                        format!(
                            "expression too long (more than {MAX_TREE_DEPTH} chained operations)"
                        ),
                    )
                    .with_help("split the expression with intermediate variables"),
                );
                self.gave_up = true;
            }
            return Err(Recover);
        }
        self.tree += 1;
        Ok(())
    }

    /// Closes `n` chain links opened by [`Parser::chain_link`].
    pub(crate) fn unchain(&mut self, n: u32) {
        self.tree = self.tree.saturating_sub(n);
    }
}

#[cfg(test)]
mod tests;
