//! Names and scopes: statements walked with bpftrace's scoping rules — a `$var` lives in the
//! block where it is declared (`let`) or first assigned, and is visible in nested blocks;
//! using it elsewhere is "Undefined or undeclared variable". Macros are expanded at their call
//! sites (each call checks the body with the arguments bound); `fn` bodies are checked once
//! with their typed parameters; `#define NAME <integer|string>` names are constants;
//! `$1`… are the command line's arguments (an integer when they parse as one, else a string;
//! missing ones are 0 / ""), `$#` their count.
//!
//! Input/output: see [`super::check`]; the per-probe driver is `driver`, the expression rules
//! are in `typeck`.

use std::collections::HashMap;
use std::sync::Arc;

use super::context::ProbeContext;
use super::ctypes::ScriptTypes;
use super::program::{FormatSite, VarSlot, VarTable};
use super::resources::Maps;
use super::types::Type;
use super::CheckOptions;
use crate::btf::Btf;
use crate::diag::{Diagnostic, Span};
use crate::kernel::info::KernelInfo;
use crate::plan::agg::AggKind;
use crate::syntax::ast::*;
use crate::template::Fact;

/// A `#define` value.
#[derive(Clone, Debug)]
pub(super) enum Define {
    Int(i64),
    Str(Vec<u8>),
    /// Its expansion has no value (reported where it was first used).
    Error,
}

/// A macro's expression argument: its type, integer constant and string constant.
pub(super) type MacroArg = (Type, Option<i64>, Option<Vec<u8>>);

/// Bindings of one macro expansion.
#[derive(Default)]
pub(super) struct MacroFrame {
    /// Expression parameters: name → the argument's type and constant values.
    pub idents: HashMap<String, MacroArg>,
    /// Map parameters: `@param` → the caller's map name.
    pub maps: HashMap<String, String>,
    /// The call being expanded (diagnostics in the body say "expanded from" there).
    pub call: Span,
}

/// The state of one checking round.
pub(super) struct Checker<'a> {
    pub program: &'a Program,
    pub kernel: &'a dyn KernelInfo,
    pub opts: CheckOptions,
    /// Round 2 reports; round 1 only learns map types.
    pub report: bool,
    pub diags: Vec<Diagnostic>,
    pub types: Vec<Type>,
    pub consts: HashMap<ExprId, i64>,
    pub str_consts: HashMap<ExprId, Vec<u8>>,
    /// See [`super::CheckedProgram::addr_spaces`].
    pub addr_spaces: HashMap<ExprId, super::types::AddrSpace>,
    /// See [`super::CheckedProgram::builtins`].
    pub builtin_ids: HashMap<ExprId, crate::builtins::BuiltinId>,
    pub var_slots: HashMap<ExprId, VarSlot>,
    pub map_refs: HashMap<ExprId, usize>,
    pub maps: Maps,
    pub formats: Vec<FormatSite>,
    pub defines: HashMap<String, Define>,
    pub script_types: ScriptTypes,
    /// Kernel BTF, read on the first question that needs it (a script that names no kernel
    /// type, enum or function never reads it).
    pub vmlinux: std::cell::OnceCell<Option<Arc<Btf>>>,
    // Per probe / function:
    pub scopes: Vec<HashMap<String, VarSlot>>,
    pub vars: VarTable,
    pub cx: ProbeContext,
    pub facts: Vec<Fact>,
    pub loop_depth: u32,
    pub frames: Vec<MacroFrame>,
    /// Return type of the user function being checked.
    pub fn_ret: Option<Type>,
    /// Variables of each checked user function, by name.
    pub fn_vars: HashMap<String, VarTable>,
    /// Probe contexts by probe index, built in round 1 and reused in round 2.
    pub contexts: HashMap<usize, ProbeContext>,
    /// Slots declared with a type (`let $x: uint8`), which assignments must not widen.
    pub typed_vars: std::collections::HashSet<VarSlot>,
    /// Each variable's type at the end of its probe or function, by name and declaring span:
    /// round 1 learns it, round 2 declares the variable with it, so every read and write of
    /// the variable uses one layout (the widest strings any assignment stores, as bpftrace
    /// fixes a variable's type before generating code).
    /// The kernel facts lowering will need ([`super::environment`]).
    pub gathered: super::environment::Gathered,
    pub var_types_learned: HashMap<(String, Span), Type>,
    /// `let $x;` declarations not assigned yet (warned about at the end of the probe).
    pub unassigned: std::collections::HashSet<VarSlot>,
    /// The scope a first assignment without `let` declares its variable in: the frame's
    /// outermost one (probe, function, macro body, `for` body), so, as in bpftrace before
    /// block scoping, a variable first assigned inside an `if` or a block is still there after
    /// it and both branches of an `if` share it.
    pub hoist_floor: usize,
    /// Typing the format string of printf/system/cat…: it is never a string value, so
    /// max_strlen does not bound it (as in bpftrace).
    pub format_literal: bool,
    /// `getopt` options, in order of first use.
    pub getopts: Vec<super::getopt::NamedOption>,
    /// Reported once per name per probe (args fields missing in some targets).
    pub warned: std::collections::HashSet<String>,
}

impl Checker<'_> {
    // ---- scopes ----

    pub fn declare(&mut self, name: &str, ty: Type, span: Span) -> VarSlot {
        let ty = self.learned_var_type(name, span, ty);
        let slot = VarSlot(self.vars.slots.len() as u32);
        self.vars.slots.push((name.to_string(), ty, span));
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.to_string(), slot);
        }
        slot
    }

    /// `ty` widened to what round 1 learned of the variable declared at `span` (see
    /// `var_types_learned`).
    fn learned_var_type(&self, name: &str, span: Span, ty: Type) -> Type {
        match self.var_types_learned.get(&(name.to_string(), span)) {
            Some(t) if ty.is_none() => t.clone(),
            Some(t) => ty.unify(t).unwrap_or(ty),
            None => ty,
        }
    }

    /// Records the final types of the current probe's or function's variables.
    pub fn learn_var_types(&mut self) {
        for (name, t, span) in &self.vars.slots {
            if t.is_none() {
                continue;
            }
            let e = self
                .var_types_learned
                .entry((name.clone(), *span))
                .or_insert_with(|| t.clone());
            if let Some(m) = e.unify(t) {
                *e = m;
            }
        }
    }

    /// Warns about `let` declarations never assigned to (bpftrace's warning), then forgets them.
    pub fn warn_unassigned(&mut self) {
        let mut slots: Vec<VarSlot> = self.unassigned.drain().collect();
        slots.sort_by_key(|s| s.0);
        for s in slots {
            let (name, _, span) = self.vars.slots[s.0 as usize].clone();
            self.warn(span, format!("Variable {name} never assigned to."));
        }
    }

    /// Declares a variable first assigned without `let` (see `hoist_floor`).
    pub fn declare_implicit(&mut self, name: &str, ty: Type, span: Span) -> VarSlot {
        let ty = self.learned_var_type(name, span, ty);
        let slot = VarSlot(self.vars.slots.len() as u32);
        self.vars.slots.push((name.to_string(), ty, span));
        let i = self.hoist_floor.min(self.scopes.len().saturating_sub(1));
        if let Some(s) = self.scopes.get_mut(i) {
            s.insert(name.to_string(), slot);
        }
        slot
    }

    pub fn lookup_var(&self, name: &str) -> Option<VarSlot> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    /// `block` with its own scope. `loop_body` counts loop nesting for break/continue.
    pub fn block(&mut self, b: &Block, loop_body: bool) -> Type {
        self.scopes.push(HashMap::new());
        if loop_body {
            self.loop_depth += 1;
        }
        for s in &b.stmts {
            self.stmt(s);
        }
        self.warn_unreachable(b);
        let t = match &b.tail {
            Some(e) => self.expr(e),
            None => Type::None,
        };
        if loop_body {
            self.loop_depth -= 1;
        }
        self.scopes.pop();
        t
    }

    /// bpftrace's warning for what follows `exit()` or `return` in a block (once per place).
    fn warn_unreachable(&mut self, b: &Block) {
        let ends = |s: &Stmt| match &s.kind {
            StmtKind::Return(_) => true,
            StmtKind::Expr(e) | StmtKind::Discard(e) => {
                matches!(&e.kind, ExprKind::Call { name, .. } if name.name == "exit")
            }
            _ => false,
        };
        let Some(i) = b.stmts.iter().position(ends) else {
            return;
        };
        let next = match b.stmts.get(i + 1) {
            Some(s) => s.span,
            None => match &b.tail {
                Some(t) => t.span,
                None => return,
            },
        };
        let msg = "Unreachable statement";
        if !self
            .diags
            .iter()
            .any(|d| d.span == next && d.message == msg)
        {
            self.warn(next, msg);
        }
    }

    pub(super) fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Let { var, ty, init } => {
                let declared = ty.as_ref().map(|t| self.type_ref(t));
                let init_t = init.as_ref().map(|e| {
                    let t = self.value_expr(e);
                    match ty {
                        Some(_) => t,
                        None => self.literal_storage_type(e).unwrap_or(t),
                    }
                });
                if let (Some(d), Some(i), Some(e)) = (&declared, &init_t, init) {
                    self.check_assignable(&var.name, d, i, e);
                }
                let t = declared.or(init_t).unwrap_or(Type::None);
                if self
                    .scopes
                    .last()
                    .is_some_and(|sc| sc.contains_key(&var.name))
                {
                    self.error(
                        var.span,
                        format!("Variable {} was already declared in this scope", var.name),
                    );
                }
                let slot = self.declare(&var.name, t, var.span);
                if let Some(e) = init {
                    self.note_var_space(slot, e);
                }
                if ty.is_some() {
                    // A declared type is fixed: later assignments must fit it, not widen it.
                    self.typed_vars.insert(slot);
                }
                if init.is_none() {
                    self.unassigned.insert(slot);
                }
            }
            StmtKind::Assign { target, op, value } => self.assign(target, *op, value),
            StmtKind::Expr(e) | StmtKind::Discard(e) => {
                self.expr(e);
            }
            StmtKind::While { cond, body } => {
                let t = self.expr(cond);
                if !t.is_scalar() {
                    self.error(cond.span, format!("Invalid type for loop condition: {t}"));
                }
                self.block(body, true);
            }
            StmtKind::Unroll { count, body } => {
                self.expr(count);
                match self.consts.get(&count.id) {
                    Some(n) if (1..=100).contains(n) => {}
                    // bpftrace's words.
                    Some(n) if *n > 100 => {
                        self.error(count.span, format!("unroll maximum value is 100 (got {n})"));
                    }
                    Some(n) => {
                        self.error(count.span, format!("unroll minimum value is 1 (got {n})"));
                    }
                    None => {
                        self.error(count.span, "unroll count must be an integer literal");
                    }
                }
                self.block(body, true);
            }
            StmtKind::For { var, iter, body } => {
                let t = match iter {
                    ForIter::Map(m) => {
                        let name = self.map_name(&m.name);
                        match self.maps.get(&name) {
                            Some(e) => {
                                let key = match e.keys.as_deref() {
                                    Some([k]) => k.clone(),
                                    Some(ks) => Type::Tuple(ks.to_vec()),
                                    None => Type::I64,
                                };
                                // An aggregation's value is read as its integer
                                // (count and sum summed over CPUs).
                                let value = match e.value.clone() {
                                    Some(Type::Agg(AggKind::Count)) => Type::Int {
                                        bytes: 8,
                                        signed: false,
                                    },
                                    Some(Type::Agg(
                                        AggKind::Sum { signed }
                                        | AggKind::Min { signed }
                                        | AggKind::Max { signed }
                                        | AggKind::Avg { signed }
                                        | AggKind::Stats { signed },
                                    )) => Type::Int { bytes: 8, signed },
                                    Some(t) => t,
                                    None => Type::I64,
                                };
                                Type::Tuple(vec![key, value])
                            }
                            None => {
                                self.error(m.span, format!("Undefined map: {}", m.name));
                                Type::None
                            }
                        }
                    }
                    ForIter::Range { start, end } => {
                        for e in [start, end] {
                            let t = self.expr(e);
                            if !t.is_integer() {
                                self.error(
                                    e.span,
                                    format!("Loop range requires integer bounds, got {t}"),
                                );
                            }
                        }
                        Type::I64
                    }
                };
                self.scopes.push(HashMap::new());
                self.declare(&var.name, t, var.span);
                // The body is a callback: its variables stay in the loop.
                let floor = std::mem::replace(&mut self.hoist_floor, self.scopes.len() - 1);
                self.block(body, true);
                self.hoist_floor = floor;
                self.scopes.pop();
            }
            StmtKind::Return(e) => {
                let t = e.as_ref().map(|e| self.expr(e)).unwrap_or(Type::None);
                if let Some(ret) = self.fn_ret.clone().filter(|_| !t.is_none() || e.is_none()) {
                    if ret.unify(&t).is_none() && !(ret.is_none() && t.is_none()) {
                        self.error(
                            s.span,
                            format!(
                                "Function returns '{t}', but its declared return type is '{ret}'"
                            ),
                        );
                    }
                }
            }
            StmtKind::Break | StmtKind::Continue => {
                if self.loop_depth == 0 {
                    let w = if matches!(s.kind, StmtKind::Break) {
                        "break"
                    } else {
                        "continue"
                    };
                    self.error(s.span, format!("'{w}' used outside of a loop"));
                }
            }
            StmtKind::Import(_) => {}
        }
    }

    fn assign(&mut self, target: &LValue, op: Option<BinaryOp>, value: &Expr) {
        match target {
            LValue::Var(v) => {
                let vt = self.value_expr(value);
                let vt = match op {
                    None => self.literal_storage_type(value).unwrap_or(vt),
                    Some(_) => vt,
                };
                let vt = match op {
                    Some(o) => {
                        let cur = self
                            .lookup_var(&v.name)
                            .map(|s| self.vars.slots[s.0 as usize].1.clone());
                        self.compound(o, value.span, &vt, cur.as_ref())
                    }
                    None => vt,
                };
                match self.lookup_var(&v.name) {
                    Some(slot) => {
                        if op.is_none() {
                            self.note_var_space(slot, value);
                        }
                        self.unassigned.remove(&slot);
                        let have = self.vars.slots[slot.0 as usize].1.clone();
                        if have.is_none() {
                            self.vars.slots[slot.0 as usize].1 = vt;
                        } else if let Some(m) = have.unify(&vt) {
                            if !self.typed_vars.contains(&slot) {
                                self.vars.slots[slot.0 as usize].1 = m;
                            }
                            self.check_assignable(&v.name, &have, &vt, value);
                        } else {
                            self.error(
                                value.span,
                                format!(
                                    "Type mismatch for {}: trying to assign value of type '{vt}' when variable already contains a value of type '{have}'",
                                    v.name
                                ),
                            );
                        }
                    }
                    None => {
                        if op.is_some() {
                            self.error(
                                v.span,
                                format!("Undefined or undeclared variable: {}", v.name),
                            );
                        }
                        // Usually already reported where the value failed.
                        if vt.is_none() && !self.had_error_in(value.span) {
                            self.error(
                                value.span,
                                format!("Value of type 'none' cannot be assigned to {}", v.name),
                            );
                        }
                        let slot = self.declare_implicit(&v.name, vt, v.span);
                        self.note_var_space(slot, value);
                    }
                }
            }
            LValue::Map { map, keys, span } => {
                let name = self.map_name(&map.name);
                let i = self.maps.id(&name, map.span);
                let kts: Vec<Type> = keys.iter().map(|k| self.key_expr(k)).collect();
                if let Err(m) = self.maps.use_keys(i, &kts) {
                    self.error(*span, m);
                }
                let vt = if op.is_none() {
                    self.map_value_expr(value)
                } else {
                    let t = self.value_expr(value);
                    let cur = self.maps.entries[i].value.clone();
                    self.compound(op.unwrap_or(BinaryOp::Add), value.span, &t, cur.as_ref())
                };
                if vt.is_none() {
                    // Usually already reported where the value failed.
                    self.maps.entries[i].assigned = true;
                    if !self.had_error_in(value.span) {
                        self.error(
                            value.span,
                            format!(
                                "{}: a value of type 'none' cannot be stored in a map",
                                map.name
                            ),
                        );
                    }
                    return;
                }
                if !vt.is_agg() && !vt.is_storable() {
                    self.maps.entries[i].assigned = true;
                    self.error(
                        value.span,
                        format!(
                            "{}: a value of type '{vt}' cannot be stored in a map",
                            map.name
                        ),
                    );
                    return;
                }
                if let Err(m) = self.maps.assign(i, &vt) {
                    self.error(value.span, m);
                }
            }
        }
    }

    /// A variable assigned an address marked by `kptr()`/`uptr()` keeps the mark: later reads
    /// of it (typed after this assignment, in source order) read through that space. An
    /// assignment without a mark leaves the last one, as the variable's type stays too.
    fn note_var_space(&mut self, slot: VarSlot, value: &Expr) {
        if let Some(&s) = self.addr_spaces.get(&value.id) {
            self.vars.spaces.insert(slot, s);
        }
    }

    /// The type `x op= value` stores: an integer, or `x`'s pointer type for `+=`/`-=` on a
    /// pointer (pointer arithmetic, as `p = p + n`).
    fn compound(&mut self, op: BinaryOp, span: Span, t: &Type, cur: Option<&Type>) -> Type {
        if let Some(p) = cur.filter(|c| c.is_pointer()) {
            if matches!(op, BinaryOp::Add | BinaryOp::Sub) && t.is_integer() {
                return p.clone();
            }
        }
        if !t.is_integer() {
            self.error(
                span,
                format!(
                    "Operator '{}=' requires an integer operand, got {t}",
                    op.symbol()
                ),
            );
        }
        Type::I64
    }

    /// Whether an integer literal fits a declared type (`let $x: uint8 = 300`).
    fn check_assignable(&mut self, name: &str, have: &Type, value: &Type, e: &Expr) {
        if let (Type::Int { bytes, signed }, Some(&v)) = (have, self.consts.get(&e.id)) {
            let bits = *bytes as u32 * 8;
            let fits = if *signed {
                bits >= 64 || (v >= -(1i64 << (bits - 1)) && v < (1i64 << (bits - 1)))
            } else {
                v >= 0 && (bits >= 64 || (v as u64) < (1u64 << bits))
            };
            if !fits {
                self.error(
                    e.span,
                    format!("Integer {v} does not fit in {name} of type '{have}'"),
                );
                return;
            }
        }
        if have.unify(value).is_none() {
            self.error(
                e.span,
                format!("Type mismatch for {name}: trying to assign value of type '{value}' when variable already has type '{have}'"),
            );
        }
    }

    /// Resolves a map name through macro map parameters.
    pub fn map_name(&self, name: &str) -> String {
        for f in self.frames.iter().rev() {
            if let Some(n) = f.maps.get(name) {
                return n.clone();
            }
        }
        name.to_string()
    }
}
