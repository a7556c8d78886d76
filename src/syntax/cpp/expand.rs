//! Macro definitions and their expansion: object-like and function-like macros (with
//! variadic `...`/`__VA_ARGS__`), argument pre-expansion, `#` stringification and `##`
//! pasting, and rescanning with C's rule that a macro does not expand inside its own
//! expansion (each token carries the names it came from, `Tok::hide`).
//!
//! Input: tokens and the macro table. Output: the expanded tokens, or an error for a call
//! whose arguments never close or an expansion that does not end (bounded by
//! [`MAX_EXPANSIONS`]).

use std::collections::{HashMap, VecDeque};

use super::lex::{tokenize, Tok, TokKind};

/// Expansion steps allowed for one line (a guard against exponential macro trees).
pub const MAX_EXPANSIONS: usize = 100_000;

/// One `#define`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Macro {
    /// Parameter names of a function-like macro; `None` for an object-like one.
    pub params: Option<Vec<String>>,
    /// The last parameter is `...` (named `__VA_ARGS__`, or `name...`).
    pub variadic: bool,
    pub body: Vec<Tok>,
}

impl Macro {
    /// The replacement text as written (for messages).
    pub fn body_text(&self) -> String {
        super::lex::join(&self.body)
    }
}

pub type Macros = HashMap<String, Macro>;

/// Parses the text after `#define` (`NAME body` or `NAME(params) body`).
pub fn parse_define(text: &str) -> Result<(String, Macro), String> {
    let toks = tokenize(text);
    let Some(name) = toks.first().filter(|t| t.is_ident()) else {
        return Err("macro name missing".into());
    };
    let name = name.text.clone();
    // Function-like only when `(` follows the name without white space.
    if toks.get(1).is_some_and(|t| t.is("(") && !t.space) {
        let mut params = Vec::new();
        let mut variadic = false;
        let mut i = 2;
        loop {
            let Some(t) = toks.get(i) else {
                return Err(format!(
                    "missing ')' in the parameter list of macro '{name}'"
                ));
            };
            i += 1;
            match t.text.as_str() {
                ")" if params.is_empty() || variadic => break,
                "..." => {
                    variadic = true;
                    params.push("__VA_ARGS__".to_string());
                }
                _ if t.is_ident() && !variadic => {
                    params.push(t.text.clone());
                    if toks.get(i).is_some_and(|t| t.is("...")) {
                        variadic = true;
                        i += 1;
                    }
                }
                _ => return Err(format!("invalid parameter list of macro '{name}'")),
            }
            match toks.get(i) {
                Some(t) if t.is(",") && !variadic => i += 1,
                Some(t) if t.is(")") => {
                    i += 1;
                    break;
                }
                _ => return Err(format!("invalid parameter list of macro '{name}'")),
            }
        }
        let mut body = toks[i..].to_vec();
        if let Some(f) = body.first_mut() {
            f.space = false;
        }
        Ok((
            name,
            Macro {
                params: Some(params),
                variadic,
                body,
            },
        ))
    } else {
        let mut body = toks[1..].to_vec();
        if let Some(f) = body.first_mut() {
            f.space = false;
        }
        Ok((
            name,
            Macro {
                params: None,
                variadic: false,
                body,
            },
        ))
    }
}

/// Expands every macro in `toks`.
pub fn expand(toks: &[Tok], macros: &Macros) -> Result<Vec<Tok>, String> {
    let mut steps = 0;
    expand_inner(toks.iter().cloned().collect(), macros, &mut steps)
}

fn expand_inner(
    mut input: VecDeque<Tok>,
    macros: &Macros,
    steps: &mut usize,
) -> Result<Vec<Tok>, String> {
    let mut out = Vec::new();
    while let Some(t) = input.pop_front() {
        let m = match macros.get(&t.text) {
            Some(m) if t.is_ident() && !t.hide.contains(&t.text) => m,
            _ => {
                out.push(t);
                continue;
            }
        };
        *steps += 1;
        if *steps > MAX_EXPANSIONS {
            return Err(format!("expansion of macro '{}' does not end", t.text));
        }
        let mut hide = t.hide.clone();
        hide.push(t.text.clone());
        let result = match &m.params {
            None => m.body.clone(),
            Some(params) => {
                // A function-like macro name without `(` is just a name.
                if !input.front().is_some_and(|n| n.is("(")) {
                    out.push(t);
                    continue;
                }
                input.pop_front();
                let args = collect_args(&mut input, &t.text)?;
                let args = match_args(args, params, m.variadic, &t.text)?;
                substitute(m, params, &args, macros, steps)?
            }
        };
        for (i, mut r) in result.into_iter().enumerate().rev() {
            for h in &hide {
                if !r.hide.contains(h) {
                    r.hide.push(h.clone());
                }
            }
            if i == 0 {
                r.space = t.space;
            }
            input.push_front(r);
        }
    }
    Ok(out)
}

/// The arguments of a call whose `(` was consumed, up to the matching `)`.
fn collect_args(input: &mut VecDeque<Tok>, name: &str) -> Result<Vec<Vec<Tok>>, String> {
    let mut args = vec![Vec::new()];
    let mut depth = 0;
    loop {
        let Some(t) = input.pop_front() else {
            return Err(format!(
                "unterminated argument list invoking macro '{name}'"
            ));
        };
        if t.is("(") {
            depth += 1;
        } else if t.is(")") {
            if depth == 0 {
                break;
            }
            depth -= 1;
        } else if t.is(",") && depth == 0 {
            args.push(Vec::new());
            continue;
        }
        args.last_mut().expect("one argument at least").push(t);
    }
    Ok(args)
}

/// Checks the argument count; joins the variadic tail back with its commas.
fn match_args(
    mut args: Vec<Vec<Tok>>,
    params: &[String],
    variadic: bool,
    name: &str,
) -> Result<Vec<Vec<Tok>>, String> {
    if params.is_empty() && args.len() == 1 && args[0].is_empty() {
        return Ok(Vec::new());
    }
    if variadic && args.len() >= params.len() {
        let tail = args.split_off(params.len() - 1);
        let mut joined = Vec::new();
        for (i, a) in tail.into_iter().enumerate() {
            if i > 0 {
                joined.push(Tok::new(TokKind::Punct, ","));
            }
            joined.extend(a);
        }
        args.push(joined);
    } else if variadic && args.len() + 1 == params.len() {
        args.push(Vec::new());
    }
    if args.len() != params.len() {
        return Err(format!(
            "macro '{name}' takes {} argument{}, {} given",
            params.len(),
            if params.len() == 1 { "" } else { "s" },
            args.len()
        ));
    }
    Ok(args)
}

/// The body with parameters replaced, `#` and `##` applied.
fn substitute(
    m: &Macro,
    params: &[String],
    args: &[Vec<Tok>],
    macros: &Macros,
    steps: &mut usize,
) -> Result<Vec<Tok>, String> {
    let param = |t: &Tok| {
        if t.is_ident() {
            params.iter().position(|p| *p == t.text)
        } else {
            None
        }
    };
    let body = &m.body;
    let mut out: Vec<Tok> = Vec::new();
    // Positions in `out` where a `##` joins the token before and after.
    let mut pastes = Vec::new();
    let mut i = 0;
    while i < body.len() {
        let t = &body[i];
        if t.is("#") {
            if let Some(p) = body.get(i + 1).and_then(param) {
                let mut s = Tok::new(TokKind::Str, &stringify(&args[p]));
                s.space = t.space;
                out.push(s);
                i += 2;
                continue;
            }
        }
        if t.is("##") {
            pastes.push(out.len());
            i += 1;
            continue;
        }
        if let Some(p) = param(t) {
            let next_paste = body.get(i + 1).is_some_and(|n| n.is("##"));
            let prev_paste = i > 0 && body[i - 1].is("##");
            let mut a = if next_paste || prev_paste {
                args[p].clone()
            } else {
                expand_inner(args[p].iter().cloned().collect(), macros, steps)?
            };
            if let Some(f) = a.first_mut() {
                f.space = t.space;
            }
            if a.is_empty() && (next_paste || prev_paste) {
                // An empty argument next to `##` is a placemarker.
                let mut pm = Tok::new(TokKind::Punct, "");
                pm.space = t.space;
                a.push(pm);
            }
            out.extend(a);
        } else {
            out.push(t.clone());
        }
        i += 1;
    }
    // Apply the pastes from the last to the first, so earlier positions stay valid.
    for &at in pastes.iter().rev() {
        if at == 0 || at >= out.len() {
            continue;
        }
        // GNU `, ## __VA_ARGS__` with empty arguments drops the comma.
        if out[at].text.is_empty() && out[at - 1].is(",") {
            out.drain(at - 1..=at);
            continue;
        }
        let text = format!("{}{}", out[at - 1].text, out[at].text);
        let mut joined = tokenize(&text);
        if let Some(f) = joined.first_mut() {
            f.space = out[at - 1].space;
        }
        out.splice(at - 1..=at, joined);
    }
    out.retain(|t| !(t.kind == TokKind::Punct && t.text.is_empty()));
    Ok(out)
}

/// `#arg`: the argument's text as a string literal.
fn stringify(arg: &[Tok]) -> String {
    let mut s = String::from("\"");
    for (i, t) in arg.iter().enumerate() {
        if i > 0 && t.space {
            s.push(' ');
        }
        if matches!(t.kind, TokKind::Str | TokKind::Char) {
            for c in t.text.chars() {
                if c == '"' || c == '\\' {
                    s.push('\\');
                }
                s.push(c);
            }
        } else {
            s.push_str(&t.text);
        }
    }
    s.push('"');
    s
}

#[cfg(test)]
mod tests {
    use super::super::lex::join;
    use super::*;

    fn table(defs: &[&str]) -> Macros {
        defs.iter().map(|d| parse_define(d).unwrap()).collect()
    }

    fn run(defs: &[&str], text: &str) -> String {
        join(&expand(&tokenize(text), &table(defs)).unwrap())
    }

    #[test]
    fn object_like_macros_expand_and_rescan() {
        assert_eq!(run(&["A 1", "B (A + 1)"], "B * 2"), "(1 + 1) * 2");
    }

    #[test]
    fn function_like_macros_substitute_pre_expanded_arguments() {
        let defs = ["SQ(x) ((x) * (x))", "ONE 1", "ADD(a, b) (a + b)"];
        assert_eq!(run(&defs, "SQ(ONE + 2)"), "((1 + 2) * (1 + 2))");
        assert_eq!(run(&defs, "ADD(SQ(2), (3, 4))"), "(((2) * (2)) + (3, 4))");
        // Without `(` the name stays a name.
        assert_eq!(run(&defs, "SQ + 1"), "SQ + 1");
    }

    #[test]
    fn self_reference_does_not_recurse() {
        assert_eq!(run(&["IPPROTO_IP IPPROTO_IP"], "IPPROTO_IP"), "IPPROTO_IP");
        assert_eq!(run(&["A B", "B A"], "A"), "A");
        assert_eq!(run(&["f(x) (x + f(x))"], "f(1)"), "(1 + f(1))");
    }

    #[test]
    fn stringify_and_paste() {
        let defs = [
            "S(x) #x",
            "CAT(a, b) a ## b",
            "XY 7",
            "V(fmt, ...) f(fmt, ## __VA_ARGS__)",
        ];
        assert_eq!(run(&defs, "S(a \"b\" c)"), "\"a \\\"b\\\" c\"");
        assert_eq!(run(&defs, "CAT(X, Y)"), "7");
        assert_eq!(run(&defs, "CAT(1, 2)"), "12");
        assert_eq!(run(&defs, "V(1)"), "f(1)");
        assert_eq!(run(&defs, "V(1, 2, 3)"), "f(1,2, 3)");
    }

    #[test]
    fn bad_calls_are_errors() {
        let m = table(&["F(a, b) a"]);
        assert!(expand(&tokenize("F(1"), &m)
            .unwrap_err()
            .contains("unterminated"));
        assert!(expand(&tokenize("F(1)"), &m)
            .unwrap_err()
            .contains("takes 2 arguments"));
        assert!(parse_define("G(a b) a").is_err());
    }
}
