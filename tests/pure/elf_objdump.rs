//! `llvm-objdump -dr` reads strobe's ELF output: every program section, every symbol as a
//! `<label>:` header, the exact instruction bytes, and each relocation by type and symbol.

use crate::elf_common;
use crate::oracle;

use std::process::Command;

fn objdump(test: &str, obj: &strobe::asm::Object) -> Option<String> {
    let tool = oracle::llvm_objdump(test)?;
    let dir = oracle::TempDir::new("objdump");
    let path = dir.path().join("sample.o");
    std::fs::write(&path, strobe::elf::write_object(obj).unwrap()).unwrap();
    let out = Command::new(tool).arg("-dr").arg(&path).output().unwrap();
    assert!(
        out.status.success(),
        "llvm-objdump failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    Some(String::from_utf8(out.stdout).unwrap())
}

/// The listing without the file-name header line, tabs turned into single spaces.
fn normalise(listing: &str) -> Vec<String> {
    listing
        .lines()
        .filter(|l| !l.trim().is_empty() && !l.contains("file format"))
        .map(|l| l.split_whitespace().collect::<Vec<_>>().join(" "))
        .collect()
}

#[test]
fn llvm_objdump_shows_sections_symbols_instructions_and_relocations() {
    let Some(listing) = objdump(
        "llvm_objdump_shows_sections_symbols_instructions_and_relocations",
        &elf_common::sample(),
    ) else {
        return;
    };
    let expected = [
        "Disassembly of section kprobe/vfs_read:",
        "0000000000000000 <count_reads>:",
        "0: 18 01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 r1 = 0 ll",
        "0000000000000000: R_BPF_64_64 counts",
        "2: bf a2 00 00 00 00 00 00 r2 = r10",
        "3: 07 02 00 00 fc ff ff ff r2 += -4",
        "4: 85 00 00 00 01 00 00 00 call 1",
        "5: 85 10 00 00 ff ff ff ff call -1",
        "0000000000000028: R_BPF_64_32 helper",
        "0000000000000030 <out>:",
        "6: b7 00 00 00 00 00 00 00 r0 = 0",
        "7: 95 00 00 00 00 00 00 00 exit",
        "0000000000000040 <second>:",
        "8: b7 00 00 00 01 00 00 00 r0 = 1",
        "9: 95 00 00 00 00 00 00 00 exit",
        "Disassembly of section .text:",
        "0000000000000000 <helper>:",
        "0: b7 00 00 00 01 00 00 00 r0 = 1",
        "1: 95 00 00 00 00 00 00 00 exit",
    ];
    assert_eq!(normalise(&listing), expected, "full listing:\n{listing}");
}

#[test]
fn llvm_objdump_reads_an_object_without_maps_or_license() {
    let mut obj = elf_common::sample();
    obj.maps.clear();
    obj.license = None;
    obj.sections[0].relocs.retain(|r| r.symbol != "counts");
    let Some(listing) = objdump("llvm_objdump_reads_an_object_without_maps_or_license", &obj)
    else {
        return;
    };
    let lines = normalise(&listing);
    assert!(lines.contains(&"0: 18 01 00 00 00 00 00 00 00 00 00 00 00 00 00 00 r1 = 0 ll".into()));
    assert!(!listing.contains("R_BPF_64_64"));
    assert!(lines.contains(&"0000000000000028: R_BPF_64_32 helper".into()));
}
