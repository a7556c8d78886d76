//! Assembler lexer: one line of text → tokens with byte spans into the whole file.
//!
//! Input: a line (without its newline) and the line's byte offset in the file. Output: tokens
//! appended to a caller-owned buffer (reused across lines, so lexing allocates nothing).
//! Comments (`#`, `//`, `;` — the verifier log's source-line marker) end the line.
//! Invariant: never panics; an unexpected character becomes a `Bad` token, which the parser
//! reports with its position.

/// The operator or punctuation mark at the start of `b`, longest match first (`<<=` is not
/// `<` `<=`). A byte match rather than a table scan: the lexer runs once per token of a
/// million-line file.
fn punct(b: &[u8]) -> Option<&'static str> {
    let at = |i: usize| b.get(i).copied().unwrap_or(0);
    let eq = |i: usize| at(i) == b'=';
    Some(match (at(0), at(1)) {
        (b's', b'>') if at(2) == b'>' && eq(3) => "s>>=",
        (b's', b'>') if eq(2) => "s>=",
        (b's', b'>') => "s>",
        (b's', b'<') if eq(2) => "s<=",
        (b's', b'<') => "s<",
        (b's', b'/') if eq(2) => "s/=",
        (b's', b'%') if eq(2) => "s%=",
        (b'<', b'<') if eq(2) => "<<=",
        (b'>', b'>') if eq(2) => ">>=",
        (b'=', b'=') => "==",
        (b'!', b'=') => "!=",
        (b'>', b'=') => ">=",
        (b'<', b'=') => "<=",
        (b'+', b'=') => "+=",
        (b'-', b'=') => "-=",
        (b'*', b'=') => "*=",
        (b'/', b'=') => "/=",
        (b'|', b'=') => "|=",
        (b'&', b'=') => "&=",
        (b'%', b'=') => "%=",
        (b'^', b'=') => "^=",
        (b'=', _) => "=",
        (b'<', _) => "<",
        (b'>', _) => ">",
        (b'&', _) => "&",
        (b'+', _) => "+",
        (b'-', _) => "-",
        (b'*', _) => "*",
        (b'(', _) => "(",
        (b')', _) => ")",
        (b'[', _) => "[",
        (b']', _) => "]",
        (b',', _) => ",",
        (b':', _) => ":",
        (b'|', _) => "|",
        (b'^', _) => "^",
        (b'/', _) => "/",
        (b'%', _) => "%",
        _ => return None,
    })
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Tok {
    /// A name: mnemonic, label, directive (with its leading `.`), type or symbol.
    Ident,
    /// `rN` (`wide`) or `wN`, N in 0..=10.
    Reg { wide: bool, n: u8 },
    /// An unsigned decimal or `0x` hex literal; `None` when it overflows 64 bits.
    Num(Option<u64>),
    /// A double-quoted string (no escapes beyond `\"`).
    Str,
    /// An operator or punctuation mark.
    Punct(&'static str),
    /// A character no token starts with.
    Bad,
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Token {
    pub tok: Tok,
    pub start: u32,
    pub end: u32,
}

fn is_ident_start(b: u8) -> bool {
    b.is_ascii_alphabetic() || b == b'_' || b == b'.' || b == b'$'
}

fn is_ident_char(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_' || b == b'.' || b == b'$'
}

fn register(word: &[u8]) -> Option<Tok> {
    let wide = match word.first() {
        Some(b'r') => true,
        Some(b'w') => false,
        _ => return None,
    };
    let n = match word[1..] {
        [d] if d.is_ascii_digit() => d - b'0',
        [b'1', b'0'] => 10,
        _ => return None,
    };
    Some(Tok::Reg { wide, n })
}

fn number(word: &[u8]) -> Tok {
    let (digits, radix) = match word {
        [b'0', b'x' | b'X', rest @ ..] => (rest, 16),
        _ => (word, 10),
    };
    if digits.is_empty() {
        return Tok::Num(None);
    }
    let mut v: u64 = 0;
    for &d in digits {
        let Some(x) = (d as char).to_digit(radix) else {
            return Tok::Num(None);
        };
        v = match v
            .checked_mul(radix as u64)
            .and_then(|v| v.checked_add(x as u64))
        {
            Some(v) => v,
            None => return Tok::Num(None),
        };
    }
    Tok::Num(Some(v))
}

/// Lexes `line` (which starts at byte `base` of the file) into `out`.
pub fn lex_line(line: &str, base: usize, out: &mut Vec<Token>) {
    let b = line.as_bytes();
    let mut i = 0;
    let tok = |tok, s: usize, e: usize| Token {
        tok,
        start: (base + s) as u32,
        end: (base + e) as u32,
    };
    while i < b.len() {
        let c = b[i];
        if c == b' ' || c == b'\t' || c == b'\r' {
            i += 1;
            continue;
        }
        if c == b'#' || c == b';' || (c == b'/' && b.get(i + 1) == Some(&b'/')) {
            break;
        }
        let start = i;
        // `s>`, `s/=`… are operators, but only where an `s` cannot start a longer name.
        let s_op = c == b's' && matches!(b.get(i + 1), Some(b'>' | b'<' | b'/' | b'%'));
        if is_ident_start(c) && !s_op {
            while i < b.len() && is_ident_char(b[i]) {
                i += 1;
            }
            let word = &b[start..i];
            out.push(tok(register(word).unwrap_or(Tok::Ident), start, i));
        } else if c.is_ascii_digit() {
            while i < b.len() && b[i].is_ascii_alphanumeric() {
                i += 1;
            }
            out.push(tok(number(&b[start..i]), start, i));
        } else if c == b'"' {
            i += 1;
            while i < b.len() && b[i] != b'"' {
                i += if b[i] == b'\\' { 2 } else { 1 };
            }
            i = (i + 1).min(b.len());
            out.push(tok(Tok::Str, start, i));
        } else if let Some(p) = punct(&b[i..]) {
            i += p.len();
            out.push(tok(Tok::Punct(p), start, i));
        } else {
            // Step over a whole UTF-8 character so spans stay on char boundaries.
            i += line[i..].chars().next().map_or(1, char::len_utf8);
            out.push(tok(Tok::Bad, start, i));
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn kinds(s: &str) -> Vec<Tok> {
        let mut v = Vec::new();
        lex_line(s, 0, &mut v);
        v.into_iter().map(|t| t.tok).collect()
    }

    #[test]
    fn lexes_registers_operators_and_numbers() {
        assert_eq!(
            kinds("if w1 s>= 0x10 goto +3 # c"),
            vec![
                Tok::Ident,
                Tok::Reg { wide: false, n: 1 },
                Tok::Punct("s>="),
                Tok::Num(Some(16)),
                Tok::Ident,
                Tok::Punct("+"),
                Tok::Num(Some(3)),
            ]
        );
        assert_eq!(
            kinds("r11 r10"),
            vec![Tok::Ident, Tok::Reg { wide: true, n: 10 }]
        );
        assert_eq!(kinds("r0 s>>= 1 // x"), kinds("r0 s>>= 1 ; y"));
        assert_eq!(
            kinds("99999999999999999999 0xzz"),
            vec![Tok::Num(None), Tok::Num(None)]
        );
        assert_eq!(kinds("\"GPL\" é"), vec![Tok::Str, Tok::Bad]);
        assert_eq!(kinds("s8 s"), vec![Tok::Ident, Tok::Ident]);
    }
}
