//! End to end through a standard loader and the kernel: source → `strobe::asm::assemble` →
//! `strobe::elf::write_object` → aya-obj (parse, map and call relocation) → BPF_PROG_LOAD →
//! BPF_PROG_TEST_RUN. The program writes a map value and calls a function in `.text`; the
//! return value and the map contents prove the ELF's symbols, map definitions and both
//! relocation kinds mean what they should. Skips loudly without CAP_BPF. Loading and running
//! go through `strobe::sys`, the one place that fills `bpf_attr`.

use std::collections::HashSet;
use std::os::fd::AsRawFd;

use strobe::asm::Insn;
use strobe::sys::{
    Map, MapCreateOptions, MapType, Prog, ProgLoadOptions, ProgType, TestRunOptions,
};

const SOURCE: &str = r#"
.license "GPL"
.map counts type=array key=4 value=8 entries=1

.section "socket"
.globl prog
prog:
    *(u32 *)(r10 - 4) = 0
    r2 = r10
    r2 += -4
    r1 = counts ll
    call bpf_map_lookup_elem
    if r0 == 0 goto out
    r1 = 42
    *(u64 *)(r0 + 0) = r1
    call add_seven
    r0 += 1
    exit
out:
    r0 = 0
    exit

.text
.globl add_seven
add_seven:
    r0 = 7
    exit
"#;

#[test]
fn assembled_elf_loads_through_aya_obj_and_runs_in_the_kernel() {
    let test = "assembled_elf_loads_through_aya_obj_and_runs_in_the_kernel";
    let opts = MapCreateOptions {
        key_size: 4,
        value_size: 8,
        max_entries: 1,
        ..Default::default()
    };
    let map = match Map::create(MapType::Array, &opts) {
        Ok(map) => map,
        Err(e) => {
            strobe_testkit::skip(test, &format!("cannot create a BPF map: {e}"));
            return;
        }
    };

    let src = strobe::diag::SourceFile::new("prog.s", SOURCE);
    let obj = strobe::asm::assemble(&src).expect("assembles");
    let bytes = strobe::elf::write_object(&obj).unwrap();

    let mut aya = aya_obj::Object::parse(&bytes).expect("aya-obj parses");
    let text: HashSet<usize> = {
        let elf = goblin::elf::Elf::parse(&bytes).unwrap();
        let i = elf
            .section_headers
            .iter()
            .position(|s| elf.shdr_strtab.get_at(s.sh_name) == Some(".text"))
            .unwrap();
        [i].into()
    };
    let maps = aya.maps.clone();
    aya.relocate_maps(
        [("counts", map.as_raw_fd(), &maps["counts"])].into_iter(),
        &text,
    )
    .expect("map relocation");
    aya.relocate_calls(&text).expect("call relocation");
    let key = aya.programs["prog"].function_key();
    let insns: Vec<Insn> = aya.functions[&key]
        .instructions
        .iter()
        .map(|i| Insn::new(i.code, i.dst_reg(), i.src_reg(), i.off, i.imm))
        .collect();

    let prog = Prog::load(&ProgLoadOptions::new(ProgType::SocketFilter, &insns))
        .unwrap_or_else(|e| panic!("BPF_PROG_LOAD failed: {e}\n{}", e.log));

    let packet = [0u8; 64];
    let mut run = TestRunOptions {
        data_in: &packet,
        repeat: 1,
        ..Default::default()
    };
    let retval = prog.test_run(&mut run).expect("BPF_PROG_TEST_RUN").retval;
    assert_eq!(retval, 8, "prog returns add_seven() + 1");

    let value = map.lookup_vec(&0u32.to_ne_bytes()).expect("map lookup");
    let value = u64::from_ne_bytes(value.expect("key 0 exists")[..8].try_into().unwrap());
    assert_eq!(
        value, 42,
        "prog stored 42 through the relocated map reference"
    );
}
