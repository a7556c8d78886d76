//! The line grammar of the assembler: an optional verifier-log prefix (`12: (b7)`), labels
//! (`name:`), then a directive or an instruction.
//!
//! Directives: `.text`, `.section NAME`, `.globl NAME` (`.global`), `.license "GPL"`,
//! `.map NAME type=hash key=4 value=8 entries=1024 [flags=0]`, `.extern NAME` (a symbol defined
//! elsewhere: a map or function the loader provides), `.insn CODE, REGS, OFF, IMM` (a raw
//! instruction). Directives clang emits that carry nothing for BPF (`.file`, `.p2align`, …)
//! are accepted and ignored.

use super::assemble::Asm;
use super::cursor::{imm32, in_range, off16, Cursor, PResult};
use super::isa::MapType;
use super::lex::{lex_line, Tok, Token};
use super::parse_insn::parse_insn;
use super::{Insn, MapDef};
use crate::diag::{nearest, Diagnostic, Span};

const DIRECTIVES: &[&str] = &[
    ".text", ".section", ".globl", ".global", ".license", ".map", ".extern", ".insn",
];

/// clang -S output that means nothing to a BPF object without debug info.
const IGNORED: &[&str] = &[
    ".file",
    ".type",
    ".size",
    ".p2align",
    ".align",
    ".addrsig",
    ".addrsig_sym",
    ".ident",
    ".cfi_sections",
    ".cfi_startproc",
    ".cfi_endproc",
    ".loc",
    ".hidden",
    ".protected",
    ".local",
    ".weak",
];

/// Parses the line `text[start..end]` into `asm`, recording any error there.
pub(super) fn parse_line<'a>(
    asm: &mut Asm<'a>,
    text: &'a str,
    start: usize,
    end: usize,
    toks: &mut Vec<Token>,
) {
    toks.clear();
    lex_line(&text[start..end], start, toks);
    if toks.is_empty() {
        return;
    }
    let mut c = Cursor {
        toks,
        pos: 0,
        text,
        eol: end as u32,
    };
    if let Err(d) = line(asm, &mut c, end) {
        asm.diags.push(*d);
    }
}

fn line<'a>(asm: &mut Asm<'a>, c: &mut Cursor<'_, 'a>, end: usize) -> PResult<()> {
    let ld64 = skip_log_prefix(c);
    // Labels, possibly several, possibly followed by an instruction.
    while matches!(c.peek(), Some(Tok::Ident)) && matches!(c.peek_at(1), Some(Tok::Punct(":"))) {
        let (name, span) = c.ident().ok_or_else(|| c.error("a label"))?;
        c.bump();
        asm.define_label(name, span);
    }
    if c.at_end() {
        return Ok(());
    }
    if let Some(t) = c.toks.get(c.pos).copied() {
        let word = c.tok_text(t);
        if t.tok == Tok::Ident && word.starts_with('.') {
            c.bump();
            let span = Span {
                start: t.start,
                end: t.end,
            };
            return directive(asm, c, word, span, &c.text[t.end as usize..end]);
        }
    }
    let item = parse_insn(c, ld64)?;
    asm.push_item(item);
    Ok(())
}

/// Skips `12:` and `(b7)` from a verifier log line; returns whether the opcode was `ld_imm64`.
fn skip_log_prefix(c: &mut Cursor<'_, '_>) -> bool {
    if matches!(c.peek(), Some(Tok::Num(_))) && matches!(c.peek_at(1), Some(Tok::Punct(":"))) {
        c.pos += 2;
    }
    let is_code = c.is_punct("(")
        && matches!(c.peek_at(2), Some(Tok::Punct(")")))
        && c.toks.get(c.pos + 1).is_some_and(|t| {
            let s = c.tok_text(*t);
            s.len() == 2 && s.bytes().all(|b| b.is_ascii_hexdigit())
        })
        && c.toks.len() > c.pos + 3;
    if !is_code {
        return false;
    }
    let code = u8::from_str_radix(c.tok_text(c.toks[c.pos + 1]), 16).unwrap_or(0);
    c.pos += 3;
    Insn {
        code,
        ..Insn::default()
    }
    .is_ld_imm64()
}

fn directive<'a>(
    asm: &mut Asm<'a>,
    c: &mut Cursor<'_, 'a>,
    word: &'a str,
    span: Span,
    rest: &str,
) -> PResult<()> {
    match word {
        ".text" => {
            asm.enter_section(".text");
            c.end()
        }
        ".section" => {
            let name = section_name(rest).ok_or_else(|| c.error("a section name"))?;
            asm.enter_section(name);
            Ok(())
        }
        ".globl" | ".global" => {
            let (name, span) = c.ident().ok_or_else(|| c.error("a symbol name"))?;
            asm.globals.push((name, span));
            c.end()
        }
        ".extern" => {
            let (name, span) = c.ident().ok_or_else(|| c.error("a symbol name"))?;
            asm.externs.insert(name, span);
            c.end()
        }
        ".license" => {
            let s = string(c)?;
            asm.license = Some(s);
            c.end()
        }
        ".map" => map(asm, c),
        ".insn" => {
            let mut f = [0i128; 4];
            let mut spans = [Span::default(); 4];
            for (i, (v, s)) in f.iter_mut().zip(spans.iter_mut()).enumerate() {
                if i > 0 {
                    c.expect_punct(",")?;
                }
                (*v, *s) = c.signed()?;
            }
            let code = in_range(f[0], 0, 255, "opcode", spans[0])? as u8;
            let regs = in_range(f[1], 0, 255, "register byte", spans[1])? as u8;
            let insn = Insn {
                code,
                regs,
                off: off16(f[2], spans[2])?,
                imm: imm32(f[3], spans[3])?,
            };
            c.end()?;
            asm.push_raw(insn);
            Ok(())
        }
        _ if IGNORED.contains(&word) || word.starts_with(".cfi_") => Ok(()),
        _ => {
            let d = Diagnostic::error(span, format!("unknown directive `{word}`"));
            Err(Box::new(match nearest(word, DIRECTIVES.iter().copied()) {
                Some(m) => d.with_help(format!("did you mean `{m}`?")),
                None => d.with_help(format!("directives: {}", DIRECTIVES.join(" "))),
            }))
        }
    }
}

/// The name after `.section`: a quoted string or the text up to a comma or blank, read raw so
/// that `uprobe//bin/bash:readline` is not taken for a comment.
fn section_name(rest: &str) -> Option<&str> {
    let rest = rest.trim_start();
    if let Some(q) = rest.strip_prefix('"') {
        return q.find('"').map(|e| &q[..e]);
    }
    let end = rest.find([',', ' ', '\t', '\r']).unwrap_or(rest.len());
    (end > 0).then(|| &rest[..end])
}

fn string(c: &mut Cursor<'_, '_>) -> PResult<String> {
    match c.toks.get(c.pos) {
        Some(t) if t.tok == Tok::Str => {
            c.bump();
            let s = c.tok_text(*t);
            let inner = s.strip_prefix('"').and_then(|s| s.strip_suffix('"'));
            inner.map(|s| s.replace("\\\"", "\"")).ok_or_else(|| {
                Box::new(Diagnostic::error(
                    Span {
                        start: t.start,
                        end: t.end,
                    },
                    "unterminated string",
                ))
            })
        }
        _ => Err(c.error("a string")),
    }
}

/// `.map NAME type=hash key=4 value=8 entries=1024 [flags=N]`.
fn map(asm: &mut Asm<'_>, c: &mut Cursor<'_, '_>) -> PResult<()> {
    let (name, name_span) = c.ident().ok_or_else(|| c.error("a map name"))?;
    let mut def = MapDef {
        name: name.to_string(),
        ..MapDef::default()
    };
    let mut seen_type = false;
    while !c.at_end() {
        let (key, kspan) = c.ident().ok_or_else(|| c.error("`key=value`"))?;
        c.expect_punct("=")?;
        if key == "type" {
            let vspan = c.span();
            def.map_type = if let Some((t, tspan)) = c.ident() {
                MapType::from_name(t).map(|t| t.value()).ok_or_else(|| {
                    let names = MapType::ALL.map(|t| t.name());
                    let d = Diagnostic::error(tspan, format!("unknown map type `{t}`"));
                    Box::new(match nearest(t, names) {
                        Some(m) => d.with_help(format!("did you mean `{m}`?")),
                        None => d,
                    })
                })?
            } else {
                let (v, _) = c.signed()?;
                in_range(v, 0, u32::MAX.into(), "map type", vspan)? as u32
            };
            seen_type = true;
            continue;
        }
        let (v, vspan) = c.signed()?;
        let v = in_range(v, 0, u32::MAX.into(), key, vspan)? as u32;
        match key {
            "key" => def.key_size = v,
            "value" => def.value_size = v,
            "entries" => def.max_entries = v,
            "flags" => def.flags = v,
            _ => {
                return Err(Box::new(
                    Diagnostic::error(kspan, format!("unknown map attribute `{key}`"))
                        .with_help("attributes: type, key, value, entries, flags"),
                ))
            }
        }
    }
    if !seen_type {
        return Err(Box::new(Diagnostic::error(
            name_span,
            "`.map` needs `type=…`",
        )));
    }
    if asm.map_index.contains_key(&def.name) {
        return Err(Box::new(Diagnostic::error(
            name_span,
            format!("map `{name}` is declared twice"),
        )));
    }
    asm.map_index.insert(def.name.clone(), asm.maps.len());
    asm.maps.push(def);
    Ok(())
}
