//! Integer semantics of generated code, checked in the kernel: every binary operator at every
//! width and signedness (register and immediate right-hand sides), comparisons, casts, unary
//! operators, and constant folding — each against Rust's own fixed-width arithmetic.

use crate::codegen_support;

use codegen_support::{available, reference, store_out, Env};
use strobe::codegen::emit::arith::{self, BinOp, CmpOp};
use strobe::codegen::emit::builtins::ctx_u64;
use strobe::codegen::emit::{IntTy, Value};
use strobe::codegen::Builder;

const OPS: [BinOp; 10] = [
    BinOp::Add,
    BinOp::Sub,
    BinOp::Mul,
    BinOp::Div,
    BinOp::Mod,
    BinOp::And,
    BinOp::Or,
    BinOp::Xor,
    BinOp::Shl,
    BinOp::Shr,
];

const TYPES: [IntTy; 8] = [
    IntTy::U8,
    IntTy::U16,
    IntTy::U32,
    IntTy::U64,
    IntTy::I8,
    IntTy::I16,
    IntTy::I32,
    IntTy::I64,
];

const VALUES: [i64; 14] = [
    0,
    1,
    -1,
    2,
    3,
    7,
    -7,
    63,
    64,
    0x80,
    0x7fff_ffff,
    i64::MIN,
    i64::MAX,
    0x1234_5678_9abc_def1,
];

fn cast_ref(v: i64, to: IntTy) -> i64 {
    match (to.bits, to.signed) {
        (8, false) => v as u8 as i64,
        (16, false) => v as u16 as i64,
        (32, false) => v as u32 as i64,
        (8, true) => v as i8 as i64,
        (16, true) => v as i16 as i64,
        (32, true) => v as i32 as i64,
        _ => v,
    }
}

fn name(ty: IntTy) -> String {
    format!("{}{}", if ty.signed { "i" } else { "u" }, ty.bits)
}

#[test]
fn binary_operators_match_rust_at_every_width_with_register_operands() {
    if !available("binary_operators_match_rust_at_every_width_with_register_operands") {
        return;
    }
    let env = Env::new();
    let mut cases = 0;
    for op in OPS {
        for ty in TYPES {
            let mut b = Builder::new();
            let x = ctx_u64(&mut b, 0, ty);
            let y = ctx_u64(&mut b, 1, ty);
            let r = arith::binop(&mut b, op, x, y, ty);
            store_out(&mut b, 0, r);
            b.exit(0);
            let p = env.load(b);
            for &a in &VALUES {
                for &c in &VALUES {
                    let (a, c) = (cast_ref(a, ty), cast_ref(c, ty));
                    p.run(&[a as u64, c as u64]);
                    let got = env.out()[0] as i64;
                    let want = reference(op, ty, a, c);
                    assert_eq!(got, want, "{op:?} {} {a} {c}", name(ty));
                    // Folding gives the same answer as the kernel.
                    assert_eq!(arith::fold(op, a, c, ty), want, "fold {op:?} {}", name(ty));
                    cases += 1;
                }
            }
        }
    }
    eprintln!("{cases} register-operand cases");
}

#[test]
fn binary_operators_with_immediate_right_operands_match_rust() {
    if !available("binary_operators_with_immediate_right_operands_match_rust") {
        return;
    }
    let env = Env::new();
    let rhs = [0i64, 1, -1, 3, -7, 63, 64, 0x7fff_ffff, i64::MIN];
    let mut cases = 0;
    for op in OPS {
        for ty in TYPES {
            for &c in &rhs {
                let c = cast_ref(c, ty);
                let mut b = Builder::new();
                let x = ctx_u64(&mut b, 0, ty);
                let r = arith::binop(&mut b, op, x, Value::Imm(c), ty);
                store_out(&mut b, 0, r);
                b.exit(0);
                let p = env.load(b);
                for &a in &VALUES {
                    let a = cast_ref(a, ty);
                    p.run(&[a as u64]);
                    let want = reference(op, ty, a, c);
                    assert_eq!(env.out()[0] as i64, want, "{op:?} {} {a} imm {c}", name(ty));
                    cases += 1;
                }
            }
        }
    }
    eprintln!("{cases} immediate-operand cases");
}

/// Signed `/` and `%` through ISA v4 `sdiv`/`smod` (the path taken on kernels 6.6+), with
/// register and immediate divisors, against Rust; the default tests above cover the
/// unsigned-magnitude sequence older kernels get.
#[test]
fn signed_division_with_isa_v4_sdiv_smod_matches_rust() {
    let test = "signed_division_with_isa_v4_sdiv_smod_matches_rust";
    if !available(test) {
        return;
    }
    if !strobe::kernel::features::signed_division() {
        strobe_testkit::skip(test, "the kernel refuses ISA v4 sdiv/smod (before 6.6)");
        return;
    }
    let env = Env::new();
    let signed = [IntTy::I8, IntTy::I16, IntTy::I32, IntTy::I64];
    let rhs = [0i64, 1, -1, 3, -7, 0x7fff_ffff, i64::MIN];
    let mut cases = 0;
    for op in [BinOp::Div, BinOp::Mod] {
        for ty in signed {
            let mut b = Builder::new();
            b.signed_division = true;
            let x = ctx_u64(&mut b, 0, ty);
            let y = ctx_u64(&mut b, 1, ty);
            let r = arith::binop(&mut b, op, x, y, ty);
            store_out(&mut b, 0, r);
            for (i, &c) in rhs.iter().enumerate() {
                let r = arith::binop(&mut b, op, x, Value::Imm(cast_ref(c, ty)), ty);
                store_out(&mut b, 1 + i, r);
            }
            b.exit(0);
            let c = strobe::codegen::finish(
                b,
                &strobe::codegen::FinishOptions {
                    name: "cg_sdiv".into(),
                    attach: strobe::template::AttachKind::RawTracepoint,
                    arming_guard: true,
                },
            )
            .expect("codegen");
            // The v4 path really emits `sdiv`/`smod` (ALU64, op 0x30 or 0x90, off 1).
            let want_op = if op == BinOp::Div { 0x30 } else { 0x90 };
            assert!(
                c.template
                    .insns
                    .iter()
                    .any(|i| i.code & 0x07 == 0x07 && i.code & 0xf0 == want_op && i.off == 1),
                "no signed {op:?} instruction emitted"
            );
            let p = env.load_compiled(c);
            for &a in &VALUES {
                for &c in &VALUES {
                    let (a, c) = (cast_ref(a, ty), cast_ref(c, ty));
                    p.run(&[a as u64, c as u64]);
                    let out = env.out();
                    assert_eq!(
                        out[0] as i64,
                        reference(op, ty, a, c),
                        "{op:?} {} {a} {c}",
                        name(ty)
                    );
                    for (i, &k) in rhs.iter().enumerate() {
                        let k = cast_ref(k, ty);
                        assert_eq!(
                            out[1 + i] as i64,
                            reference(op, ty, a, k),
                            "{op:?} {} {a} imm {k}",
                            name(ty)
                        );
                    }
                    cases += 1;
                }
            }
        }
    }
    eprintln!("{cases} sdiv/smod cases");
}

#[test]
fn comparisons_signed_and_unsigned_match_rust() {
    if !available("comparisons_signed_and_unsigned_match_rust") {
        return;
    }
    let env = Env::new();
    let cmps = [
        CmpOp::Eq,
        CmpOp::Ne,
        CmpOp::Lt,
        CmpOp::Le,
        CmpOp::Gt,
        CmpOp::Ge,
    ];
    for ty in TYPES {
        let mut b = Builder::new();
        let x = ctx_u64(&mut b, 0, ty);
        let y = ctx_u64(&mut b, 1, ty);
        for (i, op) in cmps.iter().enumerate() {
            let r = arith::compare(&mut b, *op, x, y, ty.signed);
            store_out(&mut b, i, r);
            // Immediate on the left exercises the swapped form.
            let r = arith::compare(&mut b, *op, Value::Imm(cast_ref(-7, ty)), y, ty.signed);
            store_out(&mut b, 6 + i, r);
        }
        b.exit(0);
        let p = env.load(b);
        for &a in &VALUES {
            for &c in &VALUES {
                let (a, c) = (cast_ref(a, ty), cast_ref(c, ty));
                p.run(&[a as u64, c as u64]);
                let out = env.out();
                let m7 = cast_ref(-7, ty);
                for (i, op) in cmps.iter().enumerate() {
                    let holds = |l: i64, r: i64| {
                        let (l, r) = if ty.signed {
                            (l as i128, r as i128)
                        } else {
                            (l as u64 as i128, r as u64 as i128)
                        };
                        match op {
                            CmpOp::Eq => l == r,
                            CmpOp::Ne => l != r,
                            CmpOp::Lt => l < r,
                            CmpOp::Le => l <= r,
                            CmpOp::Gt => l > r,
                            CmpOp::Ge => l >= r,
                        }
                    };
                    assert_eq!(out[i], holds(a, c) as u64, "{op:?} {} {a} {c}", name(ty));
                    assert_eq!(
                        out[6 + i],
                        holds(m7, c) as u64,
                        "{op:?} {} -7 {c}",
                        name(ty)
                    );
                }
            }
        }
    }
}

#[test]
fn casts_truncate_and_extend_like_c() {
    if !available("casts_truncate_and_extend_like_c") {
        return;
    }
    let env = Env::new();
    for from in TYPES {
        let mut b = Builder::new();
        let x = ctx_u64(&mut b, 0, from);
        for (i, to) in TYPES.iter().enumerate() {
            let r = arith::cast(&mut b, x, from, *to);
            store_out(&mut b, i, r);
        }
        b.exit(0);
        let p = env.load(b);
        for &v in &VALUES {
            let v = cast_ref(v, from);
            p.run(&[v as u64]);
            let out = env.out();
            for (i, to) in TYPES.iter().enumerate() {
                assert_eq!(
                    out[i] as i64,
                    cast_ref(v, *to),
                    "({}) ({}){v}",
                    name(*to),
                    name(from)
                );
                assert_eq!(
                    arith::cast(&mut Builder::new(), Value::Imm(v), from, *to),
                    Value::Imm(cast_ref(v, *to))
                );
            }
        }
    }
}

#[test]
fn unary_operators_match_rust() {
    if !available("unary_operators_match_rust") {
        return;
    }
    let env = Env::new();
    for ty in TYPES {
        let mut b = Builder::new();
        let x = ctx_u64(&mut b, 0, ty);
        let r = arith::neg(&mut b, x, ty);
        store_out(&mut b, 0, r);
        let r = arith::bit_not(&mut b, x, ty);
        store_out(&mut b, 1, r);
        let r = arith::logical_not(&mut b, x);
        store_out(&mut b, 2, r);
        b.exit(0);
        let p = env.load(b);
        for &v in &VALUES {
            let v = cast_ref(v, ty);
            p.run(&[v as u64]);
            let out = env.out();
            assert_eq!(
                out[0] as i64,
                cast_ref(v.wrapping_neg(), ty),
                "-{v} {}",
                name(ty)
            );
            assert_eq!(out[1] as i64, cast_ref(!v, ty), "~{v} {}", name(ty));
            assert_eq!(out[2], (v == 0) as u64, "!{v}");
        }
    }
}

#[test]
fn division_by_zero_gives_zero_as_bpftrace_does() {
    if !available("division_by_zero_gives_zero_as_bpftrace_does") {
        return;
    }
    let env = Env::new();
    for ty in [IntTy::U64, IntTy::I64, IntTy::I32, IntTy::U8] {
        let mut b = Builder::new();
        let x = ctx_u64(&mut b, 0, ty);
        let z = ctx_u64(&mut b, 1, ty);
        let d = arith::binop(&mut b, BinOp::Div, x, z, ty);
        let m = arith::binop(&mut b, BinOp::Mod, x, z, ty);
        store_out(&mut b, 0, d);
        store_out(&mut b, 1, m);
        let d = arith::binop(&mut b, BinOp::Div, x, Value::Imm(0), ty);
        let m = arith::binop(&mut b, BinOp::Mod, x, Value::Imm(0), ty);
        store_out(&mut b, 2, d);
        store_out(&mut b, 3, m);
        b.exit(0);
        let p = env.load(b);
        p.run(&[7, 0]);
        assert_eq!(&env.out()[..4], &[0, 0, 0, 0], "{}", name(ty));
    }
}
