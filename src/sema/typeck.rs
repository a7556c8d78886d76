//! Expression typing: one [`Type`] per expression, recorded in the side table, with bpftrace's
//! rules — integer arithmetic in 64 bits, string comparison only with `==`/`!=`, pointers
//! dereferenced through BTF (`.` and `->` both dereference), `args.NAME` from the probe's
//! context, casts to integers, pointers and C types, builtins through [`crate::builtins`].
//!
//! Input: expressions, in a [`Checker`] holding the probe's scopes and context.
//! Output: types, constants and diagnostics in the checker's tables.

use super::context::{ArgLookup, ARGS_KINDS};
use super::ctypes::{btf_member, btf_member_names, find_btf_record, named_type};
use super::resolve::{Checker, Define, MacroFrame};
use super::types::{AddrSpace, CTypeRef, Pointee, StructType, Type};
use crate::builtins::{self, CallCtx, Form};
use crate::diag::Span;
use crate::syntax::ast::*;
use crate::template::{Fact, ParamRequirement};

/// Deepest macro expansion (a macro calling itself).
const MAX_MACRO_DEPTH: usize = 16;

impl Checker<'_> {
    fn set(&mut self, e: &Expr, t: Type) -> Type {
        if let Some(slot) = self.types.get_mut(e.id.index()) {
            *slot = t.clone();
        }
        t
    }

    /// Types a value that may not be an aggregation call.
    pub fn value_expr(&mut self, e: &Expr) -> Type {
        self.expr(e)
    }

    /// Types a map key: it must be storable.
    pub fn key_expr(&mut self, e: &Expr) -> Type {
        let t = self.expr(e);
        if !t.is_storable() && !t.is_none() {
            self.error(
                e.span,
                format!("A value of type '{t}' cannot be used as a map key"),
            );
        } else if t.is_none() {
            self.error(e.span, "A value of type 'none' cannot be used as a map key");
        }
        t
    }

    /// Types an assigned map value: aggregation calls are allowed here, and only here.
    pub fn map_value_expr(&mut self, e: &Expr) -> Type {
        if let ExprKind::Call { name, args } = &e.kind {
            if let Some(b) = builtins::lookup(&name.name, Form::Function) {
                if b.aggregation {
                    let t = self.call(e, name, args, true);
                    return self.set(e, t);
                }
            }
        }
        self.expr(e)
    }

    pub fn expr(&mut self, e: &Expr) -> Type {
        let t = self.expr_inner(e);
        self.set(e, t)
    }

    fn expr_inner(&mut self, e: &Expr) -> Type {
        match &e.kind {
            ExprKind::Int(lit) => {
                self.consts.insert(e.id, lit.value as i64);
                if lit.value > i64::MAX as u64 {
                    Type::U64
                } else {
                    Type::I64
                }
            }
            ExprKind::Str(s) => {
                let size = s.len() + 1;
                if size > self.opts.max_strlen {
                    self.error_help(
                        e.span,
                        format!(
                            "String literal is too long: {size} bytes (with the NUL) > max_strlen {}",
                            self.opts.max_strlen
                        ), "raise it with config = { max_strlen = N } or STROBE_MAX_STRLEN".into());
                }
                self.str_consts.insert(e.id, s.clone());
                Type::Str { size }
            }
            ExprKind::Bool(b) => {
                self.consts.insert(e.id, *b as i64);
                Type::Bool
            }
            ExprKind::Var(name) => match self.lookup_var(name) {
                Some(slot) => {
                    self.var_slots.insert(e.id, slot);
                    self.vars.slots[slot.0 as usize].1.clone()
                }
                None => {
                    self.error(e.span, format!("Undefined or undeclared variable: {name}"));
                    Type::None
                }
            },
            ExprKind::Map { name, keys } => self.map_read(e, name, keys),
            ExprKind::Positional(n) => match self.opts.params.get(*n as usize - 1).cloned() {
                Some(p) => match p.trim().parse::<i64>() {
                    Ok(v) => {
                        self.consts.insert(e.id, v);
                        Type::I64
                    }
                    Err(_) => {
                        let size = p.len() + 1;
                        self.str_consts.insert(e.id, p.into_bytes());
                        Type::Str { size }
                    }
                },
                None => {
                    self.consts.insert(e.id, 0);
                    Type::I64
                }
            },
            ExprKind::PositionalCount => {
                self.consts.insert(e.id, self.opts.params.len() as i64);
                Type::I64
            }
            ExprKind::Ident(name) => self.ident(e, name),
            ExprKind::Call { name, args } => self.call(e, name, args, false),
            ExprKind::Unary { op, expr } => self.unary(e, *op, expr),
            ExprKind::Binary { op, lhs, rhs } => self.binary(e, *op, lhs, rhs),
            ExprKind::Ternary {
                cond,
                then,
                otherwise,
            } => {
                let c = self.expr(cond);
                if !c.is_scalar() {
                    self.error(cond.span, format!("Invalid condition in ternary: {c}"));
                }
                let a = match then {
                    Some(t) => self.expr(t),
                    None => c,
                };
                let b = self.expr(otherwise);
                match a.unify(&b) {
                    Some(t) => t,
                    None => {
                        self.error(
                            e.span,
                            format!(
                                "Ternary operator must return the same type: have '{a}' and '{b}'"
                            ),
                        );
                        a
                    }
                }
            }
            ExprKind::Cast { ty, expr } => self.cast(e, ty, expr),
            ExprKind::Field { expr, field, arrow } => self.field(e, expr, field, *arrow),
            ExprKind::TupleIndex { expr, index } => {
                let t = self.expr(expr);
                match t {
                    Type::Tuple(ts) => match ts.get(*index as usize) {
                        Some(t) => t.clone(),
                        None => {
                            self.error(
                                e.span,
                                format!(
                                    "Invalid tuple index: {index}. Found {} elements in tuple.",
                                    ts.len()
                                ),
                            );
                            Type::None
                        }
                    },
                    Type::Record(fs) => match fs.get(*index as usize) {
                        Some(f) => f.1.clone(),
                        None => {
                            self.error(
                                e.span,
                                format!(
                                    "Invalid tuple index: {index}. Found {} elements in tuple.",
                                    fs.len()
                                ),
                            );
                            Type::None
                        }
                    },
                    Type::None => Type::None,
                    t => {
                        self.error(
                            e.span,
                            format!("Can not access index '{index}' on expression of type '{t}'"),
                        );
                        Type::None
                    }
                }
            }
            ExprKind::Index { expr, index } => {
                let t = self.expr(expr);
                let it = self.expr(index);
                if !it.is_integer() {
                    self.error(
                        index.span,
                        format!("The array index must be an integer, got {it}"),
                    );
                }
                match t {
                    Type::Array { elem, len } => {
                        if let Some(&i) = self.consts.get(&index.id) {
                            if i < 0 || i as usize >= len {
                                self.error(
                                    index.span,
                                    format!("Index {i} out of bounds for array of size {len}"),
                                );
                            }
                        }
                        *elem
                    }
                    Type::Str { .. } => Type::U8,
                    Type::Pointer {
                        pointee: Pointee::Type(p),
                        ..
                    } => *p,
                    Type::None => Type::None,
                    t => {
                        self.error(
                            expr.span,
                            format!("The array index operator [] can only be used on arrays and pointers, found {t}"),
                        );
                        Type::None
                    }
                }
            }
            ExprKind::Tuple(items) => {
                let ts: Vec<Type> = items.iter().map(|i| self.expr(i)).collect();
                for (i, t) in items.iter().zip(&ts) {
                    if !t.is_storable() {
                        self.error(
                            i.span,
                            format!("A value of type '{t}' cannot be part of a tuple"),
                        );
                    }
                }
                Type::Tuple(ts)
            }
            ExprKind::Record(fields) => Type::Record(
                fields
                    .iter()
                    .map(|(n, v)| (n.name.clone(), self.expr(v)))
                    .collect(),
            ),
            ExprKind::Sizeof(arg) => {
                let t = match arg.as_ref() {
                    TypeOrExpr::Type(t) => self.type_ref(t),
                    TypeOrExpr::Expr(x) => self.expr(x),
                };
                self.consts.insert(e.id, t.size() as i64);
                Type::U64
            }
            ExprKind::Offsetof { of, fields } => {
                let t = match of.as_ref() {
                    TypeOrExpr::Type(t) => self.type_ref(t),
                    TypeOrExpr::Expr(x) => self.expr(x),
                };
                let mut cur = t;
                let mut off = 0i64;
                for f in fields {
                    match self.member(&cur, &f.name, f.span) {
                        Some((ty, o)) => {
                            off += o as i64;
                            cur = ty;
                        }
                        None => return Type::None,
                    }
                }
                self.consts.insert(e.id, off);
                Type::U64
            }
            ExprKind::Typeof(arg) | ExprKind::Typeinfo(arg) => match arg.as_ref() {
                TypeOrExpr::Type(t) => self.type_ref(t),
                TypeOrExpr::Expr(x) => self.expr(x),
            },
            ExprKind::Comptime(x) => self.expr(x),
            ExprKind::If {
                cond,
                then,
                otherwise,
            } => {
                let c = self.expr(cond);
                if !c.is_scalar() && !c.is_none() {
                    self.error(cond.span, format!("Invalid type for if condition: {c}"));
                }
                let a = self.block(then, false);
                let b = otherwise.as_ref().map(|o| self.expr(o));
                match b {
                    Some(b) => a.unify(&b).unwrap_or(Type::None),
                    None => Type::None,
                }
            }
            ExprKind::Block(b) => self.block(b, false),
            ExprKind::Error => Type::None,
        }
    }

    fn map_read(&mut self, e: &Expr, name: &Ident, keys: &[Expr]) -> Type {
        let mname = self.map_name(&name.name);
        let i = self.maps.id(&mname, name.span);
        self.map_refs.insert(e.id, i);
        let kts: Vec<Type> = keys.iter().map(|k| self.key_expr(k)).collect();
        if let Err(m) = self.maps.use_keys(i, &kts) {
            self.error(e.span, m);
        }
        match self.maps.entries[i].value.clone() {
            Some(Type::Agg(a)) => {
                use crate::runtime::format::agg::AggKind as A;
                match a {
                    A::Count => Type::U64,
                    A::Sum { signed }
                    | A::Min { signed }
                    | A::Max { signed }
                    | A::Avg { signed } => Type::Int { bytes: 8, signed },
                    _ => Type::Agg(a),
                }
            }
            Some(t) => t,
            None => Type::I64,
        }
    }

    fn ident(&mut self, e: &Expr, name: &str) -> Type {
        for f in self.frames.iter().rev() {
            if let Some((t, c, s)) = f.idents.get(name).cloned() {
                if let Some(c) = c {
                    self.consts.insert(e.id, c);
                }
                if let Some(s) = s {
                    self.str_consts.insert(e.id, s);
                }
                return t;
            }
        }
        if let Some(b) = builtins::lookup(name, Form::Value) {
            if !self.builtin_allowed(b, e.span) {
                return Type::None;
            }
            if name == "curtask" {
                if let Some(t) = self.struct_ptr("task_struct") {
                    return t;
                }
            }
            if let Some((_, n)) = builtins::numbered(name) {
                if name.starts_with("arg") {
                    self.facts.push(Fact::ParamIndex { index: n as usize });
                }
            }
            if name == "retval" {
                self.facts.push(Fact::ReturnsScalar);
            }
            let cx = std::mem::take(&mut self.cx);
            let t = {
                let ci = |_: ExprId| None;
                let cs = |_: ExprId| None;
                let ctx = CallCtx {
                    name,
                    args: &[],
                    arg_types: &[],
                    probe: cx.kinds.first().copied().unwrap_or(ProbeKind::Begin),
                    context: &cx,
                    const_int: &ci,
                    const_str: &cs,
                    max_strlen: self.opts.max_strlen,
                };
                (b.ty)(&ctx)
            };
            self.cx = cx;
            return t.unwrap_or(Type::None);
        }
        if let Some(d) = self.defines.get(name).cloned() {
            return match d {
                Define::Int(v) => {
                    self.consts.insert(e.id, v);
                    Type::I64
                }
                Define::Str(s) => {
                    let size = s.len() + 1;
                    self.str_consts.insert(e.id, s);
                    Type::Str { size }
                }
            };
        }
        if let Some(m) = self
            .program
            .macros()
            .find(|m| m.name.name == name && m.params.is_empty())
        {
            return self.expand_macro(e, m, &[]);
        }
        if let Some(v) = self.enum_value(name) {
            self.consts.insert(e.id, v);
            return Type::I64;
        }
        let help = builtins::nearest(name, Form::Value).map(|n| format!("did you mean '{n}'?"));
        if let Some(d) = self.error(e.span, format!("Unknown identifier: '{name}'")) {
            d.help = help;
        }
        Type::None
    }

    /// An enumerator of a script-defined enum.
    fn enum_value(&mut self, name: &str) -> Option<i64> {
        for d in self.program.type_defs() {
            if let CTypeBody::Enumerators(es) = &d.body {
                let mut next = 0i64;
                for en in es {
                    if let Some(v) = &en.value {
                        self.expr(v);
                        next = self.consts.get(&v.id).copied().unwrap_or(next);
                    }
                    if en.name.name == name {
                        return Some(next);
                    }
                    next += 1;
                }
            }
        }
        None
    }

    /// Whether builtin `b` may be used in every attach point's kind of this probe (and with
    /// the `--unsafe` it needs); reports otherwise.
    fn builtin_allowed(&mut self, b: &builtins::Builtin, span: Span) -> bool {
        if b.needs_unsafe && !self.opts.unsafe_mode {
            self.error_help(
                span,
                format!("{}() is an unsafe function being used in safe mode", b.name),
                "run with --unsafe to allow it".into(),
            );
            return false;
        }
        let shown = if b.form == Form::Function {
            format!("{}()", b.name)
        } else if b.name.ends_with('N') {
            "argN".to_string()
        } else {
            b.name.to_string()
        };
        if self.fn_ret.is_some() && b.probes != builtins::Probes::Any {
            self.error(span, format!("{shown} cannot be used in a function"));
            return false;
        }
        let bad: Vec<&'static str> = self
            .cx
            .kinds
            .iter()
            .filter(|k| !b.probes.allows(**k))
            .map(|k| k.name())
            .collect();
        if bad.is_empty() {
            return true;
        }
        let which = if b.name == "args" {
            format!(
                "probe types with args: {}",
                builtins::Probes::Only(ARGS_KINDS).describe()
            )
        } else {
            format!("{shown} is available in {} probes", b.probes.describe())
        };
        self.error_help(
            span,
            format!("{shown} is not available in {} probes", bad.join(", ")),
            which,
        );
        false
    }

    /// `struct NAME *` from BTF or the script, if known.
    fn struct_ptr(&self, name: &str) -> Option<Type> {
        let btf = self.vmlinux.as_ref()?;
        let id = btf.find_struct(name)?;
        let t = super::ctypes::btf_to_type(btf, None, id, AddrSpace::Kernel)?;
        Some(Type::ptr_to(t, AddrSpace::Kernel))
    }

    fn call(&mut self, e: &Expr, name: &Ident, args: &[Expr], as_map_value: bool) -> Type {
        let Some(b) = builtins::lookup(&name.name, Form::Function) else {
            if let Some(m) = self.program.macros().find(|m| m.name.name == name.name) {
                if m.params.len() != args.len() {
                    self.error(
                        e.span,
                        format!(
                            "Macro '{}' takes {} arguments, {} given",
                            name.name,
                            m.params.len(),
                            args.len()
                        ),
                    );
                    return Type::None;
                }
                return self.expand_macro(e, m, args);
            }
            if let Some(f) = self.program.fns().find(|f| f.name.name == name.name) {
                return self.call_fn(e, f, args);
            }
            let candidates: Vec<&str> = builtins::all()
                .filter(|b| b.form == Form::Function)
                .map(|b| b.name)
                .chain(self.program.macros().map(|m| m.name.name.as_str()))
                .chain(self.program.fns().map(|f| f.name.name.as_str()))
                .collect();
            let help = crate::diag::nearest(&name.name, candidates)
                .map(|n| format!("did you mean '{n}'?"));
            if let Some(d) = self.error(name.span, format!("Unknown function: '{}'", name.name)) {
                d.help = help;
            }
            for a in args {
                self.expr(a);
            }
            return Type::None;
        };
        if b.aggregation && !as_map_value {
            self.error_help(
                e.span,
                format!("{}() should be directly assigned to a map", b.name),
                format!("e.g. @x = {}(…)", b.name),
            );
        }
        if args.len() < b.min_args || args.len() > b.max_args {
            let want = if b.min_args == b.max_args {
                format!("{}", b.min_args)
            } else if b.max_args >= 64 {
                format!("at least {}", b.min_args)
            } else {
                format!("{} to {}", b.min_args, b.max_args)
            };
            self.error(
                e.span,
                format!(
                    "{}() takes {want} argument{}, {} given",
                    b.name,
                    if want == "1" { "" } else { "s" },
                    args.len()
                ),
            );
            for a in args {
                self.expr(a);
            }
            return Type::None;
        }
        if !self.builtin_allowed(b, name.span) {
            return Type::None;
        }
        let mut ts = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            let t = match (&a.kind, b.takes_map && i == 0) {
                (ExprKind::Map { name: m, keys }, true)
                    if keys.is_empty() || b.name == "delete" =>
                {
                    let mname = self.map_name(&m.name);
                    let idx = self.maps.id(&mname, m.span);
                    self.map_refs.insert(a.id, idx);
                    if b.name == "delete" && !keys.is_empty() {
                        let kts: Vec<Type> = keys.iter().map(|k| self.key_expr(k)).collect();
                        if let Err(msg) = self.maps.use_keys(idx, &kts) {
                            self.error(a.span, msg);
                        }
                    }
                    let t = self.maps.entries[idx].value.clone().unwrap_or(Type::I64);
                    self.set(a, t)
                }
                (ExprKind::Ident(_), _) if matches!(b.name, "kstack" | "ustack" | "nsecs") => {
                    Type::None
                }
                _ => self.expr(a),
            };
            ts.push(t);
        }
        if b.takes_map && !matches!(b.name, "print" | "len") {
            if !matches!(args.first().map(|a| &a.kind), Some(ExprKind::Map { .. })) {
                self.error(args[0].span, format!("{}() expects a map argument", b.name));
                return Type::None;
            }
            if b.name == "has_key" || (b.name == "delete" && args.len() == 2) {
                if let (Some(ExprKind::Map { name: m, .. }), Some(k)) =
                    (args.first().map(|a| &a.kind), ts.get(1))
                {
                    let mname = self.map_name(&m.name);
                    let idx = self.maps.id(&mname, m.span);
                    let keys = match k {
                        Type::Tuple(ks)
                            if self.maps.entries[idx]
                                .keys
                                .as_ref()
                                .is_some_and(|h| h.len() == ks.len() && ks.len() > 1) =>
                        {
                            ks.clone()
                        }
                        k => vec![k.clone()],
                    };
                    if let Err(msg) = self.maps.use_keys(idx, &keys) {
                        self.error(args[1].span, msg);
                    }
                }
            }
        }
        if ts.iter().any(Type::is_none) && self.report && self.had_error_in(e.span) {
            // An argument already failed; its error is the one to read.
            return Type::None;
        }
        if b.format {
            self.format_call(e, b.name, args, &ts);
        } else if b.name == "print" && args.len() == 1 && ts[0].is_none() {
            self.error(args[0].span, "print() of a value of type 'none'");
        }
        let cx = std::mem::take(&mut self.cx);
        let consts = &self.consts;
        let strs = &self.str_consts;
        let ci = |id: ExprId| consts.get(&id).copied();
        let cs = |id: ExprId| strs.get(&id).cloned();
        let ctx = CallCtx {
            name: b.name,
            args,
            arg_types: &ts,
            probe: cx.kinds.first().copied().unwrap_or(ProbeKind::Begin),
            context: &cx,
            const_int: &ci,
            const_str: &cs,
            max_strlen: self.opts.max_strlen,
        };
        let r = (b.ty)(&ctx);
        self.cx = cx;
        match r {
            Ok(t) => t,
            Err(err) => {
                let span = err.arg.and_then(|i| args.get(i)).map_or(e.span, |a| a.span);
                self.error(span, err.message);
                Type::None
            }
        }
    }

    fn format_call(&mut self, e: &Expr, function: &'static str, args: &[Expr], ts: &[Type]) {
        let Some(fmt) = self.str_consts.get(&args[0].id).cloned() else {
            self.error(
                args[0].span,
                format!("{function}() expects a string literal as its first argument"),
            );
            return;
        };
        let fmt = String::from_utf8_lossy(&fmt).into_owned();
        match super::resources::format_site(e.id, function, &fmt, &ts[1..]) {
            Ok(site) => {
                if self.report {
                    self.formats.push(site);
                }
            }
            Err((arg, msg)) => {
                let span = arg.and_then(|i| args.get(i + 1)).map_or(e.span, |a| a.span);
                self.error(span, msg);
            }
        }
    }

    fn expand_macro(&mut self, e: &Expr, m: &MacroDef, args: &[Expr]) -> Type {
        if self.frames.len() >= MAX_MACRO_DEPTH {
            self.error(
                e.span,
                format!("Macro '{}' expands too deeply (recursive?)", m.name.name),
            );
            return Type::None;
        }
        let mut frame = MacroFrame::default();
        let mut aliases = Vec::new();
        let errors_before = self.diags.len();
        for (p, a) in m.params.iter().zip(args) {
            match p.kind {
                MacroParamKind::Expr => {
                    let t = self.expr(a);
                    let c = self.consts.get(&a.id).copied();
                    let s = self.str_consts.get(&a.id).cloned();
                    frame.idents.insert(p.name.name.clone(), (t, c, s));
                }
                MacroParamKind::Map => match &a.kind {
                    ExprKind::Map { name, keys } if keys.is_empty() => {
                        let n = self.map_name(&name.name);
                        frame.maps.insert(p.name.name.clone(), n);
                    }
                    _ => {
                        self.error(
                            a.span,
                            format!("Macro '{}' expects a map for {}", m.name.name, p.name.name),
                        );
                    }
                },
                MacroParamKind::Var => match &a.kind {
                    ExprKind::Var(v) => match self.lookup_var(v) {
                        Some(slot) => aliases.push((p.name.name.clone(), slot)),
                        None => {
                            self.error(a.span, format!("Undefined or undeclared variable: {v}"));
                        }
                    },
                    _ => {
                        self.error(
                            a.span,
                            format!(
                                "Macro '{}' expects a variable for {}",
                                m.name.name, p.name.name
                            ),
                        );
                    }
                },
            }
        }
        if self.report && self.diags.len() > errors_before {
            return Type::None;
        }
        self.frames.push(frame);
        let outer = std::mem::replace(&mut self.scopes, vec![aliases.into_iter().collect()]);
        let t = self.block(&m.body, false);
        self.scopes = outer;
        self.frames.pop();
        t
    }

    fn call_fn(&mut self, e: &Expr, f: &FnDef, args: &[Expr]) -> Type {
        if f.params.len() != args.len() {
            self.error(
                e.span,
                format!(
                    "Function '{}' takes {} arguments, {} given",
                    f.name.name,
                    f.params.len(),
                    args.len()
                ),
            );
        }
        for (a, (pn, pt)) in args.iter().zip(&f.params) {
            let t = self.expr(a);
            let want = self.type_ref(pt);
            if want.unify(&t).is_none() {
                self.error(
                    a.span,
                    format!(
                        "Function '{}': argument {} expects '{want}', got '{t}'",
                        f.name.name, pn.name
                    ),
                );
            }
        }
        self.type_ref(&f.ret)
    }

    fn unary(&mut self, e: &Expr, op: UnaryOp, x: &Expr) -> Type {
        if matches!(
            op,
            UnaryOp::PreInc | UnaryOp::PreDec | UnaryOp::PostInc | UnaryOp::PostDec
        ) {
            if let ExprKind::Map { name, keys } = &x.kind {
                let mname = self.map_name(&name.name);
                let i = self.maps.id(&mname, name.span);
                self.map_refs.insert(x.id, i);
                let kts: Vec<Type> = keys.iter().map(|k| self.key_expr(k)).collect();
                if let Err(m) = self.maps.use_keys(i, &kts) {
                    self.error(x.span, m);
                }
                if let Err(m) = self.maps.assign(i, &Type::I64) {
                    self.error(x.span, m);
                }
                return self.set(x, Type::I64);
            }
            if !matches!(x.kind, ExprKind::Var(_)) {
                self.error(
                    e.span,
                    format!(
                        "The {} operator must be applied to a map or variable",
                        op.symbol()
                    ),
                );
            }
        }
        let t = self.expr(x);
        match op {
            UnaryOp::Neg | UnaryOp::BitNot => {
                if !t.is_integer() {
                    self.error(
                        e.span,
                        format!(
                            "The {} operator can not be used on expressions of type '{t}'",
                            op.symbol()
                        ),
                    );
                    return Type::None;
                }
                if let Some(&v) = self.consts.get(&x.id) {
                    let r = if op == UnaryOp::Neg {
                        v.wrapping_neg()
                    } else {
                        !v
                    };
                    self.consts.insert(e.id, r);
                }
                Type::I64
            }
            UnaryOp::Not => {
                if !t.is_scalar() {
                    self.error(
                        e.span,
                        format!("The ! operator can not be used on expressions of type '{t}'"),
                    );
                }
                if let Some(&v) = self.consts.get(&x.id) {
                    self.consts.insert(e.id, (v == 0) as i64);
                }
                Type::Bool
            }
            UnaryOp::Deref => match t {
                Type::Pointer {
                    pointee: Pointee::Type(p),
                    ..
                } => *p,
                Type::Pointer { .. } => {
                    self.error_help(
                        e.span,
                        format!("Can not dereference type '{t}'"),
                        "cast it to a typed pointer first".into(),
                    );
                    Type::None
                }
                Type::Int { .. } => Type::I64,
                Type::None => Type::None,
                t => {
                    self.error(e.span, format!("Can not dereference type '{t}'"));
                    Type::None
                }
            },
            UnaryOp::AddrOf => {
                if !matches!(
                    x.kind,
                    ExprKind::Var(_) | ExprKind::Map { .. } | ExprKind::Field { .. }
                ) {
                    self.error(e.span, "The & operator needs a variable, a map or a field");
                }
                Type::ptr_to(t, AddrSpace::Kernel)
            }
            _ => {
                if !t.is_integer() && !t.is_pointer() {
                    self.error(
                        e.span,
                        format!(
                            "The {} operator can not be used on expressions of type '{t}'",
                            op.symbol()
                        ),
                    );
                }
                t
            }
        }
    }

    fn binary(&mut self, e: &Expr, op: BinaryOp, l: &Expr, r: &Expr) -> Type {
        use BinaryOp::*;
        let a = self.expr(l);
        let b = self.expr(r);
        if a.is_none() || b.is_none() {
            return Type::None;
        }
        if let (Some(&x), Some(&y)) = (self.consts.get(&l.id), self.consts.get(&r.id)) {
            let v = match op {
                Add => Some(x.wrapping_add(y)),
                Sub => Some(x.wrapping_sub(y)),
                Mul => Some(x.wrapping_mul(y)),
                Div if y != 0 => Some(x.wrapping_div(y)),
                Mod if y != 0 => Some(x.wrapping_rem(y)),
                Shl => Some(x.wrapping_shl(y as u32)),
                Shr => Some(x.wrapping_shr(y as u32)),
                BitAnd => Some(x & y),
                BitOr => Some(x | y),
                BitXor => Some(x ^ y),
                _ => None,
            };
            if let Some(v) = v {
                self.consts.insert(e.id, v);
            }
        }
        if matches!(op, Div | Mod) && self.consts.get(&r.id) == Some(&0) {
            self.error(r.span, "Division by zero");
        }
        let cmp = matches!(op, Eq | Ne | Lt | Le | Gt | Ge);
        if a.is_string() || b.is_string() {
            if a.is_string() && b.is_string() && matches!(op, Eq | Ne) {
                return Type::Bool;
            }
            if !cmp {
                self.error(
                    e.span,
                    format!("Type mismatch for '{}': '{a}' and '{b}'", op.symbol()),
                );
                return Type::None;
            }
            self.error(
                e.span,
                format!(
                    "Type mismatch for '{}': comparing '{a}' with '{b}'",
                    op.symbol()
                ),
            );
            return Type::None;
        }
        if matches!(op, And | Or) {
            for (t, x) in [(&a, l), (&b, r)] {
                if !t.is_scalar() {
                    self.error(
                        x.span,
                        format!("Invalid operand for '{}': {t}", op.symbol()),
                    );
                }
            }
            return Type::Bool;
        }
        let ok = |t: &Type| t.is_scalar();
        if !ok(&a) || !ok(&b) {
            self.error(
                e.span,
                format!("Type mismatch for '{}': '{a}' and '{b}'", op.symbol()),
            );
            return Type::None;
        }
        if cmp {
            return Type::Bool;
        }
        if a.is_pointer() && b.is_integer() && matches!(op, Add | Sub) {
            return a;
        }
        Type::Int {
            bytes: 8,
            signed: a.is_signed() || b.is_signed(),
        }
    }

    fn cast(&mut self, e: &Expr, ty: &TypeRef, x: &Expr) -> Type {
        let from = self.expr(x);
        let to = self.type_ref(ty);
        if let Some(&v) = self.consts.get(&x.id) {
            if let Type::Int { bytes, signed } = to {
                let bits = bytes as u32 * 8;
                let v = if bits >= 64 {
                    v
                } else if signed {
                    (v << (64 - bits)) >> (64 - bits)
                } else {
                    v & ((1i64 << bits) - 1)
                };
                self.consts.insert(e.id, v);
            }
        }
        match (&to, &from) {
            (Type::CStruct(s), _) => {
                self.error_help(
                    e.span,
                    format!("Cannot cast to struct type '{}'", s.name),
                    format!("cast to a pointer: ({} *)", s.name),
                );
                Type::None
            }
            (Type::Int { .. } | Type::Bool | Type::Pointer { .. } | Type::Enum { .. }, f)
                if f.is_scalar() =>
            {
                to
            }
            (Type::Array { .. }, f) if f.is_integer() && to.size() <= 8 => to,
            (Type::Int { .. } | Type::Array { .. }, Type::Array { .. })
                if from.size() == to.size() =>
            {
                to
            }
            (_, Type::None) => to,
            (Type::None, _) => Type::None,
            _ => {
                self.error(e.span, format!("Cannot cast from '{from}' to '{to}'"));
                Type::None
            }
        }
    }

    /// A type written in the script.
    pub fn type_ref(&mut self, t: &TypeRef) -> Type {
        match &t.kind {
            TypeRefKind::Named(n) => match named_type(n, self.opts.max_strlen) {
                Some(t) => t,
                None => {
                    if let Some(btf) = self.vmlinux.clone() {
                        if let Some(id) = btf.find_typedef(n) {
                            if let Some(ty) =
                                super::ctypes::btf_to_type(&btf, None, id, AddrSpace::Kernel)
                            {
                                return ty;
                            }
                        }
                    }
                    self.error(t.span, format!("Unknown type: '{n}'"));
                    Type::None
                }
            },
            TypeRefKind::Tagged(k, n) => {
                if let Some(i) = self.script_types.find(*k, n) {
                    return self.script_types.struct_type(i);
                }
                if let Some(btf) = self.vmlinux.clone() {
                    if let Some(id) = find_btf_record(&btf, *k, n) {
                        if let Some(ty) =
                            super::ctypes::btf_to_type(&btf, None, id, AddrSpace::Kernel)
                        {
                            return ty;
                        }
                    }
                }
                self.error(t.span, format!("Unknown type: '{} {n}'", k.keyword()));
                Type::None
            }
            TypeRefKind::Pointer(inner) => {
                let it = self.type_ref(inner);
                match it {
                    Type::None => Type::void_ptr(),
                    t => Type::ptr_to(t, AddrSpace::Kernel),
                }
            }
            TypeRefKind::Array(inner, n) => {
                let it = self.type_ref(inner);
                match (it, n) {
                    (Type::Str { .. }, Some(n)) => Type::Str { size: *n as usize },
                    (Type::Buf { .. }, Some(n)) => Type::Buf {
                        capacity: *n as usize,
                    },
                    (Type::Inet, _) => Type::Inet,
                    (it, Some(n)) => Type::Array {
                        elem: Box::new(it),
                        len: *n as usize,
                    },
                    (it, None) => Type::Array {
                        elem: Box::new(it),
                        len: 0,
                    },
                }
            }
            TypeRefKind::Typeof(x) => match x.as_ref() {
                TypeOrExpr::Type(t) => self.type_ref(t),
                TypeOrExpr::Expr(e) => self.expr(e),
            },
        }
    }

    fn field(&mut self, e: &Expr, base: &Expr, field: &Ident, arrow: bool) -> Type {
        if matches!(&base.kind, ExprKind::Ident(n) if n == "args")
            && self.frames.iter().all(|f| !f.idents.contains_key("args"))
        {
            let Some(b) = builtins::lookup("args", Form::Value) else {
                return Type::None;
            };
            if !self.builtin_allowed(b, base.span) {
                return Type::None;
            }
            self.set(base, self.cx.args_record());
            return self.arg_field(e, field);
        }
        let t = self.expr(base);
        if let Type::Record(fs) = &t {
            return match fs.iter().find(|(n, _)| *n == field.name) {
                Some((_, t)) => t.clone(),
                None => {
                    let names: Vec<&str> = fs.iter().map(|f| f.0.as_str()).collect();
                    self.error_help(
                        field.span,
                        format!("Record has no field named '{}'", field.name),
                        format!("available fields: {}", names.join(", ")),
                    );
                    Type::None
                }
            };
        }
        let _ = arrow;
        match self.member(&t, &field.name, field.span) {
            Some((t, _)) => t,
            None => Type::None,
        }
    }

    /// `args.NAME`: looked up in every target; a name missing in some targets is a warning that
    /// names them (those targets are skipped), missing in all an error listing the fields.
    fn arg_field(&mut self, e: &Expr, field: &Ident) -> Type {
        let kinds = self.cx.kinds.clone();
        let probe = kinds
            .iter()
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join(", ");
        match self.cx.arg(&field.name) {
            ArgLookup::Found { ty, missing_in } => {
                if !missing_in.is_empty() && self.warned.insert(field.name.clone()) {
                    let n = missing_in.len();
                    let shown: Vec<&str> = missing_in.iter().take(5).map(String::as_str).collect();
                    let more = if n > 5 {
                        format!(" and {} more", n - 5)
                    } else {
                        String::new()
                    };
                    self.warn(
                        field.span,
                        format!(
                            "args.{} is missing in {n} target{}: {}{more}; {} skipped",
                            field.name,
                            if n == 1 { "" } else { "s" },
                            shown.join(", "),
                            if n == 1 { "it is" } else { "they are" }
                        ),
                    );
                }
                if kinds
                    .iter()
                    .any(|k| matches!(k, ProbeKind::Fentry | ProbeKind::Fexit))
                {
                    let f = Fact::Param {
                        name: field.name.clone(),
                        requirement: ParamRequirement::Any,
                    };
                    if !self.facts.contains(&f) {
                        self.facts.push(f);
                    }
                }
                let _ = e;
                ty
            }
            ArgLookup::Unsupported => {
                self.error(
                    field.span,
                    format!("{probe}: args.{} has a type strobe cannot read", field.name),
                );
                Type::None
            }
            ArgLookup::Missing { available } => {
                let target = self
                    .cx
                    .targets
                    .first()
                    .map(|t| t.name.clone())
                    .unwrap_or(probe);
                let help = crate::diag::nearest(&field.name, available.iter().map(String::as_str))
                    .map(|n| format!("did you mean '{n}'? "))
                    .unwrap_or_default();
                let help = if available.is_empty() {
                    format!("{help}it has no arguments")
                } else {
                    format!("{help}available: {}", available.join(", "))
                };
                self.error_help(
                    field.span,
                    format!("{target} has no argument named '{}'", field.name),
                    help,
                );
                Type::None
            }
        }
    }

    /// Member `name` of a struct value or of what a pointer points to: its type and offset.
    pub fn member(&mut self, t: &Type, name: &str, span: Span) -> Option<(Type, u32)> {
        let (st, space) = match t {
            Type::CStruct(s) => (s.clone(), AddrSpace::Kernel),
            Type::Pointer {
                pointee: Pointee::Type(p),
                space,
            } => match p.as_ref() {
                Type::CStruct(s) => (s.clone(), *space),
                other => {
                    self.error(
                        span,
                        format!("Can not access field '{name}' on type '{other} *'"),
                    );
                    return None;
                }
            },
            Type::None => return None,
            other => {
                self.error(
                    span,
                    format!("Can not access field '{name}' on expression of type '{other}'"),
                );
                return None;
            }
        };
        let StructType {
            ty, name: sname, ..
        } = st;
        match ty {
            CTypeRef::Btf { module, id } => {
                let btf = self.kernel.btf(module.as_deref()).ok()?;
                if let Some(m) = btf_member(&btf, module.as_deref(), id, name, space) {
                    return Some((m.ty, m.offset));
                }
                let names = btf_member_names(&btf, id);
                let help = crate::diag::nearest(name, names.iter().map(String::as_str))
                    .map(|n| format!("did you mean '{n}'? "))
                    .unwrap_or_default();
                self.error_help(
                    span,
                    format!(
                        "Struct/union of type '{sname}' does not contain a field named '{name}'"
                    ),
                    format!("{help}fields: {}", names.join(", ")),
                );
                None
            }
            CTypeRef::Script { index } => {
                let def = self.script_types.defs.get(index)?;
                if let Some(m) = def.members.iter().find(|m| m.name == name) {
                    return Some((m.ty.clone(), m.offset));
                }
                let names: Vec<String> = def.members.iter().map(|m| m.name.clone()).collect();
                self.error_help(
                    span,
                    format!(
                        "Struct/union of type '{sname}' does not contain a field named '{name}'"
                    ),
                    format!("fields: {}", names.join(", ")),
                );
                None
            }
        }
    }
}
