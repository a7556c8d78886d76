//! Disassembler: decoding is strict, printing never panics, and every form decodes back.

use strobe::asm::{decode, disassemble, Decoded};
use strobe_testkit::forms::all_forms;

#[test]
fn every_form_decodes_to_itself() {
    let forms = all_forms();
    let insns = Decoded::encode_all(&forms);
    let mut i = 0;
    for d in &forms {
        assert_eq!(decode(&insns, i).as_ref(), Ok(d), "at {i}: {d}");
        i += d.len();
    }
}

#[test]
fn dump_forms_when_asked() {
    // STROBE_DUMP_FORMS=path writes the corpus text, for checking against LLVM by hand.
    if let Some(p) = std::env::var_os("STROBE_DUMP_FORMS") {
        let insns = Decoded::encode_all(&all_forms());
        std::fs::write(&p, disassemble(&insns)).unwrap();
        std::fs::write(
            format!("{}.bin", p.to_string_lossy()),
            strobe::asm::insn::insns_to_bytes(&insns),
        )
        .unwrap();
    }
}
