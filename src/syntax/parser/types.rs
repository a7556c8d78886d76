//! Types: bpftrace type references (`uint32`, `struct task_struct *`, `int8[4]`,
//! `typeof(x)`) and C type definitions in scripts (`struct S { int a[4]; char *p; }`).
//!
//! Input: the parser positioned at a type. Output: [`TypeRef`] / [`CTypeDef`] nodes.
//! Invariant: [`Parser::try_type`] is speculative: on failure it restores the position and
//! removes any diagnostic it produced.

use super::{PResult, Parser};
use crate::diag::Span;
use crate::syntax::ast::{
    CEnumerator, CField, CType, CTypeBody, CTypeDef, CTypeExpr, CTypeKind, Ident, TypeRef,
    TypeRefKind,
};
use crate::syntax::parser::literal::parse_int_text;

/// Words that qualify a C type without naming it.
const C_QUALIFIERS: &[&str] = &["const", "volatile", "restrict", "__restrict", "static"];

fn tag_kind(w: &str) -> Option<CTypeKind> {
    match w {
        "struct" => Some(CTypeKind::Struct),
        "union" => Some(CTypeKind::Union),
        "enum" => Some(CTypeKind::Enum),
        _ => None,
    }
}

impl Parser<'_> {
    /// A type reference if one is here; otherwise None with nothing consumed or reported.
    pub(crate) fn try_type(&mut self) -> Option<TypeRef> {
        let save = (self.pos, self.last_end, self.diags.len(), self.gave_up);
        if self.peek_word() == "typeof" {
            // Speculating through typeof(…) could re-parse nested operands exponentially;
            // callers that accept typeof parse it without speculation.
            return None;
        }
        match self.type_ref() {
            Ok(t) if self.diags.len() == save.2 => Some(t),
            _ => {
                (self.pos, self.last_end) = (save.0, save.1);
                self.diags.truncate(save.2);
                self.gave_up = save.3;
                None
            }
        }
    }

    /// `name`, `struct name`, `typeof(…)`, then any `*` and `[N]` suffixes.
    pub(crate) fn type_ref(&mut self) -> PResult<TypeRef> {
        self.skip_layout();
        let start = self.pos;
        let (word, _) = self.expect_ident("a type name")?;
        let kind = if let Some(k) = tag_kind(&word) {
            let (name, _) = self.expect_ident(&format!("a name after '{word}'"))?;
            TypeRefKind::Tagged(k, name)
        } else if word == "typeof" {
            self.expect("(")?;
            self.enter()?;
            let inner = self.type_or_expr(")");
            self.leave();
            let inner = inner?;
            self.expect(")")?;
            TypeRefKind::Typeof(Box::new(inner))
        } else {
            TypeRefKind::Named(word)
        };
        let mut t = TypeRef {
            span: self.span_from(start),
            kind,
        };
        loop {
            if self.eat("*") {
                t = TypeRef {
                    span: self.span_from(start),
                    kind: TypeRefKind::Pointer(Box::new(t)),
                };
            } else if self.check("[") {
                self.skip_layout();
                self.bump(1);
                let len = if self.eat("]") {
                    None
                } else {
                    let n = self.array_len()?;
                    self.expect("]")?;
                    Some(n)
                };
                t = TypeRef {
                    span: self.span_from(start),
                    kind: TypeRefKind::Array(Box::new(t), len),
                };
            } else {
                return Ok(t);
            }
        }
    }

    fn array_len(&mut self) -> PResult<u64> {
        self.skip_layout();
        if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
            return Err(self.expected("an array length"));
        }
        let (lit, _) = self.int_literal();
        Ok(lit.value)
    }

    /// A type annotation (`let $x: T`, function parameters and results).
    pub(crate) fn type_annotation(&mut self) -> PResult<TypeRef> {
        self.type_ref()
    }

    /// Whether `struct|union|enum …` here starts a C definition (a `{` before any `:`, `/`,
    /// `,` or `;`) rather than an attach point.
    pub(crate) fn looks_like_c_definition(&self) -> bool {
        let mut p = self.scan_layout(self.pos);
        p += super::lex::word_len(&self.src[p..]);
        loop {
            p = self.scan_layout(p);
            match self.char_at(p) {
                Some('{') => return true,
                Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                    p += super::lex::word_len(&self.src[p..]);
                }
                Some(c @ ('(' | '[')) => {
                    let close = if c == '(' { ')' } else { ']' };
                    match self.scan_balanced(p, c, close) {
                        Some(after) => p = after,
                        None => return false,
                    }
                }
                _ => return false,
            }
        }
    }

    /// `struct|union|enum [name] [attrs] { … } [attrs] [;]`.
    pub(crate) fn c_definition(&mut self) -> PResult<CTypeDef> {
        self.skip_layout();
        let start = self.pos;
        let (kw, kspan) = self.expect_ident("'struct', 'union' or 'enum'")?;
        let Some(kind) = tag_kind(&kw) else {
            return Err(self.error(kspan, "expected 'struct', 'union' or 'enum'"));
        };
        let mut attributes = self.attributes()?;
        let name = match self.peek_word() {
            "" => None,
            _ => {
                let (n, s) = self.eat_ident().unwrap_or_default();
                Some(Ident { name: n, span: s })
            }
        };
        attributes.extend(self.attributes()?);
        self.enter()?;
        let body = self.c_body(kind);
        self.leave();
        let body = body?;
        attributes.extend(self.attributes()?);
        Ok(CTypeDef {
            span: self.span_from(start),
            kind,
            name,
            body,
            attributes,
        })
    }

    /// Any number of `__attribute__((…))`.
    fn attributes(&mut self) -> PResult<Vec<String>> {
        let mut out = Vec::new();
        while self.eat_keyword("__attribute__") {
            self.skip_layout();
            if !self.rest().starts_with("((") {
                return Err(self.expected("'((' after __attribute__"));
            }
            let start = self.pos;
            let Some(end) = self.scan_balanced(self.pos, '(', ')') else {
                return Err(self.error(
                    Span::new(start, start + 2),
                    "unbalanced parentheses in __attribute__",
                ));
            };
            out.push(self.src[start + 2..end.saturating_sub(2).max(start + 2)].to_string());
            self.bump(end - self.pos);
        }
        Ok(out)
    }

    fn c_body(&mut self, kind: CTypeKind) -> PResult<CTypeBody> {
        self.expect("{")?;
        if kind == CTypeKind::Enum {
            let mut items = Vec::new();
            while !self.eat("}") {
                self.skip_layout();
                let start = self.pos;
                let name = self.ident_node("an enumerator name")?;
                let value = if self.eat("=") {
                    Some(self.expr()?)
                } else {
                    None
                };
                items.push(CEnumerator {
                    span: self.span_from(start),
                    name,
                    value,
                });
                if !self.eat(",") {
                    self.expect("}")?;
                    break;
                }
            }
            return Ok(CTypeBody::Enumerators(items));
        }
        let mut fields = Vec::new();
        loop {
            if self.eat("}") {
                return Ok(CTypeBody::Fields(fields));
            }
            if self.at_end_after_layout() {
                return Err(self.expected("'}' to close the definition"));
            }
            self.c_member(&mut fields)?;
        }
    }

    pub(crate) fn at_end_after_layout(&mut self) -> bool {
        self.skip_layout();
        self.at_end()
    }

    /// One member declaration: a base type and one or more declarators, then `;`.
    fn c_member(&mut self, fields: &mut Vec<CField>) -> PResult<()> {
        self.skip_layout();
        let start = self.pos;
        // Base type: a nested definition, a tagged reference, or a run of words.
        let mut words: Vec<(String, Span)> = Vec::new();
        let mut base: Option<CTypeExpr> = None;
        loop {
            let w = self.peek_word().to_string();
            if w.is_empty() {
                break;
            }
            if C_QUALIFIERS.contains(&w.as_str()) {
                self.eat_ident();
                continue;
            }
            if let Some(k) = tag_kind(&w) {
                if self.looks_like_c_definition() {
                    base = Some(CTypeExpr::Inline(Box::new(self.c_definition()?)));
                } else {
                    self.eat_ident();
                    let (n, _) = self.expect_ident(&format!("a name after '{w}'"))?;
                    base = Some(CTypeExpr::Tagged(k, n));
                }
                break;
            }
            let (w, s) = self.eat_ident().unwrap_or_default();
            words.push((w, s));
        }
        // Without a tagged/inline base, the last word is the member name unless a declarator
        // with `*` or `(` follows.
        let mut first_name = None;
        if base.is_none() {
            let next_is_name_start = self.check("*") || self.check("(");
            if words.len() >= 2 && !next_is_name_start {
                let (n, s) = words.pop().unwrap_or_default();
                first_name = Some(Ident { name: n, span: s });
            }
            if words.is_empty() {
                return Err(self.expected("a member type"));
            }
            let names: Vec<&str> = words.iter().map(|(w, _)| w.as_str()).collect();
            base = Some(CTypeExpr::Named(names.join(" ")));
        }
        let base = CType {
            span: self.span_from(start),
            kind: base.unwrap_or(CTypeExpr::Named(String::new())),
        };
        loop {
            let field = self.c_declarator(start, base.clone(), first_name.take())?;
            fields.push(field);
            if !self.eat(",") {
                break;
            }
        }
        // Like clang (with a warning), accept a last member without its `;`.
        if self.check("}") {
            return Ok(());
        }
        self.expect(";")
    }

    fn c_declarator(&mut self, start: usize, base: CType, name: Option<Ident>) -> PResult<CField> {
        let mut ty = base;
        let mut name = name;
        if name.is_none() {
            while self.eat("*") {
                ty = CType {
                    span: self.span_from(start),
                    kind: CTypeExpr::Pointer(Box::new(ty)),
                };
                while C_QUALIFIERS.contains(&self.peek_word()) {
                    self.eat_ident();
                }
            }
            if self.eat("(") {
                // Function pointer: `ret (*name)(params)`.
                self.expect("*")?;
                name = Some(self.ident_node("a member name")?);
                self.expect(")")?;
                self.skip_layout();
                match self.scan_balanced(self.pos, '(', ')') {
                    Some(end) if self.check("(") => self.bump(end - self.pos),
                    _ => return Err(self.expected("a parameter list")),
                }
                ty = CType {
                    span: self.span_from(start),
                    kind: CTypeExpr::FuncPtr(Box::new(ty)),
                };
            } else if !self.peek_word().is_empty() {
                name = Some(self.ident_node("a member name")?);
            }
        }
        let mut dims = Vec::new();
        while self.eat("[") {
            if self.eat("]") {
                dims.push(None);
                continue;
            }
            self.skip_layout();
            let n = if self.peek().is_some_and(|c| c.is_ascii_digit()) {
                let at = self.pos;
                let len = super::lex::word_len(self.rest());
                let text = self.rest()[..len].to_string();
                self.bump(len);
                match parse_int_text(&text) {
                    Ok(l) => Some(l.value),
                    Err(e) => return Err(self.error(Span::new(at, at + len), e.to_string())),
                }
            } else {
                return Err(self.expected("an array length"));
            };
            self.expect("]")?;
            dims.push(n);
        }
        // `int a[2][3]` is an array of 2 arrays of 3: wrap innermost-last.
        for d in dims.into_iter().rev() {
            ty = CType {
                span: self.span_from(start),
                kind: CTypeExpr::Array(Box::new(ty), d),
            };
        }
        let bitfield = if self.eat(":") {
            self.skip_layout();
            if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
                return Err(self.expected("a bit-field width"));
            }
            let (lit, span) = self.int_literal();
            match u32::try_from(lit.value) {
                Ok(v) => Some(v),
                Err(_) => return Err(self.error(span, "bit-field width out of range")),
            }
        } else {
            None
        };
        self.attributes()?;
        Ok(CField {
            span: self.span_from(start),
            ty,
            name,
            bitfield,
        })
    }
}
