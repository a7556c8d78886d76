//! Blocks and statements: `let`, assignments (plain and compound), expression statements,
//! `_ = expr`, `while`, `unroll`, `for` over maps and ranges, `return`, `break`, `continue`,
//! `import`.
//!
//! Input: the parser at `{` (blocks) or at a statement. Output: [`Block`]/[`Stmt`] nodes.
//! Invariants: a statement that fails to parse is skipped up to its `;` (or the block's `}`)
//! and parsing goes on, so every broken statement gets its own diagnostic; a missing `;`
//! between two statements is reported and the next statement is still parsed.

use super::{PResult, Parser};
use crate::diag::{Diagnostic, Span};
use crate::syntax::ast::{
    BinaryOp, Block, Expr, ExprKind, ForIter, Ident, Import, LValue, Stmt, StmtKind,
};

/// Compound assignment operators, longest first.
const COMPOUND: &[(&str, BinaryOp)] = &[
    ("<<=", BinaryOp::Shl),
    (">>=", BinaryOp::Shr),
    ("+=", BinaryOp::Add),
    ("-=", BinaryOp::Sub),
    ("*=", BinaryOp::Mul),
    ("/=", BinaryOp::Div),
    ("%=", BinaryOp::Mod),
    ("&=", BinaryOp::BitAnd),
    ("|=", BinaryOp::BitOr),
    ("^=", BinaryOp::BitXor),
];

/// What one statement parse produced.
enum Parsed {
    Stmt(Stmt),
    /// An expression followed by the block's `}`: the block's value.
    Tail(Expr),
}

impl Parser<'_> {
    /// `{ statements [tail] }`.
    pub(crate) fn block(&mut self) -> PResult<Block> {
        self.skip_layout();
        let start = self.pos;
        self.expect("{")?;
        // A block level costs more stack than an expression level (statement frames), so it
        // counts as one more level on top of the `expr` that reached it.
        self.enter()?;
        let r = self.block_body(start);
        self.leave();
        r
    }

    fn block_body(&mut self, start: usize) -> PResult<Block> {
        let mut stmts = Vec::new();
        let mut tail = None;
        loop {
            self.skip_layout();
            if self.gave_up {
                return Err(super::Recover);
            }
            if self.eat("}") {
                break;
            }
            if self.at_end() {
                let at = self.last_end;
                self.report(
                    Diagnostic::error(Span::new(at, at), "expected '}'").with_label(
                        Span::new(start, start + 1),
                        "to close the block opened here",
                    ),
                );
                break;
            }
            let before = self.pos;
            match self.statement() {
                Ok(Parsed::Stmt(s)) => stmts.push(s),
                Ok(Parsed::Tail(e)) => tail = Some(Box::new(e)),
                Err(_) => {
                    self.sync_statement();
                    if self.pos == before {
                        // Nothing consumed: skip one character so the loop advances.
                        let n = self.peek().map_or(1, char::len_utf8);
                        self.bump(n);
                    }
                }
            }
        }
        Ok(Block {
            span: self.span_from(start),
            stmts,
            tail,
        })
    }

    fn statement(&mut self) -> PResult<Parsed> {
        self.skip_layout();
        let start = self.pos;
        let kind = match self.peek_word() {
            "import" => {
                self.eat_keyword("import");
                let imp = self.import_tail(start)?;
                StmtKind::Import(imp)
            }
            "while" | "unroll" => {
                let is_while = self.eat_keyword("while");
                if !is_while {
                    self.eat_keyword("unroll");
                }
                let cond = self.loop_or_if_condition(if is_while { "while" } else { "unroll" })?;
                let body = self.block()?;
                if is_while {
                    StmtKind::While { cond, body }
                } else {
                    StmtKind::Unroll { count: cond, body }
                }
            }
            "for" => {
                self.eat_keyword("for");
                self.for_loop()?
            }
            "break" | "continue" => {
                let k = if self.eat_keyword("break") {
                    StmtKind::Break
                } else {
                    self.eat_keyword("continue");
                    StmtKind::Continue
                };
                self.stmt_end();
                k
            }
            "return" => {
                self.eat_keyword("return");
                let v = if self.check(";") || self.check("}") {
                    None
                } else {
                    Some(self.expr()?)
                };
                self.stmt_end();
                StmtKind::Return(v)
            }
            "let" => {
                self.eat_keyword("let");
                self.let_stmt()?
            }
            "_" if self.check_discard() => {
                self.eat_ident();
                self.expect("=")?;
                let e = self.expr()?;
                self.stmt_end();
                StmtKind::Discard(e)
            }
            _ => return self.expr_or_assign(start),
        };
        Ok(Parsed::Stmt(Stmt {
            span: self.span_from(start),
            kind,
        }))
    }

    fn check_discard(&self) -> bool {
        let p = self.scan_layout(self.scan_layout(self.pos) + 1);
        self.src[p..].starts_with('=') && !self.src[p..].starts_with("==")
    }

    /// `;` or the block's `}`; otherwise reports the missing `;` and carries on.
    fn stmt_end(&mut self) {
        if self.eat(";") || self.check("}") {
            return;
        }
        self.expected("';'");
    }

    pub(crate) fn import_tail(&mut self, start: usize) -> PResult<Import> {
        self.skip_layout();
        if self.peek() != Some('"') {
            return Err(self.expected("a string after 'import'"));
        }
        let (path, _) = self.string_literal()?;
        if !self.eat(";") {
            return Err(self.expected("';' after import"));
        }
        Ok(Import {
            span: self.span_from(start),
            path: String::from_utf8_lossy(&path).into_owned(),
        })
    }

    fn let_stmt(&mut self) -> PResult<StmtKind> {
        self.skip_layout();
        match self.peek() {
            Some('$') => {}
            Some('@') => {
                return Err(self.error(
                    self.token_span(),
                    "map declarations (`let @m = hash(N);`) are only allowed at the top level",
                ))
            }
            _ => return Err(self.expected("a variable after 'let'")),
        }
        let (name, span) = self.eat_variable()?;
        let ty = if self.eat(":") {
            Some(self.type_annotation()?)
        } else {
            None
        };
        let init = if self.check("=") && !self.check("==") {
            self.eat("=");
            Some(self.expr()?)
        } else {
            None
        };
        self.stmt_end();
        Ok(StmtKind::Let {
            var: Ident { name, span },
            ty,
            init,
        })
    }

    fn for_loop(&mut self) -> PResult<StmtKind> {
        let paren = self.eat("(");
        self.skip_layout();
        if self.peek() != Some('$') {
            return Err(self.expected("a variable in for loop"));
        }
        let (name, span) = self.eat_variable()?;
        let var = Ident { name, span };
        self.expect(":")?;
        let first = self.unary()?;
        let iter = if self.eat("..") {
            let end = self.unary()?;
            ForIter::Range { start: first, end }
        } else {
            match first.kind {
                ExprKind::Map { name, keys } if keys.is_empty() => ForIter::Map(name),
                _ => {
                    return Err(self.error(
                        first.span,
                        "expected a map or a range (start..end) in for loop",
                    ))
                }
            }
        };
        if paren {
            self.expect(")")?;
        }
        let body = self.block()?;
        Ok(StmtKind::For { var, iter, body })
    }

    /// An expression statement, an assignment, or the block's tail expression.
    fn expr_or_assign(&mut self, start: usize) -> PResult<Parsed> {
        let e = self.expr()?;
        let op = if self.check("=") && !self.check("==") {
            self.eat("=");
            Some(None)
        } else {
            COMPOUND
                .iter()
                .find(|(tok, _)| self.check(tok))
                .map(|&(tok, op)| {
                    self.eat(tok);
                    Some(op)
                })
        };
        if let Some(op) = op {
            let target = self.lvalue(e)?;
            let value = self.expr()?;
            self.stmt_end();
            return Ok(Parsed::Stmt(Stmt {
                span: self.span_from(start),
                kind: StmtKind::Assign { target, op, value },
            }));
        }
        if self.eat(";") {
            return Ok(Parsed::Stmt(Stmt {
                span: self.span_from(start),
                kind: StmtKind::Expr(e),
            }));
        }
        if self.check("}") {
            return Ok(Parsed::Tail(e));
        }
        if !matches!(e.kind, ExprKind::If { .. } | ExprKind::Block(_)) {
            self.expected("';'");
        }
        Ok(Parsed::Stmt(Stmt {
            span: self.span_from(start),
            kind: StmtKind::Expr(e),
        }))
    }

    fn lvalue(&mut self, e: Expr) -> PResult<LValue> {
        match e.kind {
            ExprKind::Var(name) => Ok(LValue::Var(Ident { name, span: e.span })),
            ExprKind::Map { name, keys } => Ok(LValue::Map {
                map: name,
                keys,
                span: e.span,
            }),
            ExprKind::Field { .. } | ExprKind::TupleIndex { .. } => Err(self.error(
                e.span,
                "cannot assign to a field: tuples, records and structs are read-only",
            )),
            _ => Err(self.report_ret(
                Diagnostic::error(e.span, "invalid assignment target")
                    .with_help("assign to a variable ($x) or a map (@m, @m[key])"),
            )),
        }
    }

    fn report_ret(&mut self, d: Diagnostic) -> super::Recover {
        self.report(d);
        super::Recover
    }
}
