//! Literals: integers (decimal, `0x` hex, leading-zero octal, `_` separators, `NeM` scientific,
//! C suffixes `u l ul ull ll`, duration suffixes `ns us ms s m h d` scaled to nanoseconds) and
//! strings (escapes `\n \t \r \" \\ \NNN` octal and `\xNN` hex).
//!
//! Input: the text at the parser's position. Output: [`IntLit`]s and decoded string bytes.
//! Invariant: a malformed literal is reported with the span of the bad part and still
//! consumed whole, so one mistake gives one error.

use nom::bytes::complete::take_while;
use nom::IResult;

use super::{PResult, Parser};
use crate::diag::{Diagnostic, Span};
use crate::syntax::ast::{IntLit, IntSuffix};

/// Why an integer literal is invalid.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum IntError {
    #[error("integer literal out of range: the maximum is {max}")]
    Overflow { max: u64 },
    #[error("invalid integer suffix '{suffix}'")]
    InvalidSuffix { suffix: String },
    #[error("trailing underscore in integer literal")]
    TrailingUnderscore,
    #[error("the coefficient of a scientific literal must be 1-9")]
    Coefficient,
    #[error("invalid digit '{digit}' in {base} literal")]
    InvalidDigit { digit: char, base: &'static str },
    #[error("invalid integer '{text}'")]
    Invalid { text: String },
}

const DURATIONS: &[(&str, u64)] = &[
    ("ns", 1),
    ("us", 1_000),
    ("ms", 1_000_000),
    ("s", 1_000_000_000),
    ("m", 60_000_000_000),
    ("h", 3_600_000_000_000),
    ("d", 86_400_000_000_000),
];

const C_SUFFIXES: &[(&str, u64)] = &[
    ("u", u32::MAX as u64),
    ("ul", u64::MAX),
    ("ull", u64::MAX),
    ("l", i64::MAX as u64),
    ("ll", i64::MAX as u64),
];

fn digits(s: &str) -> IResult<&str, &str> {
    take_while(|c: char| c.is_ascii_alphanumeric() || c == '_')(s)
}

/// Value of a complete integer literal text, as written in a script or an attach point.
pub fn parse_int_text(text: &str) -> Result<IntLit, IntError> {
    if text.ends_with('_') || text.contains("_e") || text.contains("_E") {
        return Err(IntError::TrailingUnderscore);
    }
    let t: String = text.chars().filter(|&c| c != '_').collect();
    let invalid = || IntError::Invalid {
        text: text.to_string(),
    };
    let (radix, body, base_name) = if let Some(h) = t.strip_prefix("0x").or(t.strip_prefix("0X")) {
        (16, h, "hexadecimal")
    } else if let Some(b) = t.strip_prefix("0b").or(t.strip_prefix("0B")) {
        (2, b, "binary")
    } else if t.len() > 1 && t.starts_with('0') && t.as_bytes()[1].is_ascii_digit() {
        (8, &t[1..], "octal")
    } else {
        (10, t.as_str(), "decimal")
    };
    let ndig = body.chars().take_while(|c| c.is_digit(radix)).count();
    if ndig == 0 && radix == 8 {
        let digit = body.chars().next().unwrap_or('0');
        return Err(IntError::InvalidDigit {
            digit,
            base: base_name,
        });
    }
    if ndig == 0 {
        return Err(invalid());
    }
    let (num, mut rest) = body.split_at(ndig);
    if radix < 10 {
        if let Some(d) = rest.chars().next().filter(|c| c.is_ascii_digit()) {
            return Err(IntError::InvalidDigit {
                digit: d,
                base: base_name,
            });
        }
    }
    let mut value =
        u64::from_str_radix(num, radix).map_err(|_| IntError::Overflow { max: u64::MAX })?;
    if radix == 10 && (rest.starts_with('e') || rest.starts_with('E')) {
        let exp: String = rest[1..].chars().take_while(char::is_ascii_digit).collect();
        if !exp.is_empty() {
            if !(1..=9).contains(&value) {
                return Err(IntError::Coefficient);
            }
            let e: u32 = exp
                .parse()
                .map_err(|_| IntError::Overflow { max: u64::MAX })?;
            value = 10u64
                .checked_pow(e)
                .and_then(|p| p.checked_mul(value))
                .ok_or(IntError::Overflow { max: u64::MAX })?;
            rest = &rest[1 + exp.len()..];
        }
    }
    if rest.is_empty() {
        return Ok(IntLit {
            value,
            suffix: IntSuffix::None,
        });
    }
    if radix == 16 {
        return Err(IntError::InvalidSuffix {
            suffix: rest.to_string(),
        });
    }
    if let Some(&(_, scale)) = DURATIONS.iter().find(|(s, _)| *s == rest) {
        let v = value
            .checked_mul(scale)
            .ok_or(IntError::Overflow { max: u64::MAX })?;
        return Ok(IntLit {
            value: v,
            suffix: IntSuffix::Duration,
        });
    }
    let lower = rest.to_ascii_lowercase();
    if let Some(&(_, max)) = C_SUFFIXES.iter().find(|(s, _)| *s == lower) {
        if value > max {
            return Err(IntError::Overflow { max });
        }
        return Ok(IntLit {
            value,
            suffix: IntSuffix::C,
        });
    }
    Err(IntError::InvalidSuffix {
        suffix: rest.to_string(),
    })
}

impl Parser<'_> {
    /// Consumes an integer literal (the current character is a digit). Errors are reported and
    /// the literal is still consumed, with value 0.
    pub(crate) fn int_literal(&mut self) -> (IntLit, Span) {
        self.skip_layout();
        let start = self.pos;
        let len = match digits(self.rest()) {
            Ok((_, d)) => d.len(),
            Err(_) => 0,
        };
        let text = &self.src[start..start + len];
        self.bump(len);
        let span = Span::new(start, start + len);
        // bpftrace reads `0b…` only in attach points; in scripts `b…` is a bad suffix.
        let parsed = if text.len() > 2 && (text.starts_with("0b") || text.starts_with("0B")) {
            Err(IntError::InvalidSuffix {
                suffix: text[1..].to_string(),
            })
        } else {
            parse_int_text(text)
        };
        match parsed {
            Ok(lit) => (lit, span),
            Err(e) => {
                let espan = match &e {
                    IntError::InvalidSuffix { suffix } => {
                        Span::new(start + len - suffix.len(), start + len)
                    }
                    _ => span,
                };
                let mut d = Diagnostic::error(espan, e.to_string());
                if matches!(e, IntError::InvalidSuffix { .. }) {
                    d = d.with_help(
                        "integer suffixes are ns, us, ms, s, m, h, d (durations) and u, l, ul, ll, ull",
                    );
                }
                self.report(d);
                (
                    IntLit {
                        value: 0,
                        suffix: IntSuffix::None,
                    },
                    span,
                )
            }
        }
    }

    /// Consumes a string literal (the current character is `"`) and decodes its escapes.
    pub(crate) fn string_literal(&mut self) -> PResult<(Vec<u8>, Span)> {
        self.skip_layout();
        let start = self.pos;
        self.bump(1);
        let mut out = Vec::new();
        loop {
            let Some(c) = self.peek() else {
                return Err(self.error(Span::new(start, start + 1), "unterminated string"));
            };
            match c {
                '"' => {
                    self.bump(1);
                    return Ok((out, Span::new(start, self.pos)));
                }
                '\n' => {
                    return Err(self
                        .error(Span::new(start, start + 1), "unterminated string")
                        .with_pos(self));
                }
                '\\' => self.escape(&mut out),
                _ => {
                    // The run of plain characters up to the next quote, escape or newline, in
                    // one step: a character at a time costs a slice and a decode each.
                    let bytes = self.src.as_bytes();
                    let mut end = self.pos;
                    while end < bytes.len() && !matches!(bytes[end], b'"' | b'\\' | b'\n') {
                        end += 1;
                    }
                    out.extend_from_slice(&bytes[self.pos..end]);
                    self.bump(end - self.pos);
                }
            }
        }
    }

    fn escape(&mut self, out: &mut Vec<u8>) {
        let esc_start = self.pos;
        self.bump(1);
        let Some(c) = self.peek() else { return };
        match c {
            'n' | 't' | 'r' | '"' | '\\' => {
                out.push(match c {
                    'n' => b'\n',
                    't' => b'\t',
                    'r' => b'\r',
                    x => x as u8,
                });
                self.bump(1);
            }
            '0'..='7' => {
                let n = self
                    .rest()
                    .bytes()
                    .take(3)
                    .take_while(|b| (b'0'..=b'7').contains(b))
                    .count();
                let text = &self.rest()[..n];
                let v = u32::from_str_radix(text, 8).unwrap_or(0);
                let text = text.to_string();
                self.bump(n);
                if v > 255 {
                    self.error(
                        Span::new(esc_start, self.pos),
                        format!("octal escape sequence out of range '\\{text}'"),
                    );
                }
                out.push(v as u8);
            }
            'x' | 'X' => {
                self.bump(1);
                let n = self
                    .rest()
                    .bytes()
                    .take(2)
                    .take_while(u8::is_ascii_hexdigit)
                    .count();
                if n == 0 {
                    self.report(
                        Diagnostic::error(
                            Span::new(esc_start, self.pos),
                            "invalid hex escape sequence",
                        )
                        .with_help("write one or two hex digits after \\x, e.g. \\x1b"),
                    );
                } else {
                    out.push(u8::from_str_radix(&self.rest()[..n], 16).unwrap_or(0));
                    self.bump(n);
                }
            }
            other => {
                self.bump(other.len_utf8());
                self.report(
                    Diagnostic::error(
                        Span::new(esc_start, self.pos),
                        format!("invalid escape character '\\{other}'"),
                    )
                    .with_help("valid escapes are \\n \\t \\r \\\" \\\\ \\NNN (octal) \\xNN (hex)"),
                );
            }
        }
    }
}

impl super::Recover {
    /// Leaves the parser at the end of the current line (recovery from a broken string).
    fn with_pos(self, p: &mut Parser<'_>) -> Self {
        let n = p.rest().find('\n').unwrap_or(p.rest().len());
        p.pos += n;
        self
    }
}
