//! Lexical helpers: layout (whitespace and comments), identifiers, punctuation and keywords.
//!
//! Input: the parser's position in the text. Output: consumed tokens and lookahead answers.
//! Invariant: lookahead functions (`scan_*`, `check_*`, `peek_*`) never move the position or
//! report anything; `eat_*` functions move only on success; `skip_layout` reports an
//! unterminated block comment once and then stops at the end of input.

use nom::bytes::complete::{tag, take_until, take_while, take_while1};
use nom::IResult;

use super::Parser;
use crate::diag::Span;

fn is_ident_start(c: char) -> bool {
    c.is_ascii_alphabetic() || c == '_'
}

fn is_ident_body(c: char) -> bool {
    c.is_ascii_alphanumeric() || c == '_'
}

/// `[_a-zA-Z][_a-zA-Z0-9]*`.
pub(crate) fn ident(s: &str) -> IResult<&str, &str> {
    let (_, _) = nom::character::complete::satisfy(is_ident_start)(s)?;
    take_while1(is_ident_body)(s)
}

/// Length of the run of identifier characters at the start of `s`.
pub(crate) fn word_len(s: &str) -> usize {
    s.bytes()
        .take_while(|&b| b.is_ascii_alphanumeric() || b == b'_')
        .count()
}

fn hspace_or_newline(s: &str) -> IResult<&str, &str> {
    take_while1(|c: char| c.is_whitespace())(s)
}

fn line_comment(s: &str) -> IResult<&str, &str> {
    let (s, _) = tag("//")(s)?;
    take_while(|c| c != '\n')(s)
}

fn block_comment(s: &str) -> IResult<&str, &str> {
    let (s, _) = tag("/*")(s)?;
    let (s, body) = take_until("*/")(s)?;
    let (s, _) = tag("*/")(s)?;
    Ok((s, body))
}

/// Bytes of layout (whitespace and complete comments) at the start of `s`.
pub(crate) fn layout_len(s: &str) -> usize {
    // Fast path: most lookaheads start right at a token.
    match s.as_bytes().first() {
        Some(b) if !b.is_ascii_whitespace() && *b != b'/' && *b < 0x80 => return 0,
        None => return 0,
        _ => {}
    }
    let mut rest = s;
    loop {
        if let Ok((r, _)) = hspace_or_newline(rest) {
            rest = r;
        } else if let Ok((r, _)) = line_comment(rest) {
            rest = r;
        } else if let Ok((r, _)) = block_comment(rest) {
            rest = r;
        } else {
            return s.len() - rest.len();
        }
    }
}

impl Parser<'_> {
    /// Skips whitespace and comments; an unterminated `/*` is reported and swallows the rest.
    pub(crate) fn skip_layout(&mut self) {
        loop {
            let n = layout_len(self.rest());
            self.pos += n;
            if self.rest().starts_with("/*") {
                let start = self.pos;
                self.pos = self.src.len();
                self.error(Span::new(start, start + 2), "unterminated comment");
                continue;
            }
            return;
        }
    }

    /// Position of the next token after layout, without moving.
    pub(crate) fn scan_layout(&self, from: usize) -> usize {
        from + layout_len(&self.src[from.min(self.src.len())..])
    }

    pub(crate) fn char_at(&self, pos: usize) -> Option<char> {
        self.src.get(pos..).and_then(|s| s.chars().next())
    }

    /// The identifier at the current position (after layout), if any, without moving.
    pub(crate) fn peek_word(&self) -> &str {
        let p = self.scan_layout(self.pos);
        match ident(&self.src[p..]) {
            Ok((_, w)) => w,
            Err(_) => "",
        }
    }

    /// Whether the next token is exactly the keyword `kw` (not a prefix of a longer word).
    pub(crate) fn check_keyword(&self, kw: &str) -> bool {
        self.peek_word() == kw
    }

    pub(crate) fn eat_keyword(&mut self, kw: &str) -> bool {
        if self.check_keyword(kw) {
            self.skip_layout();
            self.bump(kw.len());
            true
        } else {
            false
        }
    }

    /// Consumes an identifier, returning it with its span.
    pub(crate) fn eat_ident(&mut self) -> Option<(String, Span)> {
        self.skip_layout();
        let (_, w) = ident(self.rest()).ok()?;
        let start = self.pos;
        let w = w.to_string();
        self.bump(w.len());
        Some((w, Span::new(start, self.pos)))
    }

    pub(crate) fn expect_ident(&mut self, what: &str) -> super::PResult<(String, Span)> {
        match self.eat_ident() {
            Some(x) => Ok(x),
            None => Err(self.expected(what)),
        }
    }

    /// Whether the next token starts with `s` (punctuation), without moving.
    pub(crate) fn check(&self, s: &str) -> bool {
        let p = self.scan_layout(self.pos);
        self.src[p..].starts_with(s)
    }

    pub(crate) fn eat(&mut self, s: &str) -> bool {
        if self.check(s) {
            self.skip_layout();
            self.bump(s.len());
            true
        } else {
            false
        }
    }

    /// Consumes `s` or reports "expected 's'".
    pub(crate) fn expect(&mut self, s: &str) -> super::PResult<()> {
        if self.eat(s) {
            Ok(())
        } else {
            Err(self.expected(&format!("'{s}'")))
        }
    }

    /// Consumes a `$name` variable (the current character is `$`).
    pub(crate) fn eat_variable(&mut self) -> super::PResult<(String, Span)> {
        self.skip_layout();
        let start = self.pos;
        let after = &self.src[start + 1..];
        match ident(after) {
            Ok((_, w)) => {
                let name = format!("${w}");
                self.bump(1 + w.len());
                Ok((name, Span::new(start, self.pos)))
            }
            Err(_) => {
                self.bump(1);
                Err(self.error(Span::new(start, start + 1), "expected identifier after '$'"))
            }
        }
    }

    /// Consumes `@name` or the bare `@` (the current character is `@`).
    pub(crate) fn eat_map_name(&mut self) -> (String, Span) {
        self.skip_layout();
        let start = self.pos;
        let n = match ident(&self.src[start + 1..]) {
            Ok((_, w)) => w.len(),
            Err(_) => 0,
        };
        let name = self.src[start..start + 1 + n].to_string();
        self.bump(1 + n);
        (name, Span::new(start, self.pos))
    }

    /// Whether the next token can begin an expression (decides `(type)expr` casts).
    pub(crate) fn can_start_expression(&self) -> bool {
        let p = self.scan_layout(self.pos);
        match self.char_at(p) {
            Some(c) => {
                c.is_ascii_alphanumeric()
                    || matches!(c, '_' | '$' | '@' | '"' | '(' | '-' | '!' | '~' | '*' | '&')
            }
            None => false,
        }
    }

    /// Skips a balanced `open … close` group starting at `pos` (lookahead only); returns the
    /// position after it, or None if unbalanced.
    pub(crate) fn scan_balanced(&self, pos: usize, open: char, close: char) -> Option<usize> {
        let mut depth = 0usize;
        let mut p = pos;
        while let Some(c) = self.char_at(p) {
            if c == open {
                depth += 1;
            } else if c == close {
                depth = depth.checked_sub(1)?;
                if depth == 0 {
                    return Some(p + c.len_utf8());
                }
            }
            p += c.len_utf8();
        }
        None
    }

    /// Error recovery inside a block: skips to just after the next `;`, or to the `}` that
    /// closes the current block, whichever comes first at nesting level 0. Strings and comments
    /// are skipped as units.
    pub(crate) fn sync_statement(&mut self) {
        if self.gave_up {
            self.pos = self.src.len();
            return;
        }
        let mut depth = 0i32;
        while let Some(c) = self.peek() {
            if c == '"' {
                self.skip_string_raw();
                continue;
            }
            let l = layout_len(self.rest());
            if l > 0 {
                self.pos += l;
                continue;
            }
            if self.rest().starts_with("/*") {
                self.pos = self.src.len();
                break;
            }
            match c {
                '(' | '[' | '{' => depth += 1,
                ')' | ']' => depth = (depth - 1).max(0),
                '}' => {
                    if depth == 0 {
                        return;
                    }
                    depth -= 1;
                }
                ';' if depth == 0 => {
                    self.bump(1);
                    return;
                }
                _ => {}
            }
            self.pos += c.len_utf8();
        }
    }

    /// Error recovery at the top level: skips to the end of the next balanced `{ … }` (the
    /// body of the item being parsed), or to the end of input.
    pub(crate) fn sync_item(&mut self) {
        if self.gave_up {
            self.pos = self.src.len();
            return;
        }
        let mut depth = 0i32;
        while let Some(c) = self.peek() {
            if c == '"' {
                self.skip_string_raw();
                continue;
            }
            let l = layout_len(self.rest());
            if l > 0 {
                self.pos += l;
                continue;
            }
            if self.rest().starts_with("/*") {
                self.pos = self.src.len();
                break;
            }
            self.pos += c.len_utf8();
            match c {
                '{' => depth += 1,
                '}' => {
                    depth -= 1;
                    if depth <= 0 {
                        self.last_end = self.pos;
                        return;
                    }
                }
                _ => {}
            }
        }
        self.last_end = self.pos;
    }

    /// Skips a string literal without decoding it (recovery only): to the closing quote or the
    /// end of the line.
    fn skip_string_raw(&mut self) {
        self.pos += 1;
        let mut escaped = false;
        while let Some(c) = self.peek() {
            self.pos += c.len_utf8();
            match c {
                '\\' if !escaped => {
                    escaped = true;
                    continue;
                }
                '"' if !escaped => return,
                '\n' => return,
                _ => {}
            }
            escaped = false;
        }
    }
}
