//! `import "path";`: the imported scripts' macros, functions and map declarations become part
//! of the program. The driver appends each imported file's text (recursively, each file once)
//! after the script's own text and parses the whole again, so the script's spans and
//! expression ids are unchanged and diagnostics in the script point where they did.
//!
//! Input: the script's source, its parsed program and the directory relative paths are
//! resolved from. Output: the combined source (unchanged when nothing is imported), or an
//! error naming the import that cannot be read.

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

/// The script with its imports appended (see the module doc).
pub fn inline_imports(
    src: &SourceFile,
    program: &Program,
    base: &Path,
) -> Result<SourceFile, Diagnostic> {
    let mut seen: BTreeSet<PathBuf> = BTreeSet::new();
    let mut text = src.text.clone();
    let mut queue: Vec<(PathBuf, crate::diag::Span)> = import_paths(program)
        .into_iter()
        .map(|(p, s)| (base.join(p), s))
        .collect();
    while let Some((path, span)) = queue.pop() {
        let key = path.canonicalize().unwrap_or(path.clone());
        if !seen.insert(key) {
            continue;
        }
        let body = std::fs::read_to_string(&path).map_err(|e| {
            Diagnostic::error(span, format!("cannot import '{}': {e}", path.display()))
        })?;
        let sub = SourceFile::new(path.display().to_string(), body.clone());
        if let Ok(p) = crate::syntax::parse_ok(&sub) {
            let dir = path.parent().unwrap_or(Path::new("."));
            queue.extend(
                import_paths(&p)
                    .into_iter()
                    .map(|(p, _)| (dir.join(p), span)),
            );
        }
        text.push('\n');
        text.push_str(&body);
    }
    Ok(SourceFile::new(src.name.clone(), text))
}
