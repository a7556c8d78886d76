//! Integer arithmetic, comparisons and casts, with constant folding.
//!
//! Semantics (the generated code and [`fold`] agree exactly; both are what bpftrace does):
//! - operands are normalized to the operation's type; the operation runs on 64 bits and the
//!   result is normalized back, so every width wraps like C's fixed-width types;
//! - shift amounts are taken modulo 64 (the ISA's rule); `>>` is arithmetic for signed types;
//! - division and modulo by zero give 0 (bpftrace 0.17, checked against the installed
//!   binary: `7 / $z` and `7 % $z` print 0; the ISA alone would give `x % 0 = x`); signed
//!   division truncates toward zero and `MIN / -1` wraps to `MIN`, the remainder takes the
//!   dividend's sign. Signed division is built from unsigned division so it needs no ISA v4,
//!   unless the builder says the kernel takes `sdiv`/`smod` ([`Builder::signed_division`]).

use super::{IntTy, Value};
use crate::asm::isa::{AluOp, JmpOp};
use crate::codegen::builder::{Builder, Label, Src, VReg};

/// A binary arithmetic or bitwise operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    And,
    Or,
    Xor,
    Shl,
    Shr,
}

/// A comparison operator.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum CmpOp {
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
}

impl CmpOp {
    /// The jump that is taken when the comparison holds.
    pub fn jmp(self, signed: bool) -> JmpOp {
        match (self, signed) {
            (CmpOp::Eq, _) => JmpOp::Jeq,
            (CmpOp::Ne, _) => JmpOp::Jne,
            (CmpOp::Lt, false) => JmpOp::Jlt,
            (CmpOp::Le, false) => JmpOp::Jle,
            (CmpOp::Gt, false) => JmpOp::Jgt,
            (CmpOp::Ge, false) => JmpOp::Jge,
            (CmpOp::Lt, true) => JmpOp::Jslt,
            (CmpOp::Le, true) => JmpOp::Jsle,
            (CmpOp::Gt, true) => JmpOp::Jsgt,
            (CmpOp::Ge, true) => JmpOp::Jsge,
        }
    }

    /// The operator with its operands swapped (`a < b` ⇔ `b > a`).
    pub fn swapped(self) -> CmpOp {
        match self {
            CmpOp::Lt => CmpOp::Gt,
            CmpOp::Le => CmpOp::Ge,
            CmpOp::Gt => CmpOp::Lt,
            CmpOp::Ge => CmpOp::Le,
            other => other,
        }
    }

    /// The negated operator (`!(a < b)` ⇔ `a >= b`).
    pub fn negated(self) -> CmpOp {
        match self {
            CmpOp::Eq => CmpOp::Ne,
            CmpOp::Ne => CmpOp::Eq,
            CmpOp::Lt => CmpOp::Ge,
            CmpOp::Le => CmpOp::Gt,
            CmpOp::Gt => CmpOp::Le,
            CmpOp::Ge => CmpOp::Lt,
        }
    }

    /// Compile-time evaluation on normalized values.
    pub fn eval(self, a: i64, b: i64, signed: bool) -> bool {
        let (x, y) = if signed {
            (a as i128, b as i128)
        } else {
            (a as u64 as i128, b as u64 as i128)
        };
        match self {
            CmpOp::Eq => x == y,
            CmpOp::Ne => x != y,
            CmpOp::Lt => x < y,
            CmpOp::Le => x <= y,
            CmpOp::Gt => x > y,
            CmpOp::Ge => x >= y,
        }
    }
}

/// Compile-time evaluation of `a op b` at type `ty` (see the module documentation).
pub fn fold(op: BinOp, a: i64, b: i64, ty: IntTy) -> i64 {
    let (a, b) = (ty.normalize(a), ty.normalize(b));
    let r = match op {
        BinOp::Add => a.wrapping_add(b),
        BinOp::Sub => a.wrapping_sub(b),
        BinOp::Mul => a.wrapping_mul(b),
        BinOp::And => a & b,
        BinOp::Or => a | b,
        BinOp::Xor => a ^ b,
        BinOp::Shl => a.wrapping_shl((b & 63) as u32),
        BinOp::Shr if ty.signed => a >> (b & 63),
        BinOp::Shr => ((a as u64) >> (b & 63)) as i64,
        BinOp::Div | BinOp::Mod if b == 0 => 0,
        BinOp::Div if ty.signed => a.wrapping_div(b),
        BinOp::Mod if ty.signed => a.wrapping_rem(b),
        BinOp::Div => ((a as u64) / (b as u64)) as i64,
        BinOp::Mod => ((a as u64) % (b as u64)) as i64,
    };
    ty.normalize(r)
}

/// Normalizes register `r` in place to `ty` (no code for 64-bit types).
pub fn normalize(b: &mut Builder, r: VReg, ty: IntTy) {
    match (ty.bits, ty.signed) {
        (64.., _) => {}
        (32, false) => b.mov32(r, r),
        (bits, false) => b.alu(true, AluOp::And, r, ((1u32 << bits) - 1) as i32),
        (bits, true) => {
            let sh = 64 - bits as i32;
            b.alu(true, AluOp::Lsh, r, sh);
            b.alu(true, AluOp::Arsh, r, sh);
        }
    }
}

/// `lhs op rhs` at type `ty`; operands must already be normalized to `ty`.
pub fn binop(b: &mut Builder, op: BinOp, lhs: Value, rhs: Value, ty: IntTy) -> Value {
    if let (Value::Imm(x), Value::Imm(y)) = (lhs, rhs) {
        return Value::Imm(fold(op, x, y, ty));
    }
    // Cheap identities that need no code.
    match (op, rhs) {
        (
            BinOp::Add | BinOp::Sub | BinOp::Or | BinOp::Xor | BinOp::Shl | BinOp::Shr,
            Value::Imm(0),
        )
        | (BinOp::Mul | BinOp::Div, Value::Imm(1)) => return lhs,
        _ => {}
    }
    let r = lhs.fresh(b);
    let alu = |b: &mut Builder, aop: AluOp, r: VReg, rhs: Value| {
        let s = rhs.src(b);
        b.alu(true, aop, r, s);
    };
    match op {
        BinOp::Add => alu(b, AluOp::Add, r, rhs),
        BinOp::Sub => alu(b, AluOp::Sub, r, rhs),
        BinOp::Mul => alu(b, AluOp::Mul, r, rhs),
        BinOp::And => alu(b, AluOp::And, r, rhs),
        BinOp::Or => alu(b, AluOp::Or, r, rhs),
        BinOp::Xor => alu(b, AluOp::Xor, r, rhs),
        BinOp::Shl | BinOp::Shr => {
            let aop = match (op, ty.signed) {
                (BinOp::Shl, _) => AluOp::Lsh,
                (_, true) => AluOp::Arsh,
                _ => AluOp::Rsh,
            };
            match rhs {
                Value::Imm(n) => b.alu(true, aop, r, (n & 63) as i32),
                Value::Reg(s) => {
                    // The kernel masks the amount, but the verifier wants it proven < 64.
                    let amt = b.copy(s);
                    b.alu(true, AluOp::And, amt, 63);
                    b.alu(true, aop, r, amt);
                }
            }
        }
        BinOp::Div | BinOp::Mod if !ty.signed => native_divmod(b, op, false, r, rhs),
        BinOp::Div | BinOp::Mod if b.signed_division => native_divmod(b, op, true, r, rhs),
        BinOp::Div | BinOp::Mod => signed_divmod(b, op, r, rhs),
    }
    normalize(b, r, ty);
    Value::Reg(r)
}

/// `r = r / rhs` or `r % rhs` with one ALU instruction, 0 when rhs is 0: unsigned, or signed
/// with ISA v4 `sdiv`/`smod` (kernel 6.6+). The ISA already gives `x / 0 = 0` (and for the
/// signed forms `MIN s/ -1 = MIN`, `MIN s% -1 = 0`; Documentation/bpf/standardization/
/// instruction-set.rst); only `x % 0`, which the ISA leaves as `x`, needs a check to give
/// bpftrace's 0.
fn native_divmod(b: &mut Builder, op: BinOp, signed: bool, r: VReg, rhs: Value) {
    let aop = match (op == BinOp::Div, signed) {
        (true, false) => AluOp::Div,
        (false, false) => AluOp::Mod,
        (true, true) => AluOp::Sdiv,
        (false, true) => AluOp::Smod,
    };
    match rhs {
        Value::Imm(0) => b.mov(r, 0),
        Value::Imm(_) => {
            let s = rhs.src(b);
            b.alu(true, aop, r, s);
        }
        Value::Reg(d) if op == BinOp::Div => b.alu(true, aop, r, d),
        Value::Reg(d) => {
            let done = b.label();
            let nonzero = b.label();
            b.jmp64(JmpOp::Jne, d, 0, nonzero);
            b.mov(r, 0);
            b.ja(done);
            b.bind(nonzero);
            b.alu(true, aop, r, d);
            b.bind(done);
        }
    }
}

/// Signed `r / rhs` or `r % rhs` from unsigned operations on magnitudes.
fn signed_divmod(b: &mut Builder, op: BinOp, r: VReg, rhs: Value) {
    if rhs == Value::Imm(0) {
        b.mov(r, 0);
        return;
    }
    let done = b.label();
    let d = rhs.reg(b);
    if rhs.imm().is_none() {
        let nonzero = b.label();
        b.jmp64(JmpOp::Jne, d, 0, nonzero);
        b.mov(r, 0);
        b.ja(done);
        b.bind(nonzero);
    }
    let abs = |b: &mut Builder, v: VReg| -> VReg {
        let a = b.copy(v);
        let pos = b.label();
        b.jmp64(JmpOp::Jsge, a, 0, pos);
        b.neg(a);
        b.bind(pos);
        a
    };
    let ua = abs(b, r);
    let ub = abs(b, d);
    let aop = if op == BinOp::Div {
        AluOp::Div
    } else {
        AluOp::Mod
    };
    b.alu(true, aop, ua, ub);
    // Quotient: negative when the signs differ; remainder: the dividend's sign.
    let sign = b.copy(r);
    if op == BinOp::Div {
        b.alu(true, AluOp::Xor, sign, d);
    }
    let keep = b.label();
    b.jmp64(JmpOp::Jsge, sign, 0, keep);
    b.neg(ua);
    b.bind(keep);
    b.mov(r, ua);
    b.bind(done);
}

/// `-v`, `~v` at type `ty`.
pub fn neg(b: &mut Builder, v: Value, ty: IntTy) -> Value {
    match v {
        Value::Imm(x) => Value::Imm(ty.normalize(x.wrapping_neg())),
        Value::Reg(_) => {
            let r = v.fresh(b);
            b.neg(r);
            normalize(b, r, ty);
            Value::Reg(r)
        }
    }
}

pub fn bit_not(b: &mut Builder, v: Value, ty: IntTy) -> Value {
    match v {
        Value::Imm(x) => Value::Imm(ty.normalize(!x)),
        Value::Reg(_) => {
            let r = v.fresh(b);
            b.alu(true, AluOp::Xor, r, -1);
            normalize(b, r, ty);
            Value::Reg(r)
        }
    }
}

/// `!v`: 1 when `v` is 0, else 0.
pub fn logical_not(b: &mut Builder, v: Value) -> Value {
    compare(b, CmpOp::Eq, v, Value::Imm(0), false)
}

/// Jumps to `target` when `lhs op rhs` holds (operands normalized, compared on 64 bits).
pub fn jump_if(b: &mut Builder, op: CmpOp, signed: bool, lhs: Value, rhs: Value, target: Label) {
    match (lhs, rhs) {
        (Value::Imm(x), Value::Imm(y)) => {
            if op.eval(x, y, signed) {
                b.ja(target);
            }
        }
        (Value::Imm(_), Value::Reg(r)) => {
            let s = lhs.src(b);
            match s {
                Src::Imm(_) => b.jmp64(op.swapped().jmp(signed), r, s, target),
                Src::Reg(l) => b.jmp64(op.jmp(signed), l, r, target),
            }
        }
        (Value::Reg(l), _) => {
            let s = rhs.src(b);
            b.jmp64(op.jmp(signed), l, s, target);
        }
    }
}

/// `lhs op rhs` as 0 or 1.
pub fn compare(b: &mut Builder, op: CmpOp, lhs: Value, rhs: Value, signed: bool) -> Value {
    if let (Value::Imm(x), Value::Imm(y)) = (lhs, rhs) {
        return Value::Imm(op.eval(x, y, signed) as i64);
    }
    let r = b.constant(1);
    let yes = b.label();
    jump_if(b, op, signed, lhs, rhs, yes);
    b.mov(r, 0);
    b.bind(yes);
    b.last_compare = Some((r, b.insts.len()));
    Value::Reg(r)
}

/// `(to)v` for a value normalized to `from`: truncation or sign/zero extension as C does.
pub fn cast(b: &mut Builder, v: Value, from: IntTy, to: IntTy) -> Value {
    if let Value::Imm(x) = v {
        return Value::Imm(to.normalize(x));
    }
    // Widening keeps the normalized bits when the source is unsigned or the target signed,
    // or when the target is 64 bits wide (sign-extended bits are what C gives).
    let same = from == to || (to.bits > from.bits && (!from.signed || to.signed)) || to.bits == 64;
    if same {
        return v;
    }
    let r = v.fresh(b);
    normalize(b, r, to);
    Value::Reg(r)
}
