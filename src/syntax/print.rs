//! The `-d ast` printer: one node per line, children indented by two spaces, each line ending
//! in `@line:col` of the node's start.
//!
//! Input: a [`Program`] and the [`SourceFile`] it came from. Output: text.
//! Invariant: the output is a deterministic function of the tree (tests assert on it).

use std::fmt::Write;

use crate::diag::{SourceFile, Span};
use crate::syntax::ast::*;
use crate::syntax::attach::{AttachNum, AttachSpec};

/// Renders the whole program as an indented tree.
pub fn print_program(prog: &Program, src: &SourceFile) -> String {
    let mut p = Printer {
        out: String::new(),
        src,
        depth: 0,
    };
    p.program(prog);
    p.out
}

/// Renders one expression subtree (used by tests).
pub fn print_expr(e: &Expr, src: &SourceFile) -> String {
    let mut p = Printer {
        out: String::new(),
        src,
        depth: 0,
    };
    p.expr(e);
    p.out
}

struct Printer<'a> {
    out: String,
    src: &'a SourceFile,
    depth: usize,
}

fn quote(bytes: &[u8]) -> String {
    let mut s = String::with_capacity(bytes.len() + 2);
    s.push('"');
    let mut rest = bytes;
    while let Some(&b) = rest.first() {
        // Printable characters go in by the run.
        let plain = rest
            .iter()
            .position(|&b| !(0x20..=0x7e).contains(&b) || b == b'"' || b == b'\\')
            .unwrap_or(rest.len());
        if plain > 0 {
            s.push_str(std::str::from_utf8(&rest[..plain]).unwrap_or_default());
            rest = &rest[plain..];
            continue;
        }
        rest = &rest[1..];
        match b {
            b'\n' => s.push_str("\\n"),
            b'\t' => s.push_str("\\t"),
            b'\r' => s.push_str("\\r"),
            b'"' => s.push_str("\\\""),
            b'\\' => s.push_str("\\\\"),
            _ => {
                let _ = write!(s, "\\x{b:02x}");
            }
        }
    }
    s.push('"');
    s
}

fn num(n: &AttachNum) -> String {
    match n {
        AttachNum::Lit(v) => v.to_string(),
        AttachNum::Param(p) => format!("${p}"),
    }
}

fn ty(t: &TypeRef) -> String {
    match &t.kind {
        TypeRefKind::Named(n) => n.clone(),
        TypeRefKind::Tagged(k, n) => format!("{} {n}", k.keyword()),
        TypeRefKind::Pointer(inner) => format!("{}*", ty(inner)),
        TypeRefKind::Array(inner, Some(n)) => format!("{}[{n}]", ty(inner)),
        TypeRefKind::Array(inner, None) => format!("{}[]", ty(inner)),
        TypeRefKind::Typeof(_) => "typeof(…)".to_string(),
    }
}

fn ctype(t: &CType) -> String {
    match &t.kind {
        CTypeExpr::Named(n) => n.clone(),
        CTypeExpr::Tagged(k, n) => format!("{} {n}", k.keyword()),
        CTypeExpr::Inline(d) => format!(
            "{} {}{{…}}",
            d.kind.keyword(),
            d.name
                .as_ref()
                .map_or(String::new(), |n| format!("{} ", n.name))
        ),
        CTypeExpr::Pointer(inner) => format!("{}*", ctype(inner)),
        CTypeExpr::Array(inner, Some(n)) => format!("{}[{n}]", ctype(inner)),
        CTypeExpr::Array(inner, None) => format!("{}[]", ctype(inner)),
        CTypeExpr::FuncPtr(ret) => format!("{} (*)(…)", ctype(ret)),
    }
}

impl Printer<'_> {
    fn line(&mut self, span: Span, text: impl AsRef<str>) {
        let (l, c) = self.src.line_col(span.start);
        let _ = writeln!(
            self.out,
            "{:indent$}{} @{l}:{c}",
            "",
            text.as_ref(),
            indent = self.depth * 2
        );
    }

    fn nested(&mut self, f: impl FnOnce(&mut Self)) {
        self.depth += 1;
        f(self);
        self.depth -= 1;
    }

    fn program(&mut self, p: &Program) {
        self.line(p.span, "Program");
        self.nested(|s| {
            if let Some(sb) = p.shebang {
                s.line(sb, "Shebang");
            }
            for c in &p.c_items {
                match c {
                    CItem::Preprocessor(pp) => s.line(pp.span, format!("Preprocessor {}", pp.text)),
                    CItem::TypeDef(d) => s.ctypedef(d),
                }
            }
            if let Some(c) = &p.config {
                s.line(c.span, "Config");
                s.nested(|s| {
                    for e in &c.entries {
                        let v = match &e.value {
                            ConfigValue::Int(i) => i.to_string(),
                            ConfigValue::Str(x) => quote(x.as_bytes()),
                            ConfigValue::Bool(b) => b.to_string(),
                            ConfigValue::Ident(i) => i.clone(),
                        };
                        s.line(e.span, format!("{} = {v}", e.key.name));
                    }
                });
            }
            for i in &p.imports {
                s.line(i.span, format!("Import {}", quote(i.path.as_bytes())));
            }
            for item in &p.items {
                s.item(item);
            }
        });
    }

    fn ctypedef(&mut self, d: &CTypeDef) {
        let name = d.name.as_ref().map_or("<anonymous>", |n| &n.name);
        let attrs = if d.attributes.is_empty() {
            String::new()
        } else {
            format!(" attributes({})", d.attributes.join(", "))
        };
        self.line(d.span, format!("{} {name}{attrs}", d.kind.keyword()));
        self.nested(|s| match &d.body {
            CTypeBody::Fields(fs) => {
                for f in fs {
                    let name = f.name.as_ref().map_or("<anonymous>", |n| &n.name);
                    let bits = f.bitfield.map_or(String::new(), |b| format!(" : {b}"));
                    s.line(f.span, format!("Field {name}: {}{bits}", ctype(&f.ty)));
                    if let CTypeExpr::Inline(inner) = &f.ty.kind {
                        s.nested(|s| s.ctypedef(inner));
                    }
                }
            }
            CTypeBody::Enumerators(es) => {
                for e in es {
                    s.line(e.span, format!("Enumerator {}", e.name.name));
                    if let Some(v) = &e.value {
                        s.nested(|s| s.expr(v));
                    }
                }
            }
        });
    }

    fn item(&mut self, item: &Item) {
        match item {
            Item::Probe(p) => {
                self.line(p.span, "Probe");
                self.nested(|s| {
                    for ap in &p.attach_points {
                        s.attach(ap);
                    }
                    if let Some(pred) = &p.predicate {
                        s.line(pred.span, "Predicate");
                        s.nested(|s| s.expr(pred));
                    }
                    s.block(&p.body);
                });
            }
            Item::Macro(m) => {
                let params: Vec<&str> = m.params.iter().map(|p| p.name.name.as_str()).collect();
                self.line(
                    m.span,
                    format!("Macro {}({})", m.name.name, params.join(", ")),
                );
                self.nested(|s| s.block(&m.body));
            }
            Item::Fn(f) => {
                let params: Vec<String> = f
                    .params
                    .iter()
                    .map(|(n, t)| format!("{}: {}", n.name, ty(t)))
                    .collect();
                self.line(
                    f.span,
                    format!("Fn {}({}): {}", f.name.name, params.join(", "), ty(&f.ret)),
                );
                self.nested(|s| s.block(&f.body));
            }
            Item::MapDecl(d) => self.line(
                d.span,
                format!(
                    "MapDecl {} = {}({})",
                    d.map.name, d.kind.name, d.max_entries
                ),
            ),
        }
    }

    fn attach(&mut self, ap: &AttachPoint) {
        let detail = match &ap.spec {
            AttachSpec::None => String::new(),
            AttachSpec::Named { kind, name } if kind.is_empty() => format!(" name={name}"),
            AttachSpec::Named { kind, name } => format!(" kind={kind} name={name}"),
            AttachSpec::Kprobe {
                module,
                func,
                offset,
                address,
            } => {
                let mut s = String::new();
                if let Some(m) = module {
                    let _ = write!(s, " module={m}");
                }
                if let Some(a) = address {
                    let _ = write!(s, " address={a:#x}");
                } else {
                    let _ = write!(s, " func={func}");
                }
                if let Some(o) = offset {
                    let _ = write!(s, " offset={o:#x}");
                }
                s
            }
            AttachSpec::Uprobe {
                target,
                lang,
                func,
                offset,
                address,
            } => {
                let mut s = format!(" target={target}");
                if let Some(l) = lang {
                    let _ = write!(s, " lang={l}");
                }
                if let Some(a) = address {
                    let _ = write!(s, " address={a:#x}");
                } else {
                    let _ = write!(s, " func={func}");
                }
                if let Some(o) = offset {
                    let _ = write!(s, " offset={o:#x}");
                }
                s
            }
            AttachSpec::UprobeSourceLine {
                target,
                file,
                line,
                column,
            } => format!(
                " target={target} file={file} line={line}{}",
                column.map_or(String::new(), |c| format!(" column={c}"))
            ),
            AttachSpec::Usdt {
                target,
                provider,
                name,
            } => format!(
                " target={target}{} name={name}",
                provider
                    .as_ref()
                    .map_or(String::new(), |p| format!(" provider={p}"))
            ),
            AttachSpec::Tracepoint { category, name } => {
                format!(" category={category} name={name}")
            }
            AttachSpec::RawTracepoint { module, name } => format!(
                "{} name={name}",
                module
                    .as_ref()
                    .map_or(String::new(), |m| format!(" module={m}"))
            ),
            AttachSpec::Fentry {
                module,
                func,
                prog_id,
            } => format!(
                "{} func={func}{}",
                module
                    .as_ref()
                    .map_or(String::new(), |m| format!(" module={m}")),
                prog_id.map_or(String::new(), |p| format!(" prog_id={p}"))
            ),
            AttachSpec::Timer { unit, value } => {
                format!(" unit={} value={}", unit.name(), num(value))
            }
            AttachSpec::PerfEvent { event, count } => format!(
                " event={event}{}",
                count
                    .as_ref()
                    .map_or(String::new(), |c| format!(" count={}", num(c)))
            ),
            AttachSpec::Watchpoint { address, len, mode } => {
                format!(" address={} len={} mode={mode}", num(address), num(len))
            }
            AttachSpec::Iter { name, pin } => format!(
                " name={name}{}",
                pin.as_ref().map_or(String::new(), |p| format!(" pin={p}"))
            ),
        };
        let label = ap
            .label
            .as_ref()
            .map_or(String::new(), |l| format!(" label={l}"));
        self.line(
            ap.span,
            format!("AttachPoint {} ({}{label}{detail})", ap.raw, ap.kind.name()),
        );
    }

    fn block(&mut self, b: &Block) {
        self.line(b.span, "Block");
        self.nested(|s| {
            for st in &b.stmts {
                s.stmt(st);
            }
            if let Some(t) = &b.tail {
                s.line(t.span, "Tail");
                s.nested(|s| s.expr(t));
            }
        });
    }

    fn stmt(&mut self, st: &Stmt) {
        match &st.kind {
            StmtKind::Let { var, ty: t, init } => {
                let t = t.as_ref().map_or(String::new(), |t| format!(": {}", ty(t)));
                self.line(st.span, format!("Let {}{t}", var.name));
                if let Some(e) = init {
                    self.nested(|s| s.expr(e));
                }
            }
            StmtKind::Assign { target, op, value } => {
                let op = op.map_or("=".to_string(), |o| format!("{}=", o.symbol()));
                self.line(st.span, format!("Assign {op}"));
                self.nested(|s| {
                    match target {
                        LValue::Var(v) => s.line(v.span, format!("Var {}", v.name)),
                        LValue::Map { map, keys, span } => {
                            s.line(*span, format!("Map {}", map.name));
                            s.nested(|s| keys.iter().for_each(|k| s.expr(k)));
                        }
                    }
                    s.expr(value);
                });
            }
            StmtKind::Expr(e) => {
                self.line(st.span, "ExprStmt");
                self.nested(|s| s.expr(e));
            }
            StmtKind::Discard(e) => {
                self.line(st.span, "Discard");
                self.nested(|s| s.expr(e));
            }
            StmtKind::While { cond, body } => {
                self.line(st.span, "While");
                self.nested(|s| {
                    s.expr(cond);
                    s.block(body);
                });
            }
            StmtKind::Unroll { count, body } => {
                self.line(st.span, "Unroll");
                self.nested(|s| {
                    s.expr(count);
                    s.block(body);
                });
            }
            StmtKind::For { var, iter, body } => {
                self.line(st.span, format!("For {}", var.name));
                self.nested(|s| {
                    match iter {
                        ForIter::Map(m) => s.line(m.span, format!("Map {}", m.name)),
                        ForIter::Range { start, end } => {
                            s.line(start.span, "Range");
                            s.nested(|s| {
                                s.expr(start);
                                s.expr(end);
                            });
                        }
                    }
                    s.block(body);
                });
            }
            StmtKind::Return(v) => {
                self.line(st.span, "Return");
                if let Some(e) = v {
                    self.nested(|s| s.expr(e));
                }
            }
            StmtKind::Break => self.line(st.span, "Break"),
            StmtKind::Continue => self.line(st.span, "Continue"),
            StmtKind::Import(i) => {
                self.line(st.span, format!("Import {}", quote(i.path.as_bytes())))
            }
        }
    }

    fn type_or_expr(&mut self, t: &TypeOrExpr) {
        match t {
            TypeOrExpr::Type(t) => self.line(t.span, format!("Type {}", ty(t))),
            TypeOrExpr::Expr(e) => self.expr(e),
        }
    }

    fn expr(&mut self, e: &Expr) {
        let sp = e.span;
        match &e.kind {
            ExprKind::Int(i) => {
                let suffix = match i.suffix {
                    IntSuffix::None => "",
                    IntSuffix::C => " (C suffix)",
                    IntSuffix::Duration => " (ns)",
                };
                self.line(sp, format!("Int {}{suffix}", i.value));
            }
            ExprKind::Str(s) => self.line(sp, format!("Str {}", quote(s))),
            ExprKind::Bool(b) => self.line(sp, format!("Bool {b}")),
            ExprKind::Var(v) => self.line(sp, format!("Var {v}")),
            ExprKind::Map { name, keys } => {
                self.line(sp, format!("Map {}", name.name));
                self.nested(|s| keys.iter().for_each(|k| s.expr(k)));
            }
            ExprKind::Positional(n) => self.line(sp, format!("Positional ${n}")),
            ExprKind::PositionalCount => self.line(sp, "PositionalCount $#"),
            ExprKind::Ident(n) => self.line(sp, format!("Ident {n}")),
            ExprKind::Call { name, args } => {
                self.line(sp, format!("Call {}", name.name));
                self.nested(|s| args.iter().for_each(|a| s.expr(a)));
            }
            ExprKind::Unary { op, expr } => {
                let post = matches!(op, UnaryOp::PostInc | UnaryOp::PostDec);
                let label = if post {
                    format!("Unary x{}", op.symbol())
                } else {
                    format!("Unary {}", op.symbol())
                };
                self.line(sp, label);
                self.nested(|s| s.expr(expr));
            }
            ExprKind::Binary { op, lhs, rhs } => {
                self.line(sp, format!("Binary {}", op.symbol()));
                self.nested(|s| {
                    s.expr(lhs);
                    s.expr(rhs);
                });
            }
            ExprKind::Ternary {
                cond,
                then,
                otherwise,
            } => {
                self.line(sp, "Ternary");
                self.nested(|s| {
                    s.expr(cond);
                    if let Some(t) = then {
                        s.expr(t);
                    }
                    s.expr(otherwise);
                });
            }
            ExprKind::Cast { ty: t, expr } => {
                self.line(sp, format!("Cast {}", ty(t)));
                self.nested(|s| s.expr(expr));
            }
            ExprKind::Field { expr, field, arrow } => {
                let op = if *arrow { "->" } else { "." };
                self.line(sp, format!("Field {op}{}", field.name));
                self.nested(|s| s.expr(expr));
            }
            ExprKind::TupleIndex { expr, index } => {
                self.line(sp, format!("TupleIndex .{index}"));
                self.nested(|s| s.expr(expr));
            }
            ExprKind::Index { expr, index } => {
                self.line(sp, "Index");
                self.nested(|s| {
                    s.expr(expr);
                    s.expr(index);
                });
            }
            ExprKind::Tuple(es) => {
                self.line(sp, "Tuple");
                self.nested(|s| es.iter().for_each(|x| s.expr(x)));
            }
            ExprKind::Record(fs) => {
                self.line(sp, "Record");
                self.nested(|s| {
                    for (n, v) in fs {
                        s.line(n.span, format!("{} =", n.name));
                        s.nested(|s| s.expr(v));
                    }
                });
            }
            ExprKind::Sizeof(t) => {
                self.line(sp, "Sizeof");
                self.nested(|s| s.type_or_expr(t));
            }
            ExprKind::Typeof(t) => {
                self.line(sp, "Typeof");
                self.nested(|s| s.type_or_expr(t));
            }
            ExprKind::Typeinfo(t) => {
                self.line(sp, "Typeinfo");
                self.nested(|s| s.type_or_expr(t));
            }
            ExprKind::Offsetof { of, fields } => {
                let path: Vec<&str> = fields.iter().map(|f| f.name.as_str()).collect();
                self.line(sp, format!("Offsetof {}", path.join(".")));
                self.nested(|s| s.type_or_expr(of));
            }
            ExprKind::Comptime(x) => {
                self.line(sp, "Comptime");
                self.nested(|s| s.expr(x));
            }
            ExprKind::If {
                cond,
                then,
                otherwise,
            } => {
                self.line(sp, "If");
                self.nested(|s| {
                    s.expr(cond);
                    s.block(then);
                    if let Some(o) = otherwise {
                        s.line(o.span, "Else");
                        s.nested(|s| s.expr(o));
                    }
                });
            }
            ExprKind::Block(b) => self.block(b),
            ExprKind::Error => self.line(sp, "Error"),
        }
    }
}
