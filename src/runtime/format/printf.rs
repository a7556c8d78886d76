//! `printf`/`errorf`-style format strings: parsed once at compile time into literal pieces and
//! typed conversion specs, rendered at run time from decoded argument values.
//!
//! Input: the format string as written in the script (escapes already processed) and, at run
//! time, one [`Value`] per conversion.
//! Output: exactly the bytes bpftrace prints. Integer conversions follow C's printf (which
//! bpftrace 0.17 called directly): without a length modifier `%d`/`%i` print the value as a
//! 32-bit `int` and `%u %x %X %o` as a 32-bit `unsigned int`; `hh`/`h` narrow to 8/16 bits;
//! `l ll j z t` keep all 64 bits. `%%` prints `%` everywhere. A `%` followed by something
//! that is not a conversion stays literal, as in bpftrace.
//! Differences from bpftrace 0.17, following current bpftrace: 0.17 printed the text after the
//! last conversion without formatting it, so a `%%` there came out as `%%`
//! (`printf("%d%%\n", 50)` printed `50%%`); `%i`, the `+`, ` ` and `#` flags and the
//! `%rx`/`%rh` buffer forms are accepted (0.17 did not recognise them).
//! Invariant: rendering never panics: a missing argument renders as nothing, a non-integer
//! given to an integer conversion renders as its text.

use super::value::{hex_escape_all, hex_escape_buf, hex_spaced, TextStyle, Value};

/// Why a format string was rejected. `offset` is the byte offset of the `%` in the string.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrintfError {
    #[error("unsupported format specifier '%{spec}' at offset {offset}: strobe has no floating point or %n")]
    Unsupported { spec: String, offset: usize },
    #[error("'*' width or precision at offset {offset} is not supported: write the number into the format")]
    StarWidth { offset: usize },
    #[error("invalid length modifier '{modifier}' at offset {offset}")]
    BadLength { modifier: String, offset: usize },
    #[error("{what} {value} at offset {offset} is too large")]
    TooWide {
        what: &'static str,
        value: String,
        offset: usize,
    },
}

/// C length modifiers; they decide the width an integer is narrowed to before printing.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum Length {
    /// No modifier: 32 bits (`int`).
    #[default]
    None,
    /// `hh`: 8 bits.
    Char,
    /// `h`: 16 bits.
    Short,
    /// `l`, `ll`, `j`, `z`, `t`: 64 bits.
    Long,
}

/// The conversion a spec performs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Conv {
    /// `%d`, `%i`.
    Signed,
    /// `%u`.
    Unsigned,
    /// `%o`.
    Octal,
    /// `%x`.
    HexLower,
    /// `%X`.
    HexUpper,
    /// `%c`: the low byte of an integer.
    Char,
    /// `%s`: any value's text.
    Str,
    /// `%p`: a pointer as `0x…` (`(nil)` for 0, as glibc prints it).
    Pointer,
    /// `%r`: a buffer with non-printable bytes as `\xNN`.
    Buf,
    /// `%rx`: every byte as `\xNN`.
    BufHex,
    /// `%rh`: every byte as two hex digits, space separated.
    BufHexSpaced,
}

/// What kind of value a conversion needs, for the checker and the code generator to decide
/// what to put in the record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ArgKind {
    /// Any integer-like value (ints, bools, pointers, enums).
    Integer,
    /// A `buf()` value (a string is accepted too and printed as `%s` would).
    Buffer,
    /// Anything: `%s` prints every value's text form.
    Any,
}

/// Flags of one conversion spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Flags {
    /// `-`
    pub left: bool,
    /// `+`
    pub plus: bool,
    /// ` `
    pub space: bool,
    /// `#`
    pub alt: bool,
    /// `0`
    pub zero: bool,
}

/// One parsed conversion spec.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Spec {
    pub flags: Flags,
    pub width: Option<usize>,
    pub precision: Option<usize>,
    pub length: Length,
    pub conv: Conv,
}

impl Spec {
    /// The kind of argument this conversion takes.
    pub fn arg_kind(&self) -> ArgKind {
        match self.conv {
            Conv::Str => ArgKind::Any,
            Conv::Buf | Conv::BufHex | Conv::BufHexSpaced => ArgKind::Buffer,
            _ => ArgKind::Integer,
        }
    }
}

#[derive(Clone, Debug, PartialEq, Eq)]
enum Piece {
    Lit(Vec<u8>),
    Spec(Spec),
}

/// A parsed format string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatString {
    pieces: Vec<Piece>,
}

/// Field widths beyond this are refused: a script cannot make strobe allocate gigabytes per line.
const MAX_WIDTH: usize = 1 << 16;

impl FormatString {
    /// Parses `fmt`. Literal text, `%%` and `%` sequences that are not conversions become
    /// literal pieces.
    pub fn parse(fmt: &str) -> Result<FormatString, PrintfError> {
        let b = fmt.as_bytes();
        let mut pieces = Vec::new();
        let mut lit = Vec::new();
        let mut i = 0;
        while i < b.len() {
            if b[i] != b'%' {
                lit.push(b[i]);
                i += 1;
                continue;
            }
            match parse_spec(b, i)? {
                Parsed::Percent(end) => {
                    lit.push(b'%');
                    i = end;
                }
                Parsed::Literal => {
                    lit.push(b'%');
                    i += 1;
                }
                Parsed::Spec(spec, end) => {
                    if !lit.is_empty() {
                        pieces.push(Piece::Lit(std::mem::take(&mut lit)));
                    }
                    pieces.push(Piece::Spec(spec));
                    i = end;
                }
            }
        }
        if !lit.is_empty() {
            pieces.push(Piece::Lit(lit));
        }
        Ok(FormatString { pieces })
    }

    /// The conversion specs in order, one per argument.
    pub fn specs(&self) -> impl Iterator<Item = &Spec> {
        self.pieces.iter().filter_map(|p| match p {
            Piece::Spec(s) => Some(s),
            Piece::Lit(_) => None,
        })
    }

    /// The argument kinds in order (what the code generator must put in the record).
    pub fn arg_kinds(&self) -> Vec<ArgKind> {
        self.specs().map(Spec::arg_kind).collect()
    }

    /// Appends the formatted output to `out`.
    pub fn render_into(&self, args: &[Value], style: TextStyle, out: &mut Vec<u8>) {
        let mut args = args.iter();
        for p in &self.pieces {
            match p {
                Piece::Lit(l) => out.extend_from_slice(l),
                Piece::Spec(s) => {
                    if let Some(v) = args.next() {
                        render_spec(s, v, style, out);
                    }
                }
            }
        }
    }

    /// Writes the literal pieces and lets `arg` write the `i`-th conversion, so callers that
    /// read arguments straight from record bytes need not build [`Value`]s first. Stops at the
    /// first conversion for which `arg` returns an error.
    pub(crate) fn render_with<E>(
        &self,
        out: &mut Vec<u8>,
        mut arg: impl FnMut(usize, &Spec, &mut Vec<u8>) -> Result<(), E>,
    ) -> Result<(), E> {
        let mut i = 0;
        for p in &self.pieces {
            match p {
                Piece::Lit(l) => out.extend_from_slice(l),
                Piece::Spec(s) => {
                    arg(i, s, out)?;
                    i += 1;
                }
            }
        }
        Ok(())
    }

    /// The formatted output as bytes.
    pub fn render(&self, args: &[Value], style: TextStyle) -> Vec<u8> {
        let mut out = Vec::with_capacity(64);
        self.render_into(args, style, &mut out);
        out
    }
}

enum Parsed {
    /// `%%`, ending at the index given.
    Percent(usize),
    /// Not a conversion: the `%` is literal text.
    Literal,
    Spec(Spec, usize),
}

fn parse_spec(b: &[u8], start: usize) -> Result<Parsed, PrintfError> {
    let mut i = start + 1;
    let mut flags = Flags::default();
    while let Some(&c) = b.get(i) {
        match c {
            b'-' => flags.left = true,
            b'+' => flags.plus = true,
            b' ' => flags.space = true,
            b'#' => flags.alt = true,
            b'0' => flags.zero = true,
            _ => break,
        }
        i += 1;
    }
    let (width, ni) = parse_num(b, i, start, "width")?;
    i = ni;
    let mut precision = None;
    if b.get(i) == Some(&b'.') {
        let (p, ni) = parse_num(b, i + 1, start, "precision")?;
        precision = Some(p.unwrap_or(0));
        i = ni;
    }
    let len_start = i;
    while matches!(b.get(i), Some(b'h' | b'l' | b'L' | b'j' | b'z' | b't')) {
        i += 1;
    }
    let len_text = &b[len_start..i];
    let Some(&c) = b.get(i) else {
        return Ok(Parsed::Literal);
    };
    let (conv, end) = match c {
        b'%' if i == start + 1 => return Ok(Parsed::Percent(i + 1)),
        b'd' | b'i' => (Conv::Signed, i + 1),
        b'u' => (Conv::Unsigned, i + 1),
        b'o' => (Conv::Octal, i + 1),
        b'x' => (Conv::HexLower, i + 1),
        b'X' => (Conv::HexUpper, i + 1),
        b'c' => (Conv::Char, i + 1),
        b's' => (Conv::Str, i + 1),
        b'p' => (Conv::Pointer, i + 1),
        b'r' => match b.get(i + 1) {
            Some(b'x') => (Conv::BufHex, i + 2),
            Some(b'h') => (Conv::BufHexSpaced, i + 2),
            _ => (Conv::Buf, i + 1),
        },
        b'e' | b'E' | b'f' | b'F' | b'g' | b'G' | b'a' | b'A' | b'n' => {
            return Err(PrintfError::Unsupported {
                spec: String::from_utf8_lossy(&b[start + 1..=i]).into_owned(),
                offset: start,
            })
        }
        b'*' => return Err(PrintfError::StarWidth { offset: start }),
        _ => return Ok(Parsed::Literal),
    };
    let length = match len_text {
        b"" => Length::None,
        b"hh" => Length::Char,
        b"h" => Length::Short,
        b"l" | b"ll" | b"j" | b"z" | b"t" => Length::Long,
        other => {
            return Err(PrintfError::BadLength {
                modifier: String::from_utf8_lossy(other).into_owned(),
                offset: start,
            })
        }
    };
    Ok(Parsed::Spec(
        Spec {
            flags,
            width,
            precision,
            length,
            conv,
        },
        end,
    ))
}

fn parse_num(
    b: &[u8],
    mut i: usize,
    start: usize,
    what: &'static str,
) -> Result<(Option<usize>, usize), PrintfError> {
    if b.get(i) == Some(&b'*') {
        return Err(PrintfError::StarWidth { offset: start });
    }
    let s = i;
    while b.get(i).is_some_and(u8::is_ascii_digit) {
        i += 1;
    }
    if s == i {
        return Ok((None, i));
    }
    let text = std::str::from_utf8(&b[s..i]).unwrap_or("");
    match text.parse::<usize>() {
        Ok(n) if n <= MAX_WIDTH => Ok((Some(n), i)),
        _ => Err(PrintfError::TooWide {
            what,
            value: text.to_string(),
            offset: start,
        }),
    }
}

pub(crate) fn render_spec(s: &Spec, v: &Value, style: TextStyle, out: &mut Vec<u8>) {
    let int = v.as_u64();
    let mut buf = [0u8; 24];
    match (s.conv, int) {
        (Conv::Signed, Some(raw)) => {
            let n: i64 = match s.length {
                Length::None => raw as i32 as i64,
                Length::Char => raw as i8 as i64,
                Length::Short => raw as i16 as i64,
                Length::Long => raw as i64,
            };
            let sign: &[u8] = if n < 0 {
                b"-"
            } else if s.flags.plus {
                b"+"
            } else if s.flags.space {
                b" "
            } else {
                b""
            };
            let start = digits(n.unsigned_abs(), 10, false, &mut buf);
            pad_int(s, sign, b"", &buf[start..], n == 0, out);
        }
        (Conv::Unsigned | Conv::Octal | Conv::HexLower | Conv::HexUpper, Some(raw)) => {
            let n: u64 = match s.length {
                Length::None => raw as u32 as u64,
                Length::Char => raw as u8 as u64,
                Length::Short => raw as u16 as u64,
                Length::Long => raw,
            };
            let alt = s.flags.alt && n != 0;
            let (base, upper, prefix): (u64, bool, &[u8]) = match s.conv {
                Conv::Octal => (8, false, b""),
                Conv::HexLower => (16, false, if alt { b"0x" } else { b"" }),
                Conv::HexUpper => (16, true, if alt { b"0X" } else { b"" }),
                _ => (10, false, b""),
            };
            let mut start = digits(n, base, upper, &mut buf);
            let octal_alt = s.conv == Conv::Octal && s.flags.alt;
            if octal_alt && buf.len() - start >= s.precision.unwrap_or(0) && buf[start] != b'0' {
                // C: '#' makes the first octal digit a 0 (raising the precision if needed).
                start -= 1;
                buf[start] = b'0';
            }
            pad_int(s, b"", prefix, &buf[start..], n == 0 && !octal_alt, out);
        }
        (Conv::Char, Some(raw)) => pad(s, &[raw as u8], out),
        (Conv::Pointer, Some(raw)) => {
            if raw == 0 {
                pad(s, b"(nil)", out);
            } else {
                let start = digits(raw, 16, false, &mut buf) - 2;
                buf[start..start + 2].copy_from_slice(b"0x");
                pad(s, &buf[start..], out);
            }
        }
        (Conv::BufHex, _) | (Conv::BufHexSpaced, _) | (Conv::Buf, _) => {
            let mut text = Vec::new();
            match (s.conv, v) {
                (Conv::BufHex, Value::Buf(b)) => hex_escape_all(&mut text, b),
                (Conv::BufHexSpaced, Value::Buf(b)) => hex_spaced(&mut text, b),
                (_, Value::Buf(b)) => hex_escape_buf(&mut text, b),
                _ => v.write_text(&mut text, style),
            }
            pad(s, &text, out);
        }
        (_, _) => match v {
            Value::Str {
                bytes,
                truncated: false,
            } => render_str(s, bytes, out),
            _ => {
                // %s of another value, or an integer conversion given a non-integer.
                let mut text = v.to_text(style);
                if let Some(p) = s.precision {
                    text.truncate(p);
                }
                pad(s, &text, out);
            }
        },
    }
}

/// Writes `n` in `base` at the end of `buf`, returning where the digits start.
fn digits(mut n: u64, base: u64, upper: bool, buf: &mut [u8; 24]) -> usize {
    let set: &[u8; 16] = if upper {
        b"0123456789ABCDEF"
    } else {
        b"0123456789abcdef"
    };
    // Leave one byte in front for octal's '#' and two for %p's "0x": 22 octal digits + 2 = 24.
    let mut i = buf.len();
    loop {
        i -= 1;
        buf[i] = set[(n % base) as usize];
        n /= base;
        if n == 0 {
            break;
        }
    }
    i
}

/// `%s` of a string's bytes (the common case, without building a [`Value`]).
pub(crate) fn render_str(s: &Spec, bytes: &[u8], out: &mut Vec<u8>) {
    let n = s.precision.map_or(bytes.len(), |p| p.min(bytes.len()));
    pad(s, &bytes[..n], out);
}

/// Pads `text` to the spec's width with spaces (left or right aligned).
fn pad(s: &Spec, text: &[u8], out: &mut Vec<u8>) {
    let fill = s.width.unwrap_or(0).saturating_sub(text.len());
    if !s.flags.left {
        out.resize(out.len() + fill, b' ');
    }
    out.extend_from_slice(text);
    if s.flags.left {
        out.resize(out.len() + fill, b' ');
    }
}

/// C's integer layout: precision zero-extends the digits (and `.0` prints nothing for 0);
/// the `0` flag zero-fills between sign/prefix and digits unless a precision or `-` is given.
fn pad_int(s: &Spec, sign: &[u8], prefix: &[u8], digits: &[u8], zero: bool, out: &mut Vec<u8>) {
    let digits = if s.precision == Some(0) && zero {
        &[][..]
    } else {
        digits
    };
    let prec_zeros = s.precision.unwrap_or(0).saturating_sub(digits.len());
    let body = sign.len() + prefix.len() + prec_zeros + digits.len();
    let fill = s.width.unwrap_or(0).saturating_sub(body);
    let zero_fill = s.flags.zero && !s.flags.left && s.precision.is_none();
    if !s.flags.left && !zero_fill {
        out.resize(out.len() + fill, b' ');
    }
    out.extend_from_slice(sign);
    out.extend_from_slice(prefix);
    if zero_fill {
        out.resize(out.len() + fill, b'0');
    }
    out.resize(out.len() + prec_zeros, b'0');
    out.extend_from_slice(digits);
    if s.flags.left {
        out.resize(out.len() + fill, b' ');
    }
}

#[cfg(test)]
mod tests;
