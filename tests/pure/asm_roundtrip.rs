//! assemble(disassemble(p)) == p: for every form in the isa tables and for random valid
//! instructions; and neither side panics on arbitrary input.

use proptest::prelude::*;
use strobe::asm::insn::insns_from_bytes;
use strobe::asm::{assemble_insns, decode, disassemble, Decoded, Insn};
use strobe_testkit::forms::all_forms;

#[test]
fn every_isa_form_reassembles_from_its_disassembly() {
    let insns = Decoded::encode_all(&all_forms());
    let text = disassemble(&insns);
    let back = assemble_insns(&text).unwrap_or_else(|e| panic!("{e}\n"));
    for (i, (a, b)) in insns.iter().zip(&back).enumerate() {
        assert_eq!(a, b, "insn {i}: {}", disassemble(&insns[i..=i]));
    }
    assert_eq!(back.len(), insns.len());
}

/// Random instruction bytes, kept when they decode (so every valid encoding is reachable),
/// with ld_imm64 given a valid second half often enough to matter.
fn valid_insns() -> impl Strategy<Value = Vec<Insn>> {
    prop::collection::vec(
        (
            any::<u8>(),
            0u8..=0xaa,
            any::<i16>(),
            any::<i32>(),
            any::<i32>(),
        ),
        1..64,
    )
    .prop_map(|raw| {
        let mut out = Vec::new();
        for (code, regs, off, imm, imm2) in raw {
            let regs = (regs & 0x0f).min(10) | ((regs >> 4).min(10) << 4);
            let insn = Insn {
                code,
                regs,
                off,
                imm,
            };
            let pair = [
                insn,
                Insn {
                    code: 0,
                    regs: 0,
                    off: 0,
                    imm: imm2,
                },
            ];
            let pair0 = [insn, Insn::default()];
            for cand in [&pair[..], &pair0[..], &pair[..1]] {
                if let Ok(d) = decode(cand, 0) {
                    out.extend_from_slice(&cand[..d.len()]);
                    break;
                }
            }
        }
        out
    })
}

proptest! {
    // PROPTEST_CASES raises the count for a longer fuzzing run.
    #![proptest_config(ProptestConfig::with_cases(
        std::env::var("PROPTEST_CASES").ok().and_then(|v| v.parse().ok()).unwrap_or(600)
    ))]

    #[test]
    fn random_valid_insns_round_trip(insns in valid_insns()) {
        let text = disassemble(&insns);
        let back = assemble_insns(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(back, insns);
    }

    #[test]
    fn arbitrary_bytes_disassemble_and_reassemble(bytes in prop::collection::vec(any::<u8>(), 0..256)) {
        let n = bytes.len() / 8 * 8;
        let insns = insns_from_bytes(&bytes[..n]).unwrap();
        let text = disassemble(&insns);
        let back = assemble_insns(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(back, insns);
    }

    #[test]
    fn arbitrary_text_never_panics(text in "\\PC{0,200}") {
        let _ = assemble_insns(&text);
    }

    #[test]
    fn asm_like_text_never_panics(text in "([rw][0-9]{1,2}|[-+*/=<>()&|^,:;#.]|[0-9x]{1,12}|ll|goto|if|call|lock|exit|s|u64|u8|\\.map|\\.section|\\.insn|skb|\\[|\\]|atomic_fetch_add|xchg_64|cmpxchg_64|[a-z]{1,6}|[ \\n\\t]){0,60}") {
        let _ = assemble_insns(&text);
    }
}

#[test]
fn labeled_disassembly_names_targets_and_reassembles() {
    let text = "r0 = 0\nloop:\nr0 += 1\nif r0 < 10 goto loop\nr1 = cb ll\ncall cb\nexit\ncb:\nr0 = 1\nexit\n";
    let insns = assemble_insns(text).unwrap();
    let listing = strobe::asm::disassemble_labeled(&insns);
    assert_eq!(
        listing,
        "    r0 = 0\nL1:\n    r0 += 1\n    if r0 < 10 goto L1\n    r1 = func(L7) ll\n    call L7\n    exit\nL7:\n    r0 = 1\n    exit\n"
    );
    assert_eq!(assemble_insns(&listing).unwrap(), insns);
}

proptest! {
    #![proptest_config(ProptestConfig::with_cases(300))]

    #[test]
    fn labeled_listing_of_random_insns_round_trips(insns in valid_insns()) {
        let text = strobe::asm::disassemble_labeled(&insns);
        let back = assemble_insns(&text).map_err(|e| TestCaseError::fail(format!("{e}\n{text}")))?;
        prop_assert_eq!(back, insns);
    }
}
