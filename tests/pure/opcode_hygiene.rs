//! "One place knows an opcode": outside `src/asm` (and the `build/` generator that reads
//! `isa/`), no source file may build an instruction from a literal opcode byte, nor decode one
//! by hand. Code builds instructions with the typed builders (`Insn::mov64_imm`,
//! `Insn::call_helper`, …) or assembles text, and reads them through `asm::isa` (`class_of`,
//! `size_of`, `jmp_op_of`, the `CODE_*`/`PSEUDO_*` constants, `Helper`); this test keeps it
//! that way by scanning `src/`, `benches/` and the shared test support modules.

use std::path::{Path, PathBuf};

/// Directories whose files may spell opcodes: the ISA module itself.
const ALLOWED: &[&str] = &["src/asm"];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// `(line number, line)` of every `Insn::new(` whose first argument is an integer literal.
fn literal_opcodes(text: &str) -> Vec<(usize, &str)> {
    const CALL: &str = "Insn::new(";
    text.lines()
        .enumerate()
        .filter(|(_, line)| {
            line.match_indices(CALL).any(|(at, _)| {
                line[at + CALL.len()..]
                    .trim_start()
                    .starts_with(|c: char| c.is_ascii_digit())
            })
        })
        .map(|(i, line)| (i + 1, line))
        .collect()
}

/// Names of constants that would hold an encoding number (an opcode field, a pseudo source, a
/// helper id).
const ENCODING_CONSTS: &[&str] = &[
    "CLASS_",
    "MODE_",
    "SIZE_",
    "OP_",
    "CODE_",
    "PSEUDO_",
    "JMP_",
    "ALU_",
    "CALL_",
    "BPF_FUNC_",
    "BPF_PSEUDO_",
];

/// `(line number, line)` of every line that decodes an instruction by hand: an opcode byte
/// masked by or compared with a literal (`insn.code & 0x07`, `i.code == 0x85`), or an
/// encoding constant defined by a number (`const CLASS_JMP: u8 = 0x05;`).
fn hand_decoding(text: &str) -> Vec<(usize, &str)> {
    let literal_after = |s: &str| s.trim_start().starts_with(|c: char| c.is_ascii_digit());
    text.lines()
        .enumerate()
        .filter(|(_, line)| {
            let code = line.split("//").next().unwrap_or("");
            let masked = code.match_indices(".code").any(|(at, _)| {
                let rest = code[at + ".code".len()..].trim_start();
                ["&", "==", "!=", "|"].iter().any(|op| {
                    rest.strip_prefix(op)
                        .is_some_and(|r| !r.starts_with(['&', '=']) && literal_after(r))
                })
            });
            let defined = code.split_once("const ").is_some_and(|(before, rest)| {
                let before = before.trim();
                let is_item = before.is_empty() || before.starts_with("pub");
                let (name, value) = match (rest.split_once(':'), rest.split_once('=')) {
                    (Some((n, _)), Some((_, v))) => (n.trim(), v),
                    _ => return false,
                };
                is_item
                    && ENCODING_CONSTS.iter().any(|p| name.starts_with(p))
                    && literal_after(value)
            });
            masked || defined
        })
        .map(|(i, line)| (i + 1, line))
        .collect()
}

#[test]
fn hand_decoding_detector_sees_masks_comparisons_and_numeric_constants() {
    let masked = ["let c = i.code ", "& 0x07;"].concat();
    let compared = ["if insn.code ", "== 0x85 {"].concat();
    let constant = ["const CLASS_JMP: u8 ", "= 0x05;"].concat();
    let helper = ["    const BPF_FUNC_OVERRIDE_RETURN: i32 ", "= 58;"].concat();
    for bad in [&masked, &compared, &constant, &helper] {
        assert_eq!(hand_decoding(bad).len(), 1, "{bad}");
    }
    let good = [
        "let c = class_of(i.code);",
        "if i.code == CODE_CALL && i.src() == 0 {",
        "const CLASS_JMP: u8 = Class::Jmp.value();",
        "const MAX_STACK: i32 = 512;",
        "let exit = (code & 0xff) as i32;",
        "// i.code & 0x07 in a comment",
    ];
    for ok in good {
        assert!(hand_decoding(ok).is_empty(), "{ok}");
    }
}

#[test]
fn literal_opcode_detector_sees_hex_and_decimal_but_not_fields() {
    let hex = ["let i = Insn::new(", "0x95, 0, 0, 0, 0);"].concat();
    let dec = ["x(Insn::new( ", "7, 0, 0, 0, 0))"].concat();
    let field = ["Insn::new(", "i.code, i.dst_reg(), 0, 0, 0)"].concat();
    assert_eq!(literal_opcodes(&hex).len(), 1);
    assert_eq!(literal_opcodes(&dec).len(), 1);
    assert!(literal_opcodes(&field).is_empty());
}

#[test]
fn no_literal_opcodes_outside_the_isa_module() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR"));
    let mut files = Vec::new();
    for dir in [
        "src",
        "benches",
        "crates/strobe-testkit/src",
        "tests/sys_common",
        "tests/elf_common",
    ] {
        rust_files(&root.join(dir), &mut files);
    }
    assert!(
        files.len() > 20,
        "scanned only {} files: wrong root?",
        files.len()
    );
    let mut offenders = Vec::new();
    for file in &files {
        let rel = file.strip_prefix(root).unwrap();
        if ALLOWED.iter().any(|a| rel.starts_with(a)) {
            continue;
        }
        let text = std::fs::read_to_string(file).unwrap();
        for (line, code) in literal_opcodes(&text)
            .into_iter()
            .chain(hand_decoding(&text))
        {
            offenders.push(format!("{}:{line}: {}", rel.display(), code.trim()));
        }
    }
    assert!(
        offenders.is_empty(),
        "build instructions with the typed builders in strobe::asm and read them through \
         strobe::asm::isa, not literal opcodes:\n{}",
        offenders.join("\n")
    );
}
