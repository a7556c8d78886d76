//! Struct and union definitions of C headers, rewritten into what the script's own C
//! definitions may say: typedef names replaced by the basic type or tagged type they name,
//! `enum X` members as `int`, array lengths evaluated. A definition that uses anything else
//! (a typedef this module could not follow, a struct by value that no header defined before)
//! is left out rather than laid out wrongly.
//!
//! Input: a header's active tokens, macros expanded. Output: definition texts
//! (`struct x { unsigned int a; char b [ 16 ]; }`) for the parser, and typedefs learned.

use std::collections::{HashMap, HashSet};

use super::eval;
use super::lex::{Tok, TokKind};

/// Typedefs and tags seen so far, across headers.
#[derive(Clone, Debug, Default)]
pub struct DeclState {
    typedefs: HashMap<String, Vec<Tok>>,
    tags: HashSet<String>,
    /// Definitions found, in order.
    pub structs: Vec<String>,
}

const WORDS: &[&str] = &[
    "unsigned", "signed", "char", "short", "int", "long", "float", "double", "_Bool", "void",
];
const QUALIFIERS: &[&str] = &[
    "const",
    "volatile",
    "__const",
    "__volatile__",
    "__restrict",
    "restrict",
];

impl DeclState {
    /// Scans the declarations of one header's tokens.
    pub fn scan(&mut self, toks: &[Tok]) {
        let toks = strip_noise(toks);
        let mut start = 0;
        let mut depth = 0i32;
        let mut paren = 0i32;
        for (i, t) in toks.iter().enumerate() {
            if t.is("(") {
                paren += 1;
            } else if t.is(")") {
                paren -= 1;
            } else if t.is("{") {
                depth += 1;
            } else if t.is("}") {
                depth -= 1;
                if depth == 0 && is_function_body(&toks[start..=i]) {
                    start = i + 1;
                }
            } else if t.is(";") && depth == 0 && paren == 0 {
                self.declaration(&toks[start..i]);
                start = i + 1;
            }
            if depth < 0 || paren < 0 {
                // Unbalanced text: give up on this header's declarations.
                return;
            }
        }
    }

    fn declaration(&mut self, d: &[Tok]) {
        let Some(first) = d.first() else { return };
        if first.text == "typedef" {
            let rest = &d[1..];
            if rest
                .first()
                .is_some_and(|t| t.text == "struct" || t.text == "union")
                && rest.iter().any(|t| t.is("{"))
            {
                let Some(close) = matching_brace(rest) else {
                    return;
                };
                let tag = rest.get(1).filter(|t| t.is_ident()).map(|t| t.text.clone());
                if let Some(tag) = &tag {
                    self.definition(&rest[..=close], tag);
                    for name in rest[close + 1..].iter().filter(|t| t.is_ident()) {
                        self.typedefs.insert(
                            name.text.clone(),
                            vec![rest[0].clone(), Tok::new(TokKind::Ident, tag)],
                        );
                    }
                }
                return;
            }
            // `typedef WORDS NAME` (with `*`s): no arrays or function types.
            let Some(name) = rest.last().filter(|t| t.is_ident()) else {
                return;
            };
            if rest.iter().any(|t| t.is("(") || t.is("[")) || rest.len() < 2 {
                return;
            }
            if let Some(ty) = self.resolve_type(&rest[..rest.len() - 1]) {
                self.typedefs.insert(name.text.clone(), ty);
            }
            return;
        }
        if (first.text == "struct" || first.text == "union")
            && d.get(1).is_some_and(Tok::is_ident)
            && d.get(2).is_some_and(|t| t.is("{"))
        {
            if let Some(close) = matching_brace(d) {
                let tag = d[1].text.clone();
                self.definition(&d[..=close], &tag);
            }
        }
    }

    /// A type written as `words` (a typedef's target): canonical tokens, or None.
    fn resolve_type(&self, words: &[Tok]) -> Option<Vec<Tok>> {
        let words: Vec<&Tok> = words
            .iter()
            .filter(|t| !QUALIFIERS.contains(&t.text.as_str()))
            .collect();
        let stars = words.iter().rev().take_while(|t| t.is("*")).count();
        let base = &words[..words.len() - stars];
        let mut out = match base {
            [k, tag] if matches!(k.text.as_str(), "struct" | "union") && tag.is_ident() => {
                vec![(*k).clone(), (*tag).clone()]
            }
            [k, _] if k.text == "enum" => vec![Tok::new(TokKind::Ident, "int")],
            [one] if self.typedefs.contains_key(&one.text) => self.typedefs[&one.text].clone(),
            _ => canonical(base)?,
        };
        for _ in 0..stars {
            out.push(Tok::new(TokKind::Punct, "*"));
        }
        Some(out)
    }

    /// Rewrites and checks one `struct|union TAG { … }`; keeps it when every member is known.
    fn definition(&mut self, def: &[Tok], tag: &str) {
        if self.tags.contains(tag) {
            return;
        }
        let Some(body) = self.rewrite_body(&def[3..def.len() - 1], 0) else {
            return;
        };
        let mut out = vec![
            def[0].clone(),
            def[1].clone(),
            Tok::new(TokKind::Punct, "{"),
        ];
        out.extend(body);
        out.push(Tok::new(TokKind::Punct, "}"));
        self.tags.insert(tag.to_string());
        self.structs.push(
            out.iter()
                .map(|t| t.text.as_str())
                .collect::<Vec<_>>()
                .join(" "),
        );
    }

    /// The members between braces, rewritten; None when one cannot be kept.
    fn rewrite_body(&self, body: &[Tok], nest: u32) -> Option<Vec<Tok>> {
        if nest > 8 {
            return None;
        }
        let mut out = Vec::new();
        let mut i = 0;
        while i < body.len() {
            // One member: up to `;` at this level.
            let mut j = i;
            let mut depth = 0;
            while j < body.len() && !(depth == 0 && body[j].is(";")) {
                if body[j].is("{") {
                    depth += 1;
                } else if body[j].is("}") {
                    depth -= 1;
                }
                j += 1;
            }
            out.extend(self.rewrite_member(&body[i..j], nest)?);
            out.push(Tok::new(TokKind::Punct, ";"));
            i = j + 1;
        }
        Some(out)
    }

    fn rewrite_member(&self, m: &[Tok], nest: u32) -> Option<Vec<Tok>> {
        let m: Vec<&Tok> = m
            .iter()
            .filter(|t| !QUALIFIERS.contains(&t.text.as_str()))
            .collect();
        let first = m.first()?;
        let mut out: Vec<Tok> = Vec::new();
        let rest: &[&Tok];
        if matches!(first.text.as_str(), "struct" | "union") {
            if let Some(open) = m.iter().position(|t| t.is("{")) {
                // A nested definition: `struct [tag] { … } declarators`.
                let close = open + matching_brace_refs(&m[open..])?;
                let inner: Vec<Tok> = m[open + 1..close].iter().map(|t| (*t).clone()).collect();
                out.push((*first).clone());
                out.push(Tok::new(TokKind::Punct, "{"));
                out.extend(self.rewrite_body(&inner, nest + 1)?);
                out.push(Tok::new(TokKind::Punct, "}"));
                rest = &m[close + 1..];
            } else {
                let tag = m.get(1).filter(|t| t.is_ident())?;
                // By value only when a header defined it; a pointer to anything is fine.
                let pointer = m.get(2).is_some_and(|t| t.is("*"));
                if !pointer && !self.tags.contains(&tag.text) {
                    return None;
                }
                out.push((*first).clone());
                out.push((*tag).clone());
                rest = &m[2..];
            }
        } else if first.text == "enum" && m.get(1).is_some_and(|t| t.is_ident()) {
            out.push(Tok::new(TokKind::Ident, "int"));
            rest = &m[2..];
        } else {
            // Type words, then the declarators.
            let n = m
                .iter()
                .take_while(|t| WORDS.contains(&t.text.as_str()))
                .count();
            if n > 0 {
                let words: Vec<Tok> = m[..n].iter().map(|t| (*t).clone()).collect();
                out.extend(canonical(&words.iter().collect::<Vec<_>>())?);
                rest = &m[n..];
            } else {
                match self.typedefs.get(&first.text) {
                    Some(t) => {
                        // A typedef of a struct used by value needs that struct's definition.
                        if t.len() == 2
                            && matches!(t[0].text.as_str(), "struct" | "union")
                            && !self.tags.contains(&t[1].text)
                            && !m.get(1).is_some_and(|t| t.is("*"))
                        {
                            return None;
                        }
                        out.extend(t.iter().cloned());
                    }
                    None => out.extend(canonical(&[*first])?),
                }
                rest = &m[1..];
            }
        }
        // Declarators: names, `*`, `,`, bitfields, array lengths (evaluated).
        let mut i = 0;
        while i < rest.len() {
            let t = rest[i];
            if t.is("[") {
                let close = i + rest[i..].iter().position(|t| t.is("]"))?;
                out.push(t.clone());
                if close > i + 1 {
                    let len: Vec<Tok> = rest[i + 1..close].iter().map(|t| (*t).clone()).collect();
                    let v = eval::eval(&len, &|_| None).ok()?;
                    out.push(Tok::new(TokKind::Number, &v.v.to_string()));
                }
                out.push(Tok::new(TokKind::Punct, "]"));
                i = close + 1;
                continue;
            }
            if t.is_ident() || t.is("*") || t.is(",") || t.is(":") || t.kind == TokKind::Number {
                out.push(t.clone());
                i += 1;
                continue;
            }
            // Function pointers and anything else are left to the caller: drop the struct.
            return None;
        }
        Some(out)
    }
}

/// `words` as the single name the script's types know (`unsigned int`, `long`, `__u32`).
fn canonical(words: &[&Tok]) -> Option<Vec<Tok>> {
    let texts: Vec<&str> = words.iter().map(|t| t.text.as_str()).collect();
    let name = match texts.as_slice() {
        ["float"] | ["double"] | ["long", "double"] => return None,
        ["void"] => "void",
        ["_Bool"] | ["bool"] => "_Bool",
        [w] if FIXED.contains(w) => w,
        _ => {
            let ty = eval::basic_type_of(&texts)?;
            match (ty.0, ty.1) {
                (1, false) => "char",
                (1, true) => "unsigned char",
                (2, false) => "short",
                (2, true) => "unsigned short",
                (4, false) => "int",
                (4, true) => "unsigned int",
                (8, false) => "long",
                _ => "unsigned long",
            }
        }
    };
    Some(
        name.split(' ')
            .map(|w| Tok::new(TokKind::Ident, w))
            .collect(),
    )
}

/// Fixed-width names the script's types know as they are.
const FIXED: &[&str] = &[
    "__u8",
    "__u16",
    "__u32",
    "__u64",
    "__s8",
    "__s16",
    "__s32",
    "__s64",
    "u8",
    "u16",
    "u32",
    "u64",
    "s8",
    "s16",
    "s32",
    "s64",
    "uint8_t",
    "uint16_t",
    "uint32_t",
    "uint64_t",
    "int8_t",
    "int16_t",
    "int32_t",
    "int64_t",
    "size_t",
    "ssize_t",
    "uintptr_t",
    "pid_t",
    "uid_t",
    "gid_t",
];

/// Removes what declarations may carry that no type needs: attributes, `__extension__`,
/// `__asm__(…)`, `__inline`.
fn strip_noise(toks: &[Tok]) -> Vec<Tok> {
    let mut out = Vec::with_capacity(toks.len());
    let mut i = 0;
    while i < toks.len() {
        let t = &toks[i];
        let skip_group = matches!(
            t.text.as_str(),
            "__attribute__"
                | "__attribute"
                | "__asm__"
                | "__asm"
                | "asm"
                | "__declspec"
                | "_Alignas"
        );
        if skip_group && toks.get(i + 1).is_some_and(|n| n.is("(")) {
            let mut depth = 0;
            let mut j = i + 1;
            while j < toks.len() {
                if toks[j].is("(") {
                    depth += 1;
                } else if toks[j].is(")") {
                    depth -= 1;
                    if depth == 0 {
                        break;
                    }
                }
                j += 1;
            }
            i = j + 1;
            continue;
        }
        if !matches!(
            t.text.as_str(),
            "__extension__" | "__inline" | "__inline__" | "inline"
        ) {
            out.push(t.clone());
        }
        i += 1;
    }
    out
}

/// A declaration so far that ends in a function body (`… f(…) { … }`).
fn is_function_body(d: &[Tok]) -> bool {
    let first_brace = d.iter().position(|t| t.is("{")).unwrap_or(d.len());
    !d.first()
        .is_some_and(|t| matches!(t.text.as_str(), "struct" | "union" | "enum" | "typedef"))
        && d[..first_brace].iter().any(|t| t.is("("))
}

/// Index of the `}` closing the first `{`.
fn matching_brace(d: &[Tok]) -> Option<usize> {
    let refs: Vec<&Tok> = d.iter().collect();
    let open = refs.iter().position(|t| t.is("{"))?;
    Some(open + matching_brace_refs(&refs[open..])?)
}

fn matching_brace_refs(d: &[&Tok]) -> Option<usize> {
    let mut depth = 0;
    for (i, t) in d.iter().enumerate() {
        if t.is("{") {
            depth += 1;
        } else if t.is("}") {
            depth -= 1;
            if depth == 0 {
                return Some(i);
            }
        }
    }
    None
}

#[cfg(test)]
mod tests {
    use super::super::lex::tokenize;
    use super::*;

    fn scan(text: &str) -> Vec<String> {
        let mut st = DeclState::default();
        st.scan(&tokenize(text));
        st.structs
    }

    #[test]
    fn typedefs_resolve_to_basic_types() {
        let got = scan(
            "typedef unsigned short __sa_family_t; typedef __sa_family_t sa_family_t;\n\
             typedef unsigned long long __u64x;\n\
             struct sockaddr { sa_family_t sa_family; char sa_data[7 * 2]; } __attribute__((packed));\n\
             struct outer { struct sockaddr a; __u64x b : 3, c : 5; const char *name; enum e kind; };\n\
             static inline int f(int x) { return x; }\n\
             typedef struct pair { int a, b; } pair_t;\n\
             struct holder { pair_t p; struct unknown *ptr; };",
        );
        assert_eq!(
            got,
            [
                "struct sockaddr { unsigned short sa_family ; char sa_data [ 14 ] ; }",
                "struct outer { struct sockaddr a ; unsigned long b : 3 , c : 5 ; char * name ; int kind ; }",
                "struct pair { int a , b ; }",
                "struct holder { struct pair p ; struct unknown * ptr ; }",
            ]
        );
    }

    #[test]
    fn unknown_member_types_drop_the_struct() {
        assert!(scan("struct a { mystery_t x; };").is_empty());
        assert!(scan("struct b { struct notdefined x; };").is_empty());
        assert!(scan("struct c { double d; };").is_empty());
        assert!(scan("struct d { int (*fn)(int); };").is_empty());
        assert_eq!(
            scan("struct e { union { int i; unsigned char c[4]; } u; };"),
            ["struct e { union { int i ; unsigned char c [ 4 ] ; } u ; }"]
        );
    }
}
