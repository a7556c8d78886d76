//! A sample object shared by the ELF integration tests: two programs in one `kprobe/` section
//! (one calling a bpf-to-bpf function in `.text`), a local label, two maps and a license.
#![allow(dead_code)]

use strobe::asm::{Insn, MapDef, Object, Reloc, Section, Symbol};

pub fn sym(name: &str, insn: usize, global: bool) -> Symbol {
    Symbol {
        name: name.into(),
        insn,
        global,
    }
}

pub fn reloc(insn: usize, symbol: &str) -> Reloc {
    Reloc {
        insn,
        symbol: symbol.into(),
    }
}

pub fn sample() -> Object {
    let kprobe = Section {
        name: "kprobe/vfs_read".into(),
        insns: vec![
            Insn::new(0x18, 1, 0, 0, 0), // r1 = counts ll
            Insn::new(0, 0, 0, 0, 0),
            Insn::new(0xbf, 2, 10, 0, 0), // r2 = r10
            Insn::new(0x07, 2, 0, 0, -4), // r2 += -4
            Insn::new(0x85, 0, 0, 0, 1),  // call bpf_map_lookup_elem
            Insn::new(0x85, 0, 1, 0, -1), // call helper
            Insn::new(0xb7, 0, 0, 0, 0),  // out: r0 = 0
            Insn::new(0x95, 0, 0, 0, 0),  // exit
            Insn::new(0xb7, 0, 0, 0, 1),  // second: r0 = 1
            Insn::new(0x95, 0, 0, 0, 0),
        ],
        symbols: vec![
            sym("count_reads", 0, true),
            sym("out", 6, false),
            sym("second", 8, true),
        ],
        relocs: vec![reloc(0, "counts"), reloc(5, "helper")],
    };
    let text = Section {
        name: ".text".into(),
        insns: vec![Insn::new(0xb7, 0, 0, 0, 1), Insn::new(0x95, 0, 0, 0, 0)],
        symbols: vec![sym("helper", 0, true)],
        relocs: vec![],
    };
    Object {
        sections: vec![kprobe, text],
        maps: vec![
            MapDef {
                name: "counts".into(),
                map_type: 1,
                key_size: 4,
                value_size: 8,
                max_entries: 1024,
                flags: 0,
            },
            MapDef {
                name: "events".into(),
                map_type: 27,
                key_size: 0,
                value_size: 0,
                max_entries: 4096,
                flags: 0,
            },
        ],
        license: Some("GPL".into()),
    }
}
