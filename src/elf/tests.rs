use super::*;
use crate::asm::isa::AluOp;
use crate::asm::{Helper, Insn, MapDef, Object, Reg, Reloc, Section, Symbol};

#[path = "../../tests/elf_common/sample.rs"]
mod sample_object;

/// The integration tests' sample object (see `tests/elf_common/sample.rs`), with a non-zero
/// map flag so that flags are seen to round-trip.
pub(crate) fn sample() -> Object {
    let mut obj = sample_object::sample();
    obj.maps[1].flags = 1;
    obj
}

const LEGACY: WriteOptions = WriteOptions {
    maps: MapEncoding::Legacy,
};

#[test]
fn written_object_reads_back_identically() {
    let obj = sample();
    let bytes = write_object(&obj).unwrap();
    assert_eq!(read_object(&bytes).unwrap(), obj);
}

#[test]
fn legacy_written_object_reads_back_identically() {
    let obj = sample();
    let bytes = write_object_with(&obj, &LEGACY).unwrap();
    assert_eq!(read_object(&bytes).unwrap(), obj);
}

#[test]
fn writer_is_deterministic() {
    assert_eq!(
        write_object(&sample()).unwrap(),
        write_object(&sample()).unwrap()
    );
}

#[test]
fn empty_object_round_trips() {
    let obj = Object::default();
    assert_eq!(read_object(&write_object(&obj).unwrap()).unwrap(), obj);
}

#[test]
fn elf_header_is_relocatable_bpf_elf64_le() {
    let bytes = write_object(&sample()).unwrap();
    assert_eq!(&bytes[..4], b"\x7fELF");
    assert_eq!(bytes[4], 2, "ELFCLASS64");
    assert_eq!(bytes[5], 1, "ELFDATA2LSB");
    assert_eq!(u16::from_le_bytes([bytes[16], bytes[17]]), 1, "ET_REL");
    assert_eq!(u16::from_le_bytes([bytes[18], bytes[19]]), EM_BPF);
}

#[test]
fn goblin_sees_clang_style_symbols_and_rel_sections() {
    use goblin::elf::{section_header as sh, sym, Elf};
    use object::elf::{R_BPF_64_32, R_BPF_64_64};
    let bytes = write_object(&sample()).unwrap();
    let elf = Elf::parse(&bytes).unwrap();
    let name = |i: usize| {
        elf.shdr_strtab
            .get_at(elf.section_headers[i].sh_name)
            .unwrap()
    };
    let find = |n: &str| {
        (0..elf.section_headers.len())
            .find(|&i| name(i) == n)
            .unwrap()
    };
    let kprobe = find("kprobe/vfs_read");
    assert_eq!(
        elf.section_headers[kprobe].sh_flags,
        u64::from(sh::SHF_ALLOC | sh::SHF_EXECINSTR)
    );
    let rel = find(".relkprobe/vfs_read");
    assert_eq!(elf.section_headers[rel].sh_type, sh::SHT_REL);
    assert_eq!(elf.section_headers[rel].sh_info as usize, kprobe);
    let rels: Vec<_> = elf
        .shdr_relocs
        .iter()
        .find(|(i, _)| *i == rel)
        .unwrap()
        .1
        .iter()
        .map(|r| {
            let s = elf.syms.get(r.r_sym).unwrap();
            (r.r_offset, r.r_type, elf.strtab.get_at(s.st_name).unwrap())
        })
        .collect();
    assert_eq!(
        rels,
        vec![(0, R_BPF_64_64, "counts"), (40, R_BPF_64_32, "helper")]
    );
    let sym = |n: &str| {
        elf.syms
            .iter()
            .find(|s| elf.strtab.get_at(s.st_name) == Some(n))
            .unwrap()
    };
    let (first, second) = (sym("count_reads"), sym("second"));
    assert_eq!(
        (first.st_type(), first.st_bind()),
        (sym::STT_FUNC, sym::STB_GLOBAL)
    );
    assert_eq!((first.st_value, first.st_size), (0, 64));
    assert_eq!((second.st_value, second.st_size), (64, 16));
    let out = sym("out");
    assert_eq!(
        (out.st_type(), out.st_bind()),
        (sym::STT_NOTYPE, sym::STB_LOCAL)
    );
    // `counts` has type, key_size, value_size, max_entries; `events` type, max_entries,
    // map_flags: one 8-byte pointer member each.
    let (counts, events) = (sym("counts"), sym("events"));
    for s in [&counts, &events] {
        assert_eq!(
            (s.st_type(), s.st_bind()),
            (sym::STT_OBJECT, sym::STB_GLOBAL)
        );
        assert_eq!(name(s.st_shndx), ".maps");
    }
    assert_eq!((counts.st_value, counts.st_size), (0, 32));
    assert_eq!((events.st_value, events.st_size), (32, 24));
    let maps = &elf.section_headers[find(".maps")];
    assert_eq!(maps.sh_type, sh::SHT_PROGBITS);
    assert_eq!(maps.sh_flags, u64::from(sh::SHF_ALLOC | sh::SHF_WRITE));
    let data = &bytes[maps.sh_offset as usize..][..maps.sh_size as usize];
    assert_eq!(data, &[0; 56][..]);
    let btf = &elf.section_headers[find(".BTF")];
    assert_eq!((btf.sh_type, btf.sh_flags), (sh::SHT_PROGBITS, 0));
    assert!(!(0..elf.section_headers.len()).any(|i| name(i) == "maps"));
    let license = &elf.section_headers[find("license")];
    assert_eq!(
        &bytes[license.sh_offset as usize..][..license.sh_size as usize],
        b"GPL\0"
    );
}

#[test]
fn btf_describes_each_map_as_a_var_at_its_symbol_in_the_maps_datasec() {
    use crate::btf::{Btf, TypeKind};
    let bytes = write_object(&sample()).unwrap();
    let elf = goblin::elf::Elf::parse(&bytes).unwrap();
    let shdr = elf
        .section_headers
        .iter()
        .find(|s| elf.shdr_strtab.get_at(s.sh_name) == Some(".BTF"))
        .unwrap();
    let btf = Btf::parse(&bytes[shdr.sh_offset as usize..][..shdr.sh_size as usize]).unwrap();
    let datasec = btf
        .types()
        .find(|t| t.name == ".maps")
        .expect("a DATASEC .maps");
    let TypeKind::Datasec(sec) = datasec.kind else {
        panic!("`.maps` is not a DATASEC: {:?}", datasec.kind);
    };
    let mut seen = Vec::new();
    for entry in sec.entries() {
        let var = btf.type_by_id(entry.type_id).unwrap();
        let TypeKind::Var { type_id, .. } = var.kind else {
            panic!("DATASEC entry is not a VAR");
        };
        let symbol = elf
            .syms
            .iter()
            .find(|s| elf.strtab.get_at(s.st_name) == Some(var.name))
            .unwrap();
        assert_eq!(
            (u64::from(entry.offset), u64::from(entry.size)),
            (symbol.st_value, symbol.st_size),
            "VAR {} lies where its symbol does",
            var.name
        );
        let TypeKind::Struct(members) = btf.resolve(type_id).unwrap().kind else {
            panic!("VAR {} is not of a struct type", var.name);
        };
        let names: Vec<&str> = members.iter().map(|m| m.name).collect();
        seen.push((var.name.to_string(), names));
    }
    assert_eq!(
        seen,
        [
            (
                "counts".to_string(),
                vec!["type", "key_size", "value_size", "max_entries"]
            ),
            (
                "events".to_string(),
                vec!["type", "max_entries", "map_flags"]
            ),
        ]
    );
}

#[test]
fn legacy_encoding_writes_bpf_map_def_records_in_maps() {
    use goblin::elf::Elf;
    let bytes = write_object_with(&sample(), &LEGACY).unwrap();
    let elf = Elf::parse(&bytes).unwrap();
    let section = |n: &str| {
        elf.section_headers
            .iter()
            .find(|s| elf.shdr_strtab.get_at(s.sh_name) == Some(n))
    };
    assert!(section(".maps").is_none() && section(".BTF").is_none());
    let maps = section("maps").expect("a legacy maps section");
    let data = &bytes[maps.sh_offset as usize..][..maps.sh_size as usize];
    assert_eq!(
        &data[20..40],
        &[27, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 16, 0, 0, 1, 0, 0, 0]
    );
    let events = elf
        .syms
        .iter()
        .find(|s| elf.strtab.get_at(s.st_name) == Some("events"))
        .unwrap();
    assert_eq!((events.st_value, events.st_size), (20, 20));
}

#[test]
fn unknown_relocation_symbol_becomes_an_undefined_global() {
    let mut obj = sample();
    obj.sections[1].insns[0] = Insn::call_kfunc(-1, 0);
    obj.sections[1].relocs.push(Reloc {
        insn: 0,
        symbol: "bpf_kfunc_thing".into(),
    });
    let bytes = write_object(&obj).unwrap();
    let elf = goblin::elf::Elf::parse(&bytes).unwrap();
    let s = elf
        .syms
        .iter()
        .find(|s| elf.strtab.get_at(s.st_name) == Some("bpf_kfunc_thing"))
        .unwrap();
    assert_eq!(s.st_shndx, 0);
    assert_eq!(s.st_bind(), goblin::elf::sym::STB_GLOBAL);
    assert_eq!(read_object(&bytes).unwrap(), obj);
}

#[test]
fn writer_rejects_bad_objects_with_typed_errors() {
    let mut o = sample();
    o.sections[0].relocs.push(Reloc {
        insn: 99,
        symbol: "counts".into(),
    });
    assert_eq!(
        write_object(&o),
        Err(WriteError::RelocOutOfRange {
            section: "kprobe/vfs_read".into(),
            insn: 99,
            len: 10
        })
    );
    let mut o = sample();
    o.sections[0].relocs.push(Reloc {
        insn: 2,
        symbol: "counts".into(),
    });
    let code = o.sections[0].insns[2].code; // r2 = r10
    assert!(matches!(
        write_object(&o),
        Err(WriteError::RelocSite {
            insn: 2,
            code: c,
            ..
        }) if c == code && c == Insn::mov64_reg(Reg::R2, Reg::R10).code
    ));
    let mut o = sample();
    o.sections[1].symbols[0].name = "counts".into();
    assert_eq!(
        write_object(&o),
        Err(WriteError::DuplicateSymbol {
            name: "counts".into()
        })
    );
    let mut o = sample();
    o.sections[1].symbols[0].insn = 3;
    assert!(matches!(
        write_object(&o),
        Err(WriteError::SymbolOutOfRange {
            insn: 3,
            len: 2,
            ..
        })
    ));
    for reserved in ["maps", ".maps", ".BTF", "license"] {
        let mut o = sample();
        o.sections[1].name = reserved.into();
        for opts in [WriteOptions::default(), LEGACY] {
            assert!(matches!(
                write_object_with(&o, &opts),
                Err(WriteError::BadSectionName { .. })
            ));
        }
    }
    let mut o = sample();
    o.sections[1].name = o.sections[0].name.clone();
    assert!(matches!(
        write_object(&o),
        Err(WriteError::DuplicateSection { .. })
    ));
    let mut o = sample();
    o.maps[0].name = "cou\0nts".into();
    assert!(matches!(
        write_object(&o),
        Err(WriteError::BadSymbolName { .. })
    ));
    let mut o = sample();
    o.sections[0].relocs[0].symbol = String::new();
    assert!(matches!(
        write_object(&o),
        Err(WriteError::BadSymbolName { .. })
    ));
    let mut o = sample();
    o.license = Some("G\0PL".into());
    assert_eq!(write_object(&o), Err(WriteError::LicenseNul));
}

#[test]
fn a_label_after_the_last_instruction_is_kept() {
    let mut o = sample();
    o.sections[1].symbols.push(Symbol {
        name: "end".into(),
        insn: 2,
        global: false,
    });
    assert_eq!(read_object(&write_object(&o).unwrap()).unwrap(), o);
}

#[test]
fn reader_rejects_non_elf_and_non_bpf() {
    assert!(matches!(
        read_object(b"not an elf at all"),
        Err(ReadError::NotElf { .. })
    ));
    assert!(matches!(read_object(&[]), Err(ReadError::NotElf { .. })));
    let mut bytes = write_object(&sample()).unwrap();
    bytes[18..20].copy_from_slice(&62u16.to_le_bytes()); // EM_X86_64
    assert_eq!(read_object(&bytes), Err(ReadError::NotBpf { machine: 62 }));
}

/// Byte offset of the section header named `name` in a written object.
fn shdr_offset(bytes: &[u8], name: &str) -> usize {
    let elf = goblin::elf::Elf::parse(bytes).unwrap();
    let idx = elf
        .section_headers
        .iter()
        .position(|s| elf.shdr_strtab.get_at(s.sh_name) == Some(name))
        .unwrap();
    elf.header.e_shoff as usize + idx * elf.header.e_shentsize as usize
}

#[test]
fn reader_reports_truncated_and_malformed_sections() {
    let good = write_object(&sample()).unwrap();
    // sh_size is at byte 32 of an Elf64_Shdr.
    let at = shdr_offset(&good, ".text") + 32;
    let mut bytes = good.clone();
    bytes[at..at + 8].copy_from_slice(&12u64.to_le_bytes());
    assert_eq!(
        read_object(&bytes),
        Err(ReadError::BadSection {
            section: ".text".into(),
            problem: SectionProblem::PartialInsn { size: 12 }
        })
    );
    let mut bytes = good.clone();
    bytes[at..at + 8].copy_from_slice(&(1u64 << 40).to_le_bytes());
    assert!(matches!(
        read_object(&bytes),
        Err(ReadError::Truncated { ref section, .. }) if section == ".text"
    ));
    // Every prefix of a valid object is an error or a smaller object, never a panic.
    for cut in 0..good.len() {
        let _ = read_object(&good[..cut]);
    }
}

#[test]
fn legacy_map_symbols_without_size_get_the_five_field_layout() {
    let obj = sample();
    let mut bytes = write_object_with(&obj, &LEGACY).unwrap();
    let elf = goblin::elf::Elf::parse(&bytes).unwrap();
    let symtab = elf
        .section_headers
        .iter()
        .find(|s| s.sh_type == goblin::elf::section_header::SHT_SYMTAB)
        .unwrap();
    let (off, entsize) = (symtab.sh_offset as usize, symtab.sh_entsize as usize);
    // st_size is the last 8 bytes of an Elf64_Sym.
    let sites: Vec<usize> = elf
        .syms
        .iter()
        .enumerate()
        .filter(|(_, s)| s.st_type() == goblin::elf::sym::STT_OBJECT)
        .map(|(i, _)| off + i * entsize + 16)
        .collect();
    for at in sites {
        bytes[at..at + 8].copy_from_slice(&0u64.to_le_bytes());
    }
    assert_eq!(read_object(&bytes).unwrap().maps, obj.maps);
}
