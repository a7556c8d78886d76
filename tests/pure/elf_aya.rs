//! aya-obj, a real-world BPF loader's object parser, accepts strobe's ELF output and relocates
//! it: programs are cut out of a shared section by symbol size, map definitions are read from
//! `.maps` + `.BTF` (and from a legacy `maps` section when asked for), map references get the
//! map fds, and the bpf-to-bpf call is linked.

use crate::elf_common;

use std::collections::HashSet;

use aya_obj::{Object as AyaObject, ProgramSection};

fn text_section_index(bytes: &[u8]) -> usize {
    let elf = goblin::elf::Elf::parse(bytes).unwrap();
    elf.section_headers
        .iter()
        .position(|s| elf.shdr_strtab.get_at(s.sh_name) == Some(".text"))
        .unwrap()
}

#[test]
fn aya_obj_parses_programs_maps_and_license() {
    let bytes = strobe::elf::write_object(&elf_common::sample()).unwrap();
    let obj = AyaObject::parse(&bytes).expect("aya-obj parses strobe's ELF");
    assert_eq!(obj.license.to_str().unwrap(), "GPL");
    let mut progs: Vec<&str> = obj.programs.keys().map(String::as_str).collect();
    progs.sort_unstable();
    assert_eq!(progs, ["count_reads", "second"]);
    for p in obj.programs.values() {
        assert!(matches!(p.section, ProgramSection::KProbe));
    }
    let insn_counts: Vec<(String, usize)> = {
        let mut v: Vec<_> = obj
            .functions
            .values()
            .map(|f| (f.name.clone(), f.instructions.len()))
            .collect();
        v.sort();
        v
    };
    assert_eq!(
        insn_counts,
        [
            ("count_reads".to_string(), 8),
            ("helper".to_string(), 2),
            ("second".to_string(), 2)
        ]
    );
    let counts = &obj.maps["counts"];
    assert_eq!(
        (
            counts.map_type(),
            counts.key_size(),
            counts.value_size(),
            counts.max_entries(),
            counts.map_flags()
        ),
        (1, 4, 8, 1024, 0)
    );
    assert_eq!(obj.maps["events"].map_type(), 27);
    assert_eq!(obj.maps["events"].max_entries(), 4096);
}

#[test]
fn aya_obj_reads_the_same_maps_from_the_legacy_encoding() {
    let shapes = |bytes: &[u8]| {
        let obj = AyaObject::parse(bytes).expect("aya-obj parses strobe's ELF");
        let mut v: Vec<_> = obj
            .maps
            .iter()
            .map(|(n, m)| {
                let shape = (m.map_type(), m.key_size(), m.value_size(), m.max_entries());
                (n.clone(), shape, m.map_flags())
            })
            .collect();
        v.sort();
        v
    };
    let mut sample = elf_common::sample();
    sample.maps[1].flags = 1;
    let btf = shapes(&strobe::elf::write_object(&sample).unwrap());
    let legacy_opts = strobe::elf::WriteOptions {
        maps: strobe::elf::MapEncoding::Legacy,
    };
    let legacy = shapes(&strobe::elf::write_object_with(&sample, &legacy_opts).unwrap());
    assert_eq!(btf, legacy);
    assert_eq!(
        btf,
        [
            ("counts".to_string(), (1, 4, 8, 1024), 0),
            ("events".to_string(), (27, 0, 0, 4096), 1)
        ]
    );
}

#[test]
fn aya_obj_relocates_map_fds_and_links_the_bpf_to_bpf_call() {
    let bytes = strobe::elf::write_object(&elf_common::sample()).unwrap();
    let mut obj = AyaObject::parse(&bytes).unwrap();
    let text: HashSet<usize> = [text_section_index(&bytes)].into();
    let maps = obj.maps.clone();
    let fds = [("counts", 42), ("events", 43)];
    obj.relocate_maps(fds.iter().map(|(n, fd)| (*n, *fd, &maps[*n])), &text)
        .expect("map relocation");
    obj.relocate_calls(&text).expect("call relocation");
    let prog = &obj.programs["count_reads"];
    let f = &obj.functions[&prog.function_key()];
    // ld_imm64 now loads map fd 42 (src_reg BPF_PSEUDO_MAP_FD = 1).
    assert_eq!(
        (f.instructions[0].src_reg(), f.instructions[0].imm),
        (1, 42)
    );
    // The helper was appended after the 8 program instructions and the call points at it.
    assert_eq!(f.instructions.len(), 10);
    let call = &f.instructions[5];
    assert_eq!(5 + 1 + call.imm, 8, "call lands on the appended helper");
}
