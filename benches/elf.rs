//! ELF writer and reader throughput on a 1,000,000-instruction object (one program section,
//! a map reference every 100 instructions). Prints one JSON object per line.

use std::time::Instant;

use strobe::asm::isa::AluOp;
use strobe::asm::{Insn, MapDef, Object, Reg, Reloc, Section, Symbol};

const N: usize = 1_000_000;

fn object() -> Object {
    let mut insns = Vec::with_capacity(N);
    let mut relocs = Vec::new();
    while insns.len() + 2 <= N {
        if insns.len() % 100 == 0 {
            relocs.push(Reloc {
                insn: insns.len(),
                symbol: "counts".into(),
            });
            insns.extend(Insn::ld_imm64(Reg::R1, 0));
        } else {
            insns.push(Insn::alu64_imm(AluOp::Add, Reg::R1, insns.len() as i32));
        }
    }
    insns.push(Insn::exit());
    Object {
        sections: vec![Section {
            name: "kprobe/vfs_read".into(),
            insns,
            symbols: vec![Symbol {
                name: "prog".into(),
                insn: 0,
                global: true,
            }],
            relocs,
        }],
        maps: vec![MapDef {
            name: "counts".into(),
            map_type: 1,
            key_size: 4,
            value_size: 8,
            max_entries: 1024,
            flags: 0,
        }],
        license: Some("GPL".into()),
    }
}

fn best_of<T>(runs: usize, mut f: impl FnMut() -> T) -> f64 {
    (0..runs)
        .map(|_| {
            let t = Instant::now();
            std::hint::black_box(f());
            t.elapsed().as_secs_f64()
        })
        .fold(f64::INFINITY, f64::min)
}

fn main() {
    let obj = object();
    let n = obj.sections[0].insns.len() as f64;
    let bytes = strobe::elf::write_object(&obj).unwrap();
    assert_eq!(strobe::elf::read_object(&bytes).unwrap(), obj);
    let write = best_of(5, || strobe::elf::write_object(&obj).unwrap());
    let read = best_of(5, || strobe::elf::read_object(&bytes).unwrap());
    let list = best_of(3, || strobe::cli::disasm::listing("bench.o", &obj));
    // The 5 M/s target is the for assembling/disassembling; the listing (objdump
    // layout with raw bytes) has no target of its own, so it reports null.
    for (name, secs, target) in [
        ("elf_write_insns_per_sec", write, "5000000"),
        ("elf_read_insns_per_sec", read, "5000000"),
        ("disasm_listing_insns_per_sec", list, "null"),
    ] {
        println!(
            "{{\"name\":\"{name}\",\"value\":{:.0},\"unit\":\"insns/s\",\"target\":{target}}}",
            n / secs
        );
    }
}
