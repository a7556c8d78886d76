//! `strobe asm`: source → relocatable BPF ELF that strobe, llvm-objdump and aya-obj read back;
//! errors with carets and exit 1; bad usage exits 2. And the same symbolic source assembled by
//! LLVM and by strobe gives the same instructions and the same relocations.

use crate::oracle;

use std::path::Path;
use std::process::Command;

use strobe::asm::Object;

fn strobe() -> Command {
    Command::new(env!("CARGO_BIN_EXE_strobe"))
}

/// The part of the program both LLVM and strobe read: symbolic `ld_imm64` of a map and of a
/// function (LLVM's only spellings of those pseudo loads), a helper call, a BPF-to-BPF call
/// across sections, labels and two programs in one section.
const COMMON: &str = r#"
    .section "kprobe/vfs_read","ax",@progbits
    .globl count_reads
count_reads:
    r3 = helper ll
    r1 = counts ll
    r2 = r10
    r2 += -4
    call 1
    if r0 == 0 goto out
    call helper
out:
    r0 = 0
    exit
    .globl second
second:
    r0 = 1
    exit

    .text
    .globl helper
helper:
    r0 = 7
    exit
"#;

/// strobe's full source: the map and license directives LLVM has no equivalent for.
fn strobe_source() -> String {
    format!(".license \"GPL\"\n.map counts type=hash key=4 value=8 entries=1024\n{COMMON}")
}

fn assemble_with_cli(dir: &Path, src: &str) -> (std::process::Output, std::path::PathBuf) {
    let s = dir.join("prog.s");
    std::fs::write(&s, src).unwrap();
    let out = strobe().arg("asm").arg(&s).output().unwrap();
    (out, dir.join("prog.o"))
}

#[test]
fn asm_writes_an_object_that_reads_back_as_the_assembled_one() {
    let dir = oracle::TempDir::new("asm-cli");
    let (out, obj_path) = assemble_with_cli(dir.path(), &strobe_source());
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let written = strobe::elf::read_object(&std::fs::read(&obj_path).unwrap()).unwrap();
    let src = strobe::diag::SourceFile::new("prog.s", strobe_source());
    let mut assembled = strobe::asm::assemble(&src).unwrap();
    for s in &mut assembled.sections {
        s.symbols.sort_by_key(|s| s.insn);
        s.relocs.sort_by_key(|r| r.insn);
    }
    assert_eq!(written, assembled);
    assert_eq!(written.maps[0].max_entries, 1024);
    assert_eq!(written.license.as_deref(), Some("GPL"));
}

/// Names of the sections of an ELF file.
fn section_names(bytes: &[u8]) -> Vec<String> {
    let elf = goblin::elf::Elf::parse(bytes).unwrap();
    elf.section_headers
        .iter()
        .map(|s| elf.shdr_strtab.get_at(s.sh_name).unwrap_or("").to_string())
        .collect()
}

#[test]
fn asm_writes_btf_maps_by_default_and_legacy_maps_on_request() {
    let dir = oracle::TempDir::new("asm-cli-legacy");
    let (out, obj_path) = assemble_with_cli(dir.path(), &strobe_source());
    assert_eq!(out.status.code(), Some(0));
    let btf = std::fs::read(&obj_path).unwrap();
    let names = section_names(&btf);
    assert!(names.iter().any(|n| n == ".maps") && names.iter().any(|n| n == ".BTF"));
    assert!(!names.iter().any(|n| n == "maps"), "{names:?}");

    let legacy_path = dir.path().join("legacy.o");
    let out = strobe()
        .arg("asm")
        .arg(dir.path().join("prog.s"))
        .arg("--legacy-maps")
        .arg("-o")
        .arg(&legacy_path)
        .output()
        .unwrap();
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let legacy = std::fs::read(&legacy_path).unwrap();
    let names = section_names(&legacy);
    assert!(names.iter().any(|n| n == "maps"), "{names:?}");
    assert!(!names.iter().any(|n| n == ".maps" || n == ".BTF"));
    assert_eq!(
        strobe::elf::read_object(&legacy).unwrap(),
        strobe::elf::read_object(&btf).unwrap(),
        "both encodings read back as the same object"
    );
}

#[test]
fn asm_output_is_accepted_by_aya_obj_and_llvm_objdump() {
    let dir = oracle::TempDir::new("asm-cli-tools");
    let (out, obj_path) = assemble_with_cli(dir.path(), &strobe_source());
    assert_eq!(out.status.code(), Some(0));
    let bytes = std::fs::read(&obj_path).unwrap();
    let aya = aya_obj::Object::parse(&bytes).expect("aya-obj parses `strobe asm` output");
    assert!(aya.programs.contains_key("count_reads") && aya.programs.contains_key("second"));
    assert_eq!(aya.maps["counts"].max_entries(), 1024);

    let Some(tool) = oracle::llvm_objdump("asm_output_is_accepted_by_aya_obj_and_llvm_objdump")
    else {
        return;
    };
    let listing = Command::new(tool)
        .arg("-dr")
        .arg(&obj_path)
        .output()
        .unwrap();
    let listing = String::from_utf8(listing.stdout).unwrap();
    for want in [
        "Disassembly of section kprobe/vfs_read:",
        "<count_reads>:",
        "R_BPF_64_64\tcounts",
        "R_BPF_64_32\thelper",
        "<second>:",
        "Disassembly of section .text:",
        "<helper>:",
    ] {
        assert!(listing.contains(want), "missing {want:?}:\n{listing}");
    }
}

#[test]
fn asm_errors_have_carets_and_exit_1() {
    let dir = oracle::TempDir::new("asm-cli-err");
    let (out, obj_path) = assemble_with_cli(dir.path(), "r0 = 0\nr11 = 1\nexit\n");
    assert_eq!(out.status.code(), Some(1));
    let err = String::from_utf8_lossy(&out.stderr);
    let first = err.lines().next().unwrap_or("");
    assert!(
        first.starts_with(&format!("{}:2:", dir.path().join("prog.s").display())),
        "{err}"
    );
    assert!(err.contains("error:"), "{err}");
    assert!(
        err.lines().any(|l| l.trim_start().starts_with('^')),
        "{err}"
    );
    assert!(!obj_path.exists(), "no object is written on error");
}

#[test]
fn asm_usage_and_io_errors_have_their_exit_codes() {
    assert_eq!(strobe().arg("asm").output().unwrap().status.code(), Some(2));
    let missing = strobe().args(["asm", "/nonexistent/x.s"]).output().unwrap();
    assert_eq!(missing.status.code(), Some(1));
    let dir = oracle::TempDir::new("asm-cli-o");
    let s = dir.path().join("p.s");
    std::fs::write(&s, "r0 = 0\nexit\n").unwrap();
    let custom = dir.path().join("custom.o");
    let ok = strobe()
        .arg("asm")
        .arg(&s)
        .arg("-o")
        .arg(&custom)
        .output()
        .unwrap();
    assert_eq!(ok.status.code(), Some(0));
    assert!(custom.exists());
}

/// A section's name, instructions and relocations (instruction index, symbol).
type SectionView = (String, Vec<strobe::asm::Insn>, Vec<(usize, String)>);

/// Sections by name (LLVM always puts `.text` first), with instructions and relocations.
fn comparable(obj: &Object) -> Vec<SectionView> {
    let mut v: Vec<_> = obj
        .sections
        .iter()
        .map(|s| {
            let relocs = s
                .relocs
                .iter()
                .map(|r| (r.insn, r.symbol.clone()))
                .collect();
            (s.name.clone(), s.insns.clone(), relocs)
        })
        .collect();
    v.sort_by(|a, b| a.0.cmp(&b.0));
    v
}

#[test]
fn llvm_and_strobe_agree_on_symbolic_map_references_and_calls() {
    let Some(oracle) =
        oracle::Oracle::find("llvm_and_strobe_agree_on_symbolic_map_references_and_calls")
    else {
        return;
    };
    let dir = oracle::TempDir::new("asm-vs-llvm");
    let llvm_src = dir.path().join("llvm.s");
    std::fs::write(&llvm_src, COMMON).unwrap();
    let llvm_obj = dir.path().join("llvm.o");
    oracle.assemble(&llvm_src, &llvm_obj, "v4").unwrap();
    let llvm = strobe::elf::read_object(&std::fs::read(&llvm_obj).unwrap()).unwrap();

    let (out, strobe_obj) = assemble_with_cli(dir.path(), &strobe_source());
    assert_eq!(out.status.code(), Some(0));
    let ours = strobe::elf::read_object(&std::fs::read(&strobe_obj).unwrap()).unwrap();
    assert_eq!(comparable(&ours), comparable(&llvm));
    let globals = |o: &Object| -> Vec<(String, usize)> {
        let mut v: Vec<_> = o
            .sections
            .iter()
            .flat_map(|s| s.symbols.iter().filter(|s| s.global))
            .map(|s| (s.name.clone(), s.insn))
            .collect();
        v.sort();
        v
    };
    assert_eq!(globals(&ours), globals(&llvm));
}
