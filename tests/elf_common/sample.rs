//! The sample object itself, shared by the ELF unit tests (`src/elf/tests.rs`) and the ELF
//! integration tests (`tests/elf_common`) through `#[path]`, so both test the same object.
//! Its includer brings `Insn`, `Reg`, `Helper`, `AluOp` and the `Object` parts into scope.

use super::{AluOp, Helper, Insn, MapDef, Object, Reg, Reloc, Section, Symbol};

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

/// Two programs in `kprobe/vfs_read` (one calling a bpf-to-bpf function in `.text`), a local
/// label, two maps (a hash and a ringbuf) and a license.
pub fn sample() -> Object {
    let [ld_lo, ld_hi] = Insn::ld_imm64(Reg::R1, 0); // r1 = counts ll
    let kprobe = Section {
        name: "kprobe/vfs_read".into(),
        insns: vec![
            ld_lo,
            ld_hi,
            Insn::mov64_reg(Reg::R2, Reg::R10),
            Insn::alu64_imm(AluOp::Add, Reg::R2, -4),
            Insn::call_helper(Helper::MapLookupElem),
            Insn::call_local(-1),        // call helper
            Insn::mov64_imm(Reg::R0, 0), // out:
            Insn::exit(),
            Insn::mov64_imm(Reg::R0, 1), // second:
            Insn::exit(),
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
        insns: vec![Insn::mov64_imm(Reg::R0, 1), Insn::exit()],
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
