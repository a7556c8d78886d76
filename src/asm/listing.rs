//! Object → assembler text: directives, labels, instructions and symbolic relocations, so that
//! `assemble(disassemble_object(obj)) == obj` for any object the assembler can produce (and
//! a readable listing for any other, e.g. one clang wrote).
//!
//! Input: an `Object`. Output: text — `.license`, `.map` and `.extern` lines, then per section
//! `.section NAME`, `.globl` lines, labels at their instruction and one instruction per line.
//! A relocated `ld_imm64` prints as `rD = SYMBOL ll`, a relocated call as `call SYMBOL`, when the
//! instruction holds exactly what the assembler would emit for them; otherwise the instruction
//! prints as is, followed by a `# reloc: SYMBOL` comment.

use std::collections::BTreeSet;
use std::fmt::Write;

use super::decode::{decode, Call, Decoded};
use super::disasm::disassemble_one;
use super::isa::{MapType, Pseudo};
use super::{Insn, Object, Section};

/// The whole object as assembler text.
pub fn disassemble_object(obj: &Object) -> String {
    let mut out = String::new();
    if let Some(l) = &obj.license {
        let _ = writeln!(out, ".license \"{}\"", l.replace('"', "\\\""));
    }
    for m in &obj.maps {
        let ty = MapType::from_value(m.map_type)
            .map_or(m.map_type.to_string(), |t| t.name().to_string());
        let _ = write!(
            out,
            ".map {} type={ty} key={} value={} entries={}",
            m.name, m.key_size, m.value_size, m.max_entries
        );
        if m.flags != 0 {
            let _ = write!(out, " flags={}", m.flags);
        }
        out.push('\n');
    }
    let labels: BTreeSet<&str> = obj
        .sections
        .iter()
        .flat_map(|s| s.symbols.iter().map(|y| y.name.as_str()))
        .chain(obj.maps.iter().map(|m| m.name.as_str()))
        .collect();
    let externs: BTreeSet<&str> = obj
        .sections
        .iter()
        .flat_map(|s| s.relocs.iter().map(|r| r.symbol.as_str()))
        .filter(|s| !labels.contains(s))
        .collect();
    for e in externs {
        let _ = writeln!(out, ".extern {e}");
    }
    for s in &obj.sections {
        out.push('\n');
        disassemble_section(s, &mut out);
    }
    out
}

/// One section: `.section`, `.globl`s, then labelled instructions.
pub fn disassemble_section(sec: &Section, out: &mut String) {
    if sec.name == ".text" {
        out.push_str(".text\n");
    } else {
        let _ = writeln!(out, ".section \"{}\"", sec.name);
    }
    for sym in sec.symbols.iter().filter(|s| s.global) {
        let _ = writeln!(out, ".globl {}", sym.name);
    }
    let mut symbols: Vec<_> = sec.symbols.iter().collect();
    symbols.sort_by_key(|s| s.insn);
    let mut relocs: Vec<_> = sec.relocs.iter().collect();
    relocs.sort_by_key(|r| r.insn);
    let (mut si, mut ri) = (0, 0);
    let mut i = 0;
    while i < sec.insns.len() {
        while si < symbols.len() && symbols[si].insn <= i {
            let _ = writeln!(out, "{}:", symbols[si].name);
            si += 1;
        }
        out.push_str("    ");
        let mut reloc = None;
        while ri < relocs.len() && relocs[ri].insn <= i {
            if relocs[ri].insn == i {
                reloc = Some(relocs[ri].symbol.as_str());
            }
            ri += 1;
        }
        let n = match reloc.and_then(|sym| symbolic(&sec.insns, i, sym)) {
            Some((text, n)) => {
                out.push_str(&text);
                n
            }
            None => {
                let n = disassemble_one(&sec.insns, i, out);
                if let Some(sym) = reloc {
                    let _ = write!(out, " # reloc: {sym}");
                }
                n
            }
        };
        out.push('\n');
        i += n;
    }
    for sym in &symbols[si..] {
        let _ = writeln!(out, "{}:", sym.name);
    }
}

/// The symbolic spelling of a relocated instruction, when it reassembles to the same bytes.
fn symbolic(insns: &[Insn], i: usize, sym: &str) -> Option<(String, usize)> {
    match decode(insns, i).ok()? {
        Decoded::LdImm64 {
            dst,
            pseudo: Pseudo::None,
            imm: 0,
            next_imm: 0,
        } => Some((format!("{dst} = {sym} ll"), 2)),
        Decoded::Call(Call::Local(-1)) => Some((format!("call {sym}"), 1)),
        _ => None,
    }
}
