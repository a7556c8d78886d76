//! Control flow, register pressure, strings, builtins and kernel reads of generated code,
//! checked in the kernel against values computed in Rust.

use crate::codegen_support;

use codegen_support::{available, store_out, Env};
use strobe::asm::isa::{AluOp, Helper};
use strobe::codegen::emit::arith::{self, BinOp, CmpOp};
use strobe::codegen::emit::builtins::{self, ctx_u64};
use strobe::codegen::emit::mem::{load_int, write_str};
use strobe::codegen::emit::strings;
use strobe::codegen::emit::{control, IntTy, Place, Value};
use strobe::codegen::Builder;
use strobe::diag::Span;

fn cmp(b: &mut Builder, op: CmpOp, x: Value, y: Value) -> Value {
    arith::compare(b, op, x, y, true)
}

#[test]
fn nested_ifs_choose_the_branch_rust_would() {
    if !available("nested_ifs_choose_the_branch_rust_would") {
        return;
    }
    let env = Env::new();
    // if a > 10 { if b < 0 { 1 } else { 2 } } else if a == 5 { 3 } else { 4 }
    let mut b = Builder::new();
    let a = ctx_u64(&mut b, 0, IntTy::I64);
    let c = ctx_u64(&mut b, 1, IntTy::I64);
    let big = cmp(&mut b, CmpOp::Gt, a, Value::Imm(10));
    control::if_else(
        &mut b,
        big,
        |b| {
            let neg = cmp(b, CmpOp::Lt, c, Value::Imm(0));
            control::if_else(
                b,
                neg,
                |b| store_out(b, 0, Value::Imm(1)),
                |b: &mut Builder| store_out(b, 0, Value::Imm(2)),
            );
        },
        |b: &mut Builder| {
            let five = cmp(b, CmpOp::Eq, a, Value::Imm(5));
            control::if_else(
                b,
                five,
                |b| store_out(b, 0, Value::Imm(3)),
                |b: &mut Builder| store_out(b, 0, Value::Imm(4)),
            );
        },
    );
    b.exit(0);
    let p = env.load(b);
    for (a, c) in [
        (11i64, -1i64),
        (11, 0),
        (5, -1),
        (4, 9),
        (i64::MIN, 0),
        (i64::MAX, i64::MIN),
    ] {
        p.run(&[a as u64, c as u64]);
        let want = if a > 10 {
            if c < 0 {
                1
            } else {
                2
            }
        } else if a == 5 {
            3
        } else {
            4
        };
        assert_eq!(env.out()[0], want, "a={a} c={c}");
    }
}

#[test]
fn logical_operators_short_circuit_and_ternaries_pick_one_side() {
    if !available("logical_operators_short_circuit_and_ternaries_pick_one_side") {
        return;
    }
    let env = Env::new();
    let mut b = Builder::new();
    let x = ctx_u64(&mut b, 0, IntTy::U64);
    let y = ctx_u64(&mut b, 1, IntTy::U64);
    // out[0] = x && (out[2] = 1, y); out[1] = x || (out[3] = 1, y)
    let r = control::and(
        &mut b,
        |_| x,
        |b| {
            store_out(b, 2, Value::Imm(1));
            y
        },
    );
    store_out(&mut b, 0, r);
    let r = control::or(
        &mut b,
        |_| x,
        |b| {
            store_out(b, 3, Value::Imm(1));
            y
        },
    );
    store_out(&mut b, 1, r);
    // out[4] = x ? (out[5] = 1, 100) : (out[6] = 1, 200)
    let t = control::ternary(
        &mut b,
        x,
        |b| {
            store_out(b, 5, Value::Imm(1));
            Value::Imm(100)
        },
        |b| {
            store_out(b, 6, Value::Imm(1));
            Value::Imm(200)
        },
    );
    store_out(&mut b, 4, t);
    b.exit(0);
    let p = env.load(b);
    for (x, y) in [(0u64, 0u64), (0, 5), (3, 0), (3, 5)] {
        env.clear_out();
        p.run(&[x, y]);
        let o = env.out();
        let (xb, yb) = (x != 0, y != 0);
        assert_eq!(o[0], (xb && yb) as u64, "&& {x} {y}");
        assert_eq!(o[1], (xb || yb) as u64, "|| {x} {y}");
        assert_eq!(
            o[2], xb as u64,
            "&& evaluates its right side only when the left is true"
        );
        assert_eq!(
            o[3], !xb as u64,
            "|| evaluates its right side only when the left is false"
        );
        assert_eq!(o[4], if xb { 100 } else { 200 });
        assert_eq!(
            (o[5], o[6]),
            (xb as u64, !xb as u64),
            "ternary evaluates one side"
        );
    }
    // Constant conditions fold away entirely.
    let mut b = Builder::new();
    let v = control::and(&mut b, |_| Value::Imm(0), |_| panic!("must not be emitted"));
    assert_eq!(v, Value::Imm(0));
}

/// The `while` bound of the loop test: the verifier walks every iteration of every path, so
/// data-dependent branches in the body keep practical bounds in the tens.
const BOUND: u32 = 40;

#[test]
fn bounded_while_loops_and_unrolled_loops_compute_like_rust() {
    if !available("bounded_while_loops_and_unrolled_loops_compute_like_rust") {
        return;
    }
    let env = Env::new();
    // $i = 0; $s = 0; while ($i < n) { $i++; if ($i == skip) { continue } if ($s > cap) { break } $s += $i * $i }
    let mut b = Builder::new();
    let n = ctx_u64(&mut b, 0, IntTy::U64);
    let skip = ctx_u64(&mut b, 1, IntTy::U64);
    let cap = ctx_u64(&mut b, 2, IntTy::U64);
    let i = b.constant(0);
    let s = b.constant(0);
    control::while_loop(
        &mut b,
        BOUND,
        |b| arith::compare(b, CmpOp::Lt, Value::Reg(i), n, false),
        |b, labels| {
            b.alu(true, AluOp::Add, i, 1);
            let n = n.reg(b);
            let _ = n;
            let sk = arith::compare(b, CmpOp::Eq, Value::Reg(i), skip, false);
            control::jump_if_true(b, sk, labels.next);
            let over = arith::compare(b, CmpOp::Gt, Value::Reg(s), cap, false);
            control::jump_if_true(b, over, labels.exit);
            let sq = arith::binop(b, BinOp::Mul, Value::Reg(i), Value::Reg(i), IntTy::U64);
            let sq = sq.src(b);
            b.alu(true, AluOp::Add, s, sq);
        },
    );
    store_out(&mut b, 0, Value::Reg(s));
    store_out(&mut b, 1, Value::Reg(i));
    // unroll(5) { $u = $u * 3 + arg3 }
    let u = b.constant(1);
    let a3 = ctx_u64(&mut b, 3, IntTy::U64);
    control::unroll(&mut b, 5, |b, _| {
        b.alu(true, AluOp::Mul, u, 3);
        let s = a3.src(b);
        b.alu(true, AluOp::Add, u, s);
    });
    store_out(&mut b, 2, Value::Reg(u));
    b.exit(0);
    let p = env.load(b);
    for (n, skip, cap, a3) in [
        (0u64, 0u64, 1000u64, 0u64),
        (10, 3, u64::MAX, 1),
        (100, 0, 500, 7),
        (5000, 2, u64::MAX, 2),
    ] {
        p.run(&[n, skip, cap, a3]);
        let (mut i, mut s, mut iters) = (0u64, 0u64, 0);
        while iters < BOUND && i < n {
            iters += 1;
            i += 1;
            if i == skip {
                continue;
            }
            if s > cap {
                break;
            }
            s = s.wrapping_add(i * i);
        }
        let mut u = 1u64;
        for _ in 0..5 {
            u = u.wrapping_mul(3).wrapping_add(a3);
        }
        assert_eq!(&env.out()[..3], &[s, i, u], "n={n} skip={skip} cap={cap}");
    }
}

#[test]
fn values_live_across_helper_calls_survive_spilling() {
    if !available("values_live_across_helper_calls_survive_spilling") {
        return;
    }
    let env = Env::new();
    // Eight values live across three helper calls: only four fit r6-r9.
    let mut b = Builder::new();
    let vals: Vec<Value> = (0..8).map(|i| ctx_u64(&mut b, i, IntTy::U64)).collect();
    let t1 = builtins::nsecs(&mut b);
    let t2 = builtins::rand(&mut b);
    let t3 = builtins::nsecs(&mut b);
    let mut acc = Value::Imm(0);
    for (i, v) in vals.iter().enumerate() {
        let w = arith::binop(&mut b, BinOp::Mul, *v, Value::Imm(i as i64 + 1), IntTy::U64);
        acc = arith::binop(&mut b, BinOp::Add, acc, w, IntTy::U64);
    }
    store_out(&mut b, 0, acc);
    let ordered = arith::compare(&mut b, CmpOp::Le, t1, t3, false);
    store_out(&mut b, 1, ordered);
    store_out(&mut b, 2, t2);
    b.exit(0);
    let p = env.load(b);
    assert!(p.compiled.spilled > 0, "the test must force spills");
    let args: Vec<u64> = (0..8)
        .map(|i| 0x1111_1111u64 * (i + 3) + (i << 40))
        .collect();
    p.run(&args);
    let want = args.iter().enumerate().fold(0u64, |a, (i, v)| {
        a.wrapping_add(v.wrapping_mul(i as u64 + 1))
    });
    assert_eq!(env.out()[0], want);
    assert_eq!(env.out()[1], 1);
}

#[test]
fn string_compare_and_truncation_match_rust_strncmp() {
    if !available("string_compare_and_truncation_match_rust_strncmp") {
        return;
    }
    let env = Env::new();
    let pairs: [(&[u8], &[u8], u32); 9] = [
        (b"hello", b"hello", 16),
        (b"hello", b"help", 16),
        (b"hello", b"help", 3),
        (b"abc", b"abcd", 16),
        (b"abc", b"abcd", 3),
        (b"", b"", 16),
        (b"", b"x", 16),
        (b"same-prefix-1", b"same-prefix-2", 12),
        (b"same-prefix-1", b"same-prefix-2", 13),
    ];
    for (x, y, n) in pairs {
        let mut b = Builder::new();
        let s1 = b.slot(16, 8);
        let s2 = b.slot(16, 8);
        write_str(&mut b, Place::new(s1, 0), x, 16);
        write_str(&mut b, Place::new(s2, 0), y, 16);
        let r = strings::strncmp(&mut b, Place::new(s1, 0), Place::new(s2, 0), n);
        store_out(&mut b, 0, r);
        let e = strings::str_eq(&mut b, Place::new(s1, 0), 16, Place::new(s2, 0), 16);
        store_out(&mut b, 1, e);
        // Copy s1 through a kernel string read into a 4-byte buffer: truncation.
        let s3 = b.slot(8, 8);
        let addr = b.vreg();
        b.slot_addr(addr, s1, 0);
        let len = strings::read_str(&mut b, false, Place::new(s3, 0), 4, Value::Reg(addr));
        store_out(&mut b, 2, Value::Reg(len));
        let w = load_int(&mut b, Place::new(s3, 0), IntTy::U32);
        store_out(&mut b, 3, w);
        // Truncate s2 to 2 bytes in place.
        strings::truncate(&mut b, Place::new(s2, 0), 16, 2);
        let w = load_int(&mut b, Place::new(s2, 0), IntTy::U32);
        store_out(&mut b, 4, w);
        b.exit(0);
        let p = env.load(b);
        p.run(&[]);
        let o = env.out();
        let n = n as usize;
        let pad = |s: &[u8], k: usize| -> Vec<u8> {
            let mut v = s.to_vec();
            v.resize(k.max(s.len()) + 1, 0);
            v
        };
        let (px, py) = (pad(x, 16), pad(y, 16));
        let mut want = 0;
        for i in 0..n {
            if px[i] != py[i] {
                want = 1;
                break;
            }
            if px[i] == 0 {
                break;
            }
        }
        assert_eq!(o[0], want, "strncmp({x:?}, {y:?}, {n})");
        assert_eq!(o[1], (x == y) as u64, "{x:?} == {y:?}");
        let copied = x.len().min(3);
        assert_eq!(o[2], copied as u64 + 1, "read_str length of {x:?}");
        // The string and its NUL; the kernel leaves the bytes after the NUL as they were.
        let mut w = [0u8; 4];
        w[..copied].copy_from_slice(&x[..copied]);
        let got = (o[3] as u32).to_le_bytes();
        assert_eq!(&got[..=copied], &w[..=copied], "read_str of {x:?}");
        // A NUL at index 2; the bytes after it stay.
        let mut t = [0u8; 4];
        let k = y.len().min(4);
        t[..k].copy_from_slice(&y[..k]);
        t[2] = 0;
        assert_eq!(o[4], u32::from_le_bytes(t) as u64, "truncate {y:?}");
    }
}

#[test]
fn builtins_report_the_calling_task() {
    if !available("builtins_report_the_calling_task") {
        return;
    }
    let env = Env::new();
    let mut b = Builder::new();
    let v = builtins::pid(&mut b);
    store_out(&mut b, 0, v);
    let v = builtins::tid(&mut b);
    store_out(&mut b, 1, v);
    let v = builtins::uid(&mut b);
    store_out(&mut b, 2, v);
    let v = builtins::gid(&mut b);
    store_out(&mut b, 3, v);
    let v = builtins::cpu(&mut b);
    store_out(&mut b, 4, v);
    let v = builtins::nsecs(&mut b);
    store_out(&mut b, 5, v);
    let v = builtins::jiffies(&mut b);
    store_out(&mut b, 6, v);
    let v = builtins::curtask(&mut b);
    store_out(&mut b, 7, v);
    let v = builtins::boot_ns(&mut b);
    store_out(&mut b, 8, v);
    let comm = b.slot(16, 8);
    builtins::comm(&mut b, Place::new(comm, 0));
    let lo = load_int(&mut b, Place::new(comm, 0), IntTy::U64);
    store_out(&mut b, 9, lo);
    let hi = load_int(&mut b, Place::new(comm, 8), IntTy::U64);
    store_out(&mut b, 10, hi);
    let v = builtins::cgroup(&mut b);
    store_out(&mut b, 11, v);
    let v = builtins::target_index(&mut b);
    store_out(&mut b, 12, v);
    b.exit(0);
    let p = env.load(b);
    let before = now_ns(libc_clock::MONOTONIC);
    p.run(&[]);
    let after = now_ns(libc_clock::MONOTONIC);
    let o = env.out();
    assert_eq!(o[0], std::process::id() as u64);
    assert_eq!(o[1], gettid());
    let (uid, gid) = ids();
    assert_eq!((o[2], o[3]), (uid, gid));
    assert!((o[4] as usize) < strobe::sys::map::possible_cpus());
    assert!(
        before <= o[5] && o[5] <= after,
        "{before} <= {} <= {after}",
        o[5]
    );
    assert!(o[6] > 0);
    assert!(o[7] > 0xffff_0000_0000_0000, "curtask is a kernel address");
    assert!(
        o[8] >= o[5],
        "boot time includes suspend, so it is at least monotonic time"
    );
    let mut comm = [0u8; 16];
    comm[..8].copy_from_slice(&o[9].to_le_bytes());
    comm[8..].copy_from_slice(&o[10].to_le_bytes());
    let name = std::fs::read_to_string(format!("/proc/self/task/{}/comm", gettid())).unwrap();
    let end = comm.iter().position(|&c| c == 0).unwrap_or(16);
    assert_eq!(&comm[..end], name.trim_end().as_bytes());
    assert!(o[11] > 0, "cgroup id");
    assert_eq!(o[12], 0, "target index patched to this clone's index");
}

#[test]
fn pointer_chains_are_followed_through_probe_reads() {
    if !available("pointer_chains_are_followed_through_probe_reads") {
        return;
    }
    let env = Env::new();
    // inner: { u64 pad; u64 value = arg0 }  outer: { u64 pad[2]; inner *p }
    let mut b = Builder::new();
    let inner = b.slot(16, 8);
    let outer = b.slot(24, 8);
    let v = ctx_u64(&mut b, 0, IntTy::U64);
    let vr = v.reg(&mut b);
    b.store(strobe::asm::isa::Size::Dw, inner, 8, vr);
    b.store(strobe::asm::isa::Size::Dw, inner, 0, 0);
    let ip = b.vreg();
    b.slot_addr(ip, inner, 0);
    b.store(strobe::asm::isa::Size::Dw, outer, 16, ip);
    let op = b.vreg();
    b.slot_addr(op, outer, 0);
    // Only memory holds these slots' addresses from here on: pin them.
    b.pin(inner);
    b.pin(outer);
    let got = builtins::deref(&mut b, false, Value::Reg(op), &[16, 8], IntTy::U64);
    store_out(&mut b, 0, got);
    let got = builtins::deref(&mut b, false, Value::Reg(op), &[16, 8], IntTy::I8);
    store_out(&mut b, 1, got);
    b.exit(0);
    let p = env.load(b);
    for v in [0u64, 0x1122_3344_5566_77ff, u64::MAX] {
        p.run(&[v]);
        assert_eq!(env.out()[0], v);
        assert_eq!(env.out()[1] as i64, v as u8 as i8 as i64);
    }
}

#[test]
fn source_map_survives_allocation_and_peephole() {
    let mut b = Builder::new();
    b.set_span(Span::new(10, 20));
    let x = ctx_u64(&mut b, 0, IntTy::U64);
    b.set_span(Span::new(30, 40));
    let t = b.call(Helper::KtimeGetNs, &[]);
    let s = arith::binop(&mut b, BinOp::Add, x, Value::Reg(t), IntTy::U64);
    b.set_span(Span::new(50, 60));
    let l = b.label();
    b.ja(l); // removed by the peephole (jump to next)
    b.bind(l);
    let s = s.src(&mut b);
    b.exit(s);
    let c = strobe::codegen::finish(
        b,
        &strobe::codegen::FinishOptions {
            name: "t".into(),
            attach: strobe::template::AttachKind::RawTracepoint,
            arming_guard: true,
        },
    )
    .unwrap();
    let t = &c.template;
    let call = t
        .insns
        .iter()
        .position(|i| i.code == 0x85)
        .expect("a call instruction");
    assert_eq!(t.source_map.lookup(call), Some(Span::new(30, 40)));
    let exit = t.insns.len() - 1;
    assert_eq!(t.source_map.lookup(exit), Some(Span::new(50, 60)));
    // The ctx load (first body insn after the 6-insn guard) comes from the first span.
    let load = t
        .insns
        .iter()
        .position(|i| i.code == 0x79)
        .expect("a u64 load");
    assert_eq!(t.source_map.lookup(load), Some(Span::new(10, 20)));
    assert!(
        !t.insns.iter().any(|i| i.code == 0x05 && i.off == 0),
        "no jump to next"
    );
}

mod libc_clock {
    pub const MONOTONIC: i32 = 1;
}

fn now_ns(clock: i32) -> u64 {
    #[repr(C)]
    struct Ts {
        s: i64,
        ns: i64,
    }
    extern "C" {
        fn clock_gettime(clk: i32, ts: *mut Ts) -> i32;
    }
    let mut ts = Ts { s: 0, ns: 0 };
    // SAFETY: clock_gettime writes one timespec.
    unsafe { clock_gettime(clock, &mut ts) };
    ts.s as u64 * 1_000_000_000 + ts.ns as u64
}

fn gettid() -> u64 {
    extern "C" {
        fn gettid() -> i32;
    }
    // SAFETY: no arguments, no memory.
    unsafe { gettid() as u64 }
}

fn ids() -> (u64, u64) {
    extern "C" {
        fn getuid() -> u32;
        fn getgid() -> u32;
    }
    // SAFETY: no arguments, no memory.
    unsafe { (getuid() as u64, getgid() as u64) }
}

#[test]
fn per_target_relocations_patch_argument_slots_return_slot_index_and_constants() {
    if !available("per_target_relocations_patch_argument_slots_return_slot_index_and_constants") {
        return;
    }
    let env = Env::new();
    let build = || {
        let mut b = Builder::new();
        // On a raw tracepoint the context is the u64 argument array, so an argument slot is
        // 8 × position exactly as for fentry: the same relocation serves both.
        let count = builtins::arg_slot(&mut b, "count", IntTy::U32);
        store_out(&mut b, 0, count);
        let flags = builtins::arg_slot(&mut b, "flags", IntTy::I8);
        store_out(&mut b, 1, flags);
        let ret = builtins::ret_slot(&mut b, IntTy::I64);
        store_out(&mut b, 2, ret);
        let idx = builtins::target_index(&mut b);
        store_out(&mut b, 3, idx);
        let start = b.konst("start_ns");
        let el = builtins::elapsed(&mut b, start);
        store_out(&mut b, 4, el);
        b.exit(0);
        strobe::codegen::finish(
            b,
            &strobe::codegen::FinishOptions {
                name: "reloc".into(),
                attach: strobe::template::AttachKind::RawTracepoint,
                arming_guard: true,
            },
        )
        .unwrap()
    };
    let c = build();
    assert_eq!(c.template.params, ["count", "flags"]);
    assert_eq!(c.template.consts, ["start_ns"]);
    let args = [10u64, 0x1_0000_0005, 0xff, (-9i64) as u64];
    let start = now_ns(libc_clock::MONOTONIC);
    // Two targets with different layouts: count at position 1 or 0, flags at 2 or 3.
    for (index, slots, ret) in [(0u32, [8i64, 16], 24i64), (5, [0, 24], 16)] {
        let p = env.load_target(build(), index, &slots, Some(ret), &[start as i64]);
        p.run(&args);
        let after = now_ns(libc_clock::MONOTONIC);
        let o = env.out();
        assert_eq!(o[0], args[slots[0] as usize / 8] as u32 as u64);
        assert_eq!(o[1] as i64, args[slots[1] as usize / 8] as u8 as i8 as i64);
        assert_eq!(o[2], args[ret as usize / 8]);
        assert_eq!(o[3], index as u64);
        assert!(
            o[4] <= after - start,
            "elapsed {} vs {}",
            o[4],
            after - start
        );
        assert!(o[4] > 0);
    }
}
