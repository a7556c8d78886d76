//! `printf`/`errorf`-style format strings: parsed once at compile time into literal pieces and
//! typed conversion specs (rendered at run time by `runtime::format::printf`), and checked
//! `printf` calls ([`PrintfCall`]): the format and its arguments' record layout.
//!
//! Input: the format string as written in the script (escapes already processed) and, at run
//! time, one value per conversion.
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

use super::layout::{tuple_offsets, FieldType};

/// Why a format string was rejected. `offset` is the byte offset of the `%` in the string.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrintfError {
    #[error("unsupported format specifier '%{spec}' at offset {offset}: floating point and %n are not printf conversions in bpftrace")]
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
    /// `%gr`: an integer as GFP allocation flag names (`GFP_KERNEL|__GFP_ZERO`).
    GfpFlags,
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
pub(crate) enum Piece {
    Lit(Vec<u8>),
    Spec(Spec),
}

/// A parsed format string.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FormatString {
    pub(crate) pieces: Vec<Piece>,
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
        b'g' if b.get(i + 1) == Some(&b'r') => (Conv::GfpFlags, i + 2),
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

/// Why a printf call's arguments do not fit its format.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum PrintfCallError {
    #[error(transparent)]
    Format(#[from] PrintfError),
    #[error("{problem} arguments for format string ({given} supplied, {expected} expected)")]
    ArgCount {
        problem: &'static str,
        given: usize,
        expected: usize,
    },
    #[error("argument {index} does not fit its conversion: {expected:?} expected")]
    ArgType { index: usize, expected: ArgKind },
}

/// A printf call whose arguments have been checked against its format.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct PrintfCall {
    pub format: FormatString,
    pub args: Vec<FieldType>,
    offsets: Vec<usize>,
}

fn fits(kind: ArgKind, ty: &FieldType) -> bool {
    match kind {
        ArgKind::Any => true,
        ArgKind::Integer => matches!(
            ty,
            FieldType::Int { .. } | FieldType::Enum { .. } | FieldType::Bool | FieldType::Pointer
        ),
        ArgKind::Buffer => matches!(ty, FieldType::Buf { .. } | FieldType::Str { .. }),
    }
}

impl PrintfCall {
    /// Parses `fmt` and checks `args` against it (count, then each kind).
    pub fn new(fmt: &str, args: Vec<FieldType>) -> Result<PrintfCall, PrintfCallError> {
        let format = FormatString::parse(fmt)?;
        let kinds = format.arg_kinds();
        if kinds.len() != args.len() {
            return Err(PrintfCallError::ArgCount {
                problem: if args.len() > kinds.len() {
                    "too many"
                } else {
                    "not enough"
                },
                given: args.len(),
                expected: kinds.len(),
            });
        }
        for (index, (k, t)) in kinds.iter().zip(&args).enumerate() {
            if !fits(*k, t) {
                return Err(PrintfCallError::ArgType {
                    index,
                    expected: *k,
                });
            }
        }
        let offsets = tuple_offsets(&args);
        Ok(PrintfCall {
            format,
            args,
            offsets,
        })
    }

    /// Where each argument goes in the record's argument area.
    pub fn offsets(&self) -> &[usize] {
        &self.offsets
    }

    /// Size of the argument area.
    pub fn args_size(&self) -> usize {
        FieldType::Tuple(self.args.clone()).size()
    }
}
