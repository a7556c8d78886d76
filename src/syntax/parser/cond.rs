//! Preprocessor conditionals in the C-definitions head of a script: `#if`, `#ifdef`,
//! `#ifndef`, `#elif`, `#else`, `#endif` (and `#undef`), evaluated the way bpftrace's clang
//! preprocessor would see them. bpftrace's own tools switch on `BPFTRACE_HAVE_BTF` (headers
//! without BTF, a few `#define`s with it); strobe always reads types from BTF, so that name is
//! always defined.
//!
//! Input: directive lines in order. Output: whether the text after each line is active. A
//! `#if` expression may use integers, names (`#define`d integers, else 0), `defined(NAME)` /
//! `defined NAME`, `!`, `&&`, `||`, comparisons and parentheses; anything else is an error
//! rather than a guess.

use std::collections::HashMap;

/// Names defined before the script's first line.
pub const PREDEFINED: &[&str] = &["BPFTRACE_HAVE_BTF"];

/// One open conditional.
#[derive(Clone, Copy, Debug)]
struct Frame {
    /// The enclosing region is active.
    outer: bool,
    /// Some branch of this conditional has been taken.
    taken: bool,
    /// The current branch is active.
    active: bool,
    /// `#else` seen.
    in_else: bool,
}

/// The conditional state of the head of a script.
#[derive(Debug)]
pub struct Conditionals {
    /// Integer values of names (`#define NAME 3`); names defined without a value map to 1.
    defines: HashMap<String, i64>,
    stack: Vec<Frame>,
}

/// What a directive line did.
#[derive(Debug, PartialEq, Eq)]
pub enum Directive {
    /// A conditional or `#undef`, handled here.
    Handled,
    /// Not a conditional (`#include`, `#define`, …): the caller handles it when active.
    Other,
}

impl Default for Conditionals {
    fn default() -> Self {
        Conditionals {
            defines: PREDEFINED.iter().map(|n| (n.to_string(), 1)).collect(),
            stack: Vec::new(),
        }
    }
}

impl Conditionals {
    /// Whether text at this point is compiled.
    pub fn active(&self) -> bool {
        self.stack.last().map_or(true, |f| f.active)
    }

    /// Records `#define NAME value` (an active one).
    pub fn define(&mut self, name: &str, value: &str) {
        let v = strip_comments(value);
        let n = eval_text(v.trim(), &self.defines).unwrap_or(1);
        self.defines.insert(name.to_string(), n);
    }

    /// Applies one directive line (`text` without the `#`).
    pub fn directive(&mut self, text: &str) -> Result<Directive, String> {
        let body = strip_comments(text);
        let body = body.trim();
        let (word, rest) = match body.find(|c: char| !c.is_ascii_alphanumeric() && c != '_') {
            Some(i) => (&body[..i], body[i..].trim()),
            None => (body, ""),
        };
        let active = self.active();
        match word {
            "if" | "ifdef" | "ifndef" => {
                let cond = if !active {
                    Ok(false)
                } else {
                    match word {
                        "ifdef" => name_of(rest).map(|n| self.defines.contains_key(n)),
                        "ifndef" => name_of(rest).map(|n| !self.defines.contains_key(n)),
                        _ => self.eval(rest).map(|v| v != 0),
                    }
                };
                // A condition in error opens a branch all the same, so its `#endif` matches.
                let on = *cond.as_ref().unwrap_or(&false);
                self.stack.push(Frame {
                    outer: active,
                    taken: on,
                    active: on,
                    in_else: false,
                });
                cond?;
            }
            "elif" => {
                let f = *self.stack.last().ok_or("#elif without #if")?;
                if f.in_else {
                    return Err("#elif after #else".into());
                }
                let cond = f.outer && !f.taken && self.eval(rest)? != 0;
                let f = self.stack.last_mut().expect("checked above");
                f.active = cond;
                f.taken |= cond;
            }
            "else" => {
                let f = self.stack.last_mut().ok_or("#else without #if")?;
                if f.in_else {
                    return Err("#else after #else".into());
                }
                f.in_else = true;
                f.active = f.outer && !f.taken;
                f.taken = true;
            }
            "endif" => {
                self.stack.pop().ok_or("#endif without #if")?;
            }
            "undef" => {
                if active {
                    self.defines.remove(name_of(rest)?);
                }
            }
            _ => return Ok(Directive::Other),
        }
        Ok(Directive::Handled)
    }

    fn eval(&self, expr: &str) -> Result<i64, String> {
        eval_text(expr, &self.defines).ok_or_else(|| format!("cannot evaluate `#if {expr}`"))
    }
}

fn name_of(rest: &str) -> Result<&str, String> {
    let n = rest.split_whitespace().next().unwrap_or("");
    if n.is_empty() || !n.chars().all(|c| c.is_ascii_alphanumeric() || c == '_') {
        return Err(format!("expected a macro name, found `{rest}`"));
    }
    Ok(n)
}

/// The text without `/* … */` and `// …` comments.
pub fn strip_comments(s: &str) -> String {
    let mut out = String::with_capacity(s.len());
    let mut rest = s;
    while let Some(i) = rest.find('/') {
        let after = &rest[i + 1..];
        if after.starts_with('/') {
            out.push_str(&rest[..i]);
            return out;
        }
        if let Some(body) = after.strip_prefix('*') {
            out.push_str(&rest[..i]);
            out.push(' ');
            rest = body.find("*/").map_or("", |j| &body[j + 2..]);
        } else {
            out.push_str(&rest[..=i]);
            rest = after;
        }
    }
    out.push_str(rest);
    out
}

/// A C integer literal: decimal, `0x` hex or `0` octal, with `u`/`l` suffixes.
pub fn c_int(lit: &str) -> Option<i64> {
    let lit = lit.trim_end_matches(['u', 'U', 'l', 'L']);
    if let Some(h) = lit.strip_prefix("0x").or_else(|| lit.strip_prefix("0X")) {
        i64::from_str_radix(h, 16).ok()
    } else if lit.len() > 1 && lit.starts_with('0') {
        i64::from_str_radix(&lit[1..], 8).ok()
    } else {
        lit.parse().ok()
    }
}

/// Evaluates a `#if` expression; None when it is not one this module understands.
fn eval_text(s: &str, defines: &HashMap<String, i64>) -> Option<i64> {
    let toks = tokens(s)?;
    let mut p = Eval {
        toks: &toks,
        pos: 0,
        defines,
        depth: 0,
    };
    let v = p.or()?;
    (p.pos == toks.len()).then_some(v)
}

#[derive(Debug, PartialEq)]
enum Tok {
    Num(i64),
    Name(String),
    Op(&'static str),
}

fn tokens(s: &str) -> Option<Vec<Tok>> {
    const OPS: &[&str] = &[
        "&&", "||", "==", "!=", "<=", ">=", "<<", ">>", "(", ")", "!", "<", ">", "+", "-", "*",
        "/", "%", "&", "|", "^", "~",
    ];
    let mut out = Vec::new();
    let mut rest = s.trim_start();
    while !rest.is_empty() {
        let c = rest.chars().next()?;
        if c.is_ascii_digit() {
            let end = rest
                .find(|c: char| !c.is_ascii_alphanumeric())
                .unwrap_or(rest.len());
            out.push(Tok::Num(c_int(&rest[..end])?));
            rest = &rest[end..];
        } else if c.is_ascii_alphabetic() || c == '_' {
            let end = rest
                .find(|c: char| !c.is_ascii_alphanumeric() && c != '_')
                .unwrap_or(rest.len());
            out.push(Tok::Name(rest[..end].to_string()));
            rest = &rest[end..];
        } else {
            let op = OPS.iter().find(|o| rest.starts_with(**o))?;
            out.push(Tok::Op(op));
            rest = &rest[op.len()..];
        }
        rest = rest.trim_start();
    }
    Some(out)
}

struct Eval<'a> {
    toks: &'a [Tok],
    pos: usize,
    defines: &'a HashMap<String, i64>,
    depth: u32,
}

impl Eval<'_> {
    fn eat(&mut self, op: &str) -> bool {
        if matches!(self.toks.get(self.pos), Some(Tok::Op(o)) if *o == op) {
            self.pos += 1;
            true
        } else {
            false
        }
    }

    fn or(&mut self) -> Option<i64> {
        let mut v = self.and()?;
        while self.eat("||") {
            let r = self.and()?;
            v = (v != 0 || r != 0) as i64;
        }
        Some(v)
    }

    fn and(&mut self) -> Option<i64> {
        let mut v = self.binary(0)?;
        while self.eat("&&") {
            let r = self.binary(0)?;
            v = (v != 0 && r != 0) as i64;
        }
        Some(v)
    }

    /// Binary operators tighter than `&&`, by C precedence level (loosest first).
    fn binary(&mut self, level: usize) -> Option<i64> {
        const LEVELS: &[&[&str]] = &[
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
        let mut v = self.binary(level + 1)?;
        'outer: loop {
            for op in *ops {
                if self.eat(op) {
                    let r = self.binary(level + 1)?;
                    v = match *op {
                        "|" => v | r,
                        "^" => v ^ r,
                        "&" => v & r,
                        "==" => (v == r) as i64,
                        "!=" => (v != r) as i64,
                        "<" => (v < r) as i64,
                        ">" => (v > r) as i64,
                        "<=" => (v <= r) as i64,
                        ">=" => (v >= r) as i64,
                        "<<" => v.checked_shl(u32::try_from(r).ok()?)?,
                        ">>" => v.checked_shr(u32::try_from(r).ok()?)?,
                        "+" => v.checked_add(r)?,
                        "-" => v.checked_sub(r)?,
                        "*" => v.checked_mul(r)?,
                        "/" => v.checked_div(r)?,
                        _ => v.checked_rem(r)?,
                    };
                    continue 'outer;
                }
            }
            return Some(v);
        }
    }

    fn unary(&mut self) -> Option<i64> {
        self.depth += 1;
        if self.depth > 64 {
            return None;
        }
        let v = if self.eat("!") {
            (self.unary()? == 0) as i64
        } else if self.eat("-") {
            self.unary()?.checked_neg()?
        } else if self.eat("~") {
            !self.unary()?
        } else if self.eat("+") {
            self.unary()?
        } else if self.eat("(") {
            let v = self.or()?;
            self.eat(")").then_some(v)?
        } else {
            match self.toks.get(self.pos)? {
                Tok::Num(n) => {
                    self.pos += 1;
                    *n
                }
                Tok::Name(n) if n == "defined" => {
                    self.pos += 1;
                    let paren = self.eat("(");
                    let Some(Tok::Name(name)) = self.toks.get(self.pos) else {
                        return None;
                    };
                    self.pos += 1;
                    if paren && !self.eat(")") {
                        return None;
                    }
                    self.defines.contains_key(name) as i64
                }
                Tok::Name(n) => {
                    self.pos += 1;
                    // As in C: an unknown name in `#if` is 0.
                    self.defines.get(n).copied().unwrap_or(0)
                }
                Tok::Op(_) => return None,
            }
        };
        self.depth -= 1;
        Some(v)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn run(lines: &[&str]) -> Vec<bool> {
        let mut c = Conditionals::default();
        lines
            .iter()
            .map(|l| {
                if let Some(d) = l.strip_prefix('#') {
                    if c.directive(d).unwrap() == Directive::Other && c.active() {
                        if let Some(rest) = d.strip_prefix("define ") {
                            let (n, v) = rest.split_once(' ').unwrap_or((rest, ""));
                            c.define(n, v);
                        }
                    }
                }
                c.active()
            })
            .collect()
    }

    #[test]
    fn bpftrace_tools_take_the_btf_branch() {
        let got = run(&[
            "#ifndef BPFTRACE_HAVE_BTF",
            "#include <linux/socket.h>",
            "#else",
            "#define AF_INET 2 /* IPv4 */",
            "#endif",
        ]);
        assert_eq!(got, [false, false, true, true, true]);
    }

    #[test]
    fn nested_and_elif_branches() {
        let got = run(&[
            "#define V 3",
            "#if V > 5",
            "#if 1",
            "#else",
            "#endif",
            "#elif defined(V) && !defined X",
            "#else",
            "#endif",
        ]);
        assert_eq!(got, [true, false, false, false, false, true, false, true]);
    }

    #[test]
    fn unbalanced_and_unknown_expressions_are_errors() {
        let mut c = Conditionals::default();
        assert_eq!(c.directive("endif").unwrap_err(), "#endif without #if");
        assert_eq!(c.directive("else").unwrap_err(), "#else without #if");
        assert!(c.directive("if foo(").is_err());
        c.directive("if 1").unwrap();
        c.directive("else").unwrap();
        assert_eq!(c.directive("else").unwrap_err(), "#else after #else");
    }

    #[test]
    fn comments_are_stripped() {
        assert_eq!(strip_comments("2 /* IPv4 */").trim(), "2");
        assert_eq!(strip_comments("10 // IPv6").trim(), "10");
        assert_eq!(strip_comments("a / b").trim(), "a / b");
    }
}
