//! Statements: `let`, assignments (variables and maps, compound forms), expression
//! statements, `while`, `unroll`, `break`/`continue`, `return`.
//!
//! Variables: every [`VarSlot`] of the probe gets a stack place sized by its type, zeroed at
//! entry (bpftrace's variables start at zero). Declarations are matched to slots by walking
//! the block in the checker's order with the same scopes (`let` and a first assignment declare
//! in the innermost scope, in source order), since declarations carry no expression id.

use std::collections::HashMap;

use super::expr::lower_expr;
use super::store::{load_val, store_val};
use super::{Lower, LowerError, Val};
use crate::codegen::emit::control::LoopLabels;
use crate::codegen::emit::mem::zero;
use crate::codegen::emit::Place;
use crate::plan::layout::FieldType;
use crate::sema::{CheckedProbe, Type, VarSlot};
use crate::syntax::ast::{Block, Expr, LValue, Stmt, StmtKind};

/// Scopes of declared variables while lowering (mirrors the checker's).
#[derive(Default, Clone)]
pub(crate) struct Scopes {
    pub stack: Vec<HashMap<String, VarSlot>>,
    pub next: u32,
    /// Where a first assignment without `let` declares (the checker's `hoist_floor`).
    pub floor: usize,
}

fn var_field(t: &Type) -> FieldType {
    if matches!(t, Type::CStruct(_)) && !var_by_copy(t) {
        return FieldType::Pointer;
    }
    super::maps::slot_field(t)
}

/// Whether a variable of struct type `t` holds a copy of the value (as bpftrace's do) rather
/// than its address: when it has a layout and fits the stack comfortably.
fn var_by_copy(t: &Type) -> bool {
    matches!(t, Type::CStruct(_))
        && t.field_type().is_some()
        && t.size() as u32 <= super::STACK_VALUE_MAX
}

/// Lowers the value assigned to a variable of type `t`.
fn var_value(lw: &mut Lower<'_>, e: &Expr, t: &Type) -> Result<Val, LowerError> {
    if var_by_copy(t) {
        super::store::lower_stored(lw, e)
    } else {
        lower_expr(lw, e)
    }
}

/// Allocates and zeroes every variable's place.
pub(crate) fn init_vars(lw: &mut Lower<'_>, probe: &CheckedProbe) -> Result<(), LowerError> {
    lw.scopes = Scopes {
        stack: vec![HashMap::new()],
        next: 0,
        floor: 0,
    };
    for (i, (_, t, _)) in probe.vars.slots.iter().enumerate() {
        let f = var_field(t);
        let size = (f.size() as u32).max(8).next_multiple_of(8);
        let span = lw.b.span();
        let p = lw.place(size, span)?;
        zero(&mut lw.b, p, size);
        lw.vars.insert(VarSlot(i as u32), p);
    }
    Ok(())
}

impl Scopes {
    pub(crate) fn push(&mut self) {
        self.stack.push(HashMap::new());
    }

    pub(crate) fn pop(&mut self) {
        self.stack.pop();
    }

    /// Declares `name`, first assigned without `let`, in the floor scope with the next slot.
    pub(crate) fn declare_implicit(&mut self, name: &str) -> VarSlot {
        let slot = VarSlot(self.next);
        self.next += 1;
        let i = self.floor.min(self.stack.len().saturating_sub(1));
        if let Some(s) = self.stack.get_mut(i) {
            s.insert(name.to_string(), slot);
        }
        slot
    }

    /// A variable's slot by name, innermost scope first.
    pub(crate) fn lookup(&self, name: &str) -> Option<VarSlot> {
        self.stack.iter().rev().find_map(|m| m.get(name).copied())
    }

    /// Declares `name` in the innermost scope with the next slot.
    pub(crate) fn declare(&mut self, name: &str) -> VarSlot {
        let slot = VarSlot(self.next);
        self.next += 1;
        if let Some(top) = self.stack.last_mut() {
            top.insert(name.to_string(), slot);
        }
        slot
    }
}

impl Lower<'_> {
    pub(crate) fn var_type(&self, slot: VarSlot) -> Type {
        self.var_types
            .get(slot.0 as usize)
            .cloned()
            .unwrap_or(Type::None)
    }
}

/// Lowers `{ stmts; tail }` in a new scope; returns the tail's value.
pub(crate) fn lower_block(lw: &mut Lower<'_>, block: &Block) -> Result<Val, LowerError> {
    lw.scopes.push();
    let r = lower_block_inner(lw, block);
    lw.scopes.pop();
    r
}

fn lower_block_inner(lw: &mut Lower<'_>, block: &Block) -> Result<Val, LowerError> {
    for s in &block.stmts {
        lower_stmt(lw, s)?;
    }
    match &block.tail {
        Some(e) => lower_expr(lw, e),
        None => Ok(Val::None),
    }
}

/// The place of variable `slot`. Inside callbacks and inlined functions a variable not seen
/// yet gets a zeroed place in the current frame at its first use, which is its declaration
/// (`let` touches it at once) or comes after it in the same block, so it dominates every use.
pub(crate) fn var_place(lw: &mut Lower<'_>, slot: VarSlot) -> Option<Place> {
    if let Some(&p) = lw.vars.get(&slot) {
        return Some(p);
    }
    if !lw.lazy_vars {
        return None;
    }
    let f = var_field(&lw.var_type(slot));
    let size = (f.size() as u32).max(8).next_multiple_of(8);
    let span = lw.b.span();
    let p = lw.place(size, span).ok()?;
    zero(&mut lw.b, p, size);
    lw.vars.insert(slot, p);
    Some(p)
}

/// The slot a `$name` expression reads: by scope inside a macro expansion (the checker's
/// per-expression slots there are those of the last expansion), else the checker's.
pub(crate) fn var_slot_of(
    lw: &Lower<'_>,
    id: crate::syntax::ast::ExprId,
    name: &str,
) -> Option<VarSlot> {
    if !lw.macros.is_empty() {
        if let Some(s) = lw.scopes.lookup(name) {
            return Some(s);
        }
    }
    lw.cp
        .var_slots
        .get(&id)
        .copied()
        .or_else(|| lw.scopes.lookup(name))
}

/// Stores `v` (of type `ty`) into variable `slot`.
pub(crate) fn assign_var(lw: &mut Lower<'_>, slot: VarSlot, v: Val, ty: &Type) {
    let Some(p) = var_place(lw, slot) else { return };
    let f = var_field(&lw.var_type(slot));
    store_val(lw, p, &f, v, ty);
}

/// Reads variable `slot`.
pub(crate) fn read_var(lw: &mut Lower<'_>, slot: VarSlot) -> Val {
    let Some(p) = var_place(lw, slot) else {
        return Val::Int(
            crate::codegen::emit::Value::Imm(0),
            crate::codegen::emit::IntTy::I64,
        );
    };
    let t = lw.var_type(slot);
    if matches!(t, Type::CStruct(_)) && !var_by_copy(&t) {
        let v = crate::codegen::emit::mem::load_int(&mut lw.b, p, crate::codegen::emit::IntTy::U64);
        return Val::Int(v, crate::codegen::emit::IntTy::U64);
    }
    match super::int_ty(&t) {
        Some(it) => Val::Int(super::store::load_slot_int(lw, p, it), it),
        None => load_val(lw, p, &t),
    }
}

pub(crate) fn lower_stmt(lw: &mut Lower<'_>, s: &Stmt) -> Result<(), LowerError> {
    lw.b.set_span(s.span);
    match &s.kind {
        StmtKind::Let { var, init, .. } => {
            let v = match init {
                Some(e) => {
                    let t = lw.type_of(e.id);
                    Some((var_value(lw, e, &t)?, t))
                }
                None => None,
            };
            let slot = lw.scopes.declare(&var.name);
            var_place(lw, slot);
            if let Some((v, t)) = v {
                assign_var(lw, slot, v, &t);
            }
        }
        StmtKind::Assign { target, op, value } => lower_assign(lw, target, *op, value)?,
        StmtKind::Expr(e) | StmtKind::Discard(e) => {
            lower_expr(lw, e)?;
        }
        // As bpftrace: no hidden iteration bound. The kernel's verifier (bounded loops, 5.3+)
        // follows the loop to its end or refuses the program ("infinite loop detected", "BPF
        // program is too large"), so a loop never stops early without a word.
        StmtKind::While { cond, body } => {
            let counter = lw.scopes.next;
            let head = lw.b.label();
            let next = lw.b.label();
            let exit = lw.b.label();
            lw.b.bind(head);
            let c = lower_expr(lw, cond)?.value();
            crate::codegen::emit::control::branch_if(&mut lw.b, c, false, exit);
            lw.loops.push(LoopLabels { exit, next });
            lw.scopes.next = counter;
            lower_block(lw, body)?;
            lw.loops.pop();
            lw.b.bind(next);
            lw.b.ja(head);
            lw.b.bind(exit);
        }
        StmtKind::Unroll { count, body } => {
            let n = lw
                .cp
                .consts
                .get(&count.id)
                .copied()
                .unwrap_or(0)
                .clamp(0, 100);
            let counter = lw.scopes.next;
            let mut end = counter;
            for _ in 0..n {
                lw.scopes.next = counter;
                lower_block(lw, body)?;
                end = lw.scopes.next;
            }
            lw.scopes.next = end;
        }
        StmtKind::Break | StmtKind::Continue => {
            let Some(l) = lw.loops.last().copied() else {
                return Err(LowerError::unsupported(
                    "break/continue outside a loop",
                    s.span,
                ));
            };
            let target = if matches!(s.kind, StmtKind::Break) {
                l.exit
            } else {
                l.next
            };
            lw.b.ja(target);
        }
        StmtKind::Return(value) if lw.fn_ret.is_some() => {
            super::inline::lower_return(lw, value.as_ref(), s.span)?
        }
        // A `test:`/`bench:` probe's value is its verdict: non-zero fails a test and skips
        // a benchmark (bpftrace's rule), so it becomes the program's return value.
        StmtKind::Return(Some(value)) if lw.probe_kind.info().facts.verdict => {
            let v = lower_expr(lw, value)?;
            lw.b.set_span(s.span);
            match v.value() {
                crate::codegen::lower::Value::Reg(r) => lw.b.exit(r),
                crate::codegen::lower::Value::Imm(i) => lw.b.exit(i32::try_from(i).unwrap_or(1)),
            }
        }
        StmtKind::Return(_) => {
            let exit = lw.exit;
            lw.b.ja(exit);
        }
        StmtKind::For { var, iter, body } => super::loops::lower_for(lw, var, iter, body, s.span)?,
        StmtKind::Import(_) => {}
    }
    Ok(())
}

fn lower_assign(
    lw: &mut Lower<'_>,
    target: &LValue,
    op: Option<crate::syntax::ast::BinaryOp>,
    value: &Expr,
) -> Result<(), LowerError> {
    match target {
        LValue::Var(v) => {
            let vt = lw.type_of(value.id);
            let val = var_value(lw, value, &vt)?;
            let slot = match lw.scopes.lookup(&v.name) {
                Some(s) => s,
                None => lw.scopes.declare_implicit(&v.name),
            };
            let (val, vt) = match op {
                Some(o) => {
                    let cur = read_var(lw, slot);
                    let t = lw.var_type(slot);
                    (
                        super::expr::arith(lw, o, cur, &t, val, &vt, &t, value.span)?,
                        t,
                    )
                }
                None => (val, vt),
            };
            assign_var(lw, slot, val, &vt);
            Ok(())
        }
        LValue::Map { map, keys, span } => {
            super::calls::assign_map(lw, &map.name, keys, *span, op, value)
        }
    }
}
