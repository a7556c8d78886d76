//! The ELF reader understands clang's BPF objects: BTF-defined maps in `.maps` (shapes read
//! from `.BTF`), several programs in one section, static and global callees in `.text`,
//! relocations against section symbols, and the debug/BTF sections it must ignore.
//! The committed fixture is checked everywhere; when the LLVM oracle is installed the fixture's
//! source is also recompiled and checked, so a newer LLVM's layout is covered too.

use crate::oracle;

use strobe::asm::{MapDef, Object, Reloc, Symbol};
use strobe::elf::read_object;

const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/clang_maps.o");
const SOURCE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/clang_maps.c");
const GLOBALS: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/clang_globals.o"
);
const GLOBALS_SOURCE: &str = concat!(
    env!("CARGO_MANIFEST_DIR"),
    "/tests/fixtures/clang_globals.c"
);

fn names(syms: &[Symbol]) -> Vec<(&str, usize, bool)> {
    syms.iter()
        .map(|s| (s.name.as_str(), s.insn, s.global))
        .collect()
}

fn relocs(r: &[Reloc]) -> Vec<(usize, &str)> {
    r.iter().map(|r| (r.insn, r.symbol.as_str())).collect()
}

fn check_clang_object(obj: &Object) {
    let secs: Vec<&str> = obj.sections.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(
        secs,
        [
            ".text",
            "kprobe/vfs_read",
            "tracepoint/syscalls/sys_enter_openat"
        ]
    );
    let text = &obj.sections[0];
    assert_eq!(
        names(&text.symbols),
        [("triple", 0, true), ("add_one", 3, false)]
    );
    let kprobe = &obj.sections[1];
    assert_eq!(kprobe.insns.len(), 22);
    assert_eq!(
        names(&kprobe.symbols),
        [("count_reads", 0, true), ("second", 20, true)]
    );
    // The static callee is reached through the `.text` section symbol, the global one by name.
    assert_eq!(
        relocs(&kprobe.relocs),
        [(5, "counts"), (11, ".text"), (20, "triple")]
    );
    assert!(kprobe.insns[5].is_ld_imm64());
    let tp = &obj.sections[2];
    assert_eq!(relocs(&tp.relocs), [(4, "slots")]);
    assert_eq!(obj.license.as_deref(), Some("Dual BSD/GPL"));
    assert_eq!(
        obj.maps,
        [
            MapDef {
                name: "counts".into(),
                map_type: 1,
                key_size: 4,
                value_size: 8,
                max_entries: 1024,
                flags: 0
            },
            MapDef {
                name: "slots".into(),
                map_type: 2,
                key_size: 4,
                value_size: 16,
                max_entries: 8,
                flags: 1024
            },
        ]
    );
}

#[test]
fn reads_the_committed_clang_fixture() {
    let bytes = std::fs::read(FIXTURE).expect("fixture is committed");
    check_clang_object(&read_object(&bytes).unwrap());
}

#[test]
fn reads_what_the_installed_llvm_compiles_now() {
    let Some(oracle) = oracle::Oracle::find("reads_what_the_installed_llvm_compiles_now") else {
        return;
    };
    let dir = oracle::TempDir::new("elf_clang");
    let out = dir.path().join("clang_maps.o");
    oracle
        .compile_c(std::path::Path::new(SOURCE), &out, "v3")
        .unwrap();
    check_clang_object(&read_object(&std::fs::read(&out).unwrap()).unwrap());
}

#[test]
fn reads_clang_objects_without_btf_giving_map_names_only() {
    let Some(oracle) =
        oracle::Oracle::find("reads_clang_objects_without_btf_giving_map_names_only")
    else {
        return;
    };
    let dir = oracle::TempDir::new("elf_clang_nobtf");
    let out = dir.path().join("nobtf.o");
    oracle
        .run(&[
            "cc",
            "-target",
            "bpfel-freestanding-none",
            "-O2",
            "-c",
            SOURCE,
            "-o",
            out.to_str().unwrap(),
        ])
        .unwrap();
    let obj = read_object(&std::fs::read(&out).unwrap()).unwrap();
    let maps: Vec<(&str, u32)> = obj
        .maps
        .iter()
        .map(|m| (m.name.as_str(), m.max_entries))
        .collect();
    assert_eq!(maps, [("counts", 0), ("slots", 0)]);
    assert_eq!(obj.sections.len(), 3);
}

fn check_clang_globals(obj: &Object) {
    let secs: Vec<&str> = obj.sections.iter().map(|s| s.name.as_str()).collect();
    assert_eq!(secs, ["raw_tp/sys_enter"]);
    let prog = &obj.sections[0];
    assert_eq!(prog.insns.len(), 41);
    assert_eq!(names(&prog.symbols), [("on_enter", 0, true)]);
    // Map references, global variables by name, a static string through its section symbol,
    // and the kfunc call against an undefined symbol.
    assert_eq!(
        relocs(&prog.relocs),
        [
            (5, "legacy"),
            (11, ".rodata.str1.1"),
            (21, "counter"),
            (27, "total"),
            (34, "events"),
            (39, "bpf_kfunc_probe")
        ]
    );
    assert_eq!(obj.license.as_deref(), Some("GPL"));
    let maps: Vec<(&str, u32, u32, u32, u32)> = obj
        .maps
        .iter()
        .map(|m| {
            (
                m.name.as_str(),
                m.map_type,
                m.key_size,
                m.value_size,
                m.max_entries,
            )
        })
        .collect();
    assert_eq!(maps, [("legacy", 2, 4, 8, 16), ("events", 27, 0, 0, 4096)]);
}

#[test]
fn reads_legacy_and_btf_maps_globals_and_kfunc_relocations() {
    let bytes = std::fs::read(GLOBALS).expect("fixture is committed");
    check_clang_globals(&read_object(&bytes).unwrap());
}

#[test]
fn reads_globals_as_the_installed_llvm_compiles_them_now() {
    let Some(oracle) =
        oracle::Oracle::find("reads_globals_as_the_installed_llvm_compiles_them_now")
    else {
        return;
    };
    let dir = oracle::TempDir::new("elf_clang_globals");
    let out = dir.path().join("clang_globals.o");
    oracle
        .compile_c(std::path::Path::new(GLOBALS_SOURCE), &out, "v3")
        .unwrap();
    check_clang_globals(&read_object(&std::fs::read(&out).unwrap()).unwrap());
}
