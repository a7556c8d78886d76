//! The instruction grammar: one line's tokens → an `Item` (an encoded instruction, or one
//! whose label or symbol the assembler resolves once every label is known).
//!
//! The syntax is what `llvm-objdump -d` prints and LLVM's assembler reads, plus the kernel
//! verifier log's spellings (`goto pc+3`, `call bpf_map_lookup_elem#1`, `(r10 -8)`) and strobe's
//! own for what LLVM cannot express (`map_fd(3) ll`, `call pc+2`, `call kfunc(123)`).
//! Operators and mnemonics come from the `isa` tables' `asm` column.

use super::cursor::{imm32, in_range, off16, Cursor, PResult};
use super::decode::{Call, Decoded, Operand};
use super::isa::{AluOp, AluSpecial, Endian, JmpOp, MovsxWidth, Pseudo, Size};
use super::lex::Tok;
use super::parse_mem::{
    atomic_by_name, atomic_names, parse_atomic_call, parse_load, parse_lock, parse_store,
    parse_store_release,
};
use super::Reg;
use crate::diag::{nearest, Diagnostic, Span};

/// A parsed instruction.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Item<'a> {
    Done(Decoded),
    /// A jump (`Ja` or `Jmp`, offset 0 for now) to a label.
    Jump {
        insn: Decoded,
        label: &'a str,
        span: Span,
    },
    /// `call NAME`: a label (BPF-to-BPF), an extern, or a helper, in that order.
    Call {
        name: &'a str,
        span: Span,
    },
    /// `rD = NAME ll` / `rD = NAME + 8 ll`: a map, a global (the addend goes in imm, as clang
    /// leaves it for the loader), or the address of a function (label).
    LdSym {
        dst: Reg,
        name: &'a str,
        addend: i32,
        span: Span,
    },
}

/// Words that start an instruction, for "did you mean" on an unknown mnemonic.
pub(super) const MNEMONICS: &[&str] = &[
    "may_goto",
    "exit",
    "call",
    "goto",
    "gotol",
    "if",
    "lock",
    "store_release",
];

pub(super) fn err(span: Span, msg: impl Into<String>) -> Box<Diagnostic> {
    Box::new(Diagnostic::error(span, msg))
}

/// Every register of one instruction must have the same width: `w` for 32-bit forms.
pub(super) fn same_width(wide: bool, other: bool, span: Span) -> PResult<()> {
    if wide == other {
        Ok(())
    } else {
        Err(err(
            span,
            "cannot mix 64-bit (`rN`) and 32-bit (`wN`) registers in one instruction",
        ))
    }
}

pub(super) fn same_reg(want: Reg, got: Reg, span: Span, form: &str) -> PResult<()> {
    if want == got {
        Ok(())
    } else {
        Err(err(
            span,
            format!("{form} needs the same register on both sides (`{want}`)"),
        ))
    }
}

/// Parses one instruction; the cursor is at its first token. `ld64` is set when a verifier-log
/// prefix `(18)` said this is an `ld_imm64` even without `ll`.
pub(super) fn parse_insn<'a>(c: &mut Cursor<'_, 'a>, ld64: bool) -> PResult<Item<'a>> {
    let start = c.pos;
    match c.peek() {
        Some(Tok::Reg { .. }) => parse_assign(c, ld64),
        Some(Tok::Punct("*")) => parse_store(c),
        Some(Tok::Ident) => {
            let (word, span) = c.ident().ok_or_else(|| c.error("an instruction"))?;
            match word {
                "exit" => c.end().map(|_| Item::Done(Decoded::Exit)),
                "call" => parse_call(c),
                "goto" | "gotol" => {
                    let long = word == "gotol";
                    let insn = Decoded::Ja { off: 0, long };
                    parse_target(c, insn)
                }
                "if" => parse_if(c),
                "may_goto" => parse_target(c, Decoded::MayGoto { off: 0 }),
                "lock" => parse_lock(c),
                "store_release" => parse_store_release(c),
                _ => {
                    c.pos = start;
                    Err(unknown_mnemonic(word, span))
                }
            }
        }
        _ => Err(c.error("an instruction")),
    }
}

fn unknown_mnemonic(word: &str, span: Span) -> Box<Diagnostic> {
    let digits = word.strip_prefix(['r', 'w']).unwrap_or("");
    if !digits.is_empty() && digits.bytes().all(|b| b.is_ascii_digit()) {
        return err(
            span,
            format!("there is no register `{word}` (registers are r0-r10, w0-w10)"),
        );
    }
    let d = Diagnostic::error(span, format!("unknown instruction `{word}`"));
    if let Some(form) = mnemonic_form(word) {
        return Box::new(d.with_help(format!(
            "this assembler uses the C-like syntax of LLVM and the verifier log: write `{form}`"
        )));
    }
    Box::new(match nearest(word, MNEMONICS.iter().copied()) {
        Some(m) => d.with_help(format!("did you mean `{m}`?")),
        None => d.with_help(
            "instructions look like `r0 = 1`, `r0 += r1`, `if r0 == 0 goto +1`, \
             `*(u64 *)(r10 - 8) = r1`, `call 1`, `exit`",
        ),
    })
}

/// The C-like form of an opcode-style mnemonic (`add64`, `jeq`, `ldxw`, `lddw`, as rbpf and
/// the kernel's own tables name them), built from the isa tables' names and `asm` tokens.
fn mnemonic_form(word: &str) -> Option<String> {
    let (base, w) = match word.strip_suffix("32") {
        Some(b) => (b, "w"),
        None => (word.strip_suffix("64").unwrap_or(word), "r"),
    };
    if let Some(op) = AluOp::from_name(base) {
        return Some(format!("{w}1 {} {w}2", op.asm()));
    }
    if let Some(op) = JmpOp::from_name(base) {
        return Some(format!("if {w}1 {} {w}2 goto +1", op.asm()));
    }
    if base == "ja" {
        return Some("goto +1".into());
    }
    if base == "neg" {
        return Some(format!("{w}1 = -{w}1"));
    }
    if base == "lddw" {
        return Some("r1 = 0x1234 ll".into());
    }
    for (prefix, shape) in [
        ("ldx", "r1 = *(T *)(r2 + 8)"),
        ("stx", "*(T *)(r1 + 8) = r2"),
        ("st", "*(T *)(r1 + 8) = 7"),
    ] {
        if let Some(sz) = base.strip_prefix(prefix).and_then(Size::from_name) {
            return Some(shape.replace('T', sz.asm()));
        }
    }
    None
}

/// `rD …`: an assignment, an ALU operation, a load or an atomic with a result.
fn parse_assign<'a>(c: &mut Cursor<'_, 'a>, ld64: bool) -> PResult<Item<'a>> {
    let (dst, wide, dspan) = c.reg()?;
    let op_span = c.span();
    let op = match c.bump().map(|t| t.tok) {
        Some(Tok::Punct(p)) => p,
        _ => {
            return Err(err(
                op_span,
                "expected an assignment or ALU operator such as `=` or `+=`",
            ))
        }
    };
    if op != "=" {
        let Some(op) = AluOp::ALL.into_iter().find(|o| o.asm() == op) else {
            return Err(
                err(op_span, format!("unknown operator `{op}`")).map_help(|| {
                    let ops = AluOp::ALL.map(|o| o.asm());
                    nearest(op, ops).map(|m| format!("did you mean `{m}`?"))
                }),
            );
        };
        let src = alu_operand(c, wide)?;
        c.end()?;
        return Ok(Item::Done(Decoded::Alu { wide, op, dst, src }));
    }
    match c.peek() {
        Some(Tok::Reg { .. }) => {
            let (src, w, span) = c.reg()?;
            same_width(wide, w, span)?;
            c.end()?;
            Ok(Item::Done(Decoded::Alu {
                wide,
                op: AluOp::Mov,
                dst,
                src: Operand::Reg(src),
            }))
        }
        Some(Tok::Punct("-")) if matches!(c.peek_at(1), Some(Tok::Reg { .. })) => {
            c.bump();
            let (src, w, span) = c.reg()?;
            same_width(wide, w, span)?;
            same_reg(dst, src, span, "negation")?;
            c.end()?;
            Ok(Item::Done(Decoded::Neg { wide, dst }))
        }
        Some(Tok::Num(_) | Tok::Punct("-" | "+")) => parse_const(c, dst, wide, dspan, ld64),
        Some(Tok::Punct("(")) => parse_movsx(c, dst, wide),
        Some(Tok::Punct("*")) => parse_load(c, dst, wide, dspan),
        Some(Tok::Ident) => parse_named(c, dst, wide, dspan),
        _ => Err(c.error("a register, number, load or operation")),
    }
}

pub(super) trait MapHelp {
    fn map_help(self, f: impl FnOnce() -> Option<String>) -> Self;
}

impl MapHelp for Box<Diagnostic> {
    fn map_help(mut self, f: impl FnOnce() -> Option<String>) -> Self {
        self.help = f();
        self
    }
}

fn alu_operand(c: &mut Cursor<'_, '_>, wide: bool) -> PResult<Operand> {
    if matches!(c.peek(), Some(Tok::Reg { .. })) {
        let (r, w, span) = c.reg()?;
        same_width(wide, w, span)?;
        Ok(Operand::Reg(r))
    } else {
        let (v, span) = c.signed()?;
        Ok(Operand::Imm(imm32(v, span)?))
    }
}

/// `rD = 5`, `rD = 0x5 ll`.
fn parse_const<'a>(
    c: &mut Cursor<'_, 'a>,
    dst: Reg,
    wide: bool,
    dspan: Span,
    ld64: bool,
) -> PResult<Item<'a>> {
    let (v, span) = c.signed()?;
    if c.eat_ident("ll") || ld64 {
        c.end()?;
        if !wide {
            return Err(err(dspan, "a 64-bit load (`ll`) needs a 64-bit register")
                .map_help(|| Some(format!("write `r{}`", dst.num()))));
        }
        let v = in_range(v, i64::MIN.into(), u64::MAX.into(), "immediate", span)? as u64;
        let (imm, next_imm) = (v as u32 as i32, (v >> 32) as u32 as i32);
        return Ok(Item::Done(Decoded::LdImm64 {
            dst,
            pseudo: Pseudo::None,
            imm,
            next_imm,
        }));
    }
    c.end()?;
    let imm = imm32(v, span).map_err(|e| {
        e.map_help(|| Some("a 64-bit constant needs `ll`: `r1 = 0x100000000 ll`".into()))
    })?;
    Ok(Item::Done(Decoded::Alu {
        wide,
        op: AluOp::Mov,
        dst,
        src: Operand::Imm(imm),
    }))
}

/// `rD = (s8)rS`.
fn parse_movsx<'a>(c: &mut Cursor<'_, 'a>, dst: Reg, wide: bool) -> PResult<Item<'a>> {
    c.expect_punct("(")?;
    let (ty, span) = c.ident().ok_or_else(|| c.error("`s8`, `s16` or `s32`"))?;
    let width = MovsxWidth::ALL
        .into_iter()
        .find(|w| w.asm() == ty)
        .ok_or_else(|| err(span, format!("expected `s8`, `s16` or `s32`, found `{ty}`")))?;
    c.expect_punct(")")?;
    let (src, w, rspan) = c.reg()?;
    same_width(wide, w, rspan)?;
    if !wide && width == MovsxWidth::S32 {
        return Err(err(span, "`(s32)` needs 64-bit registers"));
    }
    c.end()?;
    Ok(Item::Done(Decoded::Movsx {
        wide,
        dst,
        src,
        width,
    }))
}

/// Names that can follow `rD =`, for suggestions.
fn rhs_names() -> Vec<String> {
    let mut v = atomic_names();
    for e in Endian::ALL {
        for bits in [16, 32, 64] {
            v.push(format!("{}{bits}", e.asm()));
        }
    }
    v.extend(
        Pseudo::ALL
            .into_iter()
            .map(|p| p.asm().to_string())
            .filter(|s| !s.is_empty()),
    );
    v
}

/// `rD = NAME …`: byte swaps, atomics with a result, pseudo `ld_imm64`, symbols.
fn parse_named<'a>(c: &mut Cursor<'_, 'a>, dst: Reg, wide: bool, dspan: Span) -> PResult<Item<'a>> {
    let (name, span) = c.ident().ok_or_else(|| c.error("a name"))?;
    // Byte swaps: `le16`, `be32`, `bswap64`.
    for kind in Endian::ALL {
        if let Some(bits) = name
            .strip_prefix(kind.asm())
            .and_then(|b| b.parse::<u16>().ok())
        {
            if !matches!(bits, 16 | 32 | 64) {
                return Err(err(
                    span,
                    format!("`{name}`: the width must be 16, 32 or 64"),
                ));
            }
            let (src, _, rspan) = c.reg()?;
            same_reg(dst, src, rspan, "a byte swap")?;
            c.end()?;
            return Ok(Item::Done(Decoded::Endian { kind, bits, dst }));
        }
    }
    if c.is_punct("(") {
        return parse_call_form(c, name, span, dst, wide, dspan);
    }
    // A symbol: `r1 = my_map ll`.
    if !wide {
        return Err(err(dspan, "a 64-bit load needs a 64-bit register"));
    }
    let addend = if c.is_punct("+") || c.is_punct("-") {
        let (v, vspan) = c.signed()?;
        imm32(v, vspan)?
    } else {
        0
    };
    if !c.eat_ident("ll") {
        return Err(c.error("`ll` after a symbol (`r1 = my_map ll`)"));
    }
    c.end()?;
    Ok(Item::LdSym {
        dst,
        name,
        addend,
        span,
    })
}

/// `NAME(…)` on the right of `rD =`: atomics and pseudo `ld_imm64`.
fn parse_call_form<'a>(
    c: &mut Cursor<'_, 'a>,
    name: &'a str,
    span: Span,
    dst: Reg,
    wide: bool,
    dspan: Span,
) -> PResult<Item<'a>> {
    if let Some(p) = Pseudo::ALL
        .into_iter()
        .find(|p| !p.asm().is_empty() && p.asm() == name)
    {
        return parse_pseudo(c, p, dst, wide, dspan);
    }
    if name == AluSpecial::AddrSpaceCast.asm() {
        return parse_addr_space_cast(c, dst, wide, dspan);
    }
    if let Some(atomic) = atomic_by_name(name) {
        return parse_atomic_call(c, atomic, dst, wide, dspan);
    }
    let names = rhs_names();
    Err(
        err(span, format!("unknown operation `{name}`")).map_help(|| {
            nearest(name, names.iter().map(|s| s.as_str())).map(|m| format!("did you mean `{m}`?"))
        }),
    )
}

/// `rD = addr_space_cast(rS, dst_as, src_as)`.
fn parse_addr_space_cast<'a>(
    c: &mut Cursor<'_, 'a>,
    dst: Reg,
    wide: bool,
    dspan: Span,
) -> PResult<Item<'a>> {
    if !wide {
        return Err(err(dspan, "`addr_space_cast` needs 64-bit registers"));
    }
    c.expect_punct("(")?;
    let src = c.reg64()?;
    let mut spaces = [0u16; 2];
    for s in &mut spaces {
        c.expect_punct(",")?;
        let (v, span) = c.signed()?;
        *s = in_range(v, 0, u16::MAX.into(), "address space", span)? as u16;
    }
    c.expect_punct(")")?;
    c.end()?;
    let [dst_as, src_as] = spaces;
    Ok(Item::Done(Decoded::AddrSpaceCast {
        dst,
        src,
        dst_as,
        src_as,
    }))
}

/// `map_fd(3) ll`, `map_value(3, 16) ll`, `func(+4) ll`, `func(label) ll`.
fn parse_pseudo<'a>(
    c: &mut Cursor<'_, 'a>,
    pseudo: Pseudo,
    dst: Reg,
    wide: bool,
    dspan: Span,
) -> PResult<Item<'a>> {
    if !wide {
        return Err(err(dspan, "a 64-bit load needs a 64-bit register"));
    }
    c.expect_punct("(")?;
    if pseudo == Pseudo::Func && matches!(c.peek(), Some(Tok::Ident)) {
        let (name, span) = c.ident().ok_or_else(|| c.error("a label"))?;
        c.expect_punct(")")?;
        c.eat_ident("ll");
        c.end()?;
        return Ok(Item::LdSym {
            dst,
            name,
            addend: 0,
            span,
        });
    }
    let (v, span) = c.signed()?;
    let imm = imm32(v, span)?;
    let next_imm = if c.eat_punct(",") {
        let (v, span) = c.signed()?;
        imm32(v, span)?
    } else {
        0
    };
    c.expect_punct(")")?;
    c.eat_ident("ll");
    c.end()?;
    Ok(Item::Done(Decoded::LdImm64 {
        dst,
        pseudo,
        imm,
        next_imm,
    }))
}

/// `goto TARGET` / `if … goto TARGET` once the instruction is known: `+3`, `-1`, `pc+3`,
/// `label`; an llvm-objdump annotation `<f+0x10>` may follow.
fn parse_target<'a>(c: &mut Cursor<'_, 'a>, insn: Decoded) -> PResult<Item<'a>> {
    let item = if c.is_number_start()
        || (c.is_ident("pc") && matches!(c.peek_at(1), Some(Tok::Punct("+" | "-"))))
    {
        c.eat_ident("pc");
        let (v, span) = c.signed()?;
        Item::Done(match insn {
            Decoded::Ja { long: true, .. } => {
                let off =
                    in_range(v, i32::MIN.into(), i32::MAX.into(), "jump offset", span)? as i32;
                Decoded::Ja { off, long: true }
            }
            Decoded::Ja { long: false, .. } => Decoded::Ja {
                off: off16(v, span)?.into(),
                long: false,
            },
            Decoded::MayGoto { .. } => Decoded::MayGoto {
                off: off16(v, span)?,
            },
            Decoded::Jmp {
                wide, op, dst, src, ..
            } => Decoded::Jmp {
                wide,
                op,
                dst,
                src,
                off: off16(v, span)?,
            },
            other => other,
        })
    } else if let Some((label, span)) = c.ident() {
        Item::Jump { insn, label, span }
    } else {
        return Err(c.error("a jump target (`+3`, `-1` or a label)"));
    };
    if c.eat_punct("<") {
        c.pos = c.toks.len();
    }
    c.end()?;
    Ok(item)
}

/// `if rD OP src goto TARGET`.
fn parse_if<'a>(c: &mut Cursor<'_, 'a>) -> PResult<Item<'a>> {
    let (dst, wide, _) = c.reg()?;
    let op_span = c.span();
    let op = match c.bump().map(|t| t.tok) {
        Some(Tok::Punct(p)) => JmpOp::ALL.into_iter().find(|o| o.asm() == p),
        _ => None,
    }
    .ok_or_else(|| {
        err(
            op_span,
            "expected a comparison (`==`, `!=`, `>`, `s<=`, `&`, …)",
        )
    })?;
    let src = alu_operand(c, wide)?;
    c.expect_ident("goto")?;
    parse_target(
        c,
        Decoded::Jmp {
            wide,
            op,
            dst,
            src,
            off: 0,
        },
    )
}

/// `call 1`, `call bpf_map_lookup_elem`, `call pc+3`, `call label`, `call kfunc(123[, 1])`.
fn parse_call<'a>(c: &mut Cursor<'_, 'a>) -> PResult<Item<'a>> {
    if c.is_ident("pc") && matches!(c.peek_at(1), Some(Tok::Punct("+" | "-"))) {
        c.bump();
        let (v, span) = c.signed()?;
        let off = in_range(v, i32::MIN.into(), i32::MAX.into(), "call offset", span)? as i32;
        c.end()?;
        return Ok(Item::Done(Decoded::Call(Call::Local(off))));
    }
    if c.is_number_start() {
        let (v, span) = c.signed()?;
        c.end()?;
        return Ok(Item::Done(Decoded::Call(Call::Helper(imm32(v, span)?))));
    }
    let (name, span) = c
        .ident()
        .ok_or_else(|| c.error("a helper, label or `kfunc(id)`"))?;
    if name == "kfunc" && c.eat_punct("(") {
        let (v, span) = c.signed()?;
        let btf_id = imm32(v, span)?;
        let fd_idx = if c.eat_punct(",") {
            let (v, span) = c.signed()?;
            off16(v, span)?
        } else {
            0
        };
        c.expect_punct(")")?;
        c.end()?;
        return Ok(Item::Done(Decoded::Call(Call::Kfunc { btf_id, fd_idx })));
    }
    c.end()?;
    Ok(Item::Call { name, span })
}
