//! The compile-time builtins of `builtins::meta`, once their arguments are checked: type
//! predicates and `kfunc_exist`/`kfunc_allowed` fold to constants; `static_assert` and `fail`
//! report their message when the checker reaches them; `assert` gets the format site of its
//! run-time error (`assert failed: %s`).
//!
//! Input: the call, its arguments and their types. Output: constants in the checker's tables,
//! diagnostics, a format site.

use super::resolve::Checker;
use super::types::Type;
use crate::builtins::{BuiltinId, FuncId, ValueId};
use crate::syntax::ast::{Expr, ExprKind, UnaryOp};

/// The run-time message of a failed `assert` (its format; the message is the argument).
pub const ASSERT_FORMAT: &str = "assert failed: %s";

/// Whether `e` is a literal (`1`, `-1`, `true`, `"s"`).
fn is_literal(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Int(_) | ExprKind::Bool(_) | ExprKind::Str(_) => true,
        ExprKind::Unary {
            op: UnaryOp::Neg,
            expr,
        } => matches!(expr.kind, ExprKind::Int(_)),
        _ => false,
    }
}

/// `strcap` of a value of type `t` when its type decides it: a string's size, a char array's
/// length.
pub fn strcap_const(t: &Type) -> Option<i64> {
    match t {
        Type::Str { size } => Some(*size as i64),
        Type::Array { len, .. } => Some(*len as i64),
        _ => None,
    }
}

/// `fmt` with literal `args` in place of its conversions (`fail`'s message).
fn format_literals(fmt: &str, args: &[Literal]) -> Result<String, String> {
    let mut out = String::new();
    let mut it = args.iter();
    let mut chars = fmt.chars().peekable();
    while let Some(c) = chars.next() {
        if c != '%' {
            out.push(c);
            continue;
        }
        if chars.peek() == Some(&'%') {
            chars.next();
            out.push('%');
            continue;
        }
        // Flags, width, precision and length modifiers are read and dropped.
        let mut conv = None;
        for c in chars.by_ref() {
            if c.is_ascii_alphabetic() && !matches!(c, 'l' | 'h' | 'z' | 'j' | 't') {
                conv = Some(c);
                break;
            }
        }
        let Some(conv) = conv else {
            return Err("fail(): incomplete conversion at the end of the format".into());
        };
        let Some(a) = it.next() else {
            return Err("fail(): the format has more conversions than arguments".into());
        };
        match (conv, a) {
            ('s', Literal::Str(s)) => out.push_str(s),
            ('d' | 'i' | 'u', Literal::Int(n)) => out.push_str(&n.to_string()),
            ('x', Literal::Int(n)) => out.push_str(&format!("{n:x}")),
            ('X', Literal::Int(n)) => out.push_str(&format!("{n:X}")),
            ('c', Literal::Int(n)) => out.push(char::from(*n as u8)),
            ('s', Literal::Int(n)) => out.push_str(&n.to_string()),
            (c, _) => return Err(format!("fail(): %{c} does not fit its literal argument")),
        }
    }
    if it.next().is_some() {
        return Err("fail(): more arguments than the format has conversions".into());
    }
    Ok(out)
}

enum Literal {
    Int(i64),
    Str(String),
}

/// Whether every value assigned to `$name` anywhere in the program is a stack builtin
/// (`kstack`, `ustack(3)`), so `len($name)` may count the frames of a fresh capture.
pub(super) fn var_holds_fresh_stacks(p: &crate::syntax::ast::Program, name: &str) -> bool {
    use crate::syntax::ast::{LValue, Stmt, StmtKind};
    use crate::syntax::visit::{walk_stmt, Visitor};
    struct V<'a> {
        name: &'a str,
        ok: bool,
    }
    impl Visitor for V<'_> {
        fn visit_stmt(&mut self, s: &Stmt) {
            let value = match &s.kind {
                StmtKind::Let {
                    var, init: Some(v), ..
                } if var.name == self.name => Some(v),
                StmtKind::Assign {
                    target: LValue::Var(var),
                    value,
                    ..
                } if var.name == self.name => Some(value),
                _ => None,
            };
            if let Some(v) = value {
                self.ok &= is_stack_builtin(v);
            }
            walk_stmt(self, s)
        }
    }
    let mut v = V { name, ok: true };
    crate::syntax::visit::walk_program(&mut v, p);
    v.ok
}

/// `kstack`, `ustack`, `kstack(…)`, `ustack(…)`.
pub(super) fn is_stack_builtin(e: &Expr) -> bool {
    match &e.kind {
        ExprKind::Ident(n) => n == "kstack" || n == "ustack",
        ExprKind::Call { name, .. } => name.name == "kstack" || name.name == "ustack",
        _ => false,
    }
}

impl Checker<'_> {
    /// The value of `e` when it is known now: literals, folded constants, and the arithmetic,
    /// comparisons and logic of such values (`static_assert(sizeof(x) == 8, …)`).
    fn const_eval(&self, e: &Expr) -> Option<i64> {
        use crate::syntax::ast::BinaryOp as B;
        if let Some(c) = self.consts.get(&e.id) {
            return Some(*c);
        }
        match &e.kind {
            ExprKind::Int(lit) => Some(lit.value as i64),
            ExprKind::Bool(b) => Some(*b as i64),
            ExprKind::Unary { op, expr } => {
                let v = self.const_eval(expr)?;
                match op {
                    UnaryOp::Not => Some((v == 0) as i64),
                    UnaryOp::Neg => Some(v.wrapping_neg()),
                    UnaryOp::BitNot => Some(!v),
                    _ => None,
                }
            }
            // Strings known when compiling compare too (`probetype != "uprobe"`).
            ExprKind::Binary { op, lhs, rhs }
                if matches!(op, B::Eq | B::Ne)
                    && self.str_consts.contains_key(&lhs.id)
                    && self.str_consts.contains_key(&rhs.id) =>
            {
                let text = |e: &Expr| {
                    let s = &self.str_consts[&e.id];
                    s[..s.iter().position(|&b| b == 0).unwrap_or(s.len())].to_vec()
                };
                Some(((text(lhs) == text(rhs)) == (*op == B::Eq)) as i64)
            }
            ExprKind::Binary { op, lhs, rhs } => {
                let a = self.const_eval(lhs)?;
                if *op == B::And && a == 0 {
                    return Some(0);
                }
                if *op == B::Or && a != 0 {
                    return Some(1);
                }
                let b = self.const_eval(rhs)?;
                Some(match op {
                    B::Add => a.wrapping_add(b),
                    B::Sub => a.wrapping_sub(b),
                    B::Mul => a.wrapping_mul(b),
                    B::Div | B::Mod if b == 0 => return None,
                    B::Div => a.wrapping_div(b),
                    B::Mod => a.wrapping_rem(b),
                    B::Shl => a.wrapping_shl(b as u32),
                    B::Shr => a.wrapping_shr(b as u32),
                    B::BitAnd => a & b,
                    B::BitOr => a | b,
                    B::BitXor => a ^ b,
                    B::Eq => (a == b) as i64,
                    B::Ne => (a != b) as i64,
                    B::Lt => (a < b) as i64,
                    B::Le => (a <= b) as i64,
                    B::Gt => (a > b) as i64,
                    B::Ge => (a >= b) as i64,
                    B::And | B::Or => (b != 0) as i64,
                })
            }
            _ => None,
        }
    }

    /// `if comptime (c) { … } else …`: `c` must be known when compiling; only the branch it
    /// takes is checked (the other may `fail()` or use what this probe lacks), and its value
    /// is the `if`'s. The decision is `cond`'s constant, which the code generator follows.
    pub(super) fn if_comptime(
        &mut self,
        cond: &Expr,
        then: &crate::syntax::ast::Block,
        otherwise: Option<&Expr>,
    ) -> Type {
        self.expr(cond);
        let ExprKind::Comptime(inner) = &cond.kind else {
            return Type::None;
        };
        match self.const_eval(inner) {
            Some(v) => {
                self.consts.insert(cond.id, (v != 0) as i64);
                if v != 0 {
                    self.block(then, false)
                } else {
                    otherwise.map_or(Type::None, |o| self.expr(o))
                }
            }
            None => {
                self.error(
                    inner.span,
                    "if comptime: the condition must be known when compiling",
                );
                Type::None
            }
        }
    }

    /// Folds or checks call `e` of compile-time builtin `name` (no-op for other builtins).
    pub(super) fn fold_meta(&mut self, e: &Expr, f: FuncId, args: &[Expr], ts: &[Type]) {
        let fold = match f {
            // A string's or char array's capacity is its type's; a pointer's is read.
            FuncId::Strcap => {
                if let Some(n) = strcap_const(&ts[0]) {
                    self.consts.insert(e.id, n);
                }
                return;
            }
            FuncId::CheckKey => {
                if !self.str_consts.contains_key(&args[2].id) {
                    self.error(
                        args[2].span,
                        "check_key() takes the caller's name as a string literal",
                    );
                }
                return;
            }
            FuncId::IsStr => ts[0].is_string(),
            FuncId::IsPtr => ts[0].is_pointer(),
            FuncId::IsArray => matches!(ts[0], Type::Array { .. }),
            FuncId::IsInteger => ts[0].is_integer() && !matches!(ts[0], Type::Bool),
            FuncId::IsUnsignedInteger => {
                ts[0].is_integer() && !matches!(ts[0], Type::Bool) && !ts[0].is_signed()
            }
            FuncId::IsLiteral => {
                is_literal(&args[0])
                    || matches!(&args[0].kind, ExprKind::Ident(n)
                        if self.frames.iter().rev().find_map(|f| f.idents.get(n))
                            .is_some_and(|(_, c, s)| c.is_some() || s.is_some()))
            }
            FuncId::KfuncExist => {
                let n = self
                    .str_consts
                    .get(&args[0].id)
                    .cloned()
                    .unwrap_or_default();
                let n = String::from_utf8_lossy(&n).into_owned();
                self.vmlinux().is_some_and(|b| b.find_func(&n).is_some())
            }
            FuncId::KfuncAllowed => {
                let n = self
                    .str_consts
                    .get(&args[0].id)
                    .cloned()
                    .unwrap_or_default();
                let n = String::from_utf8_lossy(&n).into_owned();
                let kinds = self.cx.kinds.clone();
                !kinds.is_empty()
                    && kinds
                        .iter()
                        .all(|k| self.kernel.kfunc_allowed(&n, k.prog_type()))
            }
            FuncId::StaticAssert => {
                match self.const_eval(&args[0]) {
                    None => {
                        self.error(
                            args[0].span,
                            "static_assert() needs a condition known when compiling",
                        );
                    }
                    Some(0) => {
                        let msg = self
                            .str_consts
                            .get(&args[1].id)
                            .cloned()
                            .unwrap_or_default();
                        self.error(e.span, String::from_utf8_lossy(&msg).into_owned());
                    }
                    Some(_) => {}
                }
                return;
            }
            FuncId::Fail => {
                let fmt = self
                    .str_consts
                    .get(&args[0].id)
                    .cloned()
                    .unwrap_or_default();
                let fmt = String::from_utf8_lossy(&fmt).into_owned();
                let mut lits = Vec::new();
                for a in &args[1..] {
                    if let Some(s) = self.str_consts.get(&a.id) {
                        lits.push(Literal::Str(String::from_utf8_lossy(s).into_owned()));
                    } else if let Some(n) = self.consts.get(&a.id) {
                        lits.push(Literal::Int(*n));
                    } else {
                        self.error(a.span, "fail() arguments need to be literals");
                        return;
                    }
                }
                match format_literals(&fmt, &lits) {
                    Ok(msg) | Err(msg) => {
                        self.error(e.span, msg);
                    }
                }
                return;
            }
            FuncId::Len if matches!(ts[0], Type::KStack { .. } | Type::UStack { .. }) => {
                // bpf_get_stackid's map cannot be read by programs, so len() counts the
                // frames of a capture of its own, which matches only a stack taken in the
                // same run of the probe.
                let fresh = match &args[0].kind {
                    ExprKind::Var(v) => var_holds_fresh_stacks(self.program, v),
                    _ => matches!(
                        self.builtin_ids.get(&args[0].id),
                        Some(
                            BuiltinId::Value(ValueId::Kstack | ValueId::Ustack)
                                | BuiltinId::Func(FuncId::Kstack | FuncId::Ustack)
                        )
                    ),
                };
                if !fresh {
                    self.error(
                        args[0].span,
                        "len() counts the frames of a stack taken in this probe (kstack, \
                         ustack, or a $variable assigned only from them): the kernel's stack \
                         map cannot be read back by BPF programs",
                    );
                }
                return;
            }
            FuncId::Assert => {
                match super::resources::format_site(e.id, "errorf", ASSERT_FORMAT, &ts[1..]) {
                    Ok(site) if self.report => self.formats.push(site),
                    Ok(_) => {}
                    Err((_, msg)) => {
                        self.error(args[1].span, msg);
                    }
                }
                return;
            }
            // Nothing to fold or check past the type rule.
            FuncId::Len
            | FuncId::Count
            | FuncId::Sum
            | FuncId::Min
            | FuncId::Max
            | FuncId::Avg
            | FuncId::Stats
            | FuncId::Hist
            | FuncId::Lhist
            | FuncId::Tseries
            | FuncId::Printf
            | FuncId::Errorf
            | FuncId::Warnf
            | FuncId::Debugf
            | FuncId::Cat
            | FuncId::System
            | FuncId::Print
            | FuncId::Exit
            | FuncId::Time
            | FuncId::Join
            | FuncId::Signal
            | FuncId::SignalThread
            | FuncId::WriteUser
            | FuncId::Override
            | FuncId::Unwatch
            | FuncId::Skboutput
            | FuncId::Str
            | FuncId::Buf
            | FuncId::Ksym
            | FuncId::Usym
            | FuncId::Kaddr
            | FuncId::PercpuKaddr
            | FuncId::Uaddr
            | FuncId::Reg
            | FuncId::Ntop
            | FuncId::Macaddr
            | FuncId::Ppid
            | FuncId::Pcomm
            | FuncId::LeaderTid
            | FuncId::LeaderComm
            | FuncId::Cgroupid
            | FuncId::CgroupPath
            | FuncId::Strftime
            | FuncId::Strncmp
            | FuncId::Strlen
            | FuncId::Strcontains
            | FuncId::Strstr
            | FuncId::StrConcat
            | FuncId::Path
            | FuncId::Kstack
            | FuncId::Ustack
            | FuncId::DwUstack
            | FuncId::Nsecs
            | FuncId::Bswap
            | FuncId::Memcmp
            | FuncId::SocketCookie
            | FuncId::Pid
            | FuncId::Tid
            | FuncId::Comm
            | FuncId::Kptr
            | FuncId::Uptr
            | FuncId::Strerror
            | FuncId::SyscallName
            | FuncId::SignalName
            | FuncId::Pton
            | FuncId::Getopt
            | FuncId::Delete
            | FuncId::Clear
            | FuncId::Zero
            | FuncId::HasKey
            | FuncId::AssertStr => return,
        };
        self.consts.insert(e.id, fold as i64);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn fail_formats_its_literals() {
        let a = [Literal::Int(3), Literal::Str("x".into())];
        assert_eq!(
            format_literals("got %d, %s; 100%%", &a).unwrap(),
            "got 3, x; 100%"
        );
        assert!(format_literals("%d %d", &a[..1]).is_err());
        assert!(format_literals("none", &a[..1]).is_err());
    }
}
