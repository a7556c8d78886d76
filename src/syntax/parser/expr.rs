//! Expressions: C precedence and associativity (precedence climbing), unary and postfix
//! operators, primaries (literals, variables, maps, calls, casts, tuples, records, `if` and
//! block expressions, `sizeof`/`offsetof`/`typeof`/`typeinfo`/`comptime`).
//!
//! Input: the parser positioned at an expression. Output: an [`Expr`] with a fresh id per node.
//! Invariants: compound assignment operators (`+=`, `<<=`, …) are never read as binary
//! operators, so the statement parser sees them; a `/` followed by `{` ends a predicate rather
//! than dividing; `(ident)` followed by something that can start an expression is a cast unless
//! `ident` is a builtin (bpftrace's rule), so `(pid) * 2` multiplies.

use super::{PResult, Parser};
use crate::diag::{Diagnostic, Span};
use crate::syntax::ast::{
    BinaryOp, Expr, ExprKind, Ident, TypeOrExpr, TypeRef, TypeRefKind, UnaryOp,
};

/// bpftrace's own list of builtin names: these cannot name a macro parameter or a record field.
pub(crate) const CORE_BUILTINS: &[&str] =
    &["args", "ctx", "kstack", "nsecs", "pid", "tid", "ustack"];

/// Names that are values, never types, in a cast position: bpftrace's builtins plus the
/// stdlib's value names, so `(retval) * 2` multiplies. Kept here because the parser sits below
/// the builtin registry (`crate::builtins`), whose test checks each word is one of its values.
/// Not every registry value is here (`ppid`, `probetype`…): a type of that name still casts.
pub(crate) const VALUE_WORDS: &[&str] = &[
    "args", "ctx", "kstack", "ustack", "nsecs", "pid", "tid", "comm", "cpu", "ncpus", "elapsed",
    "retval", "func", "probe", "uid", "gid", "username", "cgroup", "curtask", "rand", "jiffies",
    "numaid", "cpid", "usermode", "sarg", "$",
];

/// The prefix of bpftrace's internal builtin names (`__builtin_comm`).
const BUILTIN_PREFIX: &str = "__builtin_";

/// Whether `name` is a builtin in bpftrace's parser's sense (macro parameters, records,
/// `sizeof`/`typeof` operands).
pub fn is_builtin(name: &str) -> bool {
    if CORE_BUILTINS.contains(&name) || name.starts_with(BUILTIN_PREFIX) {
        return true;
    }
    is_arg_builtin(name)
}

/// Whether `name` reads as a value in a cast position (`(name) …`).
pub fn is_value_name(name: &str) -> bool {
    VALUE_WORDS.contains(&name) || is_builtin(name)
}

fn is_arg_builtin(name: &str) -> bool {
    for prefix in ["arg", "sarg"] {
        if let Some(n) = name.strip_prefix(prefix) {
            if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) {
                return true;
            }
        }
    }
    false
}

impl Parser<'_> {
    /// A full expression (ternary level).
    pub(crate) fn expr(&mut self) -> PResult<Expr> {
        self.enter()?;
        let r = self.ternary();
        self.leave();
        r
    }

    fn ternary(&mut self) -> PResult<Expr> {
        let cond = self.binary(1)?;
        if !self.eat("?") {
            return Ok(cond);
        }
        let start = cond.span.start as usize;
        let then = if self.eat(":") {
            None
        } else {
            let t = self.expr()?;
            self.expect(":")?;
            Some(Box::new(t))
        };
        let otherwise = self.expr()?;
        let span = Span::new(start, otherwise.span.end as usize);
        Ok(self.mk_expr(
            span,
            ExprKind::Ternary {
                cond: Box::new(cond),
                then,
                otherwise: Box::new(otherwise),
            },
        ))
    }

    /// The binary operator at the next token and its length, if any.
    fn peek_binop(&self) -> Option<(BinaryOp, usize)> {
        use BinaryOp::*;
        let p = self.scan_layout(self.pos);
        let s = self.src.get(p..)?;
        let b = s.as_bytes();
        let c = *b.first()?;
        let n = b.get(1).copied().unwrap_or(0);
        let n2 = b.get(2).copied().unwrap_or(0);
        if n == b'=' && b"+-*/%&|^".contains(&c) {
            return None;
        }
        if (c == b'<' && n == b'<' || c == b'>' && n == b'>') && n2 == b'=' {
            return None;
        }
        let two = match (c, n) {
            (b'|', b'|') => Some(Or),
            (b'&', b'&') => Some(And),
            (b'=', b'=') => Some(Eq),
            (b'!', b'=') => Some(Ne),
            (b'<', b'=') => Some(Le),
            (b'>', b'=') => Some(Ge),
            (b'<', b'<') => Some(Shl),
            (b'>', b'>') => Some(Shr),
            _ => None,
        };
        if let Some(op) = two {
            return Some((op, 2));
        }
        let one = match c {
            b'|' => BitOr,
            b'^' => BitXor,
            b'&' => BitAnd,
            b'<' => Lt,
            b'>' => Gt,
            b'+' if n != b'+' => Add,
            b'-' if n != b'-' && n != b'>' => Sub,
            b'*' => Mul,
            b'%' => Mod,
            b'/' => {
                // `/ {` closes a predicate (so does `/` at the end of the input).
                if matches!(self.char_at(self.scan_layout(p + 1)), Some('{') | None) {
                    return None;
                }
                Div
            }
            _ => return None,
        };
        Some((one, 1))
    }

    fn binary(&mut self, min_prec: u8) -> PResult<Expr> {
        let lhs = self.unary()?;
        let mut links = 0;
        let r = self.binary_chain(min_prec, lhs, &mut links);
        self.unchain(links);
        r
    }

    fn binary_chain(&mut self, min_prec: u8, mut lhs: Expr, links: &mut u32) -> PResult<Expr> {
        while let Some((op, len)) = self.peek_binop() {
            if op.precedence() < min_prec {
                break;
            }
            self.chain_link()?;
            *links += 1;
            self.skip_layout();
            self.bump(len);
            let rhs = self.binary(op.precedence() + 1)?;
            let span = lhs.span.to(rhs.span);
            lhs = self.mk_expr(
                span,
                ExprKind::Binary {
                    op,
                    lhs: Box::new(lhs),
                    rhs: Box::new(rhs),
                },
            );
        }
        Ok(lhs)
    }

    /// Prefix operators, then postfix ones.
    pub(crate) fn unary(&mut self) -> PResult<Expr> {
        self.skip_layout();
        let start = self.pos;
        for (tok, op) in [("++", UnaryOp::PreInc), ("--", UnaryOp::PreDec)] {
            if self.eat(tok) {
                let e = self.nested_unary()?;
                if !is_mutable_place(&e) {
                    return Err(
                        self.error(e.span, "increment/decrement requires a variable or map")
                    );
                }
                return Ok(self.unop(start, op, e));
            }
        }
        if self.check("&") && !self.check("&&") {
            // `&` takes a whole postfix expression (`&$p->f`, `&@m[k]`); what has an address
            // is the checker's business.
            self.bump(1);
            let e = self.nested_unary()?;
            return Ok(self.unop(start, UnaryOp::AddrOf, e));
        }
        let op = match (self.peek(), self.peek_at(1)) {
            (Some('*'), _) => UnaryOp::Deref,
            (Some('!'), n) if n != Some('=') => UnaryOp::Not,
            (Some('~'), _) => UnaryOp::BitNot,
            (Some('-'), n) if n != Some('-') => UnaryOp::Neg,
            _ => {
                let p = self.primary()?;
                return self.postfix(p);
            }
        };
        self.bump(1);
        let e = self.nested_unary()?;
        Ok(self.unop(start, op, e))
    }

    /// The operand of a prefix operator: one nesting level deeper.
    fn nested_unary(&mut self) -> PResult<Expr> {
        self.enter()?;
        let r = self.unary();
        self.leave();
        r
    }

    fn unop(&mut self, start: usize, op: UnaryOp, e: Expr) -> Expr {
        let span = Span::new(start, e.span.end as usize);
        self.mk_expr(
            span,
            ExprKind::Unary {
                op,
                expr: Box::new(e),
            },
        )
    }

    fn postfix(&mut self, e: Expr) -> PResult<Expr> {
        let mut links = 0;
        let r = self.postfix_chain(e, &mut links);
        self.unchain(links);
        r
    }

    fn postfix_chain(&mut self, mut e: Expr, links: &mut u32) -> PResult<Expr> {
        loop {
            if self.check("..") {
                break;
            }
            if self.check(".") || self.check("->") || self.check("[") {
                self.chain_link()?;
                *links += 1;
            }
            let start = e.span.start as usize;
            if self.eat(".") {
                self.skip_layout();
                if self.peek().is_some_and(|c| c.is_ascii_digit()) {
                    let n = super::lex::word_len(self.rest());
                    let text = &self.rest()[..n];
                    let at = self.pos;
                    let index = text.parse::<u32>();
                    self.bump(n);
                    let index = match index {
                        Ok(i) => i,
                        Err(_) => {
                            return Err(self.error(
                                Span::new(at, at + n),
                                format!("invalid tuple index '{text}'"),
                            ))
                        }
                    };
                    let span = self.span_from(start);
                    e = self.mk_expr(
                        span,
                        ExprKind::TupleIndex {
                            expr: Box::new(e),
                            index,
                        },
                    );
                    continue;
                }
                let (name, fspan) = self.expect_ident("field name after '.'")?;
                e = self.field(start, e, name, fspan, false);
                continue;
            }
            if self.eat("->") {
                let (name, fspan) = self.expect_ident("field name after '->'")?;
                e = self.field(start, e, name, fspan, true);
                continue;
            }
            if self.eat("[") {
                let index = self.expr()?;
                self.expect("]")?;
                let span = self.span_from(start);
                e = self.mk_expr(
                    span,
                    ExprKind::Index {
                        expr: Box::new(e),
                        index: Box::new(index),
                    },
                );
                continue;
            }
            let inc = if self.check("++") {
                UnaryOp::PostInc
            } else if self.check("--") {
                UnaryOp::PostDec
            } else {
                break;
            };
            self.skip_layout();
            let at = self.pos;
            self.bump(2);
            if !is_mutable_place(&e) {
                return Err(self.error(
                    Span::new(at, at + 2),
                    "increment/decrement requires a variable or map",
                ));
            }
            let span = self.span_from(start);
            e = self.mk_expr(
                span,
                ExprKind::Unary {
                    op: inc,
                    expr: Box::new(e),
                },
            );
        }
        Ok(e)
    }

    fn field(&mut self, start: usize, e: Expr, name: String, fspan: Span, arrow: bool) -> Expr {
        let span = Span::new(start, fspan.end as usize);
        self.mk_expr(
            span,
            ExprKind::Field {
                expr: Box::new(e),
                field: Ident { name, span: fspan },
                arrow,
            },
        )
    }

    fn primary(&mut self) -> PResult<Expr> {
        self.skip_layout();
        let start = self.pos;
        let Some(c) = self.peek() else {
            return Err(self.expected("expression"));
        };
        match c {
            '(' => return self.paren_expr(),
            '{' => {
                let b = self.block()?;
                return Ok(self.mk_expr(b.span, ExprKind::Block(b)));
            }
            '@' => return self.map_expr(),
            '$' => return self.dollar_expr(),
            '"' => {
                let (bytes, span) = self.string_literal()?;
                return Ok(self.mk_expr(span, ExprKind::Str(bytes)));
            }
            c if c.is_ascii_digit() => {
                let (lit, span) = self.int_literal();
                return Ok(self.mk_expr(span, ExprKind::Int(lit)));
            }
            _ => {}
        }
        let Some((word, wspan)) = self.eat_ident() else {
            if c == '\'' {
                let span = self.token_span();
                self.report(
                    Diagnostic::error(span, "character literals are not supported")
                        .with_help("write the character's code instead, e.g. 65 for 'A'"),
                );
                return Err(super::Recover);
            }
            return Err(self.expected("expression"));
        };
        // `__builtin_pid` is bpftrace's own spelling of the builtin `pid` (its stdlib defines
        // `pid` through it): the same name for every later pass.
        let word = match word.strip_prefix(BUILTIN_PREFIX) {
            Some(rest) if !rest.is_empty() => rest.to_string(),
            _ => word,
        };
        match word.as_str() {
            "true" | "false" => return Ok(self.mk_expr(wspan, ExprKind::Bool(word == "true"))),
            "if" => return self.if_expr(start),
            "comptime" => {
                let e = self.unary()?;
                let span = self.span_from(start);
                return Ok(self.mk_expr(span, ExprKind::Comptime(Box::new(e))));
            }
            "sizeof" | "typeof" | "typeinfo" => {
                self.expect("(")?;
                let arg = self.type_or_expr(")")?;
                self.expect(")")?;
                let span = self.span_from(start);
                let arg = Box::new(arg);
                let kind = match word.as_str() {
                    "sizeof" => ExprKind::Sizeof(arg),
                    "typeof" => ExprKind::Typeof(arg),
                    _ => ExprKind::Typeinfo(arg),
                };
                return Ok(self.mk_expr(span, kind));
            }
            "offsetof" => {
                self.expect("(")?;
                let of = self.type_or_expr(",")?;
                self.expect(",")?;
                let mut fields = vec![self.ident_node("field name")?];
                while self.eat(".") {
                    fields.push(self.ident_node("field name")?);
                }
                self.expect(")")?;
                let span = self.span_from(start);
                return Ok(self.mk_expr(
                    span,
                    ExprKind::Offsetof {
                        of: Box::new(of),
                        fields,
                    },
                ));
            }
            _ => {}
        }
        if self.check("(") {
            let args = self.call_args()?;
            let span = self.span_from(start);
            if word == "container_of" {
                if let Some(e) = self.container_of(span, &args) {
                    return Ok(e);
                }
            }
            return Ok(self.mk_expr(
                span,
                ExprKind::Call {
                    name: Ident {
                        name: word,
                        span: wspan,
                    },
                    args,
                },
            ));
        }
        Ok(self.mk_expr(wspan, ExprKind::Ident(word)))
    }

    /// `container_of(ptr, typeof(T), member)` (bpftrace's stdlib macro) as the expression it
    /// stands for: `(T *)((uint64)ptr - offsetof(T, member))`. `None` when the arguments are
    /// not of that shape (the call is then checked as written and refused).
    fn container_of(&mut self, span: Span, args: &[Expr]) -> Option<Expr> {
        let [ptr, ty, member] = args else {
            return None;
        };
        let ExprKind::Typeof(of) = &ty.kind else {
            return None;
        };
        let TypeOrExpr::Type(t) = of.as_ref() else {
            return None;
        };
        let ExprKind::Ident(field) = &member.kind else {
            return None;
        };
        let int = self.mk_expr(
            ptr.span,
            ExprKind::Cast {
                ty: TypeRef {
                    span: ptr.span,
                    kind: TypeRefKind::Named("uint64".into()),
                },
                expr: Box::new(ptr.clone()),
            },
        );
        let offset = self.mk_expr(
            member.span,
            ExprKind::Offsetof {
                of: Box::new(TypeOrExpr::Type(t.clone())),
                fields: vec![Ident {
                    name: field.clone(),
                    span: member.span,
                }],
            },
        );
        let diff = self.mk_expr(
            span,
            ExprKind::Binary {
                op: BinaryOp::Sub,
                lhs: Box::new(int),
                rhs: Box::new(offset),
            },
        );
        Some(self.mk_expr(
            span,
            ExprKind::Cast {
                ty: TypeRef {
                    span: ty.span,
                    kind: TypeRefKind::Pointer(Box::new(t.clone())),
                },
                expr: Box::new(diff),
            },
        ))
    }

    pub(crate) fn ident_node(&mut self, what: &str) -> PResult<Ident> {
        let (name, span) = self.expect_ident(what)?;
        Ok(Ident { name, span })
    }

    /// `(a, b, …)` after a function name.
    fn call_args(&mut self) -> PResult<Vec<Expr>> {
        self.expect("(")?;
        let mut args = Vec::new();
        if self.eat(")") {
            return Ok(args);
        }
        loop {
            args.push(self.expr()?);
            if self.eat(",") {
                continue;
            }
            if self.eat(")") {
                return Ok(args);
            }
            return Err(self.expected("',' or ')' in argument list"));
        }
    }

    /// The argument of `sizeof`/`typeof`/`offsetof`: a type when it reads as one and is followed
    /// by `end`, otherwise an expression.
    pub(crate) fn type_or_expr(&mut self, end: &str) -> PResult<TypeOrExpr> {
        self.skip_layout();
        if !is_builtin(self.peek_word()) {
            let save = (self.pos, self.last_end);
            if let Some(t) = self.try_type() {
                if self.check(end) {
                    return Ok(TypeOrExpr::Type(t));
                }
            }
            (self.pos, self.last_end) = save;
        }
        Ok(TypeOrExpr::Expr(self.expr()?))
    }

    fn if_expr(&mut self, start: usize) -> PResult<Expr> {
        let cond = self.loop_or_if_condition("if")?;
        let then = self.block()?;
        let otherwise = if self.eat_keyword("else") {
            self.skip_layout();
            let at = self.pos;
            if self.check("{") {
                let b = self.block()?;
                Some(Box::new(self.mk_expr(b.span, ExprKind::Block(b))))
            } else if self.eat_keyword("if") {
                self.enter()?;
                let e = self.if_expr(at);
                self.leave();
                Some(Box::new(e?))
            } else {
                return Err(self.expected("'{' or 'if' after 'else'"));
            }
        } else {
            None
        };
        let span = self.span_from(start);
        Ok(self.mk_expr(
            span,
            ExprKind::If {
                cond: Box::new(cond),
                then,
                otherwise,
            },
        ))
    }

    /// The condition of `if`/`while`/`unroll`: a parenthesised expression, or a single term
    /// (a binary operator after the term means the parentheses were forgotten).
    pub(crate) fn loop_or_if_condition(&mut self, keyword: &str) -> PResult<Expr> {
        if self.eat("(") {
            let c = self.expr()?;
            self.expect(")")?;
            return Ok(c);
        }
        let c = self.unary()?;
        if self.peek_binop().is_some() || self.check("?") {
            self.skip_layout();
            let span = self.token_span();
            self.report(
                Diagnostic::error(
                    span,
                    format!("expected '{{' after the condition of '{keyword}'"),
                )
                .with_help(format!(
                    "put a condition with operators in parentheses: {keyword} (a > b) {{ … }}"
                )),
            );
            return Err(super::Recover);
        }
        Ok(c)
    }

    /// `@name` with optional `[keys…]`.
    pub(crate) fn map_expr(&mut self) -> PResult<Expr> {
        let (name, nspan) = self.eat_map_name();
        let mut keys = Vec::new();
        if self.eat("[") {
            if self.check("]") {
                return Err(self.error_here("expected a map key"));
            }
            loop {
                keys.push(self.expr()?);
                if self.eat(",") {
                    continue;
                }
                self.expect("]")?;
                break;
            }
        }
        let span = self.span_from(nspan.start as usize);
        Ok(self.mk_expr(
            span,
            ExprKind::Map {
                name: Ident { name, span: nspan },
                keys,
            },
        ))
    }

    /// `$name`, `$N` or `$#`.
    fn dollar_expr(&mut self) -> PResult<Expr> {
        let start = self.pos;
        match self.peek_at(1) {
            Some('#') => {
                self.bump(2);
                Ok(self.mk_expr(Span::new(start, start + 2), ExprKind::PositionalCount))
            }
            Some(d) if d.is_ascii_digit() => {
                let n = super::lex::word_len(&self.src[start + 1..]);
                let text = self.src[start + 1..start + 1 + n].to_string();
                self.bump(1 + n);
                let span = Span::new(start, self.pos);
                match text.parse::<u32>() {
                    Ok(v) if v >= 1 => Ok(self.mk_expr(span, ExprKind::Positional(v))),
                    _ if !text.bytes().all(|b| b.is_ascii_digit()) => {
                        Err(self.error(span, format!("invalid positional parameter '${text}'")))
                    }
                    _ => {
                        self.report(
                            Diagnostic::error(
                                span,
                                format!("positional parameter ${text} is out of range"),
                            )
                            .with_help(format!("positional parameters are $1 to ${}", u32::MAX)),
                        );
                        Ok(self.mk_expr(span, ExprKind::Error))
                    }
                }
            }
            _ => {
                let (name, span) = self.eat_variable()?;
                Ok(self.mk_expr(span, ExprKind::Var(name)))
            }
        }
    }

    /// After `(`: `()`, a record `(a = 1, …)`, a cast `(type)x`, a tuple or a grouping.
    fn paren_expr(&mut self) -> PResult<Expr> {
        self.skip_layout();
        let start = self.pos;
        self.bump(1);
        self.paren_inner(start)
    }

    fn paren_inner(&mut self, start: usize) -> PResult<Expr> {
        if self.eat(")") {
            let span = self.span_from(start);
            return Ok(self.mk_expr(span, ExprKind::Tuple(Vec::new())));
        }
        if self.looks_like_record() {
            return self.record(start);
        }
        if let Some(e) = self.try_cast(start)? {
            return Ok(e);
        }
        let first = self.expr()?;
        if self.eat(")") {
            return Ok(first);
        }
        if !self.eat(",") {
            return Err(self.expected("')'"));
        }
        let mut elems = vec![first];
        while !self.eat(")") {
            elems.push(self.expr()?);
            if !self.eat(",") {
                self.expect(")")?;
                break;
            }
        }
        let span = self.span_from(start);
        Ok(self.mk_expr(span, ExprKind::Tuple(elems)))
    }

    fn looks_like_record(&self) -> bool {
        let w = self.peek_word();
        if w.is_empty() || is_builtin(w) {
            return false;
        }
        let p = self.scan_layout(self.scan_layout(self.pos) + w.len());
        self.src[p..].starts_with('=') && !self.src[p..].starts_with("==")
    }

    fn record(&mut self, start: usize) -> PResult<Expr> {
        let mut fields: Vec<(Ident, Expr)> = Vec::new();
        loop {
            let name = self.ident_node("field name")?;
            self.expect("=")?;
            let value = self.expr()?;
            if fields.iter().any(|(n, _)| n.name == name.name) {
                self.error(
                    name.span,
                    format!("duplicate field '{}' in record", name.name),
                );
            }
            fields.push((name, value));
            if self.eat(",") {
                continue;
            }
            self.expect(")")?;
            break;
        }
        let span = self.span_from(start);
        Ok(self.mk_expr(span, ExprKind::Record(fields)))
    }

    /// `(type)operand`, if the parenthesis reads as a cast; restores the position otherwise.
    fn try_cast(&mut self, start: usize) -> PResult<Option<Expr>> {
        if is_value_name(self.peek_word()) {
            return Ok(None);
        }
        let save = (self.pos, self.last_end);
        let is_typeof = self.peek_word() == "typeof";
        let ty = if is_typeof {
            self.type_ref()?
        } else {
            match self.try_type() {
                Some(t) => t,
                None => return Ok(None),
            }
        };
        if !self.eat(")") {
            (self.pos, self.last_end) = save;
            return Ok(None);
        }
        if !self.can_start_expression() {
            // `(struct x *)` or `(int8[4])` can only be a cast: say what is missing.
            if is_typeof || names_tagged_type(&ty) {
                return Err(self.expected(&format!(
                    "an expression after the cast to '{}'",
                    type_text(&ty)
                )));
            }
            (self.pos, self.last_end) = save;
            return Ok(None);
        }
        let e = self.nested_unary()?;
        let span = Span::new(start, e.span.end as usize);
        Ok(Some(self.mk_expr(
            span,
            ExprKind::Cast {
                ty,
                expr: Box::new(e),
            },
        )))
    }
}

/// `struct x`, `union x *`, `enum e[2]`: a type that cannot be read as an expression.
fn names_tagged_type(t: &crate::syntax::ast::TypeRef) -> bool {
    use crate::syntax::ast::TypeRefKind::*;
    match &t.kind {
        Tagged(..) | Typeof(_) => true,
        Pointer(i) | Array(i, _) => names_tagged_type(i),
        Named(_) => false,
    }
}

fn type_text(t: &crate::syntax::ast::TypeRef) -> String {
    use crate::syntax::ast::TypeRefKind::*;
    match &t.kind {
        Named(n) => n.clone(),
        Tagged(k, n) => format!("{} {n}", k.keyword()),
        Pointer(i) => format!("{} *", type_text(i)),
        Array(i, Some(n)) => format!("{}[{n}]", type_text(i)),
        Array(i, None) => format!("{}[]", type_text(i)),
        Typeof(_) => "typeof(…)".into(),
    }
}

/// Targets of `++`/`--`: variables and maps.
fn is_mutable_place(e: &Expr) -> bool {
    matches!(e.kind, ExprKind::Var(_) | ExprKind::Map { .. })
}
