//! Property: random well-typed integer expression trees, compiled with the code generator and
//! run in the kernel through BPF_PROG_TEST_RUN, give what the same tree gives evaluated in
//! Rust with fixed-width wrapping arithmetic (and bpftrace's x / 0 = x % 0 = 0).

use crate::codegen_support;

use codegen_support::{available, reference as bin, store_out, Env};
use proptest::prelude::*;
use strobe::codegen::emit::arith::{self, BinOp, CmpOp};
use strobe::codegen::emit::builtins::ctx_u64;
use strobe::codegen::emit::{control, IntTy, Value};
use strobe::codegen::Builder;

#[derive(Clone, Debug)]
enum E {
    Arg(u32, IntTy),
    Const(i64, IntTy),
    Bin(BinOp, IntTy, Box<E>, Box<E>),
    Cmp(CmpOp, IntTy, Box<E>, Box<E>),
    Neg(IntTy, Box<E>),
    Cast(IntTy, Box<E>),
    Tern(IntTy, Box<E>, Box<E>, Box<E>),
    And(Box<E>, Box<E>),
    Or(Box<E>, Box<E>),
}

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

fn ty_of(e: &E) -> IntTy {
    match e {
        E::Arg(_, t) | E::Const(_, t) | E::Bin(_, t, ..) | E::Neg(t, _) | E::Cast(t, _) => *t,
        E::Tern(t, ..) => *t,
        E::Cmp(..) | E::And(..) | E::Or(..) => IntTy::U64,
    }
}

/// `v` as a value of `t`, widened to 64 bits the way C widens it.
fn conv(v: i64, t: IntTy) -> i64 {
    match (t.bits, t.signed) {
        (8, false) => v as u8 as i64,
        (16, false) => v as u16 as i64,
        (32, false) => v as u32 as i64,
        (8, true) => v as i8 as i64,
        (16, true) => v as i16 as i64,
        (32, true) => v as i32 as i64,
        _ => v,
    }
}

fn eval(e: &E, args: &[u64]) -> i64 {
    match e {
        E::Arg(i, t) => conv(args[*i as usize] as i64, *t),
        E::Const(v, t) => conv(*v, *t),
        E::Bin(op, t, a, b) => bin(*op, *t, conv(eval(a, args), *t), conv(eval(b, args), *t)),
        E::Cmp(op, t, a, b) => {
            let (x, y) = (conv(eval(a, args), *t), conv(eval(b, args), *t));
            let (x, y) = if t.signed {
                (x as i128, y as i128)
            } else {
                (x as u64 as i128, y as u64 as i128)
            };
            (match op {
                CmpOp::Eq => x == y,
                CmpOp::Ne => x != y,
                CmpOp::Lt => x < y,
                CmpOp::Le => x <= y,
                CmpOp::Gt => x > y,
                CmpOp::Ge => x >= y,
            }) as i64
        }
        E::Neg(t, a) => conv(conv(eval(a, args), *t).wrapping_neg(), *t),
        E::Cast(t, a) => conv(eval(a, args), *t),
        E::Tern(t, c, a, b) => {
            if eval(c, args) != 0 {
                conv(eval(a, args), *t)
            } else {
                conv(eval(b, args), *t)
            }
        }
        E::And(a, b) => (eval(a, args) != 0 && eval(b, args) != 0) as i64,
        E::Or(a, b) => (eval(a, args) != 0 || eval(b, args) != 0) as i64,
    }
}

fn compile(b: &mut Builder, e: &E) -> Value {
    let sub = |b: &mut Builder, x: &E, t: IntTy| {
        let v = compile(b, x);
        arith::cast(b, v, ty_of(x), t)
    };
    match e {
        E::Arg(i, t) => ctx_u64(b, *i, *t),
        E::Const(v, t) => Value::Imm(conv(*v, *t)),
        E::Bin(op, t, x, y) => {
            let l = sub(b, x, *t);
            let r = sub(b, y, *t);
            arith::binop(b, *op, l, r, *t)
        }
        E::Cmp(op, t, x, y) => {
            let l = sub(b, x, *t);
            let r = sub(b, y, *t);
            arith::compare(b, *op, l, r, t.signed)
        }
        E::Neg(t, x) => {
            let v = sub(b, x, *t);
            arith::neg(b, v, *t)
        }
        E::Cast(t, x) => sub(b, x, *t),
        E::Tern(t, c, x, y) => {
            let cv = compile(b, c);
            control::ternary(b, cv, |b| sub(b, x, *t), |b| sub(b, y, *t))
        }
        E::And(x, y) => control::and(b, |b| compile(b, x), |b| compile(b, y)),
        E::Or(x, y) => control::or(b, |b| compile(b, x), |b| compile(b, y)),
    }
}

fn ty() -> impl Strategy<Value = IntTy> {
    (0..TYPES.len()).prop_map(|i| TYPES[i])
}

fn constant() -> impl Strategy<Value = i64> {
    prop_oneof![
        Just(0i64),
        Just(1),
        Just(-1),
        Just(i64::MIN),
        Just(i64::MAX),
        -70i64..70,
        any::<i64>(),
    ]
}

fn binop() -> impl Strategy<Value = BinOp> {
    prop_oneof![
        Just(BinOp::Add),
        Just(BinOp::Sub),
        Just(BinOp::Mul),
        Just(BinOp::Div),
        Just(BinOp::Mod),
        Just(BinOp::And),
        Just(BinOp::Or),
        Just(BinOp::Xor),
        Just(BinOp::Shl),
        Just(BinOp::Shr),
    ]
}

fn cmpop() -> impl Strategy<Value = CmpOp> {
    prop_oneof![
        Just(CmpOp::Eq),
        Just(CmpOp::Ne),
        Just(CmpOp::Lt),
        Just(CmpOp::Le),
        Just(CmpOp::Gt),
        Just(CmpOp::Ge),
    ]
}

fn expr() -> impl Strategy<Value = E> {
    let leaf = prop_oneof![
        (0u32..4, ty()).prop_map(|(i, t)| E::Arg(i, t)),
        (constant(), ty()).prop_map(|(v, t)| E::Const(v, t)),
    ];
    leaf.prop_recursive(5, 48, 3, |inner| {
        prop_oneof![
            4 => (binop(), ty(), inner.clone(), inner.clone())
                .prop_map(|(o, t, a, b)| E::Bin(o, t, Box::new(a), Box::new(b))),
            1 => (cmpop(), ty(), inner.clone(), inner.clone())
                .prop_map(|(o, t, a, b)| E::Cmp(o, t, Box::new(a), Box::new(b))),
            1 => (ty(), inner.clone()).prop_map(|(t, a)| E::Neg(t, Box::new(a))),
            1 => (ty(), inner.clone()).prop_map(|(t, a)| E::Cast(t, Box::new(a))),
            1 => (ty(), inner.clone(), inner.clone(), inner.clone())
                .prop_map(|(t, c, a, b)| E::Tern(t, Box::new(c), Box::new(a), Box::new(b))),
            1 => (inner.clone(), inner.clone()).prop_map(|(a, b)| E::And(Box::new(a), Box::new(b))),
            1 => (inner.clone(), inner).prop_map(|(a, b)| E::Or(Box::new(a), Box::new(b))),
        ]
    })
}

fn args() -> impl Strategy<Value = Vec<u64>> {
    prop::collection::vec(
        prop_oneof![
            Just(0u64),
            Just(u64::MAX),
            0u64..130,
            any::<u64>(),
            (0u32..64).prop_map(|s| 1u64 << s),
        ],
        4,
    )
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 160, ..ProptestConfig::default() })]

    #[test]
    fn random_integer_expressions_evaluate_in_the_kernel_as_in_rust(
        e in expr(),
        arg_sets in prop::collection::vec(args(), 3),
    ) {
        if !available("random_integer_expressions_evaluate_in_the_kernel_as_in_rust") {
            return Ok(());
        }
        let env = Env::new();
        // Both signed-division paths: the unsigned-magnitude sequence everywhere, and ISA v4
        // `sdiv`/`smod` where the kernel takes them (6.6+).
        for sdiv in [false, true] {
            if sdiv && !strobe::kernel::features::signed_division() {
                continue;
            }
            let mut b = Builder::new();
            b.signed_division = sdiv;
            let v = compile(&mut b, &e);
            store_out(&mut b, 0, v);
            b.exit(0);
            let p = env.load(b);
            for a in &arg_sets {
                p.run(a);
                let want = eval(&e, a);
                prop_assert_eq!(env.out()[0] as i64, want, "sdiv {} expr {:?} args {:?}", sdiv, e, a);
            }
        }
    }
}
