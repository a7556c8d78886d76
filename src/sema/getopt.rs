//! `getopt("name"[, default[, "description"]])`: named program options, given after `--` on
//! the command line (`strobe tool.bt -- --depth=3 --verbose`), as current bpftrace has them.
//! The default's literal sets the type: none or `true`/`false` a bool, an integer an unsigned
//! (a negative one a signed) 64-bit integer, a string a string of `max_strlen` bytes.
//!
//! bpftrace keeps the values in read-only globals set at load time; strobe knows them before
//! it generates code, so each call folds to a constant like a positional parameter. Option
//! names that no `getopt` reads are an error listing the script's options (`-- --help` shows
//! the list too).

use super::resolve::Checker;
use super::Type;
use crate::diag::Span;
use crate::syntax::ast::{Expr, ExprKind, UnaryOp};

/// A default value (and the type it gives the option).
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum OptValue {
    Bool(bool),
    Unsigned(u64),
    Signed(i64),
    Str(String),
}

impl std::fmt::Display for OptValue {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            OptValue::Bool(b) => write!(f, "{b}"),
            OptValue::Unsigned(n) => write!(f, "{n}"),
            OptValue::Signed(n) => write!(f, "{n}"),
            OptValue::Str(s) => write!(f, "{s}"),
        }
    }
}

/// One option a script reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct NamedOption {
    pub name: String,
    pub default: OptValue,
    pub description: String,
    pub span: Span,
}

/// The options' list as `-- --help` prints it (after `HINT: `): each option on its line with
/// its description.
pub fn describe(options: &[NamedOption]) -> String {
    if options.is_empty() {
        return "no custom program options defined.".into();
    }
    let mut out = String::from("expected program options:");
    for o in options {
        out.push_str(&format!("\n--{}", o.name));
        if !o.description.is_empty() {
            out.push_str(&format!(": {}", o.description));
        }
    }
    out
}

/// The options' names on one line, for the hint of an unknown-option error.
fn expected_list(options: &[NamedOption]) -> String {
    if options.is_empty() {
        return "no custom program options defined.".into();
    }
    let names: Vec<String> = options.iter().map(|o| format!("--{}", o.name)).collect();
    format!("expected program options: {}", names.join(", "))
}

fn str_lit(e: &Expr) -> Option<String> {
    match &e.kind {
        ExprKind::Str(s) => Some(String::from_utf8_lossy(s).into_owned()),
        _ => None,
    }
}

fn default_of(e: &Expr) -> Option<OptValue> {
    match &e.kind {
        ExprKind::Bool(b) => Some(OptValue::Bool(*b)),
        ExprKind::Int(lit) => Some(OptValue::Unsigned(lit.value)),
        ExprKind::Str(s) => Some(OptValue::Str(String::from_utf8_lossy(s).into_owned())),
        ExprKind::Unary {
            op: UnaryOp::Neg,
            expr,
        } => match &expr.kind {
            ExprKind::Int(lit) => i64::try_from(lit.value).ok().map(|v| OptValue::Signed(-v)),
            _ => None,
        },
        _ => None,
    }
}

/// `[-]digits` in decimal, `0x` hex or `0`-prefixed octal: (negative, magnitude).
fn parse_number(v: &str) -> Option<(bool, u64)> {
    let (neg, d) = match v.strip_prefix('-') {
        Some(d) => (true, d),
        None => (false, v),
    };
    let (radix, body) = match d.strip_prefix("0x").or_else(|| d.strip_prefix("0X")) {
        Some(h) => (16, h),
        None if d.len() > 1 && d.starts_with('0') => (8, &d[1..]),
        None => (10, d),
    };
    if body.is_empty() || !body.chars().all(|c| c.is_digit(radix)) {
        return None;
    }
    u64::from_str_radix(body, radix).ok().map(|n| (neg, n))
}

/// Why `v` is no integer, in bpftrace's words.
fn number_error(v: &str) -> &'static str {
    let d = v.strip_prefix('-').unwrap_or(v);
    if !d.starts_with(|c: char| c.is_ascii_digit()) {
        "invalid integer"
    } else if d.chars().all(|c| c.is_ascii_digit()) {
        "value is out of range"
    } else {
        "invalid trailing bytes"
    }
}

/// Parses a command-line value for an option of `default`'s type.
fn parse_value(default: &OptValue, given: Option<&str>) -> Result<OptValue, &'static str> {
    let Some(v) = given else {
        return match default {
            OptValue::Bool(_) => Ok(OptValue::Bool(true)),
            OptValue::Str(_) => Err("expects a string"),
            _ => Err("expects an integer"),
        };
    };
    match default {
        OptValue::Bool(_) => match v {
            "true" | "True" | "1" => Ok(OptValue::Bool(true)),
            "false" | "False" | "0" => Ok(OptValue::Bool(false)),
            _ => Err("expects a boolean (e.g. 'true')"),
        },
        // Decimal, `0x` hex or `0` octal, as bpftrace reads numbers; a `uint64` default
        // takes a negative number as its bits and an integer one past `i64::MAX`, as bpftrace
        // does (`--aa=0xffffffffffffffff` for `getopt("aa", 20)`).
        OptValue::Unsigned(_) | OptValue::Signed(_) => match parse_number(v) {
            Some((neg, n)) if !neg => Ok(match default {
                OptValue::Signed(_) if n <= i64::MAX as u64 => OptValue::Signed(n as i64),
                _ => OptValue::Unsigned(n),
            }),
            Some((_, n)) if n <= 1 << 63 => Ok(OptValue::Signed((n as i64).wrapping_neg())),
            _ => Err(number_error(v)),
        },
        OptValue::Str(_) => Ok(OptValue::Str(v.to_string())),
    }
}

impl Checker<'_> {
    /// Checks a `getopt` call and folds it to the option's value.
    pub(super) fn getopt(&mut self, e: &Expr, args: &[Expr]) -> Type {
        let Some(name) = args.first().and_then(str_lit) else {
            let span = args.first().map_or(e.span, |a| a.span);
            self.error(span, "First argument to 'getopt' must be a string literal.");
            return Type::None;
        };
        let default = match args.get(1) {
            None => OptValue::Bool(false),
            Some(a) => match default_of(a) {
                Some(d) => d,
                None => {
                    self.error(
                        a.span,
                        "Second argument to 'getopt' must be a string literal, integer \
                         literal, or a boolean literal.",
                    );
                    return Type::None;
                }
            },
        };
        let description = match args.get(2) {
            None => String::new(),
            Some(a) => match str_lit(a) {
                Some(d) => d,
                None => {
                    self.error(
                        a.span,
                        "Function 'getopt' requires the third parameter to be a string literal.",
                    );
                    return Type::None;
                }
            },
        };
        if let Some(prev) = self.getopts.iter_mut().find(|o| o.name == name) {
            if prev.default != default {
                let msg = format!(
                    "Command line option '{name}' needs to have the same default value in all \
                     places it is used. Previous default value: {}",
                    prev.default
                );
                self.error(e.span, msg);
                return Type::None;
            }
            if prev.description.is_empty() {
                prev.description = description;
            }
        } else {
            self.getopts.push(NamedOption {
                name: name.clone(),
                default: default.clone(),
                description,
                span: e.span,
            });
        }
        let given = self
            .opts
            .named_params
            .iter()
            .rev()
            .find(|(n, _)| *n == name)
            .map(|(_, v)| v.as_deref());
        let value = match given {
            None => default.clone(),
            Some(v) => match parse_value(&default, v) {
                Ok(v) => v,
                Err(why) => {
                    let msg = format!(
                        "program command line option --{name} {why} (value: {})",
                        v.unwrap_or("true")
                    );
                    // A fact about the command line, not a place in the script: bpftrace
                    // reports it without one.
                    self.error(Span::NOWHERE, msg);
                    return Type::None;
                }
            },
        };
        match value {
            OptValue::Bool(b) => {
                self.consts.insert(e.id, b as i64);
                Type::Bool
            }
            OptValue::Unsigned(n) => {
                self.consts.insert(e.id, n as i64);
                Type::U64
            }
            OptValue::Signed(n) => {
                self.consts.insert(e.id, n);
                Type::I64
            }
            OptValue::Str(s) => {
                let mut bytes = s.into_bytes();
                bytes.truncate(self.opts.max_strlen.saturating_sub(1));
                self.str_consts.insert(e.id, bytes);
                Type::Str {
                    size: self.opts.max_strlen,
                }
            }
        }
    }

    /// Named options given on the command line that no `getopt` reads: one error, with the
    /// script's options listed.
    pub(super) fn check_named_params(&mut self) {
        let unknown: Vec<String> = self
            .opts
            .named_params
            .iter()
            .filter(|(n, _)| n != "help" && !self.getopts.iter().any(|o| &o.name == n))
            .map(|(n, _)| format!("--{n}"))
            .collect();
        if unknown.is_empty() {
            return;
        }
        let msg = format!(
            "unexpected program command line options: {}",
            unknown.join(", ")
        );
        let list = expected_list(&self.getopts);
        if let Some(d) = self.error(Span::NOWHERE, msg) {
            d.help = Some(list);
        }
    }
}
