//! Object → assembler text: directives, labels, instructions and symbolic relocations, so that
//! `assemble(disassemble_object(obj)) == obj` for any object the assembler can produce (and
//! a readable listing for any other, e.g. one clang wrote).
//!
//! Input: an `Object`. Output: text — `.license`, `.map` and `.extern` lines, then per section
//! `.section NAME`, `.globl` lines, labels at their instruction and one instruction per line.
//! A relocated `ld_imm64` prints as `rD = SYMBOL ll` (`rD = SYMBOL + 8 ll` with the addend clang
//! leaves in imm for globals), a relocated call as `call SYMBOL`, when the
//! instruction holds exactly what the assembler would emit for them; otherwise the instruction
//! prints as is, followed by a `# reloc: SYMBOL` comment.
//!
//! `disassemble_labeled` prints a flat program with generated labels (`L7:`) in place of
//! jump, call and function-address offsets, for people reading code; it reassembles too.

use std::collections::BTreeSet;
use std::fmt::Write;

use super::decode::{decode, Call, DecodeError, Decoded};
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
            imm,
            next_imm: 0,
        } => {
            let text = match imm {
                0 => format!("{dst} = {sym} ll"),
                i if i < 0 => format!("{dst} = {sym} - {} ll", i.unsigned_abs()),
                i => format!("{dst} = {sym} + {i} ll"),
            };
            Some((text, 2))
        }
        Decoded::Call(Call::Local(-1)) => Some((format!("call {sym}"), 1)),
        _ => None,
    }
}

/// The instruction index a jump, local call or function address at `i` refers to.
fn target(d: &Decoded, i: usize) -> Option<i64> {
    let off = match *d {
        Decoded::Ja { off, .. } => i64::from(off),
        Decoded::Jmp { off, .. } | Decoded::MayGoto { off } => i64::from(off),
        Decoded::Call(Call::Local(off)) => i64::from(off),
        Decoded::LdImm64 {
            pseudo: Pseudo::Func,
            imm,
            ..
        } => i64::from(imm),
        _ => return None,
    };
    Some(i as i64 + 1 + off)
}

/// A flat program with labels `L<index>` at every jump, call and function-address target
/// that lands on an instruction; other offsets print as numbers.
pub fn disassemble_labeled(insns: &[Insn]) -> String {
    let mut decoded: Vec<(usize, Result<Decoded, DecodeError>)> = Vec::new();
    let mut i = 0;
    while i < insns.len() {
        let d = decode(insns, i);
        let len = d.as_ref().map_or(1, |d| d.len());
        decoded.push((i, d));
        i += len;
    }
    let starts: BTreeSet<usize> = decoded.iter().map(|(i, _)| *i).collect();
    let lands = |t: i64| usize::try_from(t).ok().filter(|t| starts.contains(t));
    let labels: BTreeSet<usize> = decoded
        .iter()
        .filter_map(|(i, d)| d.as_ref().ok().and_then(|d| target(d, *i)))
        .filter_map(lands)
        .collect();
    let mut out = String::with_capacity(insns.len() * 24);
    for (i, d) in &decoded {
        if labels.contains(i) {
            let _ = writeln!(out, "L{i}:");
        }
        out.push_str("    ");
        let labelled = d
            .as_ref()
            .ok()
            .and_then(|d| Some((d, lands(target(d, *i)?)?)));
        match labelled {
            Some((Decoded::Call(_), t)) => {
                let _ = write!(out, "call L{t}");
            }
            Some((Decoded::LdImm64 { dst, pseudo, .. }, t)) => {
                let _ = write!(out, "{dst} = {}(L{t}) ll", pseudo.asm());
            }
            Some((d, t)) => {
                // Jumps print as `… goto +3`: swap the offset for the label.
                let text = d.to_string();
                let head = text.rsplit_once(' ').map_or(text.as_str(), |(h, _)| h);
                let _ = write!(out, "{head} L{t}");
            }
            None => {
                disassemble_one(insns, *i, &mut out);
            }
        }
        out.push('\n');
    }
    out
}
