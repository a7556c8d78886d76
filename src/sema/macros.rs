//! Macro expansion before checking: every call of a script or stdlib macro gets its own copy
//! of the macro's body, with fresh expression ids, in [`Program::expansions`]. The checker
//! and the code generator then type and lower each expansion on its own (`strcap("ab")` and
//! `strcap($p)` in one script see their own argument types), while spans stay those of the
//! macro's text, so diagnostics point into it.
//!
//! Input: a parsed program (the stdlib linked in when it calls it). Output: `None` when it
//! has no macro call (nothing is copied), else the program with its expansions and a larger
//! `expr_count`. Which macro a call expands follows the checker (`sema::calls`): a builtin
//! function wins unless a macro of the call's arity overrides it ([`Program::overriding_macro`]),
//! else [`Program::macro_for_call`]. Copies nest (a macro's body calling another macro gets a
//! copy of that one too) up to the checker's depth limit; deeper calls share the macro's own
//! body, where the checker reports the depth.

use std::collections::HashMap;

use crate::builtins::{self, Form};
use crate::syntax::ast::{Block, Expr, ExprId, ExprKind, Item, MacroDef, Program};
use crate::syntax::visit::{for_each_expr_mut, walk_expr, Visitor};

/// The macro call `e` expands, if any (see the module doc).
fn callee<'p>(program: &'p Program, e: &Expr) -> Option<&'p MacroDef> {
    match &e.kind {
        ExprKind::Call { name, args } => {
            let m = if builtins::lookup(&name.name, Form::Function).is_some() {
                program.overriding_macro(&name.name, args.len(), e.span)
            } else {
                program.macro_for_call(&name.name, args.len(), e.span)
            };
            m.filter(|m| m.params.len() == args.len())
        }
        ExprKind::Ident(n) if builtins::lookup(n, Form::Value).is_none() => program
            .macro_for_call(n, 0, e.span)
            .filter(|m| m.params.is_empty()),
        _ => None,
    }
}

/// The macro calls in what it visits, with the macro each expands.
struct Calls<'p> {
    program: &'p Program,
    out: Vec<(ExprId, &'p MacroDef)>,
}

impl Visitor for Calls<'_> {
    fn visit_expr(&mut self, e: &Expr) {
        if let Some(m) = callee(self.program, e) {
            self.out.push((e.id, m));
        }
        walk_expr(self, e);
    }
}

/// The program with an expansion for every macro call, or `None` when it calls none.
pub fn expand(program: &Program, max_depth: usize) -> Option<Program> {
    if program.macros().next().is_none() && program.stdlib.is_empty() {
        return None;
    }
    // Calls outside macro bodies: in probes and fns.
    let mut calls = Calls {
        program,
        out: Vec::new(),
    };
    for item in &program.items {
        match item {
            Item::Probe(p) => calls.visit_probe(p),
            Item::Fn(f) => calls.visit_block(&f.body),
            Item::Macro(_) | Item::MapDecl(_) => {}
        }
    }
    if calls.out.is_empty() {
        return None;
    }
    let mut next = program.expr_count;
    let mut expansions: HashMap<ExprId, Block> = HashMap::new();
    // (call, macro, depth) still to copy.
    let mut work: Vec<(ExprId, &MacroDef, usize)> =
        calls.out.drain(..).map(|(id, m)| (id, m, 1)).collect();
    while let Some((call, m, depth)) = work.pop() {
        if depth > max_depth || expansions.contains_key(&call) {
            continue;
        }
        let mut body = m.body.clone();
        for_each_expr_mut(&mut body, &mut |e| {
            e.id = ExprId(next);
            next += 1;
        });
        calls.visit_block(&body);
        work.extend(calls.out.drain(..).map(|(id, m)| (id, m, depth + 1)));
        expansions.insert(call, body);
    }
    let mut out = program.clone();
    out.expr_count = next;
    out.expansions = expansions;
    Some(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::diag::SourceFile;

    fn parsed(text: &str) -> Program {
        crate::syntax::parse_ok(&SourceFile::new("t", text)).unwrap()
    }

    #[test]
    fn each_call_gets_a_copy_with_fresh_ids_nested_calls_too() {
        let p =
            parsed("macro g(x) { x + 1 } macro f(x) { g(x) * 2 } BEGIN { $a = f(1); $b = f(2); }");
        let out = expand(&p, 16).expect("calls macros");
        // Two calls of f, each with its own call of g.
        assert_eq!(out.expansions.len(), 4);
        assert!(out.expr_count > p.expr_count);
        let mut ids: Vec<u32> = Vec::new();
        for b in out.expansions.values() {
            let mut b = b.clone();
            for_each_expr_mut(&mut b, &mut |e| ids.push(e.id.0));
        }
        let n = ids.len();
        ids.sort_unstable();
        ids.dedup();
        assert_eq!(ids.len(), n, "expansions share ids");
        assert!(ids.iter().all(|&i| i >= p.expr_count && i < out.expr_count));
    }

    #[test]
    fn no_macro_call_no_copy_and_recursion_stops_at_the_depth() {
        assert!(expand(&parsed("BEGIN { print(1); }"), 16).is_none());
        assert!(expand(&parsed("macro f() { 1 } BEGIN { print(1); }"), 16).is_none());
        let p = parsed("macro f(x) { f(x) } BEGIN { f(1); }");
        assert_eq!(expand(&p, 3).unwrap().expansions.len(), 3);
    }
}
