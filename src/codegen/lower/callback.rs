//! Loop bodies as callbacks: a subprogram the kernel calls once per element or iteration
//! (`bpf_for_each_map_elem`, `bpf_loop`), which reads and writes the probe's variables
//! through a context struct on the caller's stack.
//!
//! The context struct: word 0 is a flag the callback sets to leave the probe (`exit()`,
//! `return`), word 1 the program's context pointer (for helpers that need it), then one word
//! per captured variable holding the address of its place (a stack address of the caller's
//! frame, which the verifier follows into the callee: kernel 5.13+), then the caller's extra
//! words (a range's start). Captured variables are the enclosing variables the body names;
//! their slots are kept in use until the call returns ([`Op::KeepAlive`](crate::codegen)),
//! because their addresses live in memory the stack allocator does not look into.
//!
//! In the callback: `break` returns 1 (stop), `continue` and the body's end return 0, and a
//! probe exit sets the flag and returns 1; after the helper call the caller tests the flag and
//! goes to its own exit (which, in a nested callback, sets the next flag out).
//! Variables the body declares live in the callback's frame ([`Lower::lazy_vars`]).

use std::collections::{BTreeSet, HashMap};

use super::{Lower, LowerError};
use crate::asm::isa::{JmpOp, Size};
use crate::codegen::emit::control::LoopLabels;
use crate::codegen::emit::{Base, Place};
use crate::codegen::{Builder, Mem, Slot, VReg};
use crate::sema::VarSlot;
use crate::syntax::ast::{Block, Expr, ExprKind, LValue, Stmt, StmtKind};
use crate::syntax::visit::{walk_expr, walk_stmt, Visitor};

/// Word offsets in the context struct.
const FLAG: i32 = 0;
const CTX: i32 = 8;
const FIRST_CAPTURE: i32 = 16;
/// Flag values: the body left the probe (`exit()`, `return` in a probe) or returned from
/// the inlined fn around the loop.
const EXITED: i32 = 1;
const RETURNED: i32 = 2;

/// A callback ready to be called: its subprogram index and the caller's context struct.
pub(crate) struct Callback {
    pub func: usize,
    pub ctx: Slot,
    /// The body may `return` from the inlined fn around the loop.
    pub fn_return: bool,
    /// Slots whose addresses the context struct holds (itself included): in use until
    /// the helper call returns.
    keep: Vec<Slot>,
    /// Variables kept in the scratch map during the call: (variable, region, bytes).
    copies: Vec<(Place, Place, u32)>,
}

/// What the callback's prologue gets: its parameters and the context struct pointer.
pub(crate) struct Entry {
    pub params: Vec<VReg>,
    pub ctx: VReg,
    /// Where the caller's extra words start in the context struct.
    pub extra: i32,
}

/// Builds a callback with `nparams` parameters (the context struct pointer is parameter
/// `ctx_param`, 0-based) around `body`. `extra` words the caller fills (`fill_extra`, run in
/// the caller's frame with the struct's slot and the offset of the first extra word) follow
/// the captures. `prologue` runs first in the callback (filling the loop variable `own`,
/// which lives in the callback's frame, not captured).
#[allow(clippy::too_many_arguments)]
pub(crate) fn build(
    lw: &mut Lower<'_>,
    nparams: u8,
    ctx_param: usize,
    extra: u32,
    own: Option<VarSlot>,
    body: &Block,
    fill_extra: impl FnOnce(&mut Lower<'_>, Slot, i32) -> Result<(), LowerError>,
    prologue: impl FnOnce(&mut Lower<'_>, &Entry) -> Result<(), LowerError>,
) -> Result<Callback, LowerError> {
    // `return` in the body of an inlined fn: the callback writes the result through a
    // pointer and sets the flag to RETURNED; the caller then goes to the fn's end.
    let fn_ret = lw.fn_ret.clone().filter(|_| first_return(body).is_some());
    if let (Some(r), Some(span)) = (&fn_ret, first_return(body)) {
        if r.in_register() {
            return Err(LowerError::unsupported(
                "`return` inside a loop of a fn",
                span,
            ));
        }
    }
    let result = fn_ret.as_ref().and_then(|r| r.result_place());
    // Captures, in the caller.
    let mut captured: Vec<(VarSlot, Place)> = Vec::new();
    let mut copies: Vec<(Place, Place, u32)> = Vec::new();
    let written = written_names(body);
    for slot in super::inline::named_slots(lw, body) {
        if Some(slot) == own || captured.iter().any(|(s, _)| *s == slot) {
            continue;
        }
        let Some(p) = super::stmt::var_place(lw, slot) else {
            continue;
        };
        let t = lw.var_type(slot);
        let is_written = written.iter().any(|n| lw.scopes.lookup(n) == Some(slot));
        match (is_written && plain_data(&t)).then(|| {
            let size = (super::maps::slot_field(&t).size() as u32)
                .max(8)
                .next_multiple_of(8);
            (size, lw.scratch(size, body_span(body, lw)))
        }) {
            // A variable the body writes is kept in the scratch map during the loop: the
            // verifier tracks values on the stack exactly, so a counter there (`$n++; if ($n
            // == 2) { break; }`) differs at every call of the callback and its states never
            // converge (kernels 6.7+ verify a callback as called any number of times), while
            // a map value's contents are unknown to it. Copied in before the call and back
            // after it ([`after_call`]).
            Some((size, Ok(region))) => {
                super::store::copy(lw, region, p, size);
                copies.push((p, region, size));
                captured.push((slot, region));
            }
            _ => captured.push((slot, p)),
        }
    }
    // The result's place travels as one more capture.
    let result_word = FIRST_CAPTURE + 8 * captured.len() as i32;
    let ncaptures = captured.len() + result.is_some() as usize;
    let extra_off = FIRST_CAPTURE + 8 * ncaptures as i32;
    // The callback.
    let (cb, params) = Builder::subprog(nparams);
    let mut saved = Saved {
        b: std::mem::replace(&mut lw.b, cb),
        vars: std::mem::take(&mut lw.vars),
        loops: std::mem::take(&mut lw.loops),
        exit: lw.exit,
        lazy: lw.lazy_vars,
        fn_ret: lw.fn_ret.take(),
    };
    let r = lower_body(
        lw,
        &params,
        ctx_param,
        &captured,
        extra_off,
        body,
        prologue,
        saved.b.span(),
        fn_ret
            .as_ref()
            .map(|r| (r, result.map(|p| (result_word, p.off)))),
    );
    let cb = std::mem::replace(&mut lw.b, std::mem::take(&mut saved.b));
    lw.vars = saved.vars;
    lw.loops = saved.loops;
    lw.exit = saved.exit;
    lw.lazy_vars = saved.lazy;
    lw.fn_ret = saved.fn_ret;
    let uses_ctx = r?;
    lw.subprogs.push(cb);
    // The context struct, filled in the caller now that the callback says what it reads.
    let words = 2 + ncaptures as u32 + extra;
    let cslot = lw.b.slot(8 * words, 8);
    let mut keep = vec![cslot];
    lw.b.store(Size::Dw, cslot, FLAG, 0);
    if uses_ctx {
        let pctx = lw.b.ctx();
        lw.b.store(Size::Dw, cslot, CTX, pctx);
    }
    for (i, (_, p)) in captured.iter().enumerate() {
        keep.extend(store_address(lw, cslot, FIRST_CAPTURE + 8 * i as i32, *p));
    }
    if let Some(p) = result {
        keep.extend(store_address(lw, cslot, result_word, p));
    }
    fill_extra(lw, cslot, extra_off)?;

    Ok(Callback {
        func: lw.subprogs.len() - 1,
        ctx: cslot,
        fn_return: fn_ret.is_some(),
        keep,
        copies,
    })
}

/// Values the scratch map may hold: data only, never an address the verifier tracks (a
/// stack or map pointer stored in a map value is refused as a leak).
fn plain_data(t: &crate::sema::Type) -> bool {
    use crate::sema::Type as T;
    match t {
        T::Int { .. } | T::Bool | T::Enum { .. } | T::Str { .. } | T::Buf { .. } => true,
        T::Tuple(ts) => ts.iter().all(plain_data),
        T::Record(fs) => fs.iter().all(|(_, t)| plain_data(t)),
        T::Array { elem, .. } => plain_data(elem),
        _ => false,
    }
}

/// The span for a scratch-buffer refusal: the body's first statement, else the caller's.
fn body_span(body: &Block, lw: &Lower<'_>) -> crate::diag::Span {
    body.stmts.first().map_or(lw.b.span(), |s| s.span)
}

/// Every `$name` the block assigns (`=`, compound assignments, `++`/`--`).
fn written_names(b: &Block) -> BTreeSet<String> {
    struct Writes(BTreeSet<String>);
    impl Visitor for Writes {
        fn visit_stmt(&mut self, s: &Stmt) {
            if let StmtKind::Assign {
                target: LValue::Var(v),
                ..
            } = &s.kind
            {
                self.0.insert(v.name.clone());
            }
            walk_stmt(self, s)
        }
        fn visit_expr(&mut self, e: &Expr) {
            if let ExprKind::Unary { op, expr } = &e.kind {
                use crate::syntax::ast::UnaryOp as U;
                if let (U::PreInc | U::PreDec | U::PostInc | U::PostDec, ExprKind::Var(n)) =
                    (op, &expr.kind)
                {
                    self.0.insert(n.clone());
                }
            }
            walk_expr(self, e)
        }
    }
    let mut w = Writes(BTreeSet::new());
    w.visit_block(b);
    w.0
}

/// Stores the address of `p`'s base (not counting `p.off`) at `off` of the context struct;
/// returns the stack slot whose address escaped.
fn store_address(lw: &mut Lower<'_>, cslot: Slot, off: i32, p: Place) -> Option<Slot> {
    match p.base {
        Base::Slot(s) => {
            let a = lw.b.vreg();
            lw.b.slot_addr(a, s, 0);
            lw.b.store(Size::Dw, cslot, off, a);
            Some(s)
        }
        Base::Ptr(r) => {
            lw.b.store(Size::Dw, cslot, off, r);
            None
        }
    }
}

/// The callback's code: entry loads, the prologue, the body, the three ways out.
#[allow(clippy::too_many_arguments)]
fn lower_body(
    lw: &mut Lower<'_>,
    params: &[VReg],
    ctx_param: usize,
    captured: &[(VarSlot, Place)],
    extra_off: i32,
    body: &Block,
    prologue: impl FnOnce(&mut Lower<'_>, &Entry) -> Result<(), LowerError>,
    span: crate::diag::Span,
    fn_ret: Option<(&super::inline::FnReturn, Option<(i32, i32)>)>,
) -> Result<bool, LowerError> {
    lw.b.set_span(span);
    lw.lazy_vars = true;
    let ctxp = params[ctx_param];
    let pc = lw.b.vreg();
    lw.b.load(Size::Dw, pc, ctxp, CTX);
    lw.b.set_ctx(pc);
    for (i, (slot, p)) in captured.iter().enumerate() {
        let r = lw.b.vreg();
        lw.b.load(Size::Dw, r, Mem::Reg(ctxp), FIRST_CAPTURE + 8 * i as i32);
        lw.vars.insert(*slot, Place::ptr(r, p.off));
    }
    let stop = lw.b.label();
    let next = lw.b.label();
    let quit = lw.b.label();
    let returned = lw.b.label();
    lw.exit = quit;
    if let Some((r, word)) = fn_ret {
        let place = word.map(|(word, off)| {
            let p = lw.b.vreg();
            lw.b.load(Size::Dw, p, Mem::Reg(ctxp), word);
            Place::ptr(p, off)
        });
        lw.fn_ret = Some(r.in_callback(returned, place));
    }
    lw.loops = vec![LoopLabels { exit: stop, next }];
    prologue(
        lw,
        &Entry {
            params: params.to_vec(),
            ctx: ctxp,
            extra: extra_off,
        },
    )?;
    super::stmt::lower_block(lw, body)?;
    lw.b.bind(next);
    lw.b.exit(0);
    lw.b.bind(stop);
    lw.b.exit(1);
    lw.b.bind(quit);
    lw.b.store(Size::Dw, ctxp, FLAG, EXITED);
    lw.b.exit(1);
    lw.b.bind(returned);
    lw.b.store(Size::Dw, ctxp, FLAG, RETURNED);
    lw.b.exit(1);
    // The program's context pointer is loaded for helpers that need it; most bodies do not.
    Ok(!lw.b.remove_if_unused(pc))
}

/// After the helper call: leave the probe when the callback asked to.
pub(crate) fn after_call(lw: &mut Lower<'_>, cb: &Callback) {
    for &(var, region, size) in &cb.copies {
        super::store::copy(lw, var, region, size);
    }
    let flag = lw.b.vreg();
    lw.b.load(Size::Dw, flag, cb.ctx, FLAG);
    for &s in &cb.keep {
        lw.b.keep_alive(s);
    }
    if cb.fn_return {
        if let Some(end) = lw.fn_ret.as_ref().map(|r| r.end()) {
            lw.b.jmp64(JmpOp::Jeq, flag, RETURNED, end);
        }
    }
    let exit = lw.exit;
    lw.b.jmp64(JmpOp::Jne, flag, 0, exit);
}

struct Saved {
    b: Builder,
    vars: HashMap<VarSlot, Place>,
    loops: Vec<LoopLabels>,
    exit: crate::codegen::Label,
    lazy: bool,
    fn_ret: Option<super::inline::FnReturn>,
}

/// Whether a `return` in `b` sits inside a `for` loop (and so runs in a callback).
pub(crate) fn returns_from_loop(b: &Block) -> bool {
    struct Finder(bool);
    impl Visitor for Finder {
        fn visit_stmt(&mut self, s: &Stmt) {
            if let StmtKind::For { body, .. } = &s.kind {
                self.0 |= first_return(body).is_some();
            }
            walk_stmt(self, s)
        }
    }
    let mut f = Finder(false);
    f.visit_block(b);
    f.0
}

/// The span of the first `return` in `b`.
fn first_return(b: &Block) -> Option<crate::diag::Span> {
    struct Finder(Option<crate::diag::Span>);
    impl Visitor for Finder {
        fn visit_stmt(&mut self, s: &Stmt) {
            if matches!(s.kind, StmtKind::Return(_)) && self.0.is_none() {
                self.0 = Some(s.span);
            }
            walk_stmt(self, s)
        }
    }
    let mut f = Finder(None);
    f.visit_block(b);
    f.0
}

/// Every `$name` a block mentions (reads, declarations, assignments, macro arguments) into
/// `out`, and every bare name into `idents`.
pub(crate) fn block_vars(b: &Block, out: &mut BTreeSet<String>, idents: &mut BTreeSet<String>) {
    let mut n = Names(out, idents);
    n.visit_block(b);
}

/// [`block_vars`] of an expression.
pub(crate) fn expr_vars(e: &Expr, out: &mut BTreeSet<String>, idents: &mut BTreeSet<String>) {
    let mut n = Names(out, idents);
    n.visit_expr(e);
}

struct Names<'o>(&'o mut BTreeSet<String>, &'o mut BTreeSet<String>);

impl Visitor for Names<'_> {
    fn visit_stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Let { var, .. } => {
                self.0.insert(var.name.clone());
            }
            StmtKind::Assign {
                target: LValue::Var(v),
                ..
            } => {
                self.0.insert(v.name.clone());
            }
            _ => {}
        }
        walk_stmt(self, s)
    }
    fn visit_expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Var(n) => {
                self.0.insert(n.clone());
            }
            ExprKind::Ident(n) => {
                self.1.insert(n.clone());
            }
            _ => {}
        }
        walk_expr(self, e)
    }
}
