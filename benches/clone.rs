//! Clone throughput: instantiating a 50-instruction template with six relocations (two map
//! fds, target index, two argument slots, return slot) per target, into a reused buffer and
//! into a fresh Vec. Prints one JSON object per line; target ≥ 1 M clones/s.

use std::hint::black_box;
use std::time::Instant;

use strobe::asm::isa::{AluOp, Size};
use strobe::asm::{Insn, Reg};
use strobe::template::{
    instantiate, instantiate_into, AttachKind, Field, Reloc, RelocKind, TargetValues, Template,
};

fn emit(name: &str, value: f64, unit: &str, target: &str) {
    println!(
        "{{\"name\":\"{name}\",\"value\":{value:.0},\"unit\":\"{unit}\",\"target\":\"{target}\"}}"
    );
}

fn template() -> Template {
    let mut t = Template::new("bench", AttachKind::Fexit, Vec::new());
    let (a, b) = (t.param_index("count"), t.param_index("pos"));
    let (m0, m1) = (t.map_index("counts"), t.map_index("events"));
    let push_reloc = |t: &mut Template, r: Reloc| t.relocs.push(r);
    let at = t.insns.len();
    t.insns.push(Insn::load(Size::Dw, Reg::R6, Reg::R1, 0));
    push_reloc(
        &mut t,
        Reloc::new(at, Field::Off, RelocKind::ArgSlot { param: a }),
    );
    let at = t.insns.len();
    t.insns.push(Insn::load(Size::Dw, Reg::R7, Reg::R1, 0));
    push_reloc(
        &mut t,
        Reloc::new(at, Field::Off, RelocKind::ArgSlot { param: b }),
    );
    let at = t.insns.len();
    t.insns.push(Insn::load(Size::Dw, Reg::R8, Reg::R1, 0));
    push_reloc(&mut t, Reloc::new(at, Field::Off, RelocKind::RetSlot));
    let at = t.insns.len();
    t.insns.push(Insn::mov64_imm(Reg::R9, 0));
    push_reloc(&mut t, Reloc::new(at, Field::Imm, RelocKind::TargetIndex));
    let at = t.insns.len();
    t.insns.extend(Insn::ld_map_fd(Reg::R1, 0));
    push_reloc(&mut t, Reloc::map_fd(at, m0));
    let at = t.insns.len();
    t.insns.extend(Insn::ld_map_fd(Reg::R2, 0));
    push_reloc(&mut t, Reloc::map_fd(at, m1));
    while t.insns.len() < 49 {
        t.insns.push(Insn::alu64_imm(AluOp::Add, Reg::R6, 1));
    }
    t.insns.push(Insn::exit());
    assert_eq!(t.insns.len(), 50);
    t
}

fn main() {
    let t = template();
    let fds = [3, 4];
    let n: u32 = 2_000_000;
    let mut buf = Vec::with_capacity(64);
    let start = Instant::now();
    for i in 0..n {
        let slots = [8 * (i % 6) as i64, 8 * ((i + 1) % 6) as i64];
        let v = TargetValues {
            index: i,
            map_fds: &fds,
            arg_slots: &slots,
            ret_slot: Some(48),
            ..Default::default()
        };
        instantiate_into(&t, &v, &mut buf).expect("bench template instantiates");
        black_box(&buf);
    }
    let secs = start.elapsed().as_secs_f64();
    emit(
        "clone_50_insns_reused_buffer",
        n as f64 / secs,
        "clones/s",
        ">= 1000000",
    );

    let start = Instant::now();
    for i in 0..n {
        let slots = [16, 8];
        let v = TargetValues {
            index: i,
            map_fds: &fds,
            arg_slots: &slots,
            ret_slot: Some(48),
            ..Default::default()
        };
        black_box(instantiate(&t, &v).expect("bench template instantiates"));
    }
    let secs = start.elapsed().as_secs_f64();
    emit(
        "clone_50_insns_fresh_vec",
        n as f64 / secs,
        "clones/s",
        ">= 1000000",
    );
}
