//! `strobe disasm` prints what `llvm-objdump -dr` prints for the same object, apart from the
//! documented spellings (helper-call comments, `call pc±N` for BPF-to-BPF calls), for clang's
//! objects and strobe's; bad input exits 1 with a message, bad usage exits 2.

use crate::elf_common;
use crate::oracle;

use std::process::Command;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/clang_maps.o");

fn strobe() -> Command {
    Command::new(env!("CARGO_BIN_EXE_strobe"))
}

/// Maps strobe's documented spellings onto LLVM 14's so the listings compare line by line.
fn as_llvm_prints(line: &str) -> String {
    let line = match line.find(" # ") {
        Some(i) => &line[..i],
        None => line,
    };
    line.replace("call pc+", "call ")
        .replace("call pc-", "call -")
}

fn llvm_listing(test: &str, path: &std::path::Path) -> Option<String> {
    let tool = oracle::llvm_objdump(test)?;
    let out = Command::new(tool).arg("-dr").arg(path).output().unwrap();
    assert!(out.status.success());
    Some(String::from_utf8(out.stdout).unwrap())
}

fn strobe_listing(path: &std::path::Path) -> String {
    let out = strobe().arg("disasm").arg(path).output().unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

fn assert_same_listing(llvm: &str, strobe: &str) {
    let ours: Vec<String> = strobe.lines().map(as_llvm_prints).collect();
    let theirs: Vec<&str> = llvm.lines().collect();
    assert_eq!(ours, theirs, "strobe:\n{strobe}\nllvm-objdump:\n{llvm}");
}

#[test]
fn disasm_of_a_clang_object_matches_llvm_objdump() {
    let path = std::path::Path::new(FIXTURE);
    let Some(llvm) = llvm_listing("disasm_of_a_clang_object_matches_llvm_objdump", path) else {
        return;
    };
    assert_same_listing(&llvm, &strobe_listing(path));
}

#[test]
fn disasm_of_a_clang_object_with_globals_and_kfuncs_matches_llvm_objdump() {
    let path = std::path::Path::new(concat!(
        env!("CARGO_MANIFEST_DIR"),
        "/tests/fixtures/clang_globals.o"
    ));
    let test = "disasm_of_a_clang_object_with_globals_and_kfuncs_matches_llvm_objdump";
    let Some(llvm) = llvm_listing(test, path) else {
        return;
    };
    assert_same_listing(&llvm, &strobe_listing(path));
}

#[test]
fn disasm_of_a_strobe_object_matches_llvm_objdump() {
    let dir = oracle::TempDir::new("disasm-cli");
    let path = dir.path().join("sample.o");
    let bytes = strobe::elf::write_object(&elf_common::sample()).unwrap();
    std::fs::write(&path, bytes).unwrap();
    let Some(llvm) = llvm_listing("disasm_of_a_strobe_object_matches_llvm_objdump", &path) else {
        return;
    };
    assert_same_listing(&llvm, &strobe_listing(&path));
}

#[test]
fn listing_shows_sections_labels_bytes_jump_targets_and_relocations() {
    let bytes = std::fs::read(FIXTURE).unwrap();
    let obj = strobe::elf::read_object(&bytes).unwrap();
    let text = strobe::cli::disasm::listing("clang_maps.o", &obj);
    for want in [
        "\nclang_maps.o:\tfile format elf64-bpf\n",
        "\nDisassembly of section kprobe/vfs_read:\n\n0000000000000000 <count_reads>:\n",
        "       5:\t18 01 00 00 00 00 00 00 00 00 00 00 00 00 00 00\tr1 = 0 ll\n\t\t0000000000000028:  R_BPF_64_64\tcounts\n",
        "       9:\t15 06 08 00 00 00 00 00\tif r6 == 0 goto +8 <count_reads+0x90>\n",
        "\t\t0000000000000058:  R_BPF_64_32\t.text\n",
        "\n00000000000000a0 <second>:\n",
        "\t\t00000000000000a0:  R_BPF_64_32\ttriple\n",
    ] {
        assert!(text.contains(want), "missing {want:?} in:\n{text}");
    }
}

#[test]
fn a_section_without_a_symbol_at_its_start_is_labelled_by_its_name() {
    let mut obj = elf_common::sample();
    obj.sections[1].symbols.clear();
    let text = strobe::cli::disasm::listing("x.o", &obj);
    assert!(text.contains("\n0000000000000000 <.text>:\n"), "{text}");
}

#[test]
fn disasm_exit_codes_follow_the_cli_contract() {
    let missing = strobe()
        .args(["disasm", "/nonexistent/prog.o"])
        .output()
        .unwrap();
    assert_eq!(missing.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&missing.stderr).contains("cannot read /nonexistent/prog.o"));

    let dir = oracle::TempDir::new("disasm-cli-bad");
    let junk = dir.path().join("junk.o");
    std::fs::write(&junk, b"definitely not ELF").unwrap();
    let bad = strobe().arg("disasm").arg(&junk).output().unwrap();
    assert_eq!(bad.status.code(), Some(1));
    assert!(String::from_utf8_lossy(&bad.stderr).contains("not an ELF object"));

    let usage = strobe().arg("disasm").output().unwrap();
    assert_eq!(usage.status.code(), Some(2));
}

#[test]
fn disasm_source_of_a_clang_object_reassembles_with_strobe_asm() {
    let source = strobe()
        .args(["disasm", "--source", FIXTURE])
        .output()
        .unwrap();
    assert_eq!(source.status.code(), Some(0));
    let dir = oracle::TempDir::new("disasm-source");
    let s = dir.path().join("again.s");
    std::fs::write(&s, &source.stdout).unwrap();
    let asm = strobe().arg("asm").arg(&s).output().unwrap();
    assert_eq!(
        asm.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&asm.stderr)
    );
    let again =
        strobe::elf::read_object(&std::fs::read(dir.path().join("again.o")).unwrap()).unwrap();
    let orig = strobe::elf::read_object(&std::fs::read(FIXTURE).unwrap()).unwrap();
    assert_eq!(again.maps, orig.maps);
    assert_eq!(again.license, orig.license);
    assert_eq!(again.sections.len(), orig.sections.len());
    let section_names: Vec<&str> = orig.sections.iter().map(|s| s.name.as_str()).collect();
    for (a, o) in again.sections.iter().zip(&orig.sections) {
        assert_eq!(
            (&a.name, &a.insns, &a.symbols),
            (&o.name, &o.insns, &o.symbols)
        );
        // Relocations against a section symbol (clang's calls to static functions) are not
        // expressible in the assembler's syntax yet; every other one must survive.
        let named: Vec<_> = o
            .relocs
            .iter()
            .filter(|r| !section_names.contains(&r.symbol.as_str()))
            .collect();
        assert_eq!(a.relocs.iter().collect::<Vec<_>>(), named, "{}", o.name);
    }
}

#[test]
fn may_goto_targets_are_annotated_like_other_jumps() {
    use strobe::asm::{Insn, Object, Reg, Section};
    let obj = Object {
        sections: vec![Section {
            name: "socket".into(),
            insns: vec![Insn::may_goto(1), Insn::mov64_imm(Reg::R0, 0), Insn::exit()],
            symbols: vec![elf_common::sym("p", 0, true)],
            relocs: vec![],
        }],
        ..Object::default()
    };
    let text = strobe::cli::disasm::listing("x.o", &obj);
    assert!(
        text.contains("       0:\te5 00 01 00 00 00 00 00\tmay_goto +1 <p+0x10>\n"),
        "{text}"
    );
}
