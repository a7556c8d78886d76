//! `import "path";`: the imported scripts' macros, functions and map declarations become part
//! of the program. The driver appends each imported file's text (recursively, each file once)
//! after the script's own text and parses the whole again, so the script's spans and
//! expression ids are unchanged and diagnostics in the script point where they did.
//!
//! Input: the script's source, its parsed program and the directory relative paths are
//! resolved from. Output: the combined source (unchanged when nothing is imported), or an
//! error naming the import that cannot be read.
//!
//! `import "stdlib/NAME"` names a module of bpftrace's standard library when no such file
//! exists: strobe ships the ones it can express in the script language ([`STDLIB`]); the
//! others are C modules bpftrace compiles with clang, which strobe refuses by name.

use std::collections::BTreeSet;
use std::path::{Path, PathBuf};

use crate::diag::{Diagnostic, SourceFile};
use crate::syntax::ast::{Program, StmtKind};

fn import_paths(p: &Program) -> Vec<(String, crate::diag::Span)> {
    let mut out: Vec<(String, crate::diag::Span)> =
        p.imports.iter().map(|i| (i.path.clone(), i.span)).collect();
    for probe in p.probes() {
        for s in &probe.body.stmts {
            if let StmtKind::Import(i) = &s.kind {
                out.push((i.path.clone(), i.span));
            }
        }
    }
    out
}

/// bpftrace's standard-library modules strobe ships, as script text: `stdlib/test`'s
/// `__always_true()` (bpftrace's check that calling into an imported module works).
const STDLIB: &[(&str, &str)] = &[("stdlib/test", "fn __always_true(): int32 { return 1; }\n")];

/// The text of standard-library module `path` (`stdlib/test`), when `path` names one and no
/// file of that name exists.
fn stdlib_module(
    path: &Path,
    written: &str,
    span: crate::diag::Span,
) -> Option<Result<String, Diagnostic>> {
    if path.exists() || !written.starts_with("stdlib/") {
        return None;
    }
    let module = written.trim_end_matches(".bt");
    Some(match STDLIB.iter().find(|(n, _)| *n == module) {
        Some((_, text)) => Ok(text.to_string()),
        None => Err(Diagnostic::error(
            span,
            format!(
                "cannot import '{module}': strobe has no such standard-library module (it \
                 ships {}; bpftrace's other modules are C compiled with clang)",
                STDLIB
                    .iter()
                    .map(|(n, _)| *n)
                    .collect::<Vec<_>>()
                    .join(", ")
            ),
        )),
    })
}

/// The script with its imports appended (see the module doc).
pub fn inline_imports(
    src: &SourceFile,
    program: &Program,
    base: &Path,
) -> Result<SourceFile, Diagnostic> {
    let mut seen: BTreeSet<PathBuf> = BTreeSet::new();
    let mut text = src.text.clone();
    let mut queue: Vec<(PathBuf, String, crate::diag::Span)> = import_paths(program)
        .into_iter()
        .map(|(p, s)| (base.join(&p), p, s))
        .collect();
    while let Some((path, written, span)) = queue.pop() {
        let key = path.canonicalize().unwrap_or(path.clone());
        if !seen.insert(key) {
            continue;
        }
        let body = match stdlib_module(&path, &written, span) {
            Some(module) => module?,
            None => std::fs::read_to_string(&path).map_err(|e| {
                Diagnostic::error(span, format!("cannot import '{}': {e}", path.display()))
            })?,
        };
        let sub = SourceFile::new(path.display().to_string(), body.clone());
        if let Ok(p) = crate::syntax::parse_ok(&sub) {
            let dir = path.parent().unwrap_or(Path::new("."));
            queue.extend(
                import_paths(&p)
                    .into_iter()
                    .map(|(p, _)| (dir.join(&p), p, span)),
            );
        }
        text.push('\n');
        text.push_str(&body);
    }
    Ok(SourceFile::new(src.name.clone(), text))
}
