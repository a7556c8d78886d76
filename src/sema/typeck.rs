//! Expression typing: one [`Type`] per expression, recorded in the side table, with bpftrace's
//! rules — integer arithmetic in 64 bits, literals stored (in variables, map keys, tuples,
//! records, `sizeof`) at their smallest signed type as in bpftrace 0.25+, increments widening
//! a narrower variable to 64 bits, string comparison only with `==`/`!=`, pointers
//! dereferenced through BTF (`.` and `->` both dereference), `args.NAME` from the probe's
//! context, casts to integers, pointers and C types, builtins through [`crate::builtins`].
//!
//! Input: expressions, in a [`Checker`] holding the probe's scopes and context.
//! Output: types, constants and diagnostics in the checker's tables.

//! Names and calls are in `calls`, field and member access in `fields`.

use super::ctypes::{find_btf_record, named_type};
use super::resolve::Checker;
use super::types::{AddrSpace, Pointee, Type};
use crate::builtins::{self, BuiltinId, Form, FuncId};
use crate::syntax::ast::*;

/// Whether `e` is a call of an aggregation (`count()`, `avg(x)`…).
pub(crate) fn is_aggregation_call(e: &Expr) -> bool {
    matches!(&e.kind, ExprKind::Call { name, .. }
        if builtins::lookup(&name.name, Form::Function).is_some_and(|b| b.aggregation))
}

/// The type current bpftrace gives an integer literal (`N` or `-N`) with value `v`: the
/// smallest signed type holding it, `uint64` past `int64`'s range.
pub(crate) fn literal_int_type(v: i64, unsigned_big: bool) -> Type {
    if unsigned_big {
        return Type::U64;
    }
    let bytes = if i8::try_from(v).is_ok() {
        1
    } else if i16::try_from(v).is_ok() {
        2
    } else if i32::try_from(v).is_ok() {
        4
    } else {
        8
    };
    Type::Int {
        bytes,
        signed: true,
    }
}

impl Checker<'_> {
    /// The type of `e` where current bpftrace stores a literal at its own size (a scratch
    /// variable's value, a tuple or record element): `Some` only for an integer literal or
    /// a negated one; the expression's recorded type becomes that type too.
    pub(super) fn literal_storage_type(&mut self, e: &Expr) -> Option<Type> {
        let t = match &e.kind {
            ExprKind::Int(lit) => literal_int_type(lit.value as i64, lit.value > i64::MAX as u64),
            ExprKind::Unary {
                op: UnaryOp::Neg,
                expr,
            } if matches!(expr.kind, ExprKind::Int(_)) => {
                literal_int_type(*self.consts.get(&e.id)?, false)
            }
            _ => return None,
        };
        Some(self.set(e, t))
    }

    pub(super) fn set(&mut self, e: &Expr, t: Type) -> Type {
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
        let t = self.literal_storage_type(e).unwrap_or(t);
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
        // `@x = { let $a = 1; avg($a) }`: the block's value is the aggregation's.
        if let ExprKind::Block(b) = &e.kind {
            if b.tail.as_deref().is_some_and(is_aggregation_call) {
                self.scopes.push(Default::default());
                for s in &b.stmts {
                    self.stmt(s);
                }
                let t = match &b.tail {
                    Some(tail) => self.map_value_expr(tail),
                    None => Type::None,
                };
                self.scopes.pop();
                return self.set(e, t);
            }
        }
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
        self.note_space(e, &t);
        self.set(e, t)
    }

    /// Records whether integer expression `e` is an address whose space `kptr()`/`uptr()`
    /// named (see [`super::CheckedProgram::addr_spaces`]); an expression typed again (macro
    /// bodies, at each call site) is recorded afresh.
    fn note_space(&mut self, e: &Expr, t: &Type) {
        let spaces = &self.addr_spaces;
        let of = |x: &Expr| spaces.get(&x.id).copied();
        let s = match &e.kind {
            _ if !t.is_integer() => None,
            ExprKind::Call { .. } => match self.builtin_ids.get(&e.id) {
                Some(BuiltinId::Func(FuncId::Uptr)) => Some(AddrSpace::User),
                Some(BuiltinId::Func(FuncId::Kptr)) => Some(AddrSpace::Kernel),
                _ => None,
            },
            ExprKind::Var(_) => self
                .var_slots
                .get(&e.id)
                .and_then(|s| self.vars.spaces.get(s))
                .copied(),
            ExprKind::Binary {
                op: BinaryOp::Add,
                lhs,
                rhs,
            } => of(lhs).or(of(rhs)),
            ExprKind::Binary {
                op: BinaryOp::Sub,
                lhs,
                ..
            } => of(lhs),
            ExprKind::Cast { expr, .. } => of(expr),
            _ => None,
        };
        match s {
            Some(s) => self.addr_spaces.insert(e.id, s),
            None => self.addr_spaces.remove(&e.id),
        };
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
                if size > self.opts.max_strlen && !self.format_literal {
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
            ExprKind::Positional(n) => match (*n as usize)
                .checked_sub(1)
                .and_then(|i| self.opts.params.get(i))
                .cloned()
            {
                Some(p) => match parse_param_int(&p) {
                    Some((v, t)) => {
                        self.consts.insert(e.id, v);
                        t
                    }
                    None => {
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
                        // A zero-length (flexible) array member is indexed past its end.
                        if let Some(&i) = self.consts.get(&index.id).filter(|_| len > 0) {
                            if i < 0 || i as usize >= len {
                                self.error(
                                    index.span,
                                    format!(
                                        "the index {i} is out of bounds for array of size {len}"
                                    ),
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
                    // `$t[i]` with a constant `i` is `$t.i`, as in current bpftrace.
                    Type::Tuple(ts) => match self.consts.get(&index.id) {
                        Some(&i) if i >= 0 && (i as usize) < ts.len() => ts[i as usize].clone(),
                        Some(&i) => {
                            self.error(
                                index.span,
                                format!(
                                    "Invalid tuple index: {i}. Found {} elements in tuple.",
                                    ts.len()
                                ),
                            );
                            Type::None
                        }
                        None => {
                            self.error(index.span, "a tuple index must be a constant");
                            Type::None
                        }
                    },
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
                let ts: Vec<Type> = items
                    .iter()
                    .map(|i| {
                        let t = self.expr(i);
                        self.literal_storage_type(i).unwrap_or(t)
                    })
                    .collect();
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
                    .map(|(n, v)| {
                        let t = self.expr(v);
                        (n.name.clone(), self.literal_storage_type(v).unwrap_or(t))
                    })
                    .collect(),
            ),
            ExprKind::Sizeof(arg) => {
                let t = match arg.as_ref() {
                    // `sizeof(NAME)` of a constant (a #define or an enum value), not a type:
                    // an int64, as bpftrace sizes it.
                    TypeOrExpr::Type(crate::syntax::ast::TypeRef {
                        kind: crate::syntax::ast::TypeRefKind::Named(n),
                        ..
                    }) if self.is_constant_name(n) => Type::I64,
                    TypeOrExpr::Type(t) => self.type_ref(t),
                    // `sizeof(1)` is 1: a literal is its smallest type.
                    TypeOrExpr::Expr(x) => {
                        let t = self.expr(x);
                        self.literal_storage_type(x).unwrap_or(t)
                    }
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
                        Some((ty, o, _)) => {
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
            } if matches!(cond.kind, ExprKind::Comptime(_)) => {
                self.if_comptime(cond, then, otherwise.as_deref())
            }
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
                    // bpftrace: the value of the taken branch's last expression; both
                    // branches must give one type (or none, as a statement).
                    Some(b) => match a.unify(&b) {
                        Some(t) => t,
                        None if a.is_none() || b.is_none() => Type::None,
                        None => {
                            self.error(
                                e.span,
                                format!(
                                    "Branches must return the same type or compatible types: \
                                     have '{a}' and '{b}'"
                                ),
                            );
                            Type::None
                        }
                    },
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
                use crate::plan::agg::AggKind as A;
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
                // A pointer map steps by elements and stays a pointer.
                let cur = self.maps.entries[i].value.clone().filter(Type::is_pointer);
                let t = cur.unwrap_or(Type::I64);
                if let Err(m) = self.maps.assign(i, &t) {
                    self.error(x.span, m);
                }
                return self.set(x, t);
            }
            if let ExprKind::Var(v) = &x.kind {
                if let Some(slot) = self.lookup_var(v) {
                    self.unassigned.remove(&slot);
                    // `let $z; $z++;` makes $z an int64, as an assignment of 0 would. An
                    // increment's value is 64 bits wide, so a narrower untyped variable
                    // (`$i = 0`, an int8) widens to 64 bits as bpftrace widens it.
                    let cur = &self.vars.slots[slot.0 as usize].1;
                    if cur.is_none() {
                        self.vars.slots[slot.0 as usize].1 = Type::I64;
                    } else if let Type::Int { bytes, signed } = *cur {
                        if bytes < 8 && !self.typed_vars.contains(&slot) {
                            let signed = signed || matches!(op, UnaryOp::PreDec | UnaryOp::PostDec);
                            self.vars.slots[slot.0 as usize].1 = Type::Int { bytes: 8, signed };
                        }
                    }
                }
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
                // A pointer read from user memory points into user memory too
                // (`**(struct Foo **)arg0` in a uprobe).
                Type::Pointer {
                    pointee: Pointee::Type(p),
                    space: AddrSpace::User,
                } => match *p {
                    Type::Pointer { pointee, .. } => Type::Pointer {
                        pointee,
                        space: AddrSpace::User,
                    },
                    p => p,
                },
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
            UnaryOp::AddrOf => self.address_of(e, x, t),
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
        // Constant pointers (`(int32 *)8`) are not folded: their arithmetic is scaled.
        let consts = (self.consts.get(&l.id), self.consts.get(&r.id));
        if let (Some(&x), Some(&y), false) = (consts.0, consts.1, a.is_pointer() || b.is_pointer())
        {
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
        // A constant string plus a constant skips bytes, as pointer arithmetic on a string
        // literal does in bpftrace (`str($1 + 1)` with `$1` = "hello" is "ello").
        if let (Add, Some(text), Some(&n)) =
            (op, self.str_consts.get(&l.id), self.consts.get(&r.id))
        {
            let rest = text[(n.max(0) as usize).min(text.len())..].to_vec();
            let size = rest.len() + 1;
            self.str_consts.insert(e.id, rest);
            return Type::Str { size };
        }
        if matches!(op, Div | Mod) && self.consts.get(&r.id) == Some(&0) {
            self.error(r.span, "Division by zero");
        }
        let cmp = matches!(op, Eq | Ne | Lt | Le | Gt | Ge);
        if matches!((&a, &b), (Type::Buf { .. }, Type::Buf { .. })) && matches!(op, Eq | Ne) {
            return Type::Bool;
        }
        // Arrays of the same integer type compare element by element (current bpftrace).
        if let (Type::Array { elem: ea, len: la }, Type::Array { elem: eb, len: lb }) = (&a, &b) {
            if matches!(op, Eq | Ne) && la == lb && ea == eb && ea.is_integer() {
                return Type::Bool;
            }
        }
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
        // Pointer arithmetic as bpftrace allows it: a pointer plus or minus an integer (the
        // integer scaled by the pointee's size), `int + ptr`, nothing else (`int - ptr`,
        // `ptr - ptr`, `ptr * n` would otherwise print a plausible wrong number).
        if a.is_pointer() || b.is_pointer() {
            let (ptr, other) = if a.is_pointer() { (&a, &b) } else { (&b, &a) };
            if other.is_integer() && (matches!(op, Add) || (matches!(op, Sub) && a.is_pointer())) {
                return ptr.clone();
            }
            self.error(
                e.span,
                format!(
                    "The {} operator can not be used on expressions of types {a}, {b}",
                    op.symbol()
                ),
            );
            return Type::None;
        }
        // A non-negative integer literal takes the other operand's signedness (bpftrace's
        // "sign-flexible" literals: `$u % 10` is unsigned); `-` stays signed as before.
        let flexible =
            |x: &Expr| matches!(&x.kind, ExprKind::Int(lit) if lit.value <= i64::MAX as u64);
        let signed = match (flexible(l), flexible(r)) {
            (true, false) if !matches!(op, Sub) && b.is_integer() => b.is_signed(),
            (false, true) if !matches!(op, Sub) && a.is_integer() => a.is_signed(),
            _ => a.is_signed() || b.is_signed(),
        };
        Type::Int { bytes: 8, signed }
    }

    fn cast(&mut self, e: &Expr, ty: &TypeRef, x: &Expr) -> Type {
        let from = self.expr(x);
        let mut to = self.type_ref(ty);
        // `(int8[])v`: an unsized array cast takes as many elements as `v` has bytes for.
        if let Type::Array { elem, len: 0 } = &to {
            let n = from.size() / elem.size().max(1);
            if n > 0 && (from.is_integer() || matches!(from, Type::Array { .. } | Type::Str { .. }))
            {
                to = Type::Array {
                    elem: elem.clone(),
                    len: n,
                };
            }
        }
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
        // `(T *)-1`: a negative literal is an integer of its smallest type, which becomes an
        // address without sign extension (current bpftrace: `(uint8 *)-1` is 0xff).
        if let (Type::Pointer { .. }, Some(Type::Int { bytes, .. })) =
            (&to, self.literal_storage_type(x))
        {
            if let Some(&v) = self.consts.get(&x.id).filter(|&&v| v < 0) {
                let v = if bytes >= 8 {
                    v
                } else {
                    v & ((1i64 << (bytes as u32 * 8)) - 1)
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
            // A pointer cast keeps the address space the value was known to be in: a user
            // pointer, or an integer marked by `uptr()` (directly or through a variable).
            (Type::Pointer { pointee, .. }, f) if f.is_scalar() => {
                let space = match (f, self.addr_spaces.get(&x.id)) {
                    (_, Some(s)) => *s,
                    (Type::Pointer { space, .. }, None) => *space,
                    _ => self.default_space(),
                };
                Type::Pointer {
                    pointee: pointee.clone(),
                    space,
                }
            }
            (Type::Int { .. } | Type::Bool | Type::Enum { .. }, f) if f.is_scalar() => to,
            (Type::Array { .. }, f) if f.is_integer() && to.size() <= 8 => to,
            (Type::Int { .. } | Type::Array { .. }, Type::Array { .. })
                if from.size() == to.size() =>
            {
                to
            }
            // `(int8[])"hello"`: a string's bytes, its NUL included.
            (Type::Array { elem, .. }, Type::Str { .. })
                if elem.is_integer() && from.size() == to.size() =>
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

    /// The address space of an integer used as a pointer without `kptr()`/`uptr()`: user
    /// memory in probes that fire in a user process (uprobe, uretprobe, usdt), else kernel.
    pub fn default_space(&self) -> AddrSpace {
        if !self.cx.kinds.is_empty() && self.cx.kinds.iter().all(|k| k.user_space()) {
            AddrSpace::User
        } else {
            AddrSpace::Kernel
        }
    }

    /// A type named in a uprobe's script from the DWARF of the probe's binaries (they come
    /// before kernel BTF; the script's own definitions come before both).
    fn dwarf_type(&self, kind: crate::dwarf::TypeKind, name: &str) -> Option<Type> {
        self.cx.user_binaries.iter().find_map(|path| {
            let info = crate::dwarf::for_binary(path).ok()?;
            let id = info.find_type(kind, name).ok()??;
            let module = crate::dwarf::module_name(path);
            super::ctypes::btf_to_type(&info.btf(), Some(&module), id, AddrSpace::User)
        })
    }

    /// A type written in the script.
    pub fn type_ref(&mut self, t: &TypeRef) -> Type {
        match &t.kind {
            // A macro parameter used as a type: `typeof(T)` passed for it, or `typeof(x)` of
            // an expression parameter (the parser reads a bare name there as a type name).
            TypeRefKind::Named(n)
                if self.frames.last().is_some_and(|f| f.idents.contains_key(n)) =>
            {
                self.frames
                    .last()
                    .and_then(|f| f.idents.get(n))
                    .map_or(Type::None, |a| a.0.clone())
            }
            TypeRefKind::Named(n) => match named_type(n, self.opts.max_strlen) {
                Some(t) => t,
                None => {
                    if let Some(ty) = self.dwarf_type(crate::dwarf::TypeKind::Typedef, n) {
                        return ty;
                    }
                    if let Some(btf) = self.vmlinux() {
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
                let dk = match k {
                    CTypeKind::Struct => crate::dwarf::TypeKind::Struct,
                    CTypeKind::Union => crate::dwarf::TypeKind::Union,
                    CTypeKind::Enum => crate::dwarf::TypeKind::Enum,
                };
                if let Some(ty) = self.dwarf_type(dk, n) {
                    return ty;
                }
                if let Some(btf) = self.vmlinux() {
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
                    // A pointer declared in a uprobe points into the process (a cast keeps
                    // its operand's space instead).
                    t => Type::ptr_to(t, self.default_space()),
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
}

/// A positional parameter that is a number, as bpftrace reads one: decimal, `0x` hex or
/// `0`-prefixed octal, optionally negative; one past `i64::MAX` is a `uint64` (kept as its
/// bits). `None` for anything else (the parameter is a string).
fn parse_param_int(text: &str) -> Option<(i64, Type)> {
    let t = text.trim();
    let (neg, digits) = match t.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, t),
    };
    let (radix, body) = if let Some(h) = digits
        .strip_prefix("0x")
        .or_else(|| digits.strip_prefix("0X"))
    {
        (16, h)
    } else if digits.len() > 1 && digits.starts_with('0') {
        (8, &digits[1..])
    } else {
        (10, digits)
    };
    if body.is_empty() || !body.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    let v = u64::from_str_radix(body, radix).ok()?;
    match (neg, i64::try_from(v)) {
        (false, Ok(v)) => Some((v, Type::I64)),
        (false, Err(_)) => Some((v as i64, Type::U64)),
        (true, _) if v <= 1 << 63 => Some(((v as i64).wrapping_neg(), Type::I64)),
        (true, _) => None,
    }
}
