//! A small C preprocessor for the C head of a script, and a reader of the C headers it
//! `#include`s. bpftrace hands this part of a script to clang; strobe has no clang, so it
//! keeps what a script can use from C: macros (object- and function-like, `#`, `##`),
//! conditionals (`#if`/`#elif` with integer constant expressions and `defined`, `#ifdef`,
//! `#ifndef`, `#else`, `#endif`), `#undef`, `#include`/`#include_next`, `#error`, and from
//! headers their enumerators (enum types' constants). A header's other declarations
//! (functions, structs, typedefs) are skipped: strobe takes types from BTF and the script.
//!
//! Input: the directive lines of the script's head, in order ([`Preprocessor::directive`]),
//! and the header files found through [`CppOptions`]. Output: [`CDefs`], the macro table and
//! enumerators the checker resolves identifiers from ([`CDefs::value`], [`CDefs::call`]).
//!
//! Headers are searched as clang searches them for bpftrace: a quoted name first beside
//! the file that includes it (the working directory for the script), then the `-I`
//! directories, then `/usr/local/include`, `/usr/include` and `/usr/include/<arch>-linux-gnu`.
//! A header the script names that is not on the host is taken from [`uapi`], a table of the
//! common constants generated at build time from Debian's `linux-libc-dev` and `libc6-dev`
//! (`scripts/gen-uapi`), so a static binary on a bare host still knows `EPERM` or
//! `MAP_SHARED`; a header in neither is an error (`'x.h' file not found`). Headers that a
//! header includes and that are missing are skipped, as are lines a header has that this
//! module does not understand: reading a header never fails a script except by `#error`.
//!
//! `STROBE_SYSTEM_INCLUDE_DIRS` (`:`-separated, empty for none) replaces the system
//! directories, e.g. for headers kept elsewhere or to see what a bare host sees.
//!
//! Identifiers resolve only through what the script includes or defines, as in bpftrace:
//! `EPERM` without `#include <errno.h>` (or `--include errno.h`) is an unknown identifier.

pub mod decls;
pub mod eval;
pub mod expand;
pub mod lex;
pub mod uapi;

use std::collections::{HashMap, HashSet};
use std::path::{Path, PathBuf};
use std::sync::Arc;

pub use expand::{Macro, Macros};
use lex::{clean_source, tokenize, Tok, TokKind};

/// Deepest `#include` nesting followed.
pub const MAX_INCLUDE_DEPTH: usize = 64;

/// Reads header files (the file system, or a table in tests).
pub trait HeaderSource: Send + Sync + std::fmt::Debug {
    /// The text of the regular file at `path`, if there is one.
    fn read(&self, path: &Path) -> Option<String>;
}

/// The host's file system.
#[derive(Debug, Default)]
pub struct HostFiles;

impl HeaderSource for HostFiles {
    fn read(&self, path: &Path) -> Option<String> {
        if !std::fs::metadata(path).ok()?.is_file() {
            return None;
        }
        let bytes = std::fs::read(path).ok()?;
        Some(String::from_utf8_lossy(&bytes).into_owned())
    }
}

/// Where headers come from.
#[derive(Clone, Debug)]
pub struct CppOptions {
    /// `-I DIR` / `--include-dir DIR`, in order.
    pub include_dirs: Vec<PathBuf>,
    /// `--include FILE`: included before the script's first line, in order.
    pub includes: Vec<String>,
    /// The system directories, searched after `include_dirs`.
    pub system_dirs: Vec<PathBuf>,
    /// Where a quoted `#include` of the script itself looks first.
    pub base_dir: PathBuf,
    /// Use the generated table for headers missing on the host.
    pub fallback: bool,
    pub files: Arc<dyn HeaderSource>,
}

impl Default for CppOptions {
    fn default() -> Self {
        CppOptions {
            include_dirs: Vec::new(),
            includes: Vec::new(),
            system_dirs: default_system_dirs(),
            base_dir: PathBuf::from("."),
            fallback: true,
            files: Arc::new(HostFiles),
        }
    }
}

/// The environment variable that replaces the system header directories (a `:`-separated
/// list; empty for none, as on a bare host).
pub const SYSTEM_DIRS_ENV: &str = "STROBE_SYSTEM_INCLUDE_DIRS";

/// `/usr/local/include`, `/usr/include` and the multiarch directory, as bpftrace uses, unless
/// [`SYSTEM_DIRS_ENV`] names others.
pub fn default_system_dirs() -> Vec<PathBuf> {
    if let Some(dirs) = std::env::var_os(SYSTEM_DIRS_ENV) {
        return std::env::split_paths(&dirs)
            .filter(|d| !d.as_os_str().is_empty())
            .collect();
    }
    vec![
        PathBuf::from("/usr/local/include"),
        PathBuf::from("/usr/include"),
        PathBuf::from(format!("/usr/include/{}-linux-gnu", std::env::consts::ARCH)),
    ]
}

/// What the script's C head defines: the checker resolves identifiers from it.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct CDefs {
    pub macros: Macros,
    /// Enumerators of the enums in included headers.
    pub enumerators: HashMap<String, i64>,
    /// Kernel headers the script includes that are not on this host (named in hints).
    pub missing: Vec<String>,
}

/// The value of a macro used as an expression.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MacroValue {
    Int(i64),
    Str(Vec<u8>),
}

impl CDefs {
    /// Whether `name` is an object-like macro.
    pub fn is_object_macro(&self, name: &str) -> bool {
        self.macros.get(name).is_some_and(|m| m.params.is_none())
    }

    /// Whether `name` is a function-like macro.
    pub fn is_function_macro(&self, name: &str) -> bool {
        self.macros.get(name).is_some_and(|m| m.params.is_some())
    }

    /// The value of object-like macro `name` used as an expression: its expansion is a
    /// string literal or an integer constant expression. Identifiers left after expansion
    /// are header enumerators or what `ident` knows (the script's and kernel's enums).
    /// `None` when `name` is no object-like macro; `Err` says why the expansion has no value.
    pub fn value(
        &self,
        name: &str,
        ident: &dyn Fn(&str) -> Option<i64>,
    ) -> Option<Result<MacroValue, String>> {
        if !self.is_object_macro(name) {
            return None;
        }
        Some(self.value_of(vec![Tok::new(TokKind::Ident, name)], ident))
    }

    /// The value of function-like macro `name` called with integer arguments.
    pub fn call(
        &self,
        name: &str,
        args: &[i64],
        ident: &dyn Fn(&str) -> Option<i64>,
    ) -> Option<Result<MacroValue, String>> {
        if !self.is_function_macro(name) {
            return None;
        }
        let mut toks = vec![
            Tok::new(TokKind::Ident, name),
            Tok::new(TokKind::Punct, "("),
        ];
        for (i, a) in args.iter().enumerate() {
            if i > 0 {
                toks.push(Tok::new(TokKind::Punct, ","));
            }
            if *a < 0 {
                // Parenthesized so `-` cannot paste or bind to anything around it.
                toks.extend(tokenize(&format!("({a})")));
            } else {
                toks.push(Tok::new(TokKind::Number, &a.to_string()));
            }
        }
        toks.push(Tok::new(TokKind::Punct, ")"));
        Some(self.value_of(toks, ident))
    }

    fn value_of(
        &self,
        toks: Vec<Tok>,
        ident: &dyn Fn(&str) -> Option<i64>,
    ) -> Result<MacroValue, String> {
        let out = expand::expand(&toks, &self.macros)?;
        if !out.is_empty() && out.iter().all(|t| t.kind == TokKind::Str) {
            let mut s = Vec::new();
            for t in &out {
                s.extend(unquote(&t.text).ok_or_else(|| format!("unsupported string {}", t.text))?);
            }
            return Ok(MacroValue::Str(s));
        }
        if out.is_empty() {
            return Err("it expands to nothing".into());
        }
        let text = lex::join(&out);
        let names = |n: &str| self.enumerators.get(n).copied().or_else(|| ident(n));
        eval::eval(&out, &names)
            .map(|v| MacroValue::Int(v.v))
            .map_err(|e| format!("{text}: {e}"))
    }
}

/// The bytes of a string literal, with the script's escapes.
fn unquote(lit: &str) -> Option<Vec<u8>> {
    let mut p = super::parser::Parser::new(lit);
    let (bytes, _) = p.string_literal().ok()?;
    (p.diags.is_empty() && p.at_end()).then_some(bytes)
}

/// Names defined before the script's first line: bpftrace's `BPFTRACE_HAVE_BTF` (strobe
/// always reads types from BTF) and what a C compiler targeting this machine predefines that
/// system headers test.
fn predefined() -> Vec<(&'static str, &'static str)> {
    let mut v = vec![
        ("BPFTRACE_HAVE_BTF", "1"),
        ("__linux__", "1"),
        ("__linux", "1"),
        ("__unix__", "1"),
        ("__unix", "1"),
        ("__STDC__", "1"),
        ("__STDC_VERSION__", "201710L"),
        ("__STDC_HOSTED__", "1"),
        ("__GNUC__", "4"),
        ("__GNUC_MINOR__", "2"),
        ("__GNUC_PATCHLEVEL__", "1"),
        ("__clang__", "1"),
        ("__CHAR_BIT__", "8"),
        ("__SIZEOF_SHORT__", "2"),
        ("__SIZEOF_INT__", "4"),
        ("__SIZEOF_LONG__", "8"),
        ("__SIZEOF_LONG_LONG__", "8"),
        ("__SIZEOF_POINTER__", "8"),
        ("__SIZEOF_SIZE_T__", "8"),
        ("__LP64__", "1"),
        ("_LP64", "1"),
        ("__ORDER_LITTLE_ENDIAN__", "1234"),
        ("__ORDER_BIG_ENDIAN__", "4321"),
        ("__ORDER_PDP_ENDIAN__", "3412"),
        ("__SCHAR_MAX__", "127"),
        ("__SHRT_MAX__", "32767"),
        ("__INT_MAX__", "2147483647"),
        ("__LONG_MAX__", "9223372036854775807L"),
        ("__LONG_LONG_MAX__", "9223372036854775807LL"),
    ];
    if cfg!(target_endian = "little") {
        v.push(("__BYTE_ORDER__", "__ORDER_LITTLE_ENDIAN__"));
    } else {
        v.push(("__BYTE_ORDER__", "__ORDER_BIG_ENDIAN__"));
    }
    match std::env::consts::ARCH {
        "x86_64" => v.extend([("__x86_64__", "1"), ("__x86_64", "1"), ("__amd64__", "1")]),
        "aarch64" => v.extend([("__aarch64__", "1")]),
        _ => {}
    }
    v
}

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

/// A header being read: its path and which search directory found it (for `#include_next`).
#[derive(Clone, Debug)]
struct FileCtx {
    dir: PathBuf,
    /// Index in the search list of the directory that found it; `None` for the script.
    found_in: Option<usize>,
}

/// The preprocessor's state over the script's head and the headers it includes.
#[derive(Debug)]
pub struct Preprocessor {
    opts: CppOptions,
    defs: CDefs,
    stack: Vec<Frame>,
    /// Files read with `#pragma once`.
    once: HashSet<PathBuf>,
    files: Vec<FileCtx>,
    decls: decls::DeclState,
}

/// What went wrong with a directive.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum CppError {
    /// A malformed directive or expression.
    Invalid(String),
    /// `#include` of a header that is neither on the host nor in the table.
    NotFound(String),
    /// `#error` (in the script or a header it includes).
    Error(String),
}

impl std::fmt::Display for CppError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            CppError::Invalid(m) => f.write_str(m),
            CppError::NotFound(h) => write!(f, "'{h}' file not found"),
            CppError::Error(m) => write!(f, "#error {m}"),
        }
    }
}

impl Preprocessor {
    pub fn new(opts: CppOptions) -> Preprocessor {
        let mut defs = CDefs::default();
        for (name, body) in predefined() {
            if let Ok((n, m)) = expand::parse_define(&format!("{name} {body}")) {
                defs.macros.insert(n, m);
            }
        }
        let base = opts.base_dir.clone();
        Preprocessor {
            opts,
            defs,
            stack: Vec::new(),
            once: HashSet::new(),
            files: vec![FileCtx {
                dir: base,
                found_in: None,
            }],
            decls: decls::DeclState::default(),
        }
    }

    /// Whether text at this point is compiled.
    pub fn active(&self) -> bool {
        self.stack.last().map_or(true, |f| f.active)
    }

    /// Open conditionals.
    pub fn depth(&self) -> usize {
        self.stack.len()
    }

    /// What the head defined so far.
    pub fn defs(&self) -> &CDefs {
        &self.defs
    }

    /// Struct and union definitions the included headers had, in the script's C syntax
    /// (see [`decls`]), in order.
    pub fn structs(&self) -> &[String] {
        &self.decls.structs
    }

    pub fn into_defs(self) -> CDefs {
        self.defs
    }

    /// Reads `--include` files, before the script's first line.
    pub fn forced_includes(&mut self) -> Vec<CppError> {
        let names = self.opts.includes.clone();
        names
            .iter()
            .filter_map(|n| self.include(n, false, false).err())
            .collect()
    }

    /// Applies one directive line of the script (`text` after the `#`, comments allowed).
    pub fn directive(&mut self, text: &str) -> Result<(), CppError> {
        let clean = clean_source(text);
        let toks = tokenize(&clean);
        let Some(first) = toks.first() else {
            return Ok(()); // The null directive.
        };
        let word = first.text.as_str();
        let rest = &toks[1..];
        let active = self.active();
        let invalid = |m: String| CppError::Invalid(m);
        match word {
            "if" | "ifdef" | "ifndef" => {
                let cond = if !active {
                    Ok(false)
                } else {
                    match word {
                        "ifdef" => self.name_of(rest).map(|n| self.defs.macros.contains_key(n)),
                        "ifndef" => self
                            .name_of(rest)
                            .map(|n| !self.defs.macros.contains_key(n)),
                        _ => self.condition(rest),
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
            "elif" | "elifdef" | "elifndef" => {
                let f = *self
                    .stack
                    .last()
                    .ok_or_else(|| invalid(format!("#{word} without #if")))?;
                if f.in_else {
                    return Err(invalid(format!("#{word} after #else")));
                }
                let cond = if f.outer && !f.taken {
                    match word {
                        "elifdef" => self
                            .name_of(rest)
                            .map(|n| self.defs.macros.contains_key(n))?,
                        "elifndef" => self
                            .name_of(rest)
                            .map(|n| !self.defs.macros.contains_key(n))?,
                        _ => self.condition(rest)?,
                    }
                } else {
                    false
                };
                let f = self.stack.last_mut().expect("checked above");
                f.active = cond;
                f.taken |= cond;
            }
            "else" => {
                let f = self
                    .stack
                    .last_mut()
                    .ok_or_else(|| invalid("#else without #if".into()))?;
                if f.in_else {
                    return Err(invalid("#else after #else".into()));
                }
                f.in_else = true;
                f.active = f.outer && !f.taken;
                f.taken = true;
            }
            "endif" => {
                self.stack
                    .pop()
                    .ok_or_else(|| invalid("#endif without #if".into()))?;
            }
            _ if !active => {}
            "define" => {
                let body = clean.trim_start();
                let body = body["define".len()..].trim_start();
                let (name, m) = expand::parse_define(body).map_err(invalid)?;
                if name == "defined" {
                    return Err(invalid("'defined' cannot be used as a macro name".into()));
                }
                self.defs.macros.insert(name, m);
            }
            "undef" => {
                let n = self.name_of(rest)?.to_string();
                self.defs.macros.remove(&n);
            }
            "include" | "include_next" => {
                let (name, system) = self.header_name(rest)?;
                self.include(&name, system, word == "include_next")?;
            }
            "error" => {
                return Err(CppError::Error(lex::join(rest)));
            }
            // `#pragma`, `#warning`, `#line`, `#ident`: nothing to do.
            _ => {}
        }
        Ok(())
    }

    fn name_of<'t>(&self, rest: &'t [Tok]) -> Result<&'t str, CppError> {
        match rest.first() {
            Some(t) if t.is_ident() => Ok(&t.text),
            Some(t) => Err(CppError::Invalid(format!(
                "macro names must be identifiers, found '{}'",
                t.text
            ))),
            None => Err(CppError::Invalid("macro name missing".into())),
        }
    }

    /// `<a/b.h>` or `"a/b.h"`, possibly produced by macros.
    fn header_name(&self, rest: &[Tok]) -> Result<(String, bool), CppError> {
        let toks = if rest.first().is_some_and(|t| t.is_ident()) {
            expand::expand(rest, &self.defs.macros).map_err(CppError::Invalid)?
        } else {
            rest.to_vec()
        };
        match toks.first() {
            Some(t) if t.kind == TokKind::Str => Ok((t.text.trim_matches('"').to_string(), false)),
            Some(t) if t.is("<") => {
                let end = toks.iter().position(|t| t.is(">")).ok_or_else(|| {
                    CppError::Invalid("expected '>' after the header name".into())
                })?;
                let name: String = toks[1..end].iter().map(|t| t.text.as_str()).collect();
                Ok((name, true))
            }
            _ => Err(CppError::Invalid(
                "expected \"FILENAME\" or <FILENAME> after #include".into(),
            )),
        }
    }

    /// Evaluates a `#if` condition.
    fn condition(&self, rest: &[Tok]) -> Result<bool, CppError> {
        let text = lex::join(rest);
        let fail = |e: String| CppError::Invalid(format!("cannot evaluate '#if {text}': {e}"));
        // `defined` and the `__has_*` checks are answered before macro expansion.
        let mut pre = Vec::new();
        let mut i = 0;
        while i < rest.len() {
            let t = &rest[i];
            let is_has = t.is_ident()
                && t.text.starts_with("__has_")
                && rest.get(i + 1).is_some_and(|n| n.is("("));
            if t.is_ident() && t.text == "defined" {
                let paren = rest.get(i + 1).is_some_and(|n| n.is("("));
                let at = i + 1 + paren as usize;
                let name = rest
                    .get(at)
                    .filter(|n| n.is_ident())
                    .ok_or_else(|| fail("'defined' needs a macro name".into()))?;
                if paren && !rest.get(at + 1).is_some_and(|n| n.is(")")) {
                    return Err(fail("expected ')' after 'defined(NAME'".into()));
                }
                let v = self.defs.macros.contains_key(&name.text);
                pre.push(Tok::new(TokKind::Number, if v { "1" } else { "0" }));
                i = at + 1 + paren as usize;
            } else if is_has {
                let end = (i + 2..rest.len())
                    .scan(1i32, |d, j| {
                        if rest[j].is("(") {
                            *d += 1;
                        } else if rest[j].is(")") {
                            *d -= 1;
                        }
                        Some((j, *d))
                    })
                    .find(|(_, d)| *d == 0)
                    .map(|(j, _)| j)
                    .ok_or_else(|| fail(format!("unterminated {}(", t.text)))?;
                let v = if t.text == "__has_include" || t.text == "__has_include_next" {
                    self.header_name(&rest[i + 2..end])
                        .ok()
                        .is_some_and(|(n, sys)| self.find(&n, sys, false).is_some())
                } else {
                    // No attribute, builtin or feature is claimed.
                    false
                };
                pre.push(Tok::new(TokKind::Number, if v { "1" } else { "0" }));
                i = end + 1;
            } else {
                pre.push(t.clone());
                i += 1;
            }
        }
        let out = expand::expand(&pre, &self.defs.macros).map_err(fail)?;
        // As in C, a name left after expansion is 0.
        eval::eval(&out, &|_| Some(0))
            .map(|v| v.v != 0)
            .map_err(fail)
    }

    /// The search list: `-I` directories, then the system ones.
    fn search_dirs(&self) -> Vec<PathBuf> {
        self.opts
            .include_dirs
            .iter()
            .chain(&self.opts.system_dirs)
            .cloned()
            .collect()
    }

    /// Where header `name` is: its path and the index of the search directory.
    fn find(&self, name: &str, system: bool, next: bool) -> Option<(PathBuf, Option<usize>)> {
        let cur = self
            .files
            .last()
            .expect("the script's context is never popped");
        if Path::new(name).is_absolute() {
            let p = PathBuf::from(name);
            return self.opts.files.read(&p).map(|_| (p, None));
        }
        if !system && !next {
            let p = cur.dir.join(name);
            if self.opts.files.read(&p).is_some() {
                return Some((p, cur.found_in));
            }
        }
        let start = match (next, cur.found_in) {
            (true, Some(i)) => i + 1,
            _ => 0,
        };
        self.search_dirs()
            .into_iter()
            .enumerate()
            .skip(start)
            .map(|(i, d)| (d.join(name), Some(i)))
            .find(|(p, _)| self.opts.files.read(p).is_some())
    }

    /// `#include`: reads the header (or its table), defining what it defines.
    fn include(&mut self, name: &str, system: bool, next: bool) -> Result<(), CppError> {
        let top = self.files.len() == 1;
        let Some((path, found_in)) = self.find(name, system, next) else {
            if top && self.opts.fallback {
                if let Some(consts) = uapi::header(name) {
                    for (n, v) in consts {
                        self.defs
                            .macros
                            .entry(n.to_string())
                            .or_insert_with(|| int_macro(v));
                    }
                    return Ok(());
                }
            }
            if top && uapi::is_kernel_header(name) {
                // The kernel's own header (bpftrace finds these under /lib/modules when
                // installed): its types come from BTF; its macros are unknown.
                self.defs.missing.push(name.to_string());
                self.add_kernel_internal(name);
                return Ok(());
            }
            // A header's own missing includes are skipped (compiler headers such as
            // <stddef.h> live outside the search path here).
            return if top {
                Err(CppError::NotFound(name.to_string()))
            } else {
                Ok(())
            };
        };
        if top {
            self.add_kernel_internal(name);
        }
        if self.once.contains(&path) || self.files.len() > MAX_INCLUDE_DEPTH {
            return Ok(());
        }
        let Some(text) = self.opts.files.read(&path) else {
            return Ok(());
        };
        self.files.push(FileCtx {
            dir: path.parent().map(Path::to_path_buf).unwrap_or_default(),
            found_in,
        });
        let r = self.read_header(&path, &text);
        self.files.pop();
        r
    }

    fn add_kernel_internal(&mut self, name: &str) {
        for (n, v) in uapi::kernel_internal(name) {
            self.defs
                .macros
                .entry(n.to_string())
                .or_insert_with(|| int_macro(*v));
        }
    }

    /// Preprocesses one header: its directives change the state; the active text's enums
    /// are collected.
    fn read_header(&mut self, path: &Path, text: &str) -> Result<(), CppError> {
        let outer_depth = self.stack.len();
        let clean = clean_source(text);
        let mut body: Vec<Tok> = Vec::new();
        let mut text_toks: Vec<Tok> = Vec::new();
        for line in clean.lines() {
            let l = line.trim_start();
            if let Some(d) = l.strip_prefix('#') {
                let t = d.trim_start();
                if t.starts_with("pragma") && t["pragma".len()..].trim() == "once" {
                    self.once.insert(path.to_path_buf());
                    continue;
                }
                // `#error` fails the include; anything else a header does that this module
                // cannot follow is skipped.
                if let Err(CppError::Error(m)) = self.directive(d) {
                    self.stack.truncate(outer_depth);
                    return Err(CppError::Error(format!("{m} (in {})", path.display())));
                }
            } else if self.active() {
                let toks = tokenize(l);
                if !body.is_empty() || toks.iter().any(|t| t.text == "enum") {
                    body.extend(toks.iter().cloned());
                }
                text_toks.extend(toks);
            }
            if !body.is_empty() && !body.iter().any(|t| t.text == "enum") {
                body.clear();
            }
            // Enum bodies end at `}`: scan what has been gathered once braces balance.
            if balanced_enum(&body) {
                self.scan_enums(&body);
                body.clear();
            }
        }
        // An unterminated conditional in a header ends with it.
        self.stack.truncate(outer_depth);
        if let Ok(toks) = expand::expand(&text_toks, &self.defs.macros) {
            self.decls.scan(&toks);
        }
        Ok(())
    }

    /// Defines the enumerators of each `enum … { … }` in `toks`.
    fn scan_enums(&mut self, toks: &[Tok]) {
        let mut i = 0;
        while i < toks.len() {
            if toks[i].text != "enum" {
                i += 1;
                continue;
            }
            let mut j = i + 1;
            if toks.get(j).is_some_and(Tok::is_ident) {
                j += 1;
            }
            // `enum name : type {` (C23) is not in uapi headers; anything but `{` is a use.
            if !toks.get(j).is_some_and(|t| t.is("{")) {
                i = j;
                continue;
            }
            let Some(close) = toks[j..].iter().position(|t| t.is("}")).map(|k| j + k) else {
                return;
            };
            let mut next = 0i64;
            for item in toks[j + 1..close].split(|t| t.is(",")) {
                let Some(name) = item.first().filter(|t| t.is_ident()) else {
                    continue;
                };
                let value = if item.get(1).is_some_and(|t| t.is("=")) {
                    let Ok(expr) = expand::expand(&item[2..], &self.defs.macros) else {
                        break;
                    };
                    let known = &self.defs.enumerators;
                    match eval::eval(&expr, &|n| known.get(n).copied()) {
                        Ok(v) => v.v,
                        // A value this module cannot compute ends the enum's constants.
                        Err(_) => break,
                    }
                } else {
                    next
                };
                self.defs.enumerators.insert(name.text.clone(), value);
                next = value.wrapping_add(1);
            }
            i = close + 1;
        }
    }
}

/// `toks` holds an `enum` whose braces have all closed (or no brace yet and a `;`).
fn balanced_enum(toks: &[Tok]) -> bool {
    let opens = toks.iter().filter(|t| t.is("{")).count();
    let closes = toks.iter().filter(|t| t.is("}")).count();
    (opens > 0 && opens == closes) || (opens == 0 && toks.last().is_some_and(|t| t.is(";")))
}

fn int_macro(v: i64) -> Macro {
    Macro {
        params: None,
        variadic: false,
        body: tokenize(&if v < 0 {
            format!("({v})")
        } else {
            v.to_string()
        }),
    }
}

#[cfg(test)]
mod tests;
