//! strobe's bundled stdlib: macros written in the script language (`stdlib/*.bt`, embedded
//! in the binary), available to every script as bpftrace's stdlib macros are.
//!
//! Input: a parsed script. Output: when the script calls a name only the stdlib defines, the
//! script's source with every stdlib file appended as a named region
//! ([`SourceFile::with_region`]) and the program parsed from it, its stdlib macros moved to
//! [`Program::stdlib`]; otherwise nothing (a script that uses none of it costs one walk of
//! its calls, and the stdlib's text is never parsed).
//!
//! Invariants: the stdlib defines only macros, parses without a diagnostic, and none of its
//! macros has the name of a builtin function (a builtin wins over a stdlib macro; tests check
//! all three). A script's macro of the same name and arity replaces a stdlib macro at the
//! script's calls, never at the stdlib's own (`Program::macro_for_call`).
//!
//! Adding a stdlib function is writing its macro in one of the files below (a new file is
//! one more line in [`FILES`]).

use std::sync::OnceLock;

use super::Form;
use crate::diag::SourceFile;
use crate::syntax::ast::{Expr, ExprKind, Program};
use crate::syntax::visit::{walk_expr, Visitor};

/// The stdlib's files (name, text), appended in this order.
pub const FILES: &[(&str, &str)] = &[
    ("stdlib/base.bt", include_str!("stdlib/base.bt")),
    ("stdlib/strings.bt", include_str!("stdlib/strings.bt")),
    ("stdlib/meta.bt", include_str!("stdlib/meta.bt")),
];

/// The names of the stdlib's macros, read from the files' `macro NAME(` lines on first use.
pub fn macro_names() -> &'static [&'static str] {
    static NAMES: OnceLock<Vec<&'static str>> = OnceLock::new();
    NAMES.get_or_init(|| {
        FILES
            .iter()
            .flat_map(|(_, text)| text.lines())
            .filter_map(|l| l.strip_prefix("macro "))
            .filter_map(|l| l.split('(').next())
            .map(str::trim)
            .collect()
    })
}

/// Whether the stdlib defines a macro called `name`.
pub fn defines(name: &str) -> bool {
    macro_names().contains(&name)
}

/// Whether `program` calls (or names, for argument-less macros) something that only the
/// stdlib defines: not a builtin, nor the script's own macro or `fn`.
pub fn is_needed(program: &Program) -> bool {
    struct Finder<'a> {
        program: &'a Program,
        found: bool,
    }
    impl Finder<'_> {
        fn unknown(&self, name: &str, form: Form, nargs: usize) -> bool {
            super::lookup(name, form).is_none()
                && !self
                    .program
                    .macros()
                    .any(|m| m.name.name == name && m.params.len() == nargs)
                && !self.program.fns().any(|f| f.name.name == name)
                && defines(name)
        }
    }
    impl Visitor for Finder<'_> {
        fn visit_expr(&mut self, e: &Expr) {
            if self.found {
                return;
            }
            match &e.kind {
                ExprKind::Call { name, args }
                    if self.unknown(&name.name, Form::Function, args.len()) =>
                {
                    self.found = true;
                    return;
                }
                ExprKind::Ident(n) if self.unknown(n, Form::Value, 0) => {
                    self.found = true;
                    return;
                }
                _ => {}
            }
            walk_expr(self, e);
        }
    }
    let mut f = Finder {
        program,
        found: false,
    };
    f.visit_program(program);
    f.found
}

/// `source` with the stdlib's files appended as regions, and where the first one starts.
pub fn append_to(source: &SourceFile) -> (SourceFile, u32) {
    let mut out = source.clone();
    let mut start = None;
    for (name, text) in FILES {
        let (next, at) = out.with_region(name, text);
        out = next;
        start.get_or_insert(at);
    }
    let start = start.unwrap_or(out.text.len() as u32);
    (out, start)
}

/// The script linked with the stdlib when it needs it (see the module doc): `parse` parses a
/// source the way the caller parsed the script. `None`: the script needs none of it.
pub fn link<P>(
    source: &SourceFile,
    program: &Program,
    parse: impl FnOnce(&SourceFile) -> P,
) -> Option<(SourceFile, P, u32)> {
    if !is_needed(program) {
        return None;
    }
    let (all, start) = append_to(source);
    let parsed = parse(&all);
    Some((all, parsed, start))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::syntax::ast::Item;

    fn linked(script: &str) -> Option<Program> {
        let src = SourceFile::new("stdin", script);
        let p = crate::syntax::parse_ok(&src).unwrap();
        let (_, parsed, start) = link(&src, &p, crate::syntax::parse)?;
        assert!(!parsed.has_errors(), "{:?}", parsed.diagnostics);
        let mut p = parsed.program;
        p.split_stdlib(start);
        Some(p)
    }

    #[test]
    fn the_stdlib_is_macros_that_parse_cleanly() {
        let (all, start) = append_to(&SourceFile::new("stdin", ""));
        let parsed = crate::syntax::parse(&all);
        assert!(parsed.diagnostics.is_empty(), "{:?}", parsed.diagnostics);
        assert!(parsed
            .program
            .items
            .iter()
            .all(|i| matches!(i, Item::Macro(_))));
        assert!(parsed.program.items.iter().all(|i| i.span().start >= start));
        assert_eq!(parsed.program.macros().count(), macro_names().len());
    }

    #[test]
    fn no_stdlib_macro_is_named_like_a_builtin_function() {
        for n in macro_names() {
            // `assert` is the one documented exception: a builtin whose base.bt text only
            // shows what it does (its error points there).
            if *n == "assert" {
                continue;
            }
            assert!(super::super::lookup(n, Form::Function).is_none(), "{n}");
        }
    }

    #[test]
    fn only_scripts_that_call_the_stdlib_get_it() {
        assert!(linked("BEGIN { printf(\"hi\\n\"); exit(); }").is_none());
        let p = linked("BEGIN { print(default_str_length()); }").expect("in the stdlib");
        assert!(p.stdlib.iter().any(|m| m.name.name == "default_str_length"));
        assert!(p.macros().next().is_none());
        // A script's own macro of that name needs no stdlib.
        assert!(
            linked("macro default_str_length() { 1 } BEGIN { print(default_str_length()); }")
                .is_none()
        );
    }

    #[test]
    fn a_script_macro_replaces_the_stdlib_one_only_at_the_scripts_calls() {
        let p = linked(
            "macro default_str_length() { 1 } macro f(x) { x } BEGIN { print(f(1)); \
             print(default_str_length(2)); }",
        )
        .unwrap();
        let at_script = crate::diag::Span::new(0, 1);
        let s = p.stdlib_start as usize;
        let at_lib = crate::diag::Span::new(s + 1, s + 2);
        let found = |at| p.macro_for_call("default_str_length", 0, at).unwrap().span;
        assert!(!p.in_stdlib(found(at_script)));
        assert!(p.in_stdlib(found(at_lib)));
        // The stdlib's calls never see the script's macros.
        assert!(p.macro_for_call("f", 1, at_lib).is_none());
        assert!(p.macro_for_call("f", 1, at_script).is_some());
    }
}
