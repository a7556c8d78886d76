//! Control flow: `if`/`else`, short-circuit `&&`/`||`, the ternary operator, bounded `while`
//! loops and `unroll`.
//!
//! Input: closures that emit the pieces (conditions return a [`Value`]; a non-zero value is
//! true). Output: the control flow around them; value-producing forms return a register that
//! every path writes. A `while` loop carries an explicit iteration bound so the kernel's
//! verifier (bounded loops, 5.3+) can always prove termination, whatever the condition is.

use super::arith::{jump_if, CmpOp};
use super::Value;
use crate::asm::isa::{AluOp, JmpOp};
use crate::codegen::builder::{Builder, Label, Op, Src};

/// Jumps to `target` when `v` is zero (false).
pub fn jump_if_false(b: &mut Builder, v: Value, target: Label) {
    jump_if(b, CmpOp::Eq, false, v, Value::Imm(0), target);
}

/// Jumps to `target` when `v` is non-zero (true).
pub fn jump_if_true(b: &mut Builder, v: Value, target: Label) {
    jump_if(b, CmpOp::Ne, false, v, Value::Imm(0), target);
}

/// Jumps to `target` when `v` is non-zero (`when: true`) or zero (`when: false`), consuming
/// `v`: the caller never reads it again. When `v` is the comparison `arith::compare` just
/// materialized (`v = 1; if a OP b goto yes; v = 0; yes:`, still the program's tail), that
/// sequence is replaced by the one jump `if a OP b goto target` (or its negation), which
/// saves three instructions and a taken branch on every predicate and `if`.
pub fn branch_if(b: &mut Builder, v: Value, when: bool, target: Label) {
    if let Value::Reg(r) = v {
        let n = b.insts.len();
        if b.last_compare == Some((r, n)) && n >= 4 {
            let set = |i: &crate::codegen::builder::Inst, v: i32| {
                matches!(i.op, Op::Alu { wide: true, op: AluOp::Mov, dst, src: Src::Imm(x) }
                    if dst == r && x == v)
            };
            let tail = &b.insts[n - 4..];
            let shape = match (&tail[1].op, &tail[3].op) {
                (Op::Jmp { target, .. }, Op::Bind(l)) => target == l,
                _ => false,
            };
            if let (
                true,
                Op::Jmp {
                    wide,
                    op,
                    a,
                    b: src,
                    ..
                },
            ) = (
                shape && set(&tail[0], 1) && set(&tail[2], 0),
                tail[1].op.clone(),
            ) {
                let op = if when { Some(op) } else { op.negate() };
                if let Some(op) = op {
                    b.insts.truncate(n - 4);
                    b.last_compare = None;
                    b.jmp(wide, op, a, src, target);
                    return;
                }
            }
        }
    }
    if when {
        jump_if_true(b, v, target);
    } else {
        jump_if_false(b, v, target);
    }
}

/// `if cond { then }`.
pub fn if_then(b: &mut Builder, cond: Value, then: impl FnOnce(&mut Builder)) {
    if let Value::Imm(c) = cond {
        if c != 0 {
            then(b);
        }
        return;
    }
    let end = b.label();
    jump_if_false(b, cond, end);
    then(b);
    b.bind(end);
}

/// `if cond { then } else { otherwise }`.
pub fn if_else(
    b: &mut Builder,
    cond: Value,
    then: impl FnOnce(&mut Builder),
    otherwise: impl FnOnce(&mut Builder),
) {
    if let Value::Imm(c) = cond {
        if c != 0 {
            then(b);
        } else {
            otherwise(b);
        }
        return;
    }
    let else_l = b.label();
    let end = b.label();
    jump_if_false(b, cond, else_l);
    then(b);
    b.ja(end);
    b.bind(else_l);
    otherwise(b);
    b.bind(end);
}

/// `lhs && rhs` as 0/1; `rhs` is only evaluated when `lhs` is true.
pub fn and(
    b: &mut Builder,
    lhs: impl FnOnce(&mut Builder) -> Value,
    rhs: impl FnOnce(&mut Builder) -> Value,
) -> Value {
    short_circuit(b, true, lhs, rhs)
}

/// `lhs || rhs` as 0/1; `rhs` is only evaluated when `lhs` is false.
pub fn or(
    b: &mut Builder,
    lhs: impl FnOnce(&mut Builder) -> Value,
    rhs: impl FnOnce(&mut Builder) -> Value,
) -> Value {
    short_circuit(b, false, lhs, rhs)
}

fn short_circuit(
    b: &mut Builder,
    is_and: bool,
    lhs: impl FnOnce(&mut Builder) -> Value,
    rhs: impl FnOnce(&mut Builder) -> Value,
) -> Value {
    let l = lhs(b);
    if let Value::Imm(x) = l {
        // Decided by the left side, or the result is the right side's truth.
        if (x != 0) != is_and {
            return Value::Imm(!is_and as i64);
        }
        let r = rhs(b);
        return super::arith::compare(b, CmpOp::Ne, r, Value::Imm(0), false);
    }
    // The short-circuit result is `!is_and` (0 for &&, 1 for ||).
    let out = b.constant(!is_and as i64);
    let done = b.label();
    if is_and {
        jump_if_false(b, l, done);
    } else {
        jump_if_true(b, l, done);
    }
    let r = rhs(b);
    if is_and {
        jump_if_false(b, r, done);
    } else {
        jump_if_true(b, r, done);
    }
    b.mov(out, is_and as i32);
    b.bind(done);
    Value::Reg(out)
}

/// `cond ? then : otherwise`; only the chosen side is evaluated.
pub fn ternary(
    b: &mut Builder,
    cond: Value,
    then: impl FnOnce(&mut Builder) -> Value,
    otherwise: impl FnOnce(&mut Builder) -> Value,
) -> Value {
    if let Value::Imm(c) = cond {
        return if c != 0 { then(b) } else { otherwise(b) };
    }
    let out = b.vreg();
    let else_l = b.label();
    let end = b.label();
    jump_if_false(b, cond, else_l);
    let t = then(b);
    let s = t.src(b);
    b.mov(out, s);
    b.ja(end);
    b.bind(else_l);
    let e = otherwise(b);
    let s = e.src(b);
    b.mov(out, s);
    b.bind(end);
    Value::Reg(out)
}

/// Labels a loop body may jump to.
#[derive(Clone, Copy, Debug)]
pub struct LoopLabels {
    /// `break`: leaves the loop.
    pub exit: Label,
    /// `continue`: goes to the next iteration (condition and bound check).
    pub next: Label,
}

/// `while cond { body }`, running `body` at most `max_iters` times.
pub fn while_loop(
    b: &mut Builder,
    max_iters: u32,
    mut cond: impl FnMut(&mut Builder) -> Value,
    mut body: impl FnMut(&mut Builder, LoopLabels),
) {
    let i = b.constant(0);
    let head = b.label();
    let next = b.label();
    let exit = b.label();
    b.bind(head);
    b.jmp64(JmpOp::Jge, i, max_iters.min(i32::MAX as u32) as i32, exit);
    let c = cond(b);
    jump_if_false(b, c, exit);
    body(b, LoopLabels { exit, next });
    b.bind(next);
    b.alu(true, AluOp::Add, i, 1);
    b.ja(head);
    b.bind(exit);
}

/// `unroll (n) { body }`: the body emitted `n` times (the iteration number is passed).
pub fn unroll(b: &mut Builder, n: u32, mut body: impl FnMut(&mut Builder, u32)) {
    for k in 0..n {
        body(b, k);
    }
}
