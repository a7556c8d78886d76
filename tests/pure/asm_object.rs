//! Whole files: sections, symbols, maps, license and relocations, and the object listing
//! that reassembles to the same object.

use strobe::asm::{assemble, disassemble_object, Insn, MapDef, Reg, Reloc, Symbol};
use strobe::diag::SourceFile;

const PROG: &str = r#"
    .license "GPL"
    .map counts type=hash key=4 value=8 entries=1024
    .map events type=ringbuf key=0 value=0 entries=4096 flags=0
    .extern shared_fn
    .extern .rodata

    .section "kprobe/vfs_read"
    .globl on_read
on_read:
    r1 = counts ll          # symbolic map reference
    r2 = r10
    r2 += -4
    call bpf_map_lookup_elem
    if r0 == 0 goto out
    lock *(u64 *)(r0 + 0) += r1
out:
    call helper
    call shared_fn
    r3 = .rodata + 16 ll
    r4 = .rodata - 8 ll
    r0 = 0
    exit

    .text
helper:
    r0 = 1
    exit
"#;

fn assemble_ok(text: &str) -> strobe::asm::Object {
    let file = SourceFile::new("t.s", text);
    assemble(&file).unwrap_or_else(|d| panic!("{}", strobe::diag::render_all(&d, &file)))
}

#[test]
fn multi_section_file_becomes_an_object() {
    let obj = assemble_ok(PROG);
    assert_eq!(obj.license.as_deref(), Some("GPL"));
    assert_eq!(
        obj.maps[0],
        MapDef {
            name: "counts".into(),
            map_type: 1,
            key_size: 4,
            value_size: 8,
            max_entries: 1024,
            flags: 0
        }
    );
    assert_eq!(obj.maps[1].map_type, 27);
    assert_eq!(obj.sections.len(), 2);
    let prog = &obj.sections[0];
    assert_eq!(prog.name, "kprobe/vfs_read");
    assert_eq!(
        prog.symbols,
        vec![
            Symbol {
                name: "on_read".into(),
                insn: 0,
                global: true
            },
            Symbol {
                name: "out".into(),
                insn: 7,
                global: false
            },
        ]
    );
    // The map load is left for the loader, as clang leaves it: src 0, imm 0, a relocation.
    assert_eq!(&prog.insns[0..2], &Insn::ld_imm64(Reg::R1, 0));
    assert_eq!(
        prog.relocs,
        vec![
            Reloc {
                insn: 0,
                symbol: "counts".into()
            },
            Reloc {
                insn: 7,
                symbol: "helper".into()
            },
            Reloc {
                insn: 8,
                symbol: "shared_fn".into()
            },
            Reloc {
                insn: 9,
                symbol: ".rodata".into()
            },
            Reloc {
                insn: 11,
                symbol: ".rodata".into()
            },
        ]
    );
    // clang's spelling of a global: the section symbol, the offset in imm.
    assert_eq!(&prog.insns[9..11], &Insn::ld_imm64(Reg::R3, 16));
    assert_eq!(prog.insns[11].imm, -8);
    assert_eq!(prog.insns[7], Insn::call_local(-1));
    assert_eq!(obj.sections[1].name, ".text");
}

#[test]
fn object_listing_reassembles_to_the_same_object() {
    let obj = assemble_ok(PROG);
    let text = disassemble_object(&obj);
    let again = assemble_ok(&text);
    assert_eq!(again, obj, "{text}");
}

#[test]
fn unknown_map_reference_is_an_error_with_a_suggestion() {
    let file = SourceFile::new(
        "t.s",
        ".map counts type=hash key=4 value=8 entries=1\nr1 = countz ll\nexit\n",
    );
    let d = assemble(&file).unwrap_err();
    assert_eq!(
        strobe::diag::render_all_styled(&d, &file, strobe::diag::Style::Llvm),
        "t.s:2:6: error: unknown map or symbol `countz`\nr1 = countz ll\n     ^~~~~~\nhelp: did you mean `counts`?\n"
    );
}
