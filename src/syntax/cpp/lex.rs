//! C preprocessing tokens: identifiers, numbers (pp-numbers), string and character literals,
//! punctuators. Comments are removed and backslash-newline splices joined before tokenizing
//! (see [`clean_source`]), so a logical line is one string.
//!
//! Input: the text of one logical line. Output: its tokens, each remembering whether white
//! space came before it (for `#` stringification and for re-joining tokens into text).

/// What kind of token.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TokKind {
    Ident,
    Number,
    Str,
    Char,
    Punct,
}

/// One preprocessing token.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Tok {
    pub kind: TokKind,
    pub text: String,
    /// White space came before this token.
    pub space: bool,
    /// Names that must not expand here again (the macros whose expansion produced this
    /// identifier: C's "painted blue" rule against recursion).
    pub hide: Vec<String>,
}

impl Tok {
    pub fn new(kind: TokKind, text: &str) -> Tok {
        Tok {
            kind,
            text: text.to_string(),
            space: false,
            hide: Vec::new(),
        }
    }

    pub fn is(&self, punct: &str) -> bool {
        self.kind == TokKind::Punct && self.text == punct
    }

    pub fn is_ident(&self) -> bool {
        self.kind == TokKind::Ident
    }
}

const PUNCTS: &[&str] = &[
    "...", "<<=", ">>=", "->", "++", "--", "<<", ">>", "<=", ">=", "==", "!=", "&&", "||", "*=",
    "/=", "%=", "+=", "-=", "&=", "^=", "|=", "##",
];

/// Tokenizes one logical line (comments already removed). Unknown characters become
/// one-character punctuators, so no input fails.
pub fn tokenize(line: &str) -> Vec<Tok> {
    let b = line.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    let mut space = false;
    while i < b.len() {
        let c = b[i];
        if c.is_ascii_whitespace() {
            space = true;
            i += 1;
            continue;
        }
        let start = i;
        let kind = if c.is_ascii_alphabetic() || c == b'_' || c == b'$' {
            while i < b.len() && (b[i].is_ascii_alphanumeric() || b[i] == b'_' || b[i] == b'$') {
                i += 1;
            }
            // A prefixed literal (L"…", u8'…'): keep the prefix with the literal.
            if i < b.len()
                && (b[i] == b'"' || b[i] == b'\'')
                && matches!(&line[start..i], "L" | "u" | "U" | "u8")
            {
                let q = b[i];
                i = skip_quoted(b, i, q);
                if q == b'"' {
                    TokKind::Str
                } else {
                    TokKind::Char
                }
            } else {
                TokKind::Ident
            }
        } else if c.is_ascii_digit() || (c == b'.' && b.get(i + 1).is_some_and(u8::is_ascii_digit))
        {
            // pp-number: digits, letters, dots, and signs after an exponent letter.
            i += 1;
            while i < b.len() {
                let d = b[i];
                let sign =
                    (d == b'+' || d == b'-') && matches!(b[i - 1], b'e' | b'E' | b'p' | b'P');
                if sign || d.is_ascii_alphanumeric() || d == b'.' || d == b'_' || d == b'\'' {
                    i += 1;
                } else {
                    break;
                }
            }
            TokKind::Number
        } else if c == b'"' || c == b'\'' {
            i = skip_quoted(b, i, c);
            if c == b'"' {
                TokKind::Str
            } else {
                TokKind::Char
            }
        } else {
            let p = PUNCTS.iter().find(|p| line[i..].starts_with(**p));
            i += p.map_or_else(
                || line[i..].chars().next().map_or(1, char::len_utf8),
                |p| p.len(),
            );
            TokKind::Punct
        };
        out.push(Tok {
            kind,
            text: line[start..i].to_string(),
            space,
            hide: Vec::new(),
        });
        space = false;
    }
    out
}

/// The index after a quoted literal starting at `i` (or the end of the line if unterminated).
fn skip_quoted(b: &[u8], mut i: usize, q: u8) -> usize {
    i += 1;
    while i < b.len() && b[i] != q {
        if b[i] == b'\\' {
            i += 1;
        }
        i += 1;
    }
    (i + 1).min(b.len())
}

/// Joins tokens back into text, one space where white space was.
pub fn join(toks: &[Tok]) -> String {
    let mut s = String::new();
    for (i, t) in toks.iter().enumerate() {
        if i > 0 && t.space {
            s.push(' ');
        }
        s.push_str(&t.text);
    }
    s
}

/// The text with comments replaced by a space (newlines inside block comments are kept, so
/// line numbers stay) and backslash-newline splices removed. String and character literals
/// are left alone.
pub fn clean_source(text: &str) -> String {
    let text = text.replace("\\\r\n", "").replace("\\\n", "");
    let b = text.as_bytes();
    let mut out = String::with_capacity(text.len());
    let mut i = 0;
    let mut last = 0;
    while i < b.len() {
        match b[i] {
            b'"' | b'\'' => {
                // Literals end at their quote or the end of the line.
                let q = b[i];
                i += 1;
                while i < b.len() && b[i] != q && b[i] != b'\n' {
                    if b[i] == b'\\' {
                        i += 1;
                    }
                    i += 1;
                }
                i = (i + 1).min(b.len());
            }
            b'/' if b.get(i + 1) == Some(&b'/') => {
                out.push_str(&text[last..i]);
                while i < b.len() && b[i] != b'\n' {
                    i += 1;
                }
                out.push(' ');
                last = i;
            }
            b'/' if b.get(i + 1) == Some(&b'*') => {
                out.push_str(&text[last..i]);
                out.push(' ');
                i += 2;
                while i < b.len() && !(b[i] == b'*' && b.get(i + 1) == Some(&b'/')) {
                    if b[i] == b'\n' {
                        out.push('\n');
                    }
                    i += 1;
                }
                i = (i + 2).min(b.len());
                last = i;
            }
            _ => i += 1,
        }
    }
    out.push_str(&text[last.min(text.len())..]);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_of_a_define_line() {
        let t = tokenize("F(a,b) ((a)<<b) \"s\\\"x\" 'c' 0x1fUL 1e+5 ...");
        let texts: Vec<&str> = t.iter().map(|t| t.text.as_str()).collect();
        assert_eq!(
            texts,
            [
                "F",
                "(",
                "a",
                ",",
                "b",
                ")",
                "(",
                "(",
                "a",
                ")",
                "<<",
                "b",
                ")",
                "\"s\\\"x\"",
                "'c'",
                "0x1fUL",
                "1e+5",
                "..."
            ]
        );
        assert!(t[6].space && !t[1].space);
        assert_eq!(t[13].kind, TokKind::Str);
        assert_eq!(t[14].kind, TokKind::Char);
    }

    #[test]
    fn comments_and_splices_are_removed() {
        let s = clean_source("#define A 1 /* one\n two */ + \\\n 2 // x\n\"/* not */\"");
        assert_eq!(s, "#define A 1  \n +  2  \n\"/* not */\"");
    }
}
