//! Subprograms through the codegen API, run in the kernel: callbacks of `bpf_loop` and
//! `bpf_for_each_map_elem` built with `Builder::subprog`, linked by `finish_program`, reading
//! and writing the caller's stack through their context pointer, stopping early, nesting.

use crate::codegen_support;

use codegen_support::{available, map, store_out, Env};
use strobe::asm::isa::{AluOp, Helper, JmpOp, Size};
use strobe::codegen::emit::builtins::ctx_u64;
use strobe::codegen::emit::{IntTy, Value};
use strobe::codegen::{finish_program, Arg, Builder, FinishOptions};
use strobe::sys::{MapType, UpdateFlags};
use strobe::template::AttachKind;

fn opts() -> FinishOptions {
    FinishOptions {
        name: "cg_loops".into(),
        attach: AttachKind::RawTracepoint,
        arming_guard: true,
    }
}

/// `for i in 0..n { acc += i * i; if i == stop { break } }`, with an inner loop of 3 that
/// counts its iterations into word 1 of the same context (a callback calling a callback).
#[test]
fn bpf_loop_callbacks_accumulate_stop_early_and_nest() {
    if !available("bpf_loop_callbacks_accumulate_stop_early_and_nest") {
        return;
    }
    let env = Env::new();
    let mut main = Builder::new();
    let n = ctx_u64(&mut main, 0, IntTy::U64).reg(&mut main);
    let stop = ctx_u64(&mut main, 1, IntTy::U64).reg(&mut main);
    let ctx = main.slot(24, 8);
    main.store(Size::Dw, ctx, 0, 0);
    main.store(Size::Dw, ctx, 8, 0);
    main.store(Size::Dw, ctx, 16, stop);
    let iters = main.call(
        Helper::Loop,
        &[Arg::Reg(n), Arg::Func(0), Arg::Slot(ctx, 0), Arg::Imm(0)],
    );
    let acc = main.vreg();
    main.load(Size::Dw, acc, ctx, 0);
    let inner = main.vreg();
    main.load(Size::Dw, inner, ctx, 8);
    store_out(&mut main, 0, Value::Reg(acc));
    store_out(&mut main, 1, Value::Reg(inner));
    store_out(&mut main, 2, Value::Reg(iters));
    main.exit(0);

    // Outer callback (index, ctx).
    let (mut outer, p) = Builder::subprog(2);
    let (i, c) = (p[0], p[1]);
    let sq = outer.copy(i);
    outer.alu(true, AluOp::Mul, sq, i);
    let a = outer.vreg();
    outer.load(Size::Dw, a, c, 0);
    outer.alu(true, AluOp::Add, a, sq);
    outer.store(Size::Dw, c, 0, a);
    outer.call_void(
        Helper::Loop,
        &[Arg::Imm(3), Arg::Func(1), Arg::Reg(c), Arg::Imm(0)],
    );
    let s = outer.vreg();
    outer.load(Size::Dw, s, c, 16);
    let brk = outer.label();
    outer.jmp64(JmpOp::Jeq, i, s, brk);
    outer.exit(0);
    outer.bind(brk);
    outer.exit(1);

    // Inner callback: counts.
    let (mut inner_cb, p) = Builder::subprog(2);
    let k = inner_cb.vreg();
    inner_cb.load(Size::Dw, k, p[1], 8);
    inner_cb.alu(true, AluOp::Add, k, 1);
    inner_cb.store(Size::Dw, p[1], 8, k);
    inner_cb.exit(0);

    let c = finish_program(main, vec![outer, inner_cb], &opts()).expect("links");
    assert_eq!(c.template.funcs.len(), 2);
    let p = env.load_compiled(c);
    for (n, stop) in [(0u64, 99u64), (1, 99), (5, 99), (10, 3), (100, 99), (50, 0)] {
        env.clear_out();
        p.run(&[n, stop]);
        let out = env.out();
        let ran = n.min(stop + 1);
        let want: u64 = (0..ran).map(|i| i * i).sum();
        assert_eq!(out[0], want, "sum of squares for n={n} stop={stop}");
        assert_eq!(out[1], 3 * ran, "inner iterations for n={n} stop={stop}");
        assert_eq!(out[2], ran, "bpf_loop's count for n={n} stop={stop}");
    }
}

/// `bpf_for_each_map_elem` over a hash map: the callback sums keys times values into the
/// caller's stack; the helper returns the number of elements visited.
#[test]
fn for_each_map_elem_callback_sees_every_element() {
    if !available("for_each_map_elem_callback_sees_every_element") {
        return;
    }
    let mut env = Env::new();
    let m = map(MapType::Hash, "elems", 8, 8, 64);
    let mut want = 0u64;
    for k in 1..=20u64 {
        m.update(
            &k.to_le_bytes(),
            &(k * 3).to_le_bytes(),
            UpdateFlags::empty(),
        )
        .unwrap();
        want += k * k * 3;
    }
    env.add("elems", m);
    let mut main = Builder::new();
    let ctx = main.slot(8, 8);
    main.store(Size::Dw, ctx, 0, 0);
    let elems = main.map("elems");
    let n = main.call(
        Helper::ForEachMapElem,
        &[
            Arg::Map(elems),
            Arg::Func(0),
            Arg::Slot(ctx, 0),
            Arg::Imm(0),
        ],
    );
    let acc = main.vreg();
    main.load(Size::Dw, acc, ctx, 0);
    store_out(&mut main, 0, Value::Reg(acc));
    store_out(&mut main, 1, Value::Reg(n));
    main.exit(0);
    let (mut cb, p) = Builder::subprog(4);
    let (key, value, c) = (p[1], p[2], p[3]);
    let k = cb.vreg();
    cb.load(Size::Dw, k, key, 0);
    let v = cb.vreg();
    cb.load(Size::Dw, v, value, 0);
    cb.alu(true, AluOp::Mul, k, v);
    let a = cb.vreg();
    cb.load(Size::Dw, a, c, 0);
    cb.alu(true, AluOp::Add, a, k);
    cb.store(Size::Dw, c, 0, a);
    cb.exit(0);
    let c = finish_program(main, vec![cb], &opts()).expect("links");
    let p = env.load_compiled(c);
    p.run(&[]);
    let out = env.out();
    assert_eq!(out[0], want);
    assert_eq!(out[1], 20);
}
