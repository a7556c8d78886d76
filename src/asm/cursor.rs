//! A cursor over one line's tokens, with the small matchers the assembler's grammar is built
//! from. Every matcher either consumes what it expects or returns a diagnostic pointing at
//! the token it found instead (or at the end of the line).

use super::lex::{Tok, Token};
use super::Reg;
use crate::diag::{Diagnostic, Span};

pub(super) struct Cursor<'t, 'a> {
    pub toks: &'t [Token],
    pub pos: usize,
    /// The whole file: token spans index into it.
    pub text: &'a str,
    /// Byte offset of the end of the line, for "expected …, found end of line".
    pub eol: u32,
}

pub(super) type PResult<T> = Result<T, Box<Diagnostic>>;

impl<'t, 'a> Cursor<'t, 'a> {
    pub fn peek(&self) -> Option<Tok> {
        self.toks.get(self.pos).map(|t| t.tok)
    }

    pub fn peek_at(&self, n: usize) -> Option<Tok> {
        self.toks.get(self.pos + n).map(|t| t.tok)
    }

    pub fn at_end(&self) -> bool {
        self.pos >= self.toks.len()
    }

    pub fn bump(&mut self) -> Option<Token> {
        let t = self.toks.get(self.pos).copied();
        self.pos += usize::from(t.is_some());
        t
    }

    /// The span of the next token, or an empty span at the end of the line.
    pub fn span(&self) -> Span {
        match self.toks.get(self.pos) {
            Some(t) => Span {
                start: t.start,
                end: t.end,
            },
            None => Span {
                start: self.eol,
                end: self.eol,
            },
        }
    }

    pub fn tok_text(&self, t: Token) -> &'a str {
        self.text
            .get(t.start as usize..t.end as usize)
            .unwrap_or("")
    }

    /// The next token's text, or `end of line`, for messages.
    pub fn found(&self) -> String {
        match self.toks.get(self.pos) {
            Some(t) => format!("`{}`", self.tok_text(*t)),
            None => "end of line".to_string(),
        }
    }

    pub fn error(&self, expected: &str) -> Box<Diagnostic> {
        Box::new(Diagnostic::error(
            self.span(),
            format!("expected {expected}, found {}", self.found()),
        ))
    }

    pub fn is_punct(&self, p: &str) -> bool {
        matches!(self.peek(), Some(Tok::Punct(q)) if q == p)
    }

    pub fn eat_punct(&mut self, p: &str) -> bool {
        let yes = self.is_punct(p);
        self.pos += usize::from(yes);
        yes
    }

    pub fn expect_punct(&mut self, p: &str) -> PResult<()> {
        if self.eat_punct(p) {
            Ok(())
        } else {
            Err(self.error(&format!("`{p}`")))
        }
    }

    /// The next token if it is a name.
    pub fn ident(&mut self) -> Option<(&'a str, Span)> {
        match self.toks.get(self.pos) {
            Some(t) if t.tok == Tok::Ident => {
                self.pos += 1;
                Some((
                    self.tok_text(*t),
                    Span {
                        start: t.start,
                        end: t.end,
                    },
                ))
            }
            _ => None,
        }
    }

    pub fn is_ident(&self, word: &str) -> bool {
        matches!(self.toks.get(self.pos), Some(t) if t.tok == Tok::Ident && self.tok_text(*t) == word)
    }

    pub fn eat_ident(&mut self, word: &str) -> bool {
        let yes = self.is_ident(word);
        self.pos += usize::from(yes);
        yes
    }

    pub fn expect_ident(&mut self, word: &str) -> PResult<()> {
        if self.eat_ident(word) {
            Ok(())
        } else {
            Err(self.error(&format!("`{word}`")))
        }
    }

    /// A register: `(reg, wide, span)`.
    pub fn reg(&mut self) -> PResult<(Reg, bool, Span)> {
        let span = self.span();
        match self.peek() {
            Some(Tok::Reg { wide, n }) => {
                self.pos += 1;
                let reg = Reg::new(n).ok_or_else(|| self.error("a register"))?;
                Ok((reg, wide, span))
            }
            _ => Err(self.error("a register")),
        }
    }

    /// A 64-bit register (`rN`), as address bases and `ld_imm64` destinations must be.
    pub fn reg64(&mut self) -> PResult<Reg> {
        let (r, wide, span) = self.reg()?;
        if !wide {
            return Err(Box::new(
                Diagnostic::error(
                    span,
                    format!("expected a 64-bit register, found `w{}`", r.num()),
                )
                .with_help(format!("write `r{}`", r.num())),
            ));
        }
        Ok(r)
    }

    /// An optionally signed number: `5`, `-8`, `+3`, `0x10`.
    pub fn signed(&mut self) -> PResult<(i128, Span)> {
        let start = self.span();
        let neg = if self.eat_punct("-") {
            true
        } else {
            self.eat_punct("+");
            false
        };
        let span = start.to(self.span());
        match self.peek() {
            Some(Tok::Num(Some(v))) => {
                self.pos += 1;
                let v = i128::from(v);
                Ok((if neg { -v } else { v }, span))
            }
            Some(Tok::Num(None)) => Err(Box::new(Diagnostic::error(
                self.span(),
                format!("malformed or too large number {}", self.found()),
            ))),
            _ => Err(self.error("a number")),
        }
    }

    pub fn is_number_start(&self) -> bool {
        matches!(self.peek(), Some(Tok::Num(_)))
            || (matches!(self.peek(), Some(Tok::Punct("-" | "+")))
                && matches!(self.peek_at(1), Some(Tok::Num(_))))
    }

    /// Requires the end of the line (trailing `<sym+0x10>` annotations from llvm-objdump are
    /// allowed after jump targets by the caller, not here).
    pub fn end(&mut self) -> PResult<()> {
        if self.at_end() {
            Ok(())
        } else {
            Err(self.error("end of line"))
        }
    }
}

/// Checks that `v` fits `lo..=hi`, else an error naming what it is.
pub(super) fn in_range(v: i128, lo: i128, hi: i128, what: &str, span: Span) -> PResult<i128> {
    if (lo..=hi).contains(&v) {
        Ok(v)
    } else {
        Err(Box::new(Diagnostic::error(
            span,
            format!("{what} {v} is out of range ({lo}..={hi})"),
        )))
    }
}

/// A 32-bit immediate: any i32, or a u32 written unsigned (`0xffffffff` is -1, as LLVM reads it).
pub(super) fn imm32(v: i128, span: Span) -> PResult<i32> {
    in_range(v, i32::MIN.into(), u32::MAX.into(), "immediate", span).map(|v| v as u32 as i32)
}

pub(super) fn off16(v: i128, span: Span) -> PResult<i16> {
    in_range(v, i16::MIN.into(), i16::MAX.into(), "offset", span).map(|v| v as i16)
}
