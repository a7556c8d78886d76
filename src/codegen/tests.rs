//! Pure tests of the allocation and finishing passes (no kernel): stack sharing and limits,
//! label errors, peephole rules, call-crossing registers. Semantics are proven by the kernel
//! tests in tests/codegen_*.rs.

use super::builder::{Arg, Builder};
use super::emit::Place;
use super::{finish, CodegenError, FinishOptions};
use crate::asm::isa::{AluOp, Helper, JmpOp, Size};
use crate::asm::{Insn, Reg};
use crate::template::AttachKind;

fn opts() -> FinishOptions {
    FinishOptions {
        name: "t".into(),
        attach: AttachKind::RawTracepoint,
        arming_guard: false,
    }
}

fn insns(b: Builder) -> Vec<Insn> {
    finish(b, &opts()).unwrap().template.insns
}

#[test]
fn slots_with_disjoint_lifetimes_share_stack_bytes() {
    let mut b = Builder::new();
    let s1 = b.slot(256, 8);
    b.store(Size::Dw, s1, 0, 1);
    b.call_void(Helper::KtimeGetNs, &[Arg::Slot(s1, 0)]);
    let s2 = b.slot(256, 8);
    b.store(Size::Dw, s2, 0, 2);
    b.call_void(Helper::KtimeGetNs, &[Arg::Slot(s2, 0)]);
    b.exit(0);
    let c = finish(b, &opts()).unwrap();
    assert_eq!(
        c.stack_size, 256,
        "two 256-byte slots used one after the other share"
    );
}

#[test]
fn slots_alive_at_the_same_time_do_not_overlap() {
    let mut b = Builder::new();
    let s1 = b.slot(16, 8);
    let s2 = b.slot(8, 8);
    b.store(Size::Dw, s1, 0, 1);
    b.store(Size::Dw, s2, 0, 2);
    // A helper that reads its pointer arguments, so the stores are live (not dead stores).
    b.call_void(
        Helper::ProbeReadKernel,
        &[Arg::Slot(s1, 0), Arg::Slot(s2, 0)],
    );
    b.exit(0);
    let c = finish(b, &opts()).unwrap();
    assert_eq!(c.stack_size, 24);
    let offs: Vec<i16> = c
        .template
        .insns
        .iter()
        .filter(|i| {
            use crate::asm::isa::{opcode, Class, Mode, Size};
            i.code == opcode(Class::St, Mode::Mem.value() | Size::Dw.value())
        })
        .map(|i| i.off)
        .collect();
    assert_eq!(offs.len(), 2);
    assert_ne!(offs[0], offs[1]);
}

#[test]
fn a_frame_over_512_bytes_is_an_error() {
    let mut b = Builder::new();
    let s1 = b.slot(300, 8);
    let s2 = b.slot(300, 8);
    b.call_void(Helper::KtimeGetNs, &[Arg::Slot(s1, 0), Arg::Slot(s2, 0)]);
    b.exit(0);
    assert!(matches!(
        finish(b, &opts()),
        Err(CodegenError::StackOverflow { limit: 512, .. })
    ));
}

#[test]
fn a_jump_to_an_unbound_label_is_an_error() {
    let mut b = Builder::new();
    let l = b.label();
    b.ja(l);
    b.exit(0);
    assert!(matches!(
        finish(b, &opts()),
        Err(CodegenError::UnboundLabel { .. })
    ));
}

#[test]
fn a_jump_farther_than_i16_is_an_error_not_a_wrong_offset() {
    let mut b = Builder::new();
    let r = b.constant(0);
    let l = b.label();
    b.jmp64(JmpOp::Jeq, r, 5, l);
    for _ in 0..40_000 {
        b.alu(true, AluOp::Add, r, 1);
    }
    b.bind(l);
    b.exit(r);
    assert!(matches!(
        finish(b, &opts()),
        Err(CodegenError::JumpRange { .. })
    ));
}

#[test]
fn peephole_drops_jumps_to_next_self_moves_and_dead_code() {
    let mut b = Builder::new();
    let r = b.constant(7);
    let l = b.label();
    b.ja(l);
    b.bind(l);
    let dead = b.label();
    b.exit(r);
    b.bind(dead); // never jumped to: what follows is unreachable
    b.mov(r, 9);
    b.exit(r);
    let code = insns(b);
    // mov r0, 7 (ctx move elided: r1 = r1) ; exit
    assert_eq!(code.len(), 2, "{code:?}");
    assert_eq!(code[1], Insn::exit());
}

#[test]
fn peephole_drops_the_move_back_of_a_just_copied_register() {
    // A helper's result kept across a call (callee-saved) and copied for use now: the
    // allocator writes `r6 = r0; r0 = r6`, whose second move is a no-op.
    let mut b = Builder::new();
    let raw = b.call(Helper::GetCurrentPidTgid, &[]);
    let now = b.vreg();
    b.mov(now, raw);
    b.alu(true, AluOp::Rsh, now, 32);
    let t = b.call(Helper::KtimeGetNs, &[]);
    b.alu(true, AluOp::Add, t, now);
    b.alu(true, AluOp::Add, t, raw);
    b.exit(t);
    let code = insns(b);
    for w in code.windows(2) {
        let back = w[0].code == w[1].code
            && w[0].code == Insn::mov64_reg(Reg::R0, Reg::R1).code
            && w[0].dst() == w[1].src()
            && w[0].src() == w[1].dst();
        assert!(!back, "move back left in: {code:?}");
    }
}

#[test]
fn values_live_across_calls_use_callee_saved_registers() {
    let mut b = Builder::new();
    let x = b.constant(5);
    let t = b.call(Helper::KtimeGetNs, &[]);
    b.alu(true, AluOp::Add, x, t);
    b.exit(x);
    let code = insns(b);
    let mov = code[0];
    assert!(
        mov.dst() >= 6 && mov.dst() <= 9,
        "x lives in r6-r9: {code:?}"
    );
}

#[test]
fn more_live_values_than_callee_saved_registers_spill() {
    let mut b = Builder::new();
    let vals: Vec<_> = (0..7).map(|i| b.constant(i * 3 + 1)).collect();
    b.call_void(Helper::KtimeGetNs, &[]);
    let acc = b.constant(0);
    for v in &vals {
        b.alu(true, AluOp::Add, acc, *v);
    }
    b.exit(acc);
    let c = finish(b, &opts()).unwrap();
    assert_eq!(
        c.spilled, 3,
        "7 values over the call, 4 callee-saved registers"
    );
    assert!(c.stack_size >= 24);
}

#[test]
fn call_arguments_in_a_register_cycle_are_swapped_without_a_scratch_register() {
    // x in r2 and y in r1, called as f(x, y): r1 <- r2 and r2 <- r1 form a cycle.
    let mut b = Builder::new();
    let x = b.constant(1);
    let y = b.constant(2);
    let z = b.constant(3);
    b.call_void(
        Helper::ProbeReadKernel,
        &[Arg::Reg(x), Arg::Reg(y), Arg::Reg(z)],
    );
    b.exit(0);
    let regs = vec![Some(Reg::R1), Some(Reg::R2), Some(Reg::R1), Some(Reg::R3)];
    let frame = super::stack::Frame {
        offsets: vec![],
        size: 0,
    };
    let items = super::machine::emit(&b.insts, &regs, &frame).unwrap();
    let mut r = [0i64; 11];
    let mut seen_call = false;
    for it in items {
        let super::machine::MItem::Insn { insn: i, .. } = it else {
            continue;
        };
        match i.code {
            0xb7 => r[i.dst() as usize] = i.imm as i64,
            0xbf => r[i.dst() as usize] = r[i.src() as usize],
            0xaf => r[i.dst() as usize] ^= r[i.src() as usize],
            0x85 => {
                assert_eq!((r[1], r[2], r[3]), (1, 2, 3));
                seen_call = true;
            }
            _ => {}
        }
    }
    assert!(seen_call);
    let _ = Place::new;
}

#[test]
fn listing_shows_spans_and_comments_and_reassembles() {
    let mut b = Builder::new();
    b.set_span(crate::diag::Span::new(3, 9));
    b.comment("the answer");
    let r = b.constant(42);
    b.set_span(crate::diag::Span::new(10, 12));
    b.exit(r);
    let c = finish(b, &opts()).unwrap();
    let text = c.listing(|s| format!("bytes {}..{}", s.start, s.end));
    assert!(text.contains("; bytes 3..9\n"), "{text}");
    assert!(text.contains("; the answer"), "{text}");
    assert!(text.contains("; bytes 10..12\n"), "{text}");
    let again = crate::asm::assemble_insns(&text).unwrap();
    assert_eq!(again, c.template.insns);
}
