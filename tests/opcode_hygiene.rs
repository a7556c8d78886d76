//! "One place knows an opcode": outside `src/asm` (and the `build/` generator that reads
//! `isa/`), no source file may build an instruction from a literal opcode byte. Code builds
//! instructions with the typed builders (`Insn::mov64_imm`, `Insn::call_helper`, …) or
//! assembles text; this test keeps it that way by scanning `src/`, `benches/` and the shared
//! test support modules.

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
    for dir in ["src", "benches", "tests/sys_common", "tests/elf_common"] {
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
        for (line, code) in literal_opcodes(&text) {
            offenders.push(format!("{}:{line}: {}", rel.display(), code.trim()));
        }
    }
    assert!(
        offenders.is_empty(),
        "build instructions with the typed builders in strobe::asm, not literal opcodes:\n{}",
        offenders.join("\n")
    );
}
