//! The value model shared by printf, `print()` and map printing, and its plain-text rendering.
//!
//! Input: values already read out of BPF records or maps (see [`super::decode`] for the byte
//! layouts), with symbols and stacks already resolved to text by the runtime.
//! Output: bpftrace's text form of each value, as bytes (strings from the kernel need not be
//! UTF-8, and bpftrace writes them through unchanged).
//! Invariant: rendering never panics, whatever the value.

use super::stack::Stack;

/// One value as bpftrace prints it. Integers are already widened to 64 bits; the width and
/// signedness they had in the record matter only when decoding (and for printf's length
/// modifiers, which re-narrow explicitly).
#[derive(Clone, Debug, PartialEq, Eq, Default)]
pub enum Value {
    /// Nothing (`none`/`void`); prints as the empty string in text.
    #[default]
    None,
    Bool(bool),
    Int(i64),
    UInt(u64),
    /// A NUL-terminated string, already cut at the NUL. `truncated` marks a string that filled
    /// its whole buffer (bpftrace ≥ 0.21 then appends `..`; 0.17 does not — see [`TextStyle`]).
    Str {
        bytes: Vec<u8>,
        truncated: bool,
    },
    /// `buf()` bytes: printed with non-printable bytes as `\xNN`.
    Buf(Vec<u8>),
    /// A pointer: `0x` hex in text, a number in JSON.
    Pointer(u64),
    /// Text resolved by the runtime (ksym, usym, probe name, username, inet, strftime, mac
    /// address, cgroup path, strerror …): printed as is, quoted in JSON.
    Symbol(Vec<u8>),
    /// A number shown through a name (an enum value): the name in text, the number in JSON.
    Symbolic {
        name: Vec<u8>,
        number: u64,
    },
    Tuple(Vec<Value>),
    Array(Vec<Value>),
    Record(Vec<(String, Value)>),
    Stack(Stack),
}

/// Which bpftrace's text quirks to reproduce where releases differ. The default is the one the
/// oracle installed on the project's hosts prints (0.17).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct TextStyle {
    /// Appended to strings that filled their buffer (bpftrace ≥ 0.21's `str_trunc_trailer`,
    /// `..` unless configured); empty for none (bpftrace 0.17's output, and the default here).
    pub str_trunc_trailer: &'static str,
    /// The buffer size of a string that can have been cut short (`max_strlen`, the size of
    /// `str()`'s buffers); 0 for any size. A char array of another size that has no NUL
    /// (`char s[5]` holding "hello") is whole and prints without the trailer.
    pub str_trunc_size: usize,
}

impl TextStyle {
    /// Whether a string of `len` bytes without a NUL gets the trailer.
    pub fn trails(&self, len: usize) -> bool {
        !self.str_trunc_trailer.is_empty()
            && (self.str_trunc_size == 0 || len == self.str_trunc_size)
    }
}

impl Value {
    /// A string value from bytes that may contain a NUL: cut at the first NUL, and marked
    /// truncated when there was none (the string filled its buffer).
    pub fn from_c_bytes(raw: &[u8]) -> Value {
        match raw.iter().position(|&b| b == 0) {
            Some(n) => Value::Str {
                bytes: raw[..n].to_vec(),
                truncated: false,
            },
            None => Value::Str {
                bytes: raw.to_vec(),
                truncated: !raw.is_empty(),
            },
        }
    }

    /// A string value that was not truncated.
    pub fn str(s: impl Into<Vec<u8>>) -> Value {
        Value::Str {
            bytes: s.into(),
            truncated: false,
        }
    }

    /// The integer this value stands for, if any (ints, bools, pointers, enum values).
    pub fn as_u64(&self) -> Option<u64> {
        match *self {
            Value::Int(v) => Some(v as u64),
            Value::UInt(v) | Value::Pointer(v) => Some(v),
            Value::Bool(b) => Some(b as u64),
            Value::Symbolic { number, .. } => Some(number),
            _ => None,
        }
    }

    /// Whether this value is shown quoted in JSON (strings and resolved text).
    pub fn is_textual(&self) -> bool {
        matches!(
            self,
            Value::Str { .. } | Value::Buf(_) | Value::Symbol(_) | Value::Stack(_)
        )
    }

    /// Appends bpftrace's text form of this value to `out`.
    pub fn write_text(&self, out: &mut Vec<u8>, style: TextStyle) {
        match self {
            Value::None => {}
            Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
            Value::Int(v) => write_display(out, v),
            Value::UInt(v) => write_display(out, v),
            Value::Str { bytes, truncated } => {
                out.extend_from_slice(bytes);
                if *truncated && style.trails(bytes.len()) {
                    out.extend_from_slice(style.str_trunc_trailer.as_bytes());
                }
            }
            Value::Buf(b) => hex_escape_buf(out, b),
            // Current bpftrace prints a pointer (map value, key, tuple element) in hex (0.17
            // printed map values in decimal).
            Value::Pointer(p) => write_display(out, format_args!("0x{p:x}")),
            Value::Symbol(s) => out.extend_from_slice(s),
            Value::Symbolic { name, .. } => out.extend_from_slice(name),
            Value::Tuple(vs) => {
                out.push(b'(');
                write_joined(out, vs, b", ", style);
                out.push(b')');
            }
            Value::Array(vs) => {
                out.push(b'[');
                write_joined(out, vs, b",", style);
                out.push(b']');
            }
            Value::Record(fields) => {
                out.extend_from_slice(b"{ ");
                for (i, (name, v)) in fields.iter().enumerate() {
                    if i > 0 {
                        out.extend_from_slice(b", ");
                    }
                    out.push(b'.');
                    out.extend_from_slice(name.as_bytes());
                    out.extend_from_slice(b" = ");
                    v.write_text(out, style);
                }
                out.extend_from_slice(b" }");
            }
            Value::Stack(s) => out.extend_from_slice(&s.render()),
        }
    }

    /// This value's text form as bytes.
    pub fn to_text(&self, style: TextStyle) -> Vec<u8> {
        let mut out = Vec::new();
        self.write_text(&mut out, style);
        out
    }
}

fn write_joined(out: &mut Vec<u8>, vs: &[Value], sep: &[u8], style: TextStyle) {
    for (i, v) in vs.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(sep);
        }
        v.write_text(out, style);
    }
}

/// Writes anything `Display` into a byte buffer without an intermediate `String`.
pub(crate) fn write_display(out: &mut Vec<u8>, v: impl std::fmt::Display) {
    use std::io::Write;
    // Writing into a Vec cannot fail.
    let _ = write!(out, "{v}");
}

/// bpftrace's `%r` form of a buffer: printable ASCII (32..=126) as is, every other byte as
/// `\xNN` (lower-case hex).
pub fn hex_escape_buf(out: &mut Vec<u8>, bytes: &[u8]) {
    for &b in bytes {
        if (32..=126).contains(&b) {
            out.push(b);
        } else {
            push_hex_escape(out, b);
        }
    }
}

/// bpftrace's `%rx` form: every byte as `\xNN`.
pub fn hex_escape_all(out: &mut Vec<u8>, bytes: &[u8]) {
    for &b in bytes {
        push_hex_escape(out, b);
    }
}

/// bpftrace's `%rh` form: every byte as two hex digits, separated by spaces.
pub fn hex_spaced(out: &mut Vec<u8>, bytes: &[u8]) {
    for (i, &b) in bytes.iter().enumerate() {
        if i > 0 {
            out.push(b' ');
        }
        push_hex(out, b);
    }
}

fn push_hex_escape(out: &mut Vec<u8>, b: u8) {
    out.extend_from_slice(b"\\x");
    push_hex(out, b);
}

fn push_hex(out: &mut Vec<u8>, b: u8) {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    out.push(HEX[(b >> 4) as usize]);
    out.push(HEX[(b & 15) as usize]);
}

#[cfg(test)]
mod tests {
    use super::*;

    fn text(v: &Value) -> String {
        String::from_utf8_lossy(&v.to_text(TextStyle::default())).into_owned()
    }

    #[test]
    fn tuples_get_spaces_arrays_do_not() {
        let t = Value::Tuple(vec![Value::Int(1), Value::str("two"), Value::Int(-3)]);
        assert_eq!(text(&t), "(1, two, -3)");
        let a = Value::Array(vec![Value::UInt(1), Value::UInt(2)]);
        assert_eq!(text(&a), "[1,2]");
    }

    #[test]
    fn records_print_dotted_fields() {
        let r = Value::Record(vec![
            ("a".into(), Value::Int(1)),
            ("b".into(), Value::str("x")),
        ]);
        assert_eq!(text(&r), "{ .a = 1, .b = x }");
    }

    #[test]
    fn c_strings_cut_at_nul_and_mark_truncation() {
        assert_eq!(Value::from_c_bytes(b"ab\0cd"), Value::str("ab"));
        let full = Value::from_c_bytes(b"abcd");
        assert_eq!(text(&full), "abcd");
        let trailer = TextStyle {
            str_trunc_trailer: "..",
            str_trunc_size: 0,
        };
        assert_eq!(full.to_text(trailer), b"abcd..");
        // Only a string of str()'s size was cut short; a full char array of another is whole.
        let sized = TextStyle {
            str_trunc_trailer: "..",
            str_trunc_size: 4,
        };
        assert_eq!(full.to_text(sized), b"abcd..");
        assert_eq!(Value::from_c_bytes(b"hello").to_text(sized), b"hello");
        assert_eq!(Value::from_c_bytes(b""), Value::str(""));
    }

    #[test]
    fn buffers_escape_non_printable_bytes() {
        let b = Value::Buf(b"ab\n\x01\xff\"\\".to_vec());
        assert_eq!(text(&b), "ab\\x0a\\x01\\xff\"\\");
        let mut out = Vec::new();
        hex_escape_all(&mut out, b"ab\x01");
        assert_eq!(out, b"\\x61\\x62\\x01");
        out.clear();
        hex_spaced(&mut out, b"ab\x01");
        assert_eq!(out, b"61 62 01");
    }

    #[test]
    fn extreme_integers_print_in_full() {
        assert_eq!(text(&Value::Int(i64::MIN)), "-9223372036854775808");
        assert_eq!(text(&Value::UInt(u64::MAX)), "18446744073709551615");
        assert_eq!(text(&Value::Pointer(0xff)), "0xff");
    }
}
