//! LLVM as the oracle for strobe's encodings (ISA v1–v4).
//!
//! The corpus (tests/llvm_corpus, generated from the `isa` tables) is assembled by LLVM (the
//! `ziglang` package's clang, `-mcpu=v4`) and by strobe; LLVM's `.text`, read with strobe's ELF
//! reader, must equal both the tables' encoding of each item and strobe's assembly of its text.
//! Then strobe disassembles LLVM's object, and that text must re-assemble — by LLVM and by
//! strobe — to the same bytes. Every disagreement is listed (text, LLVM bytes, strobe bytes)
//! before the test fails. Without the oracle the tests skip loudly.

use crate::llvm_corpus;
use crate::oracle;

use std::fmt::Write;
use std::path::Path;

use llvm_corpus::{corpus, expected_insns, uncovered_opcodes, Item};
use oracle::{Oracle, TempDir};
use strobe::asm::isa::{opcode, Class, Mode, Size};
use strobe::asm::{insn::insns_to_bytes, Insn};

/// Opcode bytes LLVM has no syntax for (see `llvm_corpus::LLVM_CANNOT_EXPRESS`): 64-bit
/// `ld_abs` and `ld_ind`.
const OPCODES_LLVM_CANNOT_EXPRESS: [u8; 2] = [
    opcode(Class::Ld, Mode::Abs.value() | Size::Dw.value()),
    opcode(Class::Ld, Mode::Ind.value() | Size::Dw.value()),
];

fn hex(insns: &[Insn]) -> String {
    insns_to_bytes(insns)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

/// Assembles lines with LLVM (as `dir/{name}.s`) and returns the `.text` instructions, or
/// LLVM's error.
fn try_llvm_assemble(
    oracle: &Oracle,
    dir: &Path,
    name: &str,
    lines: &[String],
) -> Result<Vec<Insn>, String> {
    let src = dir.join(format!("{name}.s"));
    let obj = dir.join(format!("{name}.o"));
    let mut text = String::from("\t.text\n");
    for l in lines {
        let _ = writeln!(text, "\t{l}");
    }
    std::fs::write(&src, text).unwrap();
    oracle.assemble(&src, &obj, "v4")?;
    Ok(text_insns(&std::fs::read(&obj).unwrap()))
}

/// [`try_llvm_assemble`] for lines LLVM must accept.
fn llvm_assemble(oracle: &Oracle, dir: &Path, name: &str, lines: &[String]) -> Vec<Insn> {
    try_llvm_assemble(oracle, dir, name, lines)
        .unwrap_or_else(|e| panic!("LLVM rejected {name}.s:\n{e}"))
}

fn text_insns(bytes: &[u8]) -> Vec<Insn> {
    let obj = strobe::elf::read_object(bytes).expect("strobe reads LLVM's object");
    obj.sections
        .into_iter()
        .find(|s| s.name == ".text")
        .map(|s| s.insns)
        .unwrap_or_default()
}

/// Lines LLVM rejects, each with its error, so that one bad line does not hide the rest.
fn llvm_rejects(oracle: &Oracle, dir: &Path, lines: &[String]) -> Vec<String> {
    let mut bad = Vec::new();
    for (i, l) in lines.iter().enumerate() {
        let src = dir.join(format!("one{i}.s"));
        std::fs::write(&src, format!("\t.text\n\t{l}\n")).unwrap();
        if let Err(e) = oracle.assemble(&src, &dir.join(format!("one{i}.o")), "v4") {
            bad.push(format!(
                "  `{l}`: {}",
                e.lines().next().unwrap_or("").trim()
            ));
        }
    }
    bad
}

/// strobe's assembly of one line (always `Some`: the `Option` lets a check be switched off
/// for a form strobe is known not to accept, without restructuring the comparisons).
fn strobe_assemble(text: &str) -> Option<Result<Vec<Insn>, String>> {
    Some(strobe::asm::assemble_insns(text).map_err(|e| e.to_string()))
}

#[test]
fn corpus_covers_every_opcode_and_has_400_items() {
    let items = corpus();
    assert!(items.len() >= 400, "corpus has only {} items", items.len());
    let uncovered: Vec<u8> = uncovered_opcodes(&items)
        .into_iter()
        .filter(|c| !OPCODES_LLVM_CANNOT_EXPRESS.contains(c))
        .collect();
    assert!(
        uncovered.is_empty(),
        "opcodes the decoder accepts but the corpus never uses: {uncovered:02x?}"
    );
}

#[test]
fn llvm_and_strobe_assemble_the_corpus_to_identical_bytes() {
    let Some(oracle) = Oracle::find("llvm_and_strobe_assemble_the_corpus_to_identical_bytes")
    else {
        return;
    };
    let dir = TempDir::new("oracle");
    let items = corpus();
    let lines: Vec<String> = items.iter().map(|i| i.text.clone()).collect();
    let Ok(llvm) = try_llvm_assemble(&oracle, dir.path(), "corpus", &lines) else {
        panic!(
            "LLVM rejects corpus lines (fix the corpus syntax):\n{}",
            llvm_rejects(&oracle, dir.path(), &lines).join("\n")
        );
    };
    eprintln!(
        "corpus: {} items, {} instructions from LLVM",
        items.len(),
        llvm.len()
    );
    let expected = expected_insns(&items);
    assert_eq!(
        llvm.len(),
        expected.len(),
        "LLVM emitted {} instructions for {} expected",
        llvm.len(),
        expected.len()
    );

    let mut report = String::new();
    let mut at = 0;
    for Item { text, expect } in &items {
        let want = expect.encode();
        let got_llvm = &llvm[at..at + want.len()];
        at += want.len();
        if got_llvm != want.as_slice() {
            let _ = writeln!(
                report,
                "tables vs LLVM: `{text}`\n    LLVM:   {}\n    tables: {} ({expect:?})",
                hex(got_llvm),
                hex(&want)
            );
        }
        match strobe_assemble(text) {
            None => {}
            Some(Ok(got)) if got == got_llvm => {}
            Some(Ok(got)) => {
                let _ = writeln!(
                    report,
                    "strobe vs LLVM: `{text}`\n    LLVM:   {}\n    strobe: {}",
                    hex(got_llvm),
                    hex(&got)
                );
            }
            Some(Err(diag)) => {
                let _ = writeln!(report, "strobe rejects `{text}`:\n{diag}");
            }
        }
    }
    assert!(report.is_empty(), "disagreements:\n{report}");
}

#[test]
fn strobe_disassembly_of_llvm_objects_reassembles_identically() {
    let Some(oracle) = Oracle::find("strobe_disassembly_of_llvm_objects_reassembles_identically")
    else {
        return;
    };
    let dir = TempDir::new("oracle-rt");
    let items = corpus();
    let lines: Vec<String> = items.iter().map(|i| i.text.clone()).collect();
    let llvm = llvm_assemble(&oracle, dir.path(), "corpus", &lines);

    // strobe's disassembly, one line per instruction, with where each starts.
    let mut disasm = Vec::new();
    let mut i = 0;
    while i < llvm.len() {
        let mut line = String::new();
        let n = strobe::asm::disasm::disassemble_one(&llvm, i, &mut line);
        disasm.push((i, n, line));
        i += n.max(1);
    }
    let texts: Vec<String> = disasm.iter().map(|(_, _, l)| l.clone()).collect();

    let mut report = String::new();
    match try_llvm_assemble(&oracle, dir.path(), "disasm", &texts) {
        Ok(again) => {
            if again != llvm {
                let mut at = 0;
                for (start, n, text) in &disasm {
                    let orig = &llvm[*start..start + n];
                    let got = again.get(at..at + n).unwrap_or(&[]);
                    at += n;
                    if orig != got {
                        let _ = writeln!(
                            report,
                            "LLVM re-assembly of strobe's `{text}`\n    original: {}\n    LLVM:     {}",
                            hex(orig),
                            hex(got)
                        );
                    }
                }
                if report.is_empty() {
                    let _ = writeln!(report, "LLVM re-assembly differs in length");
                }
            }
        }
        Err(_) => {
            let _ = writeln!(
                report,
                "LLVM rejects strobe's disassembly:\n{}",
                llvm_rejects(&oracle, dir.path(), &texts).join("\n")
            );
        }
    }
    for (start, n, text) in &disasm {
        let orig = &llvm[*start..start + n];
        match strobe_assemble(text) {
            None => {}
            Some(Ok(got)) if got == orig => {}
            Some(Ok(got)) => {
                let _ = writeln!(
                    report,
                    "strobe re-assembly of its own `{text}`\n    original: {}\n    strobe:   {}",
                    hex(orig),
                    hex(&got)
                );
            }
            Some(Err(diag)) => {
                let _ = writeln!(report, "strobe rejects its own `{text}`:\n{diag}");
            }
        }
    }
    assert!(report.is_empty(), "disagreements:\n{report}");
}

/// Whether LLVM's assembler has a spelling for this form (see `LLVM_CANNOT_EXPRESS`).
fn llvm_can_express(d: &strobe::asm::Decoded) -> bool {
    use strobe::asm::isa::{Pseudo, Size};
    use strobe::asm::{Call, Decoded};
    match *d {
        Decoded::LdImm64 { pseudo, .. } => pseudo == Pseudo::None,
        Decoded::Call(Call::Local(_) | Call::Kfunc { .. }) => false,
        Decoded::LdInd { size, imm, .. } => imm == 0 && size != Size::Dw,
        Decoded::LdAbs { size, .. } => size != Size::Dw,
        Decoded::Ja { off, long: true } => i16::try_from(off).is_ok(),
        _ => true,
    }
}

#[test]
fn llvm_assembles_strobe_disassembly_of_every_isa_form_to_its_encoding() {
    let Some(oracle) =
        Oracle::find("llvm_assembles_strobe_disassembly_of_every_isa_form_to_its_encoding")
    else {
        return;
    };
    let dir = TempDir::new("oracle-forms");
    let forms: Vec<_> = strobe_testkit::forms::all_forms()
        .into_iter()
        .filter(llvm_can_express)
        .collect();
    assert!(forms.len() >= 400, "only {} forms", forms.len());
    let lines: Vec<String> = forms.iter().map(|d| d.to_string()).collect();
    let Ok(llvm) = try_llvm_assemble(&oracle, dir.path(), "forms", &lines) else {
        panic!(
            "LLVM rejects strobe's disassembly:\n{}",
            llvm_rejects(&oracle, dir.path(), &lines).join("\n")
        );
    };
    let mut report = String::new();
    let mut at = 0;
    for (d, text) in forms.iter().zip(&lines) {
        let want = d.encode();
        let got = llvm.get(at..at + want.len()).unwrap_or(&[]);
        at += want.len();
        if got != want.as_slice() {
            let _ = writeln!(
                report,
                "`{text}`\n    LLVM:   {}\n    strobe: {} ({d:?})",
                hex(got),
                hex(&want)
            );
        }
    }
    assert!(report.is_empty(), "disagreements:\n{report}");
}

/// Other spellings LLVM's assembler accepts for the same encodings: 32-bit subregisters in
/// memory operands, unsigned and hex literals that wrap to the same immediate, 64-bit
/// literals at their bounds, trailing comments.
const ALTERNATE_SPELLINGS: &[&str] = &[
    "lock *(u32 *)(r1 + 0) += r2",
    "lock *(u32 *)(r1 + 0) += w2",
    "*(u32 *)(r1 + 0) = w2",
    "*(u8 *)(r1 - 1) = w3",
    "w1 = *(u32 *)(r2 + 8)",
    "w1 = *(u16 *)(r2 - 2)",
    "r0 = 4294967295",
    "w0 = 4294967295",
    "r0 = 0xffffffff",
    "r1 += 0x7fffffff",
    "r1 = -0x80000000",
    "if r1 & 0x10 goto -3",
    "if w1 > 0xffffffff goto +1",
    "r1 = 18446744073709551615 ll",
    "r1 = -9223372036854775808 ll",
    "r1 = 0xffffffffffffffff ll",
    "w1 >>= -1",
    "call 1 # bpf_map_lookup_elem",
    "r0 = 0 # trailing comment",
    "r0 = *(u8 *)skb[-1]",
    "r0 = *(u32 *)skb[0x10]",
    "goto +0",
    "r0 = le64 r0",
    "r0 = be32 r0",
];

#[test]
fn llvm_and_strobe_agree_on_alternate_spellings() {
    let Some(oracle) = Oracle::find("llvm_and_strobe_agree_on_alternate_spellings") else {
        return;
    };
    let dir = TempDir::new("oracle-alt");
    let all: Vec<String> = ALTERNATE_SPELLINGS.iter().map(|s| s.to_string()).collect();
    let llvm_all = llvm_assemble(&oracle, dir.path(), "alt", &all);
    let strobe_all: Option<Vec<Insn>> = ALTERNATE_SPELLINGS
        .iter()
        .map(|t| strobe_assemble(t).and_then(Result::ok))
        .collect::<Option<Vec<Vec<Insn>>>>()
        .map(|v| v.concat());
    if strobe_all.as_ref() == Some(&llvm_all) {
        return;
    }
    // Something differs: assemble line by line to say which.
    let mut report = String::new();
    for (i, text) in ALTERNATE_SPELLINGS.iter().enumerate() {
        let llvm = llvm_assemble(&oracle, dir.path(), &format!("alt{i}"), &[text.to_string()]);
        match strobe_assemble(text) {
            None => {}
            Some(Ok(got)) if got == llvm => {}
            Some(Ok(got)) => {
                let _ = writeln!(
                    report,
                    "`{text}`\n    LLVM:   {}\n    strobe: {}",
                    hex(&llvm),
                    hex(&got)
                );
            }
            Some(Err(diag)) => {
                let _ = writeln!(
                    report,
                    "strobe rejects `{text}` (LLVM: {}):\n{diag}",
                    hex(&llvm)
                );
            }
        }
    }
    assert!(report.is_empty(), "disagreements:\n{report}");
}
