//! Integer constant expressions over expanded tokens, as C evaluates them: `#if` lines and
//! the values of `#define`d constants and enumerators. Values are 64-bit, signed or unsigned
//! (an operand with a `u` suffix or an unsigned cast makes the operation unsigned, as the
//! usual arithmetic conversions do); casts to the common integer types truncate; `sizeof`
//! of basic types is known.
//!
//! Input: tokens with macros already expanded, and how to resolve an identifier left over.
//! Output: the value, or a message saying what could not be evaluated.

use super::lex::{Tok, TokKind};

/// A value and its signedness.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Val {
    pub v: i64,
    pub unsigned: bool,
}

impl Val {
    fn int(v: i64) -> Val {
        Val { v, unsigned: false }
    }
    fn bool(b: bool) -> Val {
        Val::int(b as i64)
    }
}

/// Deepest nesting of parentheses and unary operators evaluated.
const MAX_DEPTH: u32 = 256;

/// Evaluates `toks` completely. `ident` gives the value of an identifier (an enumerator);
/// `None` from it is an error naming the identifier.
pub fn eval(toks: &[Tok], ident: &dyn Fn(&str) -> Option<i64>) -> Result<Val, String> {
    let mut e = Eval {
        toks,
        pos: 0,
        ident,
        depth: 0,
    };
    if toks.is_empty() {
        return Err("empty expression".into());
    }
    let v = e.comma()?;
    match toks.get(e.pos) {
        None => Ok(v),
        Some(t) => Err(format!("unexpected '{}'", t.text)),
    }
}

struct Eval<'a> {
    toks: &'a [Tok],
    pos: usize,
    ident: &'a dyn Fn(&str) -> Option<i64>,
    depth: u32,
}

impl Eval<'_> {
    fn peek(&self) -> Option<&Tok> {
        self.toks.get(self.pos)
    }

    fn eat(&mut self, p: &str) -> bool {
        if self.peek().is_some_and(|t| t.is(p)) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn expect(&mut self, p: &str) -> Result<(), String> {
        if self.eat(p) {
            Ok(())
        } else {
            Err(match self.peek() {
                Some(t) => format!("expected '{p}', found '{}'", t.text),
                None => format!("expected '{p}' at the end"),
            })
        }
    }

    fn comma(&mut self) -> Result<Val, String> {
        let mut v = self.cond()?;
        while self.eat(",") {
            v = self.cond()?;
        }
        Ok(v)
    }

    fn cond(&mut self) -> Result<Val, String> {
        let c = self.binary(0)?;
        if !self.eat("?") {
            return Ok(c);
        }
        let a = self.comma()?;
        self.expect(":")?;
        let b = self.cond()?;
        let unsigned = a.unsigned || b.unsigned;
        let v = if c.v != 0 { a.v } else { b.v };
        Ok(Val { v, unsigned })
    }

    /// Binary operators by C precedence, loosest first.
    fn binary(&mut self, level: usize) -> Result<Val, String> {
        const LEVELS: &[&[&str]] = &[
            &["||"],
            &["&&"],
            &["|"],
            &["^"],
            &["&"],
            &["==", "!="],
            &["<", ">", "<=", ">="],
            &["<<", ">>"],
            &["+", "-"],
            &["*", "/", "%"],
        ];
        let Some(ops) = LEVELS.get(level) else {
            return self.unary();
        };
        let mut l = self.binary(level + 1)?;
        'next: loop {
            for op in *ops {
                if self.eat(op) {
                    let r = self.binary(level + 1)?;
                    l = apply(op, l, r)?;
                    continue 'next;
                }
            }
            return Ok(l);
        }
    }

    fn unary(&mut self) -> Result<Val, String> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err("expression nested too deeply".into());
        }
        let r = self.unary_inner();
        self.depth -= 1;
        r
    }

    fn unary_inner(&mut self) -> Result<Val, String> {
        if self.eat("!") {
            return Ok(Val::bool(self.unary()?.v == 0));
        }
        if self.eat("-") {
            let v = self.unary()?;
            return Ok(Val {
                v: v.v.wrapping_neg(),
                ..v
            });
        }
        if self.eat("~") {
            let v = self.unary()?;
            return Ok(Val { v: !v.v, ..v });
        }
        if self.eat("+") {
            return self.unary();
        }
        let Some(t) = self.peek().cloned() else {
            return Err("expression ends early".into());
        };
        if t.is("(") {
            if let Some((ty, end)) = self.type_name(self.pos + 1) {
                self.pos = end;
                let v = self.unary()?;
                return Ok(cast(v, ty));
            }
            self.pos += 1;
            let v = self.comma()?;
            self.expect(")")?;
            return Ok(v);
        }
        self.pos += 1;
        match t.kind {
            TokKind::Number => number(&t.text),
            TokKind::Char => char_value(&t.text),
            TokKind::Ident
                if t.text == "sizeof" || t.text == "__alignof__" || t.text == "_Alignof" =>
            {
                self.expect("(")?;
                let Some((ty, end)) = self.type_name(self.pos) else {
                    return Err(format!("cannot take {} of this", t.text));
                };
                self.pos = end;
                Ok(Val {
                    v: ty.size as i64,
                    unsigned: true,
                })
            }
            TokKind::Ident => match (self.ident)(&t.text) {
                Some(v) => Ok(Val::int(v)),
                None if self.peek().is_some_and(|n| n.is("(")) => {
                    Err(format!("'{}' is not a known function-like macro", t.text))
                }
                None => Err(format!("unknown identifier '{}'", t.text)),
            },
            _ => Err(format!("unexpected '{}'", t.text)),
        }
    }

    /// A basic type name from `at` up to its `)`: the type and the index after the `)`.
    fn type_name(&self, at: usize) -> Option<(CType, usize)> {
        let mut words = Vec::new();
        let mut pointer = false;
        let mut i = at;
        loop {
            let t = self.toks.get(i)?;
            if t.is(")") {
                break;
            }
            if t.is("*") {
                pointer = true;
            } else if t.is_ident() && !pointer {
                words.push(t.text.as_str());
            } else {
                return None;
            }
            i += 1;
        }
        let ty = if pointer {
            // A pointer type named by anything (`(void *)`, `(struct x *)`).
            (!words.is_empty()).then_some(CType {
                size: 8,
                unsigned: true,
            })?
        } else {
            basic_type(&words)?
        };
        Some((ty, i + 1))
    }
}

/// A basic C type's size in bytes and signedness.
#[derive(Clone, Copy, Debug)]
struct CType {
    size: u32,
    unsigned: bool,
}

/// The size and signedness (`true`: unsigned) of a basic type named by `words`.
pub fn basic_type_of(words: &[&str]) -> Option<(u32, bool)> {
    basic_type(words).map(|t| (t.size, t.unsigned))
}

fn basic_type(words: &[&str]) -> Option<CType> {
    let words: Vec<&str> = words
        .iter()
        .copied()
        .filter(|w| !matches!(*w, "const" | "volatile" | "__const" | "__volatile__"))
        .collect();
    let named = |size, unsigned| Some(CType { size, unsigned });
    if let [w] = words.as_slice() {
        // Fixed-width names: __u32, u32, uint32_t, __s64, int8_t, …
        let (unsigned, digits) = if let Some(d) = w
            .strip_prefix("__u")
            .or_else(|| w.strip_prefix("u"))
            .or_else(|| w.strip_prefix("uint").and_then(|d| d.strip_suffix("_t")))
            .or_else(|| w.strip_prefix("__uint").and_then(|d| d.strip_suffix("_t")))
        {
            (true, d)
        } else if let Some(d) = w
            .strip_prefix("__s")
            .or_else(|| w.strip_prefix("s"))
            .or_else(|| w.strip_prefix("int").and_then(|d| d.strip_suffix("_t")))
            .or_else(|| w.strip_prefix("__int").and_then(|d| d.strip_suffix("_t")))
        {
            (false, d)
        } else {
            (false, "")
        };
        if let Ok(bits @ (8 | 16 | 32 | 64)) = digits.parse::<u32>() {
            return named(bits / 8, unsigned);
        }
        match *w {
            "size_t" | "__kernel_size_t" | "uintptr_t" | "__kernel_ulong_t" => {
                return named(8, true)
            }
            "ssize_t" | "__kernel_ssize_t" | "intptr_t" | "ptrdiff_t" | "off_t" | "loff_t"
            | "__kernel_long_t" => return named(8, false),
            "_Bool" | "bool" => return named(1, true),
            _ => {}
        }
    }
    let mut unsigned = false;
    let mut signed = false;
    let mut longs = 0;
    let mut base = None;
    for w in &words {
        match *w {
            "unsigned" => unsigned = true,
            "signed" | "__signed__" => signed = true,
            "long" => longs += 1,
            "char" | "short" | "int" if base.is_none() => base = Some(*w),
            _ => return None,
        }
    }
    if words.is_empty() || (signed && unsigned) {
        return None;
    }
    let size = match (base, longs) {
        (Some("char"), 0) => 1,
        (Some("short"), 0) => 2,
        (Some("int") | None, 0) => 4,
        (Some("int") | None, 1 | 2) => 8,
        _ => return None,
    };
    named(size, unsigned)
}

fn cast(v: Val, ty: CType) -> Val {
    let bits = ty.size * 8;
    let x = if bits >= 64 {
        v.v
    } else if ty.unsigned {
        ((v.v as u64) & ((1u64 << bits) - 1)) as i64
    } else {
        (v.v << (64 - bits)) >> (64 - bits)
    };
    // C promotes types narrower than int to (signed) int.
    Val {
        v: x,
        unsigned: ty.unsigned && ty.size >= 4,
    }
}

fn apply(op: &str, l: Val, r: Val) -> Result<Val, String> {
    let unsigned = l.unsigned || r.unsigned;
    let (a, b) = (l.v, r.v);
    let (ua, ub) = (a as u64, b as u64);
    let v = match op {
        "||" => return Ok(Val::bool(a != 0 || b != 0)),
        "&&" => return Ok(Val::bool(a != 0 && b != 0)),
        "|" => a | b,
        "^" => a ^ b,
        "&" => a & b,
        "==" => return Ok(Val::bool(a == b)),
        "!=" => return Ok(Val::bool(a != b)),
        "<" | ">" | "<=" | ">=" => {
            let ord = if unsigned { ua.cmp(&ub) } else { a.cmp(&b) };
            let t = match op {
                "<" => ord.is_lt(),
                ">" => ord.is_gt(),
                "<=" => ord.is_le(),
                _ => ord.is_ge(),
            };
            return Ok(Val::bool(t));
        }
        "<<" | ">>" => {
            let n = u32::try_from(b)
                .ok()
                .filter(|n| *n < 64)
                .ok_or_else(|| format!("shift count {b} is out of range"))?;
            let v = if op == "<<" {
                a.wrapping_shl(n)
            } else if l.unsigned {
                (ua >> n) as i64
            } else {
                a >> n
            };
            return Ok(Val {
                v,
                unsigned: l.unsigned,
            });
        }
        "+" => a.wrapping_add(b),
        "-" => a.wrapping_sub(b),
        "*" => a.wrapping_mul(b),
        "/" | "%" => {
            if b == 0 {
                return Err("division by zero".into());
            }
            match (op, unsigned) {
                ("/", true) => (ua / ub) as i64,
                ("/", false) => a.wrapping_div(b),
                (_, true) => (ua % ub) as i64,
                _ => a.wrapping_rem(b),
            }
        }
        _ => return Err(format!("unknown operator '{op}'")),
    };
    Ok(Val { v, unsigned })
}

/// An integer literal with C's suffixes; floating-point literals are refused.
pub fn number(text: &str) -> Result<Val, String> {
    let t = text.replace('\'', "");
    let body = t.trim_end_matches(['u', 'U', 'l', 'L']);
    let unsigned = t[body.len()..].contains(['u', 'U']);
    let bad = || format!("'{text}' is not an integer");
    let v = if let Some(h) = body.strip_prefix("0x").or_else(|| body.strip_prefix("0X")) {
        u64::from_str_radix(h, 16).map_err(|_| bad())?
    } else if let Some(b) = body.strip_prefix("0b").or_else(|| body.strip_prefix("0B")) {
        u64::from_str_radix(b, 2).map_err(|_| bad())?
    } else if body.len() > 1 && body.starts_with('0') {
        u64::from_str_radix(&body[1..], 8).map_err(|_| bad())?
    } else {
        body.parse::<u64>().map_err(|_| bad())?
    };
    // A literal too large for a signed 64-bit value is unsigned, as in C.
    Ok(Val {
        v: v as i64,
        unsigned: unsigned || v > i64::MAX as u64,
    })
}

/// A character constant: `'a'`, `'\n'`, `'\0'`, `'\x41'`, `'\101'`.
fn char_value(text: &str) -> Result<Val, String> {
    let inner = text
        .trim_start_matches(['L', 'u', 'U', '8'])
        .strip_prefix('\'')
        .and_then(|s| s.strip_suffix('\''))
        .ok_or_else(|| format!("bad character constant {text}"))?;
    let bad = || format!("unsupported character constant {text}");
    let v = if let Some(esc) = inner.strip_prefix('\\') {
        match esc {
            "n" => 10,
            "t" => 9,
            "r" => 13,
            "a" => 7,
            "b" => 8,
            "f" => 12,
            "v" => 11,
            "\\" => 92,
            "'" => 39,
            "\"" => 34,
            "?" => 63,
            _ => {
                if let Some(h) = esc.strip_prefix('x') {
                    i64::from_str_radix(h, 16).map_err(|_| bad())?
                } else {
                    i64::from_str_radix(esc, 8).map_err(|_| bad())?
                }
            }
        }
    } else {
        let mut cs = inner.chars();
        match (cs.next(), cs.next()) {
            (Some(c), None) => c as i64,
            _ => return Err(bad()),
        }
    };
    Ok(Val::int(v))
}

#[cfg(test)]
mod tests {
    use super::super::lex::tokenize;
    use super::*;

    fn ev(s: &str) -> Result<i64, String> {
        let names = |n: &str| match n {
            "ONE" => Some(1),
            _ => None,
        };
        eval(&tokenize(s), &names).map(|v| v.v)
    }

    #[test]
    fn precedence_and_operators() {
        assert_eq!(ev("1 + 2 * 3"), Ok(7));
        assert_eq!(ev("(1 + 2) * 3"), Ok(9));
        assert_eq!(ev("1 << 4 | 1"), Ok(17));
        assert_eq!(ev("!0 && (2 > 1) || 0"), Ok(1));
        assert_eq!(ev("ONE ? 10 : 20"), Ok(10));
        assert_eq!(ev("0 ? 1 : 0 ? 2 : 3"), Ok(3));
        assert_eq!(ev("-7 / 2"), Ok(-3));
        assert_eq!(ev("-7 % 3"), Ok(-1));
        assert_eq!(ev("~0 & 0xff"), Ok(255));
        assert_eq!(ev("'A' + '\\n'"), Ok(75));
    }

    #[test]
    fn unsigned_rules_follow_c() {
        assert_eq!(ev("-1 < 0"), Ok(1));
        assert_eq!(ev("-1 < 0u"), Ok(0));
        assert_eq!(ev("0xffffffffffffffff >> 60"), Ok(15));
        assert_eq!(ev("-16 >> 2"), Ok(-4));
        assert_eq!(ev("(unsigned char)-1"), Ok(255));
        assert_eq!(ev("(__s8)0xff"), Ok(-1));
        assert_eq!(ev("(int)0x100000001"), Ok(1));
        assert_eq!(ev("(void *)-1"), Ok(-1));
        assert_eq!(ev("sizeof(unsigned long) * 8"), Ok(64));
        assert_eq!(ev("010 + 0b11 + 10UL"), Ok(21));
    }

    #[test]
    fn errors_name_the_problem() {
        assert_eq!(ev("1 / 0"), Err("division by zero".into()));
        assert_eq!(ev("X + 1"), Err("unknown identifier 'X'".into()));
        assert!(ev("F(1)").unwrap_err().contains("function-like"));
        assert!(ev("(1 + 2").is_err());
        assert!(ev("1 2").is_err());
        assert!(ev("1.5").is_err());
        assert!(ev("1 << 64").is_err());
        assert!(ev(&"(".repeat(1000)).is_err());
    }
}
