//! Assembler errors: `file:line:col: error: message`, the source line, a caret, and a
//! suggestion when there is a near miss; every bad line is reported in one run.

use strobe::asm::assemble_file;
use strobe::diag::SourceFile;

fn errors(text: &str) -> String {
    match assemble_file(SourceFile::new("p.s", text)) {
        Ok(_) => panic!("expected an error for {text:?}"),
        Err(e) => e.to_string(),
    }
}

#[test]
fn unknown_mnemonic_suggests_the_nearest() {
    assert_eq!(
        errors("  r0 = 0\n  exti\n"),
        "p.s:2:3: error: unknown instruction `exti`\n  exti\n  ^~~~\nhelp: did you mean `exit`?"
    );
}

#[test]
fn opcode_style_mnemonics_get_the_c_like_form() {
    let e = errors("add64 r1, r2\nldxw r0, [r1+8]\njsgt r1, 5, +2\n");
    assert!(
        e.contains("p.s:1:1: error: unknown instruction `add64`"),
        "{e}"
    );
    assert!(e.contains("help: this assembler uses the C-like syntax of LLVM and the verifier log: write `r1 += r2`"), "{e}");
    assert!(e.contains("write `r1 = *(u32 *)(r2 + 8)`"), "{e}");
    assert!(e.contains("write `if r1 s> r2 goto +1`"), "{e}");
}

#[test]
fn unknown_helper_suggests_the_nearest() {
    assert_eq!(
        errors("call bpf_map_lookup_elm\n"),
        "p.s:1:6: error: unknown function `bpf_map_lookup_elm`\ncall bpf_map_lookup_elm\n     ^~~~~~~~~~~~~~~~~~\nhelp: did you mean `bpf_map_lookup_elem`?"
    );
}

#[test]
fn unresolved_label_is_an_error_at_its_use() {
    assert_eq!(
        errors("start:\n  if r1 > 2 goto done\n  exit\n"),
        "p.s:2:18: error: unknown label `done`\n  if r1 > 2 goto done\n                 ^~~~"
    );
}

#[test]
fn several_errors_are_reported_in_source_order() {
    let e =
        errors("r0 = 1\nr0 += w1\nr11 = 1\n*(u64 *)(r10 - 40000) = r1\nr1 = 0x100000000\nexit\n");
    let heads: Vec<&str> = e.lines().filter(|l| l.starts_with("p.s:")).collect();
    assert_eq!(
        heads,
        [
            "p.s:2:7: error: cannot mix 64-bit (`rN`) and 32-bit (`wN`) registers in one instruction",
            "p.s:3:1: error: there is no register `r11` (registers are r0-r10, w0-w10)",
            "p.s:4:14: error: offset -40000 is out of range (-32768..=32767)",
            "p.s:5:6: error: immediate 4294967296 is out of range (-2147483648..=4294967295)",
        ]
    );
    assert!(e.contains("help: a 64-bit constant needs `ll`"), "{e}");
}

#[test]
fn malformed_operands_point_at_the_token() {
    assert_eq!(
        errors("r1 = *(u32 *)(r2 + 8\n"),
        "p.s:1:21: error: expected `)`, found end of line\nr1 = *(u32 *)(r2 + 8\n                    ^"
    );
    assert_eq!(
        errors("r0 = atomic_fetch_ad((u64 *)(r1 + 0), r0)\n"),
        "p.s:1:6: error: unknown operation `atomic_fetch_ad`\nr0 = atomic_fetch_ad((u64 *)(r1 + 0), r0)\n     ^~~~~~~~~~~~~~~\nhelp: did you mean `atomic_fetch_add`?"
    );
    assert_eq!(
        errors(".sectoin foo\n"),
        "p.s:1:1: error: unknown directive `.sectoin`\n.sectoin foo\n^~~~~~~~\nhelp: did you mean `.section`?"
    );
}

#[test]
fn jumps_across_sections_and_duplicate_labels_are_rejected() {
    let e = errors(".section a\nx:\n  exit\n.section b\n  goto x\nx:\n");
    assert!(
        e.contains("p.s:5:8: error: `x` is in another section"),
        "{e}"
    );
    assert!(
        e.contains("p.s:6:1: error: label `x` is defined twice"),
        "{e}"
    );
    assert!(e.contains("p.s:2:1: note: first defined here"), "{e}");
}
