//! Script `macro`s and `fn`s, inlined at each call.
//!
//! Macros are hygienic, as in bpftrace: the body sees only its parameters — a `$x` parameter
//! aliases the caller's variable, an `@m` parameter the caller's map, and an expression
//! parameter is the caller's expression, lowered in the caller's scope wherever the body
//! names it (bpftrace substitutes it) — and variables the body declares are its own. The
//! lowering mirrors the checker's expansion (scopes replaced by the aliases, declarations
//! numbered in the same order). The checker types a macro body at each call site and keeps
//! the types of the last one, so expansions whose arguments differ in type share those.
//!
//! A `fn` is inlined with its own variables (the checker's table for it, in the current
//! frame); arguments are evaluated first, in order, and assigned to the parameters; `return
//! value` stores the value and jumps to the end of the inlined body. A function calling
//! itself (directly or not) is refused, and so are more than [`MAX_FN_DEPTH`] nested calls.

use std::collections::HashMap;

use super::stmt::{lower_block, var_slot_of, Scopes};
use super::{int_ty, Lower, LowerError, Val};
use crate::builtins::BuiltinId;
use crate::codegen::emit::{IntTy, Place, Value};
use crate::codegen::{Label, VReg};
use crate::diag::Span;
use crate::sema::{Type, VarSlot};
use crate::syntax::ast::{Expr, ExprKind, Ident, MacroDef, MacroParamKind};
use crate::syntax::visit::{walk_expr, Visitor};

/// Nested `fn` calls inlined at most.
pub const MAX_FN_DEPTH: usize = 32;

/// One macro expansion being lowered.
#[derive(Default)]
pub(crate) struct MacroFrame {
    /// Expression parameters → the caller's argument.
    idents: HashMap<String, Expr>,
    /// `@param` → the caller's map.
    maps: HashMap<String, String>,
    /// The caller's scopes, for lowering expression arguments.
    outer: Vec<HashMap<String, VarSlot>>,
    /// The call being expanded (`errorf` inside reports it: "expanded from").
    call_span: Span,
}

impl MacroFrame {
    pub(crate) fn call_span(&self) -> Span {
        self.call_span
    }
}

/// Where `return` goes in an inlined `fn`.
#[derive(Clone)]
pub(crate) struct FnReturn {
    end: Label,
    value: Option<Ret>,
    ty: Type,
    /// The functions being inlined, outermost first (this one last).
    chain: Vec<String>,
}

#[derive(Clone, Copy)]
enum Ret {
    Int(VReg, IntTy),
    Mem(Place),
}

impl FnReturn {
    /// The memory the result is written to (`None`: no result, or one in a register).
    pub(crate) fn result_place(&self) -> Option<Place> {
        match self.value {
            Some(Ret::Mem(p)) => Some(p),
            _ => None,
        }
    }

    /// Whether the result lives in a register (which a callback cannot write).
    pub(crate) fn in_register(&self) -> bool {
        matches!(self.value, Some(Ret::Int(..)))
    }

    /// Where the inlined fn ends, in the frame that inlined it.
    pub(crate) fn end(&self) -> Label {
        self.end
    }

    /// The same return seen from a loop callback: `return` writes the result at `place` (the
    /// caller's, through a pointer) and goes to `end`, which tells the caller.
    pub(crate) fn in_callback(&self, end: Label, place: Option<Place>) -> FnReturn {
        FnReturn {
            end,
            value: place.map(Ret::Mem),
            ty: self.ty.clone(),
            chain: self.chain.clone(),
        }
    }
}

/// The map a name means here: a macro's `@param` is the caller's map.
pub(crate) fn map_alias(lw: &Lower<'_>, name: &str) -> String {
    lw.macros
        .last()
        .and_then(|f| f.maps.get(name))
        .cloned()
        .unwrap_or_else(|| name.to_string())
}

/// The variables `body` can reach by name from here: its own `$names` in the current scopes,
/// and, through expression parameters of the macros being lowered, the variables their
/// arguments name in each caller's scopes (a loop body in a macro reads those when it
/// lowers the argument).
pub(crate) fn named_slots(lw: &Lower<'_>, body: &crate::syntax::ast::Block) -> Vec<VarSlot> {
    let (mut vars, mut idents) = (Default::default(), Default::default());
    super::callback::block_vars(body, &mut vars, &mut idents);
    let lookup = |scopes: &[HashMap<String, VarSlot>], n: &str| {
        scopes.iter().rev().find_map(|m| m.get(n).copied())
    };
    let mut out: Vec<VarSlot> = vars
        .iter()
        .filter_map(|n| lookup(&lw.scopes.stack, n))
        .collect();
    for frame in lw.macros.iter().rev() {
        let (mut v2, mut i2) = (Default::default(), Default::default());
        for n in &idents {
            if let Some(arg) = frame.idents.get(n) {
                super::callback::expr_vars(arg, &mut v2, &mut i2);
            }
        }
        out.extend(v2.iter().filter_map(|n| lookup(&frame.outer, n)));
        idents = i2;
    }
    out
}

/// Whether the checker's constant for `e` may belong to another expansion of the macro
/// being lowered: `e` names an expression parameter or calls a macro (the checker folds
/// such expressions with the arguments of the last expansion it checked).
pub(crate) fn const_is_stale(lw: &Lower<'_>, e: &Expr) -> bool {
    struct Finder<'l, 'a> {
        lw: &'l Lower<'a>,
        found: bool,
    }
    impl Visitor for Finder<'_, '_> {
        fn visit_expr(&mut self, e: &Expr) {
            match &e.kind {
                ExprKind::Ident(n) if self.lw.macros.iter().any(|f| f.idents.contains_key(n)) => {
                    self.found = true
                }
                ExprKind::Ident(n)
                | ExprKind::Call {
                    name: Ident { name: n, .. },
                    ..
                } if self.lw.cp.program.has_macro(n) => self.found = true,
                _ => walk_expr(self, e),
            }
        }
    }
    if lw.macros.is_empty() {
        return false;
    }
    let mut f = Finder { lw, found: false };
    f.visit_expr(e);
    f.found
}

/// A bare name that is a macro's expression parameter or an argument-less macro.
pub(crate) fn lower_ident(
    lw: &mut Lower<'_>,
    e: &Expr,
    name: &str,
) -> Option<Result<Val, LowerError>> {
    if let Some(arg) = lw.macros.last().and_then(|f| f.idents.get(name)).cloned() {
        return Some(lower_in_caller(lw, &arg));
    }
    if matches!(lw.cp.builtin_of(e.id), Some(BuiltinId::Value(_))) {
        return None;
    }
    let cp = lw.cp;
    let m = cp
        .program
        .macro_for_call(name, 0, e.span)
        .filter(|m| m.params.is_empty())?;
    Some(expand(lw, e, m, &[]))
}

/// A call of a script macro or `fn`; `None` when `name` is neither.
pub(crate) fn lower_call(
    lw: &mut Lower<'_>,
    e: &Expr,
    name: &str,
    args: &[Expr],
) -> Option<Result<Val, LowerError>> {
    let cp = lw.cp;
    // As the checker: a macro of the call's arity overrides a builtin of that name.
    if let Some(m) = cp.program.overriding_macro(name, args.len(), e.span) {
        return Some(expand(lw, e, m, args));
    }
    // As the checker resolved it: the builtin function of this name, or the value called
    // with `()` (`cpu()` beside a script's `cpu(x)`).
    if cp.builtin_of(e.id).is_some() {
        return None;
    }
    if let Some(m) = cp
        .program
        .macro_for_call(name, args.len(), e.span)
        .filter(|m| m.params.len() == args.len())
    {
        return Some(expand(lw, e, m, args));
    }
    if cp.program.in_stdlib(e.span) {
        return None;
    }
    let f = cp.program.fns().find(|f| f.name.name == name)?;
    Some(call_fn(lw, e, f, args))
}

/// `arg` lowered where the macro was called (scopes and macro frames of the caller).
fn lower_in_caller(lw: &mut Lower<'_>, arg: &Expr) -> Result<Val, LowerError> {
    let Some(mut frame) = lw.macros.pop() else {
        return super::expr::lower_expr(lw, arg);
    };
    std::mem::swap(&mut lw.scopes.stack, &mut frame.outer);
    let r = super::expr::lower_expr(lw, arg);
    std::mem::swap(&mut lw.scopes.stack, &mut frame.outer);
    lw.macros.push(frame);
    r
}

fn expand(lw: &mut Lower<'_>, e: &Expr, m: &MacroDef, args: &[Expr]) -> Result<Val, LowerError> {
    if lw.macros.len() >= 64 {
        return Err(LowerError::unsupported(
            format!("macro '{}' expanding this deeply", m.name.name),
            e.span,
        ));
    }
    let mut frame = MacroFrame {
        call_span: e.span,
        ..MacroFrame::default()
    };
    let mut aliases = HashMap::new();
    for (p, a) in m.params.iter().zip(args) {
        match (p.kind, &a.kind) {
            (MacroParamKind::Expr, _) => {
                frame.idents.insert(p.name.name.clone(), a.clone());
            }
            (MacroParamKind::Map, ExprKind::Map { name, .. }) => {
                frame
                    .maps
                    .insert(p.name.name.clone(), map_alias(lw, &name.name));
            }
            (MacroParamKind::Var, ExprKind::Var(v)) => {
                if let Some(slot) = var_slot_of(lw, a.id, v) {
                    aliases.insert(p.name.name.clone(), slot);
                }
            }
            _ => return Err(LowerError::unsupported("this macro argument", a.span)),
        }
    }
    frame.outer = std::mem::replace(&mut lw.scopes.stack, vec![aliases]);
    lw.macros.push(frame);
    let floor = std::mem::replace(&mut lw.scopes.floor, 0);
    let r = lower_block(lw, lw.cp.program.macro_body(e.id, m));
    lw.scopes.floor = floor;
    if let Some(f) = lw.macros.pop() {
        lw.scopes.stack = f.outer;
    }
    r
}

fn call_fn(
    lw: &mut Lower<'_>,
    e: &Expr,
    f: &crate::syntax::ast::FnDef,
    args: &[Expr],
) -> Result<Val, LowerError> {
    let mut chain = lw
        .fn_ret
        .as_ref()
        .map_or_else(Vec::new, |r| r.chain.clone());
    if chain.contains(&f.name.name) || chain.len() >= MAX_FN_DEPTH {
        return Err(LowerError::unsupported(
            format!(
                "calling '{}' from itself (recursive functions, via {})",
                f.name.name,
                chain.join(" → ")
            ),
            e.span,
        ));
    }
    chain.push(f.name.name.clone());
    let mut vals = Vec::new();
    for a in args {
        let t = lw.type_of(a.id);
        let v = super::expr::lower_expr(lw, a)?;
        // Integer arguments are read before the body can change what they came from.
        let v = match v {
            Val::Int(Value::Reg(r), it) => Val::Int(Value::Reg(lw.b.copy(r)), it),
            v => v,
        };
        vals.push((v, t));
    }
    let ty = lw.type_of(e.id);
    let end = lw.b.label();
    // A `return` inside a loop runs in a callback, which can only write memory.
    let in_memory = super::callback::returns_from_loop(&f.body);
    let value = match int_ty(&ty) {
        Some(it) if !in_memory => Some(Ret::Int(lw.b.constant(0), it)),
        None if ty.is_none() => None,
        _ => {
            let size = ty
                .field_type()
                .map_or(8, |f| f.size() as u32)
                .max(1)
                .next_multiple_of(8);
            let p = lw.place(size, e.span)?;
            crate::codegen::emit::mem::zero(&mut lw.b, p, size);
            Some(Ret::Mem(p))
        }
    };
    let table: Vec<Type> = lw
        .cp
        .fn_vars
        .get(&f.name.name)
        .map(|t| t.slots.iter().map(|(_, t, _)| t.clone()).collect())
        .unwrap_or_default();
    let saved_vars = std::mem::take(&mut lw.vars);
    let saved_types = std::mem::replace(&mut lw.var_types, table);
    let saved_scopes = std::mem::replace(
        &mut lw.scopes,
        Scopes {
            stack: vec![HashMap::new()],
            next: 0,
            floor: 0,
        },
    );
    let saved_lazy = std::mem::replace(&mut lw.lazy_vars, true);
    let saved_macros = std::mem::take(&mut lw.macros);
    let saved_loops = std::mem::take(&mut lw.loops);
    let saved_ret = lw.fn_ret.replace(FnReturn {
        end,
        value,
        ty: ty.clone(),
        chain,
    });
    let r = bind_and_lower(lw, f, vals);
    lw.vars = saved_vars;
    lw.var_types = saved_types;
    lw.scopes = saved_scopes;
    lw.lazy_vars = saved_lazy;
    lw.macros = saved_macros;
    lw.loops = saved_loops;
    lw.fn_ret = saved_ret;
    r?;
    lw.b.bind(end);
    Ok(match value {
        Some(Ret::Int(r, it)) => Val::Int(Value::Reg(r), it),
        Some(Ret::Mem(p)) => super::store::load_val(lw, p, &ty),
        None => Val::None,
    })
}

fn bind_and_lower(
    lw: &mut Lower<'_>,
    f: &crate::syntax::ast::FnDef,
    vals: Vec<(Val, Type)>,
) -> Result<Val, LowerError> {
    for ((pn, _), (v, t)) in f.params.iter().zip(vals) {
        let slot = lw.scopes.declare(&pn.name);
        super::stmt::assign_var(lw, slot, v, &t);
    }
    lower_block(lw, &f.body)
}

/// `return [value];` inside an inlined `fn`.
pub(crate) fn lower_return(
    lw: &mut Lower<'_>,
    value: Option<&Expr>,
    span: Span,
) -> Result<(), LowerError> {
    let Some(ret) = lw.fn_ret.clone() else {
        return Ok(());
    };
    if let (Some(e), Some(slot)) = (value, ret.value) {
        let t = lw.type_of(e.id);
        let v = super::expr::lower_expr(lw, e)?;
        lw.b.set_span(span);
        match slot {
            Ret::Int(r, it) => {
                let from = int_ty(&t).unwrap_or(it);
                let v = crate::codegen::emit::arith::cast(&mut lw.b, v.value(), from, it);
                match v {
                    Value::Reg(x) => lw.b.mov(r, x),
                    Value::Imm(i) => lw.b.mov_const(r, i),
                }
            }
            Ret::Mem(p) => {
                let f = ret
                    .ty
                    .field_type()
                    .unwrap_or(crate::plan::layout::FieldType::Int {
                        bytes: 8,
                        signed: true,
                    });
                super::store::store_val(lw, p, &f, v, &t);
            }
        }
    } else if let Some(e) = value {
        super::expr::lower_expr(lw, e)?;
    }
    lw.b.ja(ret.end);
    Ok(())
}
