//! `-d asm`: each probe's template as assembler text that reassembles, with the script line
//! each run of instructions came from and the relocation table, as comments.
//!
//! Input: a [`CompiledScript`] and the script's [`SourceFile`]. Output: text. Map-fd
//! relocation sites print as `map_fd(N) ll`, N indexing the template's map table (listed in
//! the header), which is what the assembler reads back; jumps use generated labels.

use std::fmt::Write;

use crate::asm::listing::disassemble_labeled;
use crate::asm::Insn;
use crate::diag::SourceFile;
use crate::plan::CompiledScript;
use crate::template::{RelocKind, Template};

use crate::asm::isa::CODE_LD_IMM64;

/// The listing of every probe of `script`.
pub fn listing(script: &CompiledScript, src: &SourceFile) -> String {
    let mut out = String::new();
    for p in &script.probes {
        let _ = writeln!(out, "# probe {} ({})", p.name, p.template.name);
        out.push_str(&template_listing(&p.template, src));
        out.push('\n');
    }
    out
}

fn describe(t: &Template, k: &RelocKind) -> String {
    let name = |v: &[String], i: usize| v.get(i).cloned().unwrap_or_else(|| format!("#{i}"));
    match k {
        RelocKind::MapFd { map } => format!("map fd {}", name(&t.maps, *map)),
        RelocKind::MapValue { map, off } => format!("map value {} + {off}", name(&t.maps, *map)),
        RelocKind::TargetIndex => "target index".into(),
        RelocKind::ArgSlot { param } => format!("argument slot of `{}`", name(&t.params, *param)),
        RelocKind::RetSlot => "return value slot".into(),
        RelocKind::BtfId { func } => format!("btf id of {}", name(&t.btf_ids, *func)),
        RelocKind::Const { id } => format!("constant {}", name(&t.consts, *id)),
        RelocKind::Subprog { func } => format!("unlinked subprogram {func}"),
    }
}

/// One template: header (maps, relocations), then the code with source lines.
pub fn template_listing(t: &Template, src: &SourceFile) -> String {
    let mut out = String::new();
    let _ = writeln!(
        out,
        "# {} template, {} instructions",
        t.attach.name(),
        t.insns.len()
    );
    for (i, m) in t.maps.iter().enumerate() {
        let _ = writeln!(out, "# map {i}: {m}");
    }
    if !t.relocs.is_empty() {
        let _ = writeln!(out, "# relocations:");
        for r in &t.relocs {
            let _ = writeln!(out, "#   insn {:>4}: {}", r.insn, describe(t, &r.kind));
        }
    }
    // Map fd sites carry the map's index so the text reads (and reassembles) as `map_fd(N)`.
    let mut insns: Vec<Insn> = t.insns.clone();
    for r in &t.relocs {
        if let RelocKind::MapFd { map } = r.kind {
            if let Some(i) = insns.get_mut(r.insn) {
                i.imm = map as i32;
            }
        }
    }
    let text = disassemble_labeled(&insns);
    let mut index = 0usize;
    let mut last_line = None;
    for line in text.lines() {
        let trimmed = line.trim();
        let is_insn = !trimmed.is_empty() && !trimmed.ends_with(':') && !trimmed.starts_with('.');
        if is_insn {
            if let Some(span) = t.source_map.lookup(index) {
                let (l, _) = src.line_col(span.start);
                if last_line != Some(l) {
                    let text = src
                        .text
                        .lines()
                        .nth(l.saturating_sub(1))
                        .unwrap_or("")
                        .trim();
                    let _ = writeln!(out, "    # {}:{l}: {text}", src.name);
                    last_line = Some(l);
                }
            }
            index += if insns.get(index).is_some_and(|i| i.code == CODE_LD_IMM64) {
                2
            } else {
                1
            };
        }
        out.push_str(line);
        out.push('\n');
    }
    out
}
