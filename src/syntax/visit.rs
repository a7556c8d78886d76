//! A read-only visitor over the AST. Passes override the `visit_*` methods they care about and
//! call the matching `walk_*` function to continue into children; facts found go into side
//! tables indexed by [`ExprId`], never into the tree.
//!
//! Input: a [`Program`] or any node. Output: whatever the visitor collects.
//! Invariant: `walk_*` visits children in source order.

use crate::syntax::ast::*;

pub trait Visitor: Sized {
    fn visit_program(&mut self, p: &Program) {
        walk_program(self, p)
    }
    fn visit_item(&mut self, i: &Item) {
        walk_item(self, i)
    }
    fn visit_probe(&mut self, p: &Probe) {
        walk_probe(self, p)
    }
    fn visit_block(&mut self, b: &Block) {
        walk_block(self, b)
    }
    fn visit_stmt(&mut self, s: &Stmt) {
        walk_stmt(self, s)
    }
    fn visit_expr(&mut self, e: &Expr) {
        walk_expr(self, e)
    }
    fn visit_type(&mut self, t: &TypeRef) {
        walk_type(self, t)
    }
}

pub fn walk_program<V: Visitor>(v: &mut V, p: &Program) {
    for c in &p.c_items {
        if let CItem::TypeDef(d) = c {
            walk_ctypedef(v, d);
        }
    }
    for i in &p.items {
        v.visit_item(i);
    }
}

fn walk_ctypedef<V: Visitor>(v: &mut V, d: &CTypeDef) {
    match &d.body {
        CTypeBody::Enumerators(es) => {
            for e in es.iter().filter_map(|e| e.value.as_ref()) {
                v.visit_expr(e);
            }
        }
        CTypeBody::Fields(fs) => {
            for f in fs {
                if let CTypeExpr::Inline(inner) = &f.ty.kind {
                    walk_ctypedef(v, inner);
                }
            }
        }
    }
}

pub fn walk_item<V: Visitor>(v: &mut V, i: &Item) {
    match i {
        Item::Probe(p) => v.visit_probe(p),
        Item::Macro(m) => v.visit_block(&m.body),
        Item::Fn(f) => {
            for (_, t) in &f.params {
                v.visit_type(t);
            }
            v.visit_type(&f.ret);
            v.visit_block(&f.body);
        }
        Item::MapDecl(_) => {}
    }
}

pub fn walk_probe<V: Visitor>(v: &mut V, p: &Probe) {
    if let Some(pred) = &p.predicate {
        v.visit_expr(pred);
    }
    v.visit_block(&p.body);
}

pub fn walk_block<V: Visitor>(v: &mut V, b: &Block) {
    for s in &b.stmts {
        v.visit_stmt(s);
    }
    if let Some(t) = &b.tail {
        v.visit_expr(t);
    }
}

pub fn walk_stmt<V: Visitor>(v: &mut V, s: &Stmt) {
    match &s.kind {
        StmtKind::Let { ty, init, .. } => {
            if let Some(t) = ty {
                v.visit_type(t);
            }
            if let Some(e) = init {
                v.visit_expr(e);
            }
        }
        StmtKind::Assign { target, value, .. } => {
            if let LValue::Map { keys, .. } = target {
                keys.iter().for_each(|k| v.visit_expr(k));
            }
            v.visit_expr(value);
        }
        StmtKind::Expr(e) | StmtKind::Discard(e) => v.visit_expr(e),
        StmtKind::While { cond, body } => {
            v.visit_expr(cond);
            v.visit_block(body);
        }
        StmtKind::Unroll { count, body } => {
            v.visit_expr(count);
            v.visit_block(body);
        }
        StmtKind::For { iter, body, .. } => {
            if let ForIter::Range { start, end } = iter {
                v.visit_expr(start);
                v.visit_expr(end);
            }
            v.visit_block(body);
        }
        StmtKind::Return(e) => {
            if let Some(e) = e {
                v.visit_expr(e);
            }
        }
        StmtKind::Break | StmtKind::Continue | StmtKind::Import(_) => {}
    }
}

fn walk_type_or_expr<V: Visitor>(v: &mut V, t: &TypeOrExpr) {
    match t {
        TypeOrExpr::Type(t) => v.visit_type(t),
        TypeOrExpr::Expr(e) => v.visit_expr(e),
    }
}

pub fn walk_type<V: Visitor>(v: &mut V, t: &TypeRef) {
    match &t.kind {
        TypeRefKind::Pointer(i) | TypeRefKind::Array(i, _) => v.visit_type(i),
        TypeRefKind::Typeof(x) => walk_type_or_expr(v, x),
        TypeRefKind::Named(_) | TypeRefKind::Tagged(..) => {}
    }
}

pub fn walk_expr<V: Visitor>(v: &mut V, e: &Expr) {
    match &e.kind {
        ExprKind::Int(_)
        | ExprKind::Str(_)
        | ExprKind::Bool(_)
        | ExprKind::Var(_)
        | ExprKind::Positional(_)
        | ExprKind::PositionalCount
        | ExprKind::Ident(_)
        | ExprKind::Error => {}
        ExprKind::Map { keys, .. } => keys.iter().for_each(|k| v.visit_expr(k)),
        ExprKind::Call { args, .. } => args.iter().for_each(|a| v.visit_expr(a)),
        ExprKind::Unary { expr, .. }
        | ExprKind::Field { expr, .. }
        | ExprKind::TupleIndex { expr, .. }
        | ExprKind::Comptime(expr) => v.visit_expr(expr),
        ExprKind::Binary { lhs, rhs, .. } => {
            v.visit_expr(lhs);
            v.visit_expr(rhs);
        }
        ExprKind::Ternary {
            cond,
            then,
            otherwise,
        } => {
            v.visit_expr(cond);
            if let Some(t) = then {
                v.visit_expr(t);
            }
            v.visit_expr(otherwise);
        }
        ExprKind::Cast { ty, expr } => {
            v.visit_type(ty);
            v.visit_expr(expr);
        }
        ExprKind::Index { expr, index } => {
            v.visit_expr(expr);
            v.visit_expr(index);
        }
        ExprKind::Tuple(es) => es.iter().for_each(|x| v.visit_expr(x)),
        ExprKind::Record(fs) => fs.iter().for_each(|(_, x)| v.visit_expr(x)),
        ExprKind::Sizeof(t) | ExprKind::Typeof(t) | ExprKind::Typeinfo(t) => {
            walk_type_or_expr(v, t)
        }
        ExprKind::Offsetof { of, .. } => walk_type_or_expr(v, of),
        ExprKind::If {
            cond,
            then,
            otherwise,
        } => {
            v.visit_expr(cond);
            v.visit_block(then);
            if let Some(o) = otherwise {
                v.visit_expr(o);
            }
        }
        ExprKind::Block(b) => v.visit_block(b),
    }
}

/// Calls `f` on every expression of `b`, outermost first, with mutable access (nested
/// blocks, types' `typeof(expr)` included): how a macro body's copy gets fresh ids.
pub fn for_each_expr_mut(b: &mut Block, f: &mut impl FnMut(&mut Expr)) {
    for s in &mut b.stmts {
        match &mut s.kind {
            StmtKind::Let { ty, init, .. } => {
                if let Some(t) = ty {
                    type_exprs_mut(t, f);
                }
                if let Some(e) = init {
                    expr_mut(e, f);
                }
            }
            StmtKind::Assign { target, value, .. } => {
                if let LValue::Map { keys, .. } = target {
                    keys.iter_mut().for_each(|k| expr_mut(k, f));
                }
                expr_mut(value, f);
            }
            StmtKind::Expr(e) | StmtKind::Discard(e) => expr_mut(e, f),
            StmtKind::While { cond: x, body } | StmtKind::Unroll { count: x, body } => {
                expr_mut(x, f);
                for_each_expr_mut(body, f);
            }
            StmtKind::For { iter, body, .. } => {
                if let ForIter::Range { start, end } = iter {
                    expr_mut(start, f);
                    expr_mut(end, f);
                }
                for_each_expr_mut(body, f);
            }
            StmtKind::Return(Some(e)) => expr_mut(e, f),
            StmtKind::Return(None) | StmtKind::Break | StmtKind::Continue | StmtKind::Import(_) => {
            }
        }
    }
    if let Some(t) = &mut b.tail {
        expr_mut(t, f);
    }
}

fn type_or_expr_mut(t: &mut TypeOrExpr, f: &mut impl FnMut(&mut Expr)) {
    match t {
        TypeOrExpr::Type(t) => type_exprs_mut(t, f),
        TypeOrExpr::Expr(e) => expr_mut(e, f),
    }
}

fn type_exprs_mut(t: &mut TypeRef, f: &mut impl FnMut(&mut Expr)) {
    match &mut t.kind {
        TypeRefKind::Pointer(i) | TypeRefKind::Array(i, _) => type_exprs_mut(i, f),
        TypeRefKind::Typeof(x) => type_or_expr_mut(x, f),
        TypeRefKind::Named(_) | TypeRefKind::Tagged(..) => {}
    }
}

fn expr_mut(e: &mut Expr, f: &mut impl FnMut(&mut Expr)) {
    f(e);
    match &mut e.kind {
        ExprKind::Int(_)
        | ExprKind::Str(_)
        | ExprKind::Bool(_)
        | ExprKind::Var(_)
        | ExprKind::Positional(_)
        | ExprKind::PositionalCount
        | ExprKind::Ident(_)
        | ExprKind::Error => {}
        ExprKind::Map { keys: es, .. } | ExprKind::Call { args: es, .. } | ExprKind::Tuple(es) => {
            es.iter_mut().for_each(|x| expr_mut(x, f))
        }
        ExprKind::Unary { expr, .. }
        | ExprKind::Field { expr, .. }
        | ExprKind::TupleIndex { expr, .. }
        | ExprKind::Comptime(expr) => expr_mut(expr, f),
        ExprKind::Binary { lhs, rhs, .. } => {
            expr_mut(lhs, f);
            expr_mut(rhs, f);
        }
        ExprKind::Ternary {
            cond,
            then,
            otherwise,
        } => {
            expr_mut(cond, f);
            if let Some(t) = then {
                expr_mut(t, f);
            }
            expr_mut(otherwise, f);
        }
        ExprKind::Cast { ty, expr } => {
            type_exprs_mut(ty, f);
            expr_mut(expr, f);
        }
        ExprKind::Index { expr, index } => {
            expr_mut(expr, f);
            expr_mut(index, f);
        }
        ExprKind::Record(fs) => fs.iter_mut().for_each(|(_, x)| expr_mut(x, f)),
        ExprKind::Sizeof(t) | ExprKind::Typeof(t) | ExprKind::Typeinfo(t) => type_or_expr_mut(t, f),
        ExprKind::Offsetof { of, .. } => type_or_expr_mut(of, f),
        ExprKind::If {
            cond,
            then,
            otherwise,
        } => {
            expr_mut(cond, f);
            for_each_expr_mut(then, f);
            if let Some(o) = otherwise {
                expr_mut(o, f);
            }
        }
        ExprKind::Block(b) => for_each_expr_mut(b, f),
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::SourceFile;

    struct Ids(Vec<u32>);
    impl Visitor for Ids {
        fn visit_expr(&mut self, e: &Expr) {
            self.0.push(e.id.0);
            walk_expr(self, e);
        }
    }

    #[test]
    fn visitor_sees_unique_expression_ids_below_expr_count() {
        let src = SourceFile::new(
            "t.bt",
            "kprobe:f /pid > 1/ { $x = (1, 2); @m[$x.0] = count(); if ($x.1) { print(-$x.0 ? 1 : 2) } }",
        );
        let parsed = crate::syntax::parse(&src);
        assert!(!parsed.has_errors(), "{:?}", parsed.diagnostics);
        let mut v = Ids(Vec::new());
        v.visit_program(&parsed.program);
        let n = v.0.len();
        v.0.sort_unstable();
        v.0.dedup();
        assert_eq!(v.0.len(), n, "duplicate ids");
        assert!(v.0.iter().all(|&i| i < parsed.program.expr_count));
        // Every literal, call, variable use and operator of the script was visited.
        assert_eq!(n, 19);
    }
}
