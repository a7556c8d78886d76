//! The top level: shebang, C preprocessor lines and type definitions, `config`, `import`,
//! then probes (see `probe`), macros, functions and map declarations (bpftrace's required
//! order).
//!
//! Input: the whole text. Output: a [`Program`].
//! Invariants: an item that fails to parse is skipped to the end of its `{ … }` body and the
//! next item is parsed; out-of-order sections are reported and still parsed, so the errors
//! inside them are found too.

use super::super::cpp::{CppError, Preprocessor as Cpp};
use super::{PResult, Parser};
use crate::diag::{Diagnostic, Span};
use crate::syntax::ast::{
    CItem, CType, CTypeBody, CTypeDef, CTypeExpr, Config, ConfigEntry, ConfigValue, FnDef, Ident,
    Item, MacroDef, MacroParam, MacroParamKind, MapDecl, Preprocessor, PreprocessorKind, Program,
    Stmt, StmtKind,
};

impl Parser<'_> {
    pub(crate) fn program(&mut self) -> Program {
        let mut prog = Program {
            span: Span::new(0, self.src.len()),
            shebang: None,
            c_items: Vec::new(),
            c_defs: Default::default(),
            header_types: Vec::new(),
            config: None,
            imports: Vec::new(),
            items: Vec::new(),
            expr_count: 0,
            stdlib: Vec::new(),
            stdlib_start: u32::MAX,
            expansions: Default::default(),
        };
        self.skip_layout();
        if self.rest().starts_with("#!") {
            let start = self.pos;
            let n = self.rest().find('\n').unwrap_or(self.rest().len());
            self.bump(n);
            prog.shebang = Some(Span::new(start, self.pos));
        }
        // C definitions first, under preprocessor conditionals; `--include` files before them.
        let mut cpp = Cpp::new(self.cpp.take().unwrap_or_default());
        for e in cpp.forced_includes() {
            self.error(Span::new(0, 0), format!("{e} (--include)"));
        }
        header_types(&mut prog, cpp.structs(), Span::new(0, 0));
        let mut open_ifs: Vec<Span> = Vec::new();
        loop {
            self.skip_layout();
            if self.peek() == Some('#') {
                let p = self.preprocessor();
                let was_active = cpp.active();
                let before = cpp.depth();
                let structs = cpp.structs().len();
                let r = cpp.directive(&p.text[1..]);
                header_types(&mut prog, &cpp.structs()[structs..], p.span);
                track_conditionals(&mut open_ifs, before, cpp.depth(), p.span);
                match r {
                    Ok(()) => {
                        if was_active && !matches!(p.kind, PreprocessorKind::Other) {
                            prog.c_items.push(CItem::Preprocessor(p));
                        }
                    }
                    Err(e) => self.cpp_error(&p, &e),
                }
                if !cpp.active() {
                    self.skip_inactive(&mut cpp, &mut open_ifs);
                }
            } else if self.is_c_definition_start() {
                match self.c_definition() {
                    Ok(d) => prog.c_items.push(CItem::TypeDef(d)),
                    Err(_) => self.sync_item(),
                }
                self.eat(";");
            } else {
                break;
            }
        }
        if let Some(span) = open_ifs.first() {
            self.error(
                *span,
                "unterminated conditional: #endif expected before the script's probes",
            );
        }
        prog.c_defs = cpp.into_defs();
        // Then config and imports, in any order.
        loop {
            match self.peek_word() {
                "config" => {
                    let c = self.config();
                    if prog.config.is_some() {
                        if let Ok(c) = &c {
                            self.error(c.span, "duplicate config block");
                        }
                    } else if let Ok(c) = c {
                        prog.config = Some(c);
                    }
                }
                "import" => {
                    self.skip_layout();
                    let start = self.pos;
                    self.eat_keyword("import");
                    match self.import_tail(start) {
                        Ok(i) => prog.imports.push(i),
                        Err(_) => self.sync_line(),
                    }
                }
                _ => break,
            }
        }
        // Then everything else.
        while !self.gave_up {
            self.skip_layout();
            if self.at_end() {
                break;
            }
            let before = self.pos;
            if let Some(item) = self.item(&mut prog) {
                prog.items.push(item);
            }
            if self.pos == before {
                let n = self.peek().map_or(1, char::len_utf8);
                self.bump(n);
            }
        }
        prog.expr_count = self.expr_count();
        prog
    }

    fn is_c_definition_start(&self) -> bool {
        matches!(self.peek_word(), "struct" | "union" | "enum") && self.looks_like_c_definition()
    }

    /// One main-section item; None when it was out of place or failed (already reported).
    fn item(&mut self, prog: &mut Program) -> Option<Item> {
        let start = self.pos;
        const ORDER: &str = "must appear before probes, macros, functions and map declarations";
        if self.peek() == Some('#') {
            let p = self.preprocessor();
            self.error(p.span, format!("C definitions {ORDER}"));
            return None;
        }
        if self.is_c_definition_start() {
            let r = self.c_definition();
            self.eat(";");
            match r {
                Ok(d) => {
                    self.error(d.span, format!("C definitions {ORDER}"));
                }
                Err(_) => self.sync_item(),
            }
            return None;
        }
        if self.looks_like_statement() {
            let span = self.token_span();
            self.report(
                Diagnostic::error(span, "statements must be inside a probe's body")
                    .with_help("wrap them in a probe, e.g. `begin { … }`"),
            );
            self.sync_statement();
            return None;
        }
        let r = match self.peek_word() {
            "config" => {
                if let Ok(c) = self.config() {
                    self.error(c.span, format!("config {ORDER}"));
                }
                return None;
            }
            "import" => {
                self.eat_keyword("import");
                if let Ok(i) = self.import_tail(start) {
                    self.error(i.span, format!("imports {ORDER}"));
                    prog.imports.push(i);
                } else {
                    self.sync_line();
                }
                return None;
            }
            "macro" => self.macro_def().map(Item::Macro),
            "fn" if self.fn_follows() => self.fn_def().map(Item::Fn),
            "let" => self.map_decl().map(Item::MapDecl),
            _ => self.probe().map(Item::Probe),
        };
        match r {
            Ok(i) => Some(i),
            Err(_) => {
                self.sync_item();
                None
            }
        }
    }

    /// A statement at the top level: `$x …`, `@m …`, or `name(…` / `name = …` (not a keyword).
    /// Whether the `$N` at `p` is a whole attach point (followed by `{`, `,` or a predicate)
    /// and parameter N was given.
    fn positional_attach_point(&self, p: usize) -> bool {
        let digits = self.src[p + 1..]
            .bytes()
            .take_while(u8::is_ascii_digit)
            .count();
        let given = self.src[p + 1..p + 1 + digits]
            .parse::<usize>()
            .is_ok_and(|n| n >= 1 && n <= self.params.len());
        let after = self.scan_layout(p + 1 + digits);
        given && matches!(self.char_at(after), Some('{' | ',' | '/'))
    }

    fn looks_like_statement(&self) -> bool {
        let p = self.scan_layout(self.pos);
        match self.char_at(p) {
            // `$1 { … }` with `$1` given: an attach point from the command line.
            Some('$') if self.positional_attach_point(p) => false,
            Some('$' | '@') => true,
            Some(c) if c.is_ascii_alphabetic() || c == '_' => {
                let w = self.peek_word();
                if matches!(w, "macro" | "fn" | "let" | "config" | "import") {
                    return false;
                }
                let after = self.scan_layout(p + w.len());
                let rest = &self.src[after..];
                // `name=kprobe:f` is a labelled attach point, not an assignment.
                let token_end = self.src[p..]
                    .find(|c: char| c.is_whitespace() || c == '{')
                    .map_or(self.src.len(), |i| p + i);
                let labelled = self.src[p..token_end].contains(':');
                rest.starts_with('(')
                    || (rest.starts_with('=') && !rest.starts_with("==") && !labelled)
            }
            _ => false,
        }
    }

    /// `fn name(` rather than an attach point such as `fn:…`.
    fn fn_follows(&self) -> bool {
        let p = self.scan_layout(self.scan_layout(self.pos) + 2);
        self.char_at(p)
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
    }

    /// Recovery for line-based constructs: skip to the end of the line.
    fn sync_line(&mut self) {
        let n = self.rest().find('\n').unwrap_or(self.rest().len());
        self.pos += n;
    }

    /// Skips the lines of an inactive conditional branch up to the directive that makes the
    /// text active again (or the end of the script). Only directive lines are looked at, as a
    /// C preprocessor does.
    fn skip_inactive(&mut self, cpp: &mut Cpp, open_ifs: &mut Vec<Span>) {
        while !cpp.active() && !self.at_end() {
            self.skip_layout();
            if self.peek() == Some('#') {
                let p = self.preprocessor();
                let before = cpp.depth();
                let r = cpp.directive(&p.text[1..]);
                track_conditionals(open_ifs, before, cpp.depth(), p.span);
                if let Err(e) = r {
                    self.cpp_error(&p, &e);
                }
            } else {
                let n = self.rest().find('\n').map_or(self.rest().len(), |i| i + 1);
                self.bump(n);
            }
        }
    }

    /// A directive's error at the directive (for a header not found: at its name).
    fn cpp_error(&mut self, p: &Preprocessor, e: &CppError) {
        let span = match e {
            CppError::NotFound(_) => p.text.find(['<', '"']).map_or(p.span, |i| {
                Span::new(p.span.start as usize + i, p.span.end as usize)
            }),
            _ => p.span,
        };
        let mut d = Diagnostic::error(span, e.to_string());
        if let CppError::NotFound(_) = e {
            d.preface = Some(Box::new(self.clang_not_found(p, e)));
        }
        self.report(d);
    }

    /// A header not found as bpftrace reports it, in clang's words: bpftrace hands clang a
    /// file `definitions.h` holding an include of its BTF header on line 1, then the script's
    /// C lines (its directives) one per line, so the script's Nth directive is line N + 1 and
    /// the column is that of the header's name in the directive.
    fn clang_not_found(&self, p: &Preprocessor, e: &CppError) -> String {
        let start = p.span.start as usize;
        let directives = self.src[..start]
            .lines()
            .filter(|l| l.trim_start().starts_with('#'))
            .count();
        let col = p.text.find(['<', '"']).map_or(1, |i| i + 1);
        format!("definitions.h:{}:{col}: fatal error: {e}", directives + 2)
    }

    fn preprocessor(&mut self) -> Preprocessor {
        self.skip_layout();
        let start = self.pos;
        // A directive continues on the next line after a backslash.
        let mut n = 0;
        loop {
            let line_end = self.rest()[n..]
                .find('\n')
                .map_or(self.rest().len(), |i| n + i);
            if self.rest()[n..line_end].trim_end().ends_with('\\') && line_end < self.rest().len() {
                n = line_end + 1;
            } else {
                n = line_end;
                break;
            }
        }
        let text = self.rest()[..n].trim_end().to_string();
        self.bump(n);
        let body = text[1..].trim_start();
        let kind = if let Some(rest) = body.strip_prefix("include") {
            let rest = rest.trim();
            let (system, path) = if let Some(p) = rest.strip_prefix('<') {
                (true, p.split('>').next().unwrap_or(""))
            } else {
                (false, rest.trim_matches('"'))
            };
            PreprocessorKind::Include {
                path: path.to_string(),
                system,
            }
        } else if let Some(rest) = body.strip_prefix("define") {
            let rest = rest.trim_start();
            let name_len = rest
                .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            PreprocessorKind::Define {
                name: rest[..name_len].to_string(),
                value: rest[name_len..].trim().to_string(),
            }
        } else {
            PreprocessorKind::Other
        };
        Preprocessor {
            span: Span::new(start, start + text.len()),
            kind,
            text,
        }
    }

    /// `config = { key = value; … }`.
    fn config(&mut self) -> PResult<Config> {
        self.skip_layout();
        let start = self.pos;
        self.eat_keyword("config");
        let r = self.config_body(start);
        if r.is_err() {
            self.sync_item();
        }
        r
    }

    fn config_body(&mut self, start: usize) -> PResult<Config> {
        self.expect("=")?;
        self.expect("{")?;
        let mut entries = Vec::new();
        while !self.eat("}") {
            self.skip_layout();
            let estart = self.pos;
            let key = self.ident_node("a config key")?;
            self.expect("=")?;
            self.skip_layout();
            let vstart = self.pos;
            let value = match self.peek() {
                Some('"') => {
                    let (s, _) = self.string_literal()?;
                    ConfigValue::Str(String::from_utf8_lossy(&s).into_owned())
                }
                Some(c) if c.is_ascii_digit() => ConfigValue::Int(self.int_literal().0.value),
                _ => match self.eat_ident() {
                    Some((w, _)) if w == "true" || w == "false" => ConfigValue::Bool(w == "true"),
                    Some((w, _)) => ConfigValue::Ident(w),
                    None => return Err(self.expected("a string, integer, boolean or name")),
                },
            };
            let value_span = self.span_from(vstart);
            entries.push(ConfigEntry {
                span: self.span_from(estart),
                key,
                value,
                value_span,
            });
            if !self.eat(";") && !self.check("}") {
                return Err(self.expected("';' or '}' in config block"));
            }
        }
        Ok(Config {
            span: self.span_from(start),
            entries,
        })
    }

    /// `macro name(params) { body }`.
    fn macro_def(&mut self) -> PResult<MacroDef> {
        self.skip_layout();
        let start = self.pos;
        self.eat_keyword("macro");
        let name = self.ident_node("a macro name")?;
        self.expect("(")?;
        let mut params = Vec::new();
        if !self.eat(")") {
            loop {
                self.skip_layout();
                let param = match self.peek() {
                    Some('$') => {
                        let (n, s) = self.eat_variable()?;
                        MacroParam {
                            kind: MacroParamKind::Var,
                            name: Ident { name: n, span: s },
                        }
                    }
                    Some('@') => {
                        let (n, s) = self.eat_map_name();
                        MacroParam {
                            kind: MacroParamKind::Map,
                            name: Ident { name: n, span: s },
                        }
                    }
                    _ => {
                        let id = self.ident_node("a macro parameter ($var, @map or name)")?;
                        if super::expr::is_builtin(&id.name) {
                            self.error(
                                id.span,
                                format!("builtin '{}' can't be used as a macro parameter", id.name),
                            );
                        }
                        MacroParam {
                            kind: MacroParamKind::Expr,
                            name: id,
                        }
                    }
                };
                params.push(param);
                if self.eat(",") {
                    continue;
                }
                self.expect(")")?;
                break;
            }
        }
        let body = self.block()?;
        Ok(MacroDef {
            span: self.span_from(start),
            name,
            params,
            body,
        })
    }

    /// `fn name($a: type, …): type { body }`.
    fn fn_def(&mut self) -> PResult<FnDef> {
        self.skip_layout();
        let start = self.pos;
        self.eat_keyword("fn");
        let name = self.ident_node("a function name")?;
        self.expect("(")?;
        let mut params = Vec::new();
        if !self.eat(")") {
            loop {
                self.skip_layout();
                if self.peek() != Some('$') {
                    return Err(self.expected("a parameter ($name: type)"));
                }
                let (n, s) = self.eat_variable()?;
                self.expect(":")?;
                let ty = self.type_annotation()?;
                params.push((Ident { name: n, span: s }, ty));
                if self.eat(",") {
                    continue;
                }
                self.expect(")")?;
                break;
            }
        }
        self.expect(":")?;
        let ret = self.type_annotation()?;
        let mut body = self.block()?;
        tail_to_stmt(&mut body);
        Ok(FnDef {
            span: self.span_from(start),
            name,
            params,
            ret,
            body,
        })
    }

    /// `let @name = kind(max_entries);`.
    fn map_decl(&mut self) -> PResult<MapDecl> {
        self.skip_layout();
        let start = self.pos;
        self.eat_keyword("let");
        self.skip_layout();
        if self.peek() != Some('@') {
            let span = self.token_span();
            self.report(
                Diagnostic::error(span, "top-level let statements must be map declarations")
                    .with_help("write e.g. `let @a = hash(100);`, or move the let into a probe"),
            );
            return Err(super::Recover);
        }
        let (name, span) = self.eat_map_name();
        self.expect("=")?;
        let kind = self.ident_node("a map type (hash, lruhash, percpuhash, …)")?;
        self.expect("(")?;
        self.skip_layout();
        if !self.peek().is_some_and(|c| c.is_ascii_digit()) {
            return Err(self.expected("the maximum number of entries"));
        }
        let (n, _) = self.int_literal();
        self.expect(")")?;
        if !self.eat(";") {
            return Err(self.expected("';'"));
        }
        Ok(MapDecl {
            span: self.span_from(start),
            map: Ident { name, span },
            kind,
            max_entries: n.value,
        })
    }
}

/// A probe's or function's body has no value: its tail expression is a statement.
pub(crate) fn tail_to_stmt(b: &mut crate::syntax::ast::Block) {
    if let Some(e) = b.tail.take() {
        b.stmts.push(Stmt {
            span: e.span,
            kind: StmtKind::Expr(*e),
        });
    }
}

/// Keeps the spans of the open `#if`s (for "unterminated conditional") as a directive
/// changes the nesting from `before` to `after`.
fn track_conditionals(open_ifs: &mut Vec<Span>, before: usize, after: usize, span: Span) {
    if after > before {
        open_ifs.push(span);
    } else if after < before {
        open_ifs.pop();
    }
}

/// Parses the struct and union definitions a header had (already in the script's C syntax)
/// into `prog.header_types`, their spans all at `at` (the `#include`). One that does not
/// parse is left out.
fn header_types(prog: &mut Program, texts: &[String], at: Span) {
    for t in texts {
        let mut p = Parser::new(t);
        if let Ok(mut d) = p.c_definition() {
            if p.diags.is_empty() {
                respan_def(&mut d, at);
                prog.header_types.push(d);
            }
        }
    }
}

fn respan_def(d: &mut CTypeDef, at: Span) {
    d.span = at;
    if let Some(n) = &mut d.name {
        n.span = at;
    }
    if let CTypeBody::Fields(fs) = &mut d.body {
        for f in fs {
            f.span = at;
            if let Some(n) = &mut f.name {
                n.span = at;
            }
            respan_type(&mut f.ty, at);
        }
    }
}

fn respan_type(t: &mut CType, at: Span) {
    t.span = at;
    match &mut t.kind {
        CTypeExpr::Inline(d) => respan_def(d, at),
        CTypeExpr::Pointer(i) | CTypeExpr::Array(i, _) | CTypeExpr::FuncPtr(i) => {
            respan_type(i, at)
        }
        CTypeExpr::Named(_) | CTypeExpr::Tagged(..) => {}
    }
}
