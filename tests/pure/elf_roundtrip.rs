//! Property: any valid object (unique names, relocations on ld_imm64/call, arbitrary
//! instruction bytes, symbols anywhere incl. after the last instruction, references to
//! undefined symbols) is written, with either map encoding, and reads back identically,
//! symbols and relocations in instruction order.

use proptest::prelude::*;
use strobe::asm::{Insn, MapDef, Object, Reg, Reloc, Section, Symbol};
use strobe::elf::{read_object, write_object_with, MapEncoding, WriteOptions};

fn insn() -> impl Strategy<Value = Insn> {
    (any::<u8>(), any::<u8>(), any::<i16>(), any::<i32>()).prop_map(|(code, regs, off, imm)| Insn {
        code,
        regs,
        off,
        imm,
    })
}

/// One section: instructions, then symbols and relocation sites as fractions of its length.
fn section(idx: usize) -> impl Strategy<Value = Section> {
    (
        proptest::collection::vec(insn(), 1..40),
        proptest::collection::vec((any::<prop::sample::Index>(), any::<bool>()), 0..6),
        proptest::collection::vec(
            (any::<prop::sample::Index>(), any::<bool>(), 0..4usize),
            0..6,
        ),
        prop_oneof![
            Just(".text".to_string()),
            Just("kprobe/vfs_read".to_string())
        ],
    )
        .prop_map(move |(mut insns, syms, relocs, base)| {
            let len = insns.len();
            let symbols = syms
                .into_iter()
                .enumerate()
                .map(|(k, (at, global))| Symbol {
                    name: format!("s{idx}_{k}"),
                    insn: at.index(len + 1),
                    global,
                })
                .collect();
            let mut sites = Vec::new();
            for (at, ld, target) in relocs {
                let i = at.index(len);
                if sites.iter().any(|r: &Reloc| r.insn == i) {
                    continue;
                }
                // A relocation site must be an ld_imm64 or a call.
                insns[i].code = if ld {
                    Insn::ld_imm64(Reg::R0, 0)[0].code
                } else {
                    Insn::call_local(0).code
                };
                let symbol = match target {
                    0 => "m0".to_string(),
                    1 => format!("s{idx}_0"),
                    2 => "extern_fn".to_string(),
                    _ => "m1".to_string(),
                };
                sites.push(Reloc { insn: i, symbol });
            }
            Section {
                name: format!("{base}{idx}"),
                insns,
                symbols,
                relocs: sites,
            }
        })
}

fn object() -> impl Strategy<Value = Object> {
    (
        (1..4usize).prop_flat_map(|n| (0..n).map(section).collect::<Vec<_>>()),
        proptest::collection::vec(any::<[u32; 5]>(), 0..3),
        proptest::option::of("[ -~]{0,12}"),
    )
        .prop_map(|(sections, maps, license)| Object {
            sections,
            maps: maps
                .into_iter()
                .enumerate()
                .map(|(i, f)| MapDef {
                    name: format!("m{i}"),
                    map_type: f[0],
                    key_size: f[1],
                    value_size: f[2],
                    max_entries: f[3],
                    flags: f[4],
                })
                .collect(),
            license,
        })
}

fn normalised(mut o: Object) -> Object {
    for s in &mut o.sections {
        s.symbols
            .sort_by(|a, b| (a.insn, &a.name).cmp(&(b.insn, &b.name)));
        s.relocs.sort_by_key(|r| r.insn);
    }
    o
}

proptest! {
    #![proptest_config(ProptestConfig { cases: 500, ..ProptestConfig::default() })]

    #[test]
    fn written_objects_read_back_identically(obj in object()) {
        // Names are unique and relocation sites are ld_imm64/call: the writer must accept it.
        for maps in [MapEncoding::Btf, MapEncoding::Legacy] {
            let bytes = write_object_with(&obj, &WriteOptions { maps })
                .expect("a valid object is written");
            let back = read_object(&bytes).expect("strobe reads its own output");
            prop_assert_eq!(normalised(back), normalised(obj.clone()));
        }
    }
}
