//! Rendering `printf`/`errorf`-style format strings (parsed at compile time by
//! [`crate::plan::printf`], which documents the conversions) from decoded argument values.
//! Invariant: rendering never panics: a missing argument renders as nothing, a non-integer
//! given to an integer conversion renders as its text.

use crate::plan::printf::Piece;
pub use crate::plan::printf::{ArgKind, Conv, Flags, FormatString, Length, PrintfError, Spec};

use super::value::{hex_escape_all, hex_escape_buf, hex_spaced, TextStyle, Value};

impl FormatString {
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
        (Conv::GfpFlags, Some(raw)) => pad(s, super::gfp::gfp_flags_text(raw).as_bytes(), out),
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
