//! The assembler: source text → `Object` (sections of instructions, symbols, relocations,
//! maps, license).
//!
//! Pass 1 reads the file line by line, encoding every instruction at once and leaving a fixup
//! for each one that names a label or symbol; pass 2 resolves the fixups once every label is
//! known, so forward references work. Errors are collected (one per bad line, plus one per
//! unresolved name) and returned together; nothing panics on any input.

use std::collections::HashMap;

use super::decode::Decoded;
use super::isa::{Helper, Pseudo};
use super::parse::parse_line;
use super::parse_insn::Item;
use super::{Insn, MapDef, Object, Reloc, Section, Symbol};
use crate::diag::{nearest, render_all_styled, Diagnostic, SourceFile, Span, Style};

/// Assembly failed: every diagnostic, with the source they point into.
#[derive(Clone, Debug, thiserror::Error)]
#[error("{}", render_all_styled(.diagnostics, .file, Style::Llvm).trim_end())]
pub struct AsmError {
    pub file: SourceFile,
    pub diagnostics: Vec<Diagnostic>,
}

type Names<'a, V> = HashMap<&'a str, V, crate::fnv::BuildFnv>;

#[derive(Clone, Copy, Debug)]
pub(super) struct LabelDef {
    pub section: usize,
    pub insn: usize,
    pub span: Span,
}

/// An instruction that names something resolved in pass 2.
#[derive(Clone, Copy, Debug)]
struct Fixup<'a> {
    section: usize,
    insn: usize,
    item: Item<'a>,
}

/// Assembler state shared by the line parser (pass 1) and the resolver (pass 2).
pub(super) struct Asm<'a> {
    pub sections: Vec<Section>,
    /// Section name → index in `sections` (a file may switch sections on every line).
    section_index: HashMap<String, usize>,
    pub current: Option<usize>,
    pub labels: Names<'a, LabelDef>,
    fixups: Vec<Fixup<'a>>,
    pub globals: Vec<(&'a str, Span)>,
    pub externs: Names<'a, Span>,
    pub maps: Vec<MapDef>,
    /// Map name → index in `maps`.
    pub map_index: HashMap<String, usize>,
    pub license: Option<String>,
    pub diags: Vec<Diagnostic>,
    /// The source length, for sizing the first section.
    size_hint: usize,
    /// Names an unknown name may be a typo of (labels and maps, then helpers), gathered once
    /// in pass 2 and sorted so suggestions do not depend on hash order.
    suggestions: std::cell::OnceCell<(Vec<String>, Vec<String>)>,
    /// How many "did you mean" searches pass 2 may still do: each costs the number of
    /// candidates, so a file full of unknown names stays linear.
    suggest_budget: std::cell::Cell<usize>,
}

/// Unknown names that get a "did you mean" search; later ones are reported without one.
const MAX_SUGGESTIONS: usize = 100;

impl<'a> Asm<'a> {
    fn new(size_hint: usize) -> Asm<'a> {
        Asm {
            sections: Vec::new(),
            section_index: HashMap::new(),
            current: None,
            labels: Names::default(),
            fixups: Vec::new(),
            globals: Vec::new(),
            externs: Names::default(),
            maps: Vec::new(),
            map_index: HashMap::new(),
            license: None,
            diags: Vec::new(),
            size_hint,
            suggestions: std::cell::OnceCell::new(),
            suggest_budget: std::cell::Cell::new(MAX_SUGGESTIONS),
        }
    }

    /// Switches to (or creates) the section `name`.
    pub fn enter_section(&mut self, name: &str) {
        let idx = match self.section_index.get(name) {
            Some(&i) => i,
            None => {
                // The first section usually holds everything: size it from the text (a line
                // is rarely shorter than 16 bytes) so a million-line file does not regrow it.
                let capacity = if self.sections.is_empty() {
                    self.size_hint / 16
                } else {
                    0
                };
                self.sections.push(Section {
                    name: name.to_string(),
                    insns: Vec::with_capacity(capacity),
                    ..Section::default()
                });
                self.section_index
                    .insert(name.to_string(), self.sections.len() - 1);
                self.sections.len() - 1
            }
        };
        self.current = Some(idx);
    }

    /// The current section, `.text` when no directive has named one.
    fn section(&mut self) -> usize {
        match self.current {
            Some(i) => i,
            None => {
                self.enter_section(".text");
                self.sections.len() - 1
            }
        }
    }

    pub fn define_label(&mut self, name: &'a str, span: Span) {
        let section = self.section();
        let insn = self.sections[section].insns.len();
        if let Some(prev) = self.labels.get(name) {
            self.diags.push(
                Diagnostic::error(span, format!("label `{name}` is defined twice"))
                    .with_label(prev.span, "first defined here"),
            );
            return;
        }
        self.labels.insert(
            name,
            LabelDef {
                section,
                insn,
                span,
            },
        );
        self.sections[section].symbols.push(Symbol {
            name: name.to_string(),
            insn,
            global: false,
        });
    }

    pub fn push_raw(&mut self, insn: Insn) {
        let s = self.section();
        self.sections[s].insns.push(insn);
    }

    pub fn push_item(&mut self, item: Item<'a>) {
        let section = self.section();
        let insns = &mut self.sections[section].insns;
        let insn = insns.len();
        match item {
            Item::Done(d) => {
                d.encode_into(insns);
                return;
            }
            Item::Jump { insn: d, .. } => d.encode_into(insns),
            Item::Call { .. } => insns.push(Insn::call_helper_id(0)),
            Item::LdSym { dst, addend, .. } => {
                insns.extend(Insn::ld_imm64(dst, u64::from(addend as u32)))
            }
        }
        self.fixups.push(Fixup {
            section,
            insn,
            item,
        });
    }

    /// Pass 2: patches every fixup, or reports why it cannot.
    fn resolve(&mut self) {
        let fixups = std::mem::take(&mut self.fixups);
        for f in fixups {
            if let Err(d) = self.resolve_one(f) {
                self.diags.push(*d);
            }
        }
        let globals = std::mem::take(&mut self.globals);
        for (name, span) in globals {
            match self.labels.get(name) {
                Some(def) => {
                    for sym in &mut self.sections[def.section].symbols {
                        if sym.name == name {
                            sym.global = true;
                        }
                    }
                }
                None if self.externs.contains_key(name) => {}
                None => self.diags.push(Diagnostic::error(
                    span,
                    format!("`.globl {name}` names a label that is never defined"),
                )),
            }
        }
    }

    fn unknown(&self, name: &str, span: Span, what: &str, helpers: bool) -> Box<Diagnostic> {
        let d = Diagnostic::error(span, format!("unknown {what} `{name}`"));
        let budget = self.suggest_budget.get();
        if budget == 0 {
            return Box::new(d);
        }
        self.suggest_budget.set(budget - 1);
        let (names, helper_names) = self.suggestions.get_or_init(|| {
            let mut names: Vec<String> = self.labels.keys().map(|s| s.to_string()).collect();
            names.extend(self.maps.iter().map(|m| m.name.clone()));
            names.sort_unstable();
            let helpers = Helper::all().skip(1).map(|h| h.to_string()).collect();
            (names, helpers)
        });
        let extra: &[String] = if helpers { helper_names } else { &[] };
        Box::new(
            match nearest(name, names.iter().chain(extra).map(|s| s.as_str())) {
                Some(m) => d.with_help(format!("did you mean `{m}`?")),
                None => d,
            },
        )
    }

    fn resolve_one(&mut self, f: Fixup<'a>) -> Result<(), Box<Diagnostic>> {
        let rel = |target: usize| target as i64 - (f.insn as i64 + 1);
        let reloc = |sections: &mut Vec<Section>, name: &str| {
            sections[f.section].relocs.push(Reloc {
                insn: f.insn,
                symbol: name.to_string(),
            })
        };
        match f.item {
            Item::Done(_) => Ok(()),
            Item::Jump { insn, label, span } => {
                let def = *self
                    .labels
                    .get(label)
                    .ok_or_else(|| self.unknown(label, span, "label", false))?;
                if def.section != f.section {
                    return Err(Box::new(
                        Diagnostic::error(span, format!("`{label}` is in another section"))
                            .with_label(def.span, "defined here")
                            .with_note("jumps stay within a section; use `call` across sections"),
                    ));
                }
                let off = rel(def.insn);
                let patched = match insn {
                    Decoded::Ja { long: true, .. } => i32::try_from(off)
                        .ok()
                        .map(|off| Decoded::Ja { off, long: true }),
                    Decoded::Ja { long: false, .. } => {
                        i16::try_from(off).ok().map(|o| Decoded::Ja {
                            off: o.into(),
                            long: false,
                        })
                    }
                    Decoded::MayGoto { .. } => {
                        i16::try_from(off).ok().map(|off| Decoded::MayGoto { off })
                    }
                    Decoded::Jmp {
                        wide, op, dst, src, ..
                    } => i16::try_from(off).ok().map(|off| Decoded::Jmp {
                        wide,
                        op,
                        dst,
                        src,
                        off,
                    }),
                    other => Some(other),
                };
                let d = patched.ok_or_else(|| {
                    Box::new(
                        Diagnostic::error(
                            span,
                            format!("jump to `{label}` is too far ({off} instructions)"),
                        )
                        .with_help("use `gotol` (ISA v4) for jumps beyond ±32767 instructions"),
                    )
                })?;
                self.sections[f.section].insns[f.insn] = d.encode()[0];
                Ok(())
            }
            Item::Call { name, span } => {
                let insn = if let Some(def) = self.labels.get(name).copied() {
                    if def.section == f.section {
                        let off = i32::try_from(rel(def.insn)).unwrap_or(i32::MAX);
                        Insn::call_local(off)
                    } else {
                        reloc(&mut self.sections, name);
                        Insn::call_local(-1)
                    }
                } else if self.externs.contains_key(name) {
                    reloc(&mut self.sections, name);
                    Insn::call_local(-1)
                } else if let Some(h) = Helper::from_name(name).filter(|h| h.id() > 0) {
                    Insn::call_helper(h)
                } else {
                    return Err(self.unknown(name, span, "function", true));
                };
                self.sections[f.section].insns[f.insn] = insn;
                Ok(())
            }
            Item::LdSym {
                dst,
                name,
                addend,
                span,
            } => {
                let def = self.labels.get(name).copied();
                match def {
                    Some(def) if def.section == f.section && addend != 0 => {
                        return Err(Box::new(Diagnostic::error(
                            span,
                            format!("the address of function `{name}` takes no offset"),
                        )));
                    }
                    Some(def) if def.section == f.section => {
                        let off = i32::try_from(rel(def.insn)).unwrap_or(i32::MAX);
                        let pair = Insn::ld_pseudo(dst, Pseudo::Func, off, 0);
                        self.sections[f.section].insns[f.insn..f.insn + 2].copy_from_slice(&pair);
                    }
                    Some(_) => reloc(&mut self.sections, name),
                    None if self.map_index.contains_key(name)
                        || self.externs.contains_key(name) =>
                    {
                        reloc(&mut self.sections, name)
                    }
                    None => return Err(self.unknown(name, span, "map or symbol", false)),
                }
                Ok(())
            }
        }
    }
}

/// Assembles a whole file into an `Object`, or every error found in it.
pub fn assemble(src: &SourceFile) -> Result<Object, Vec<Diagnostic>> {
    let mut asm = Asm::new(src.text.len());
    let text = src.text.as_str();
    let mut toks = Vec::with_capacity(16);
    let mut start = 0;
    while start <= text.len() {
        let end = text.as_bytes()[start..]
            .iter()
            .position(|&b| b == b'\n')
            .map_or(text.len(), |i| start + i);
        parse_line(&mut asm, text, start, end, &mut toks);
        start = end + 1;
    }
    asm.resolve();
    if asm.diags.is_empty() {
        Ok(Object {
            sections: asm.sections,
            maps: asm.maps,
            license: asm.license,
        })
    } else {
        asm.diags.sort_by_key(|d| d.span.start);
        Err(asm.diags)
    }
}

/// Assembles text into one flat instruction list (every section, in order): for tests and
/// quick tools. Symbolic references are left as their placeholders.
pub fn assemble_insns(text: &str) -> Result<Vec<Insn>, AsmError> {
    let file = SourceFile::new("<input>", text);
    match assemble(&file) {
        Ok(obj) => {
            let mut sections = obj.sections.into_iter();
            let mut insns = sections.next().map(|s| s.insns).unwrap_or_default();
            for s in sections {
                insns.extend(s.insns);
            }
            Ok(insns)
        }
        Err(diagnostics) => Err(AsmError { file, diagnostics }),
    }
}

/// `assemble` with errors bundled with their source, for callers that print them.
pub fn assemble_file(file: SourceFile) -> Result<Object, AsmError> {
    assemble(&file).map_err(|diagnostics| AsmError { file, diagnostics })
}
