//! The module graph follows the data flow: script text (`syntax`) → checked program (`sema`,
//! `builtins`) → templates and the plan (`codegen`, driven by `compile`, producing `template`s
//! and a `plan`) → `loader` → `runtime` → the front ends (`api`, `cli`), with leaf modules
//! (`diag`, `timings`, `fnv`, `asm` (the ISA), `btf`, `elf`, `sys`, `kinds` (the probe-kind table),
//! `kernel`) below them all. The
//! contract between compiler and runtime (`plan`, with the `template`s it holds) is the
//! vocabulary the checker already decides in (value layouts, aggregation kinds, printf
//! specs), so it sits below the checker, and it imports only `asm`, `template`, `diag` and
//! `elf` (for the parsed USDT note a probe carries).
//!
//! This test reads every `src/**/*.rs` file, finds each `crate::MODULE` path and each
//! `super::` path that climbs out of its top-level module, and checks the edge against the
//! layers below. An edge may only point to a lower layer (or be one of the few same-layer
//! edges listed). Edges that still point the wrong way are listed, with why, in
//! [`KNOWN_DEBT`]: a new back edge fails, and so does a debt entry that no longer exists
//! (remove it from the list).
//!
//! Two rules go beyond the layers: the code generator takes the checker's decisions from the
//! checked program rather than calling back into its passes ([`NO_CALL_BACK`]), and it never
//! asks the system about itself (`KernelInfo`, BTF, DWARF, syscalls): the checker asks once and
//! the checked program carries the answers ([`KERNEL_RECORDS`], [`NO_KERNEL_QUESTIONS`]).
//! A third keeps adding a probe kind local: a kind (`kinds::ProbeKind::X`) is named only in
//! `src/kinds/` and in the kind's own per-layer files, named as its descriptor's file
//! ([`KIND_NAMES_ALLOWED`] lists the exceptions).

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};

/// Each top-level module of `src/` and its layer: a module may import modules of lower
/// layers only.
const LAYERS: &[(&str, u32)] = &[
    ("diag", 0),
    ("timings", 0),
    ("fnv", 0),
    ("asm", 1),
    ("btf", 1),
    ("elf", 2),
    ("sys", 2),
    ("kinds", 2),
    ("dwarf", 2),
    ("kernel", 3),
    ("syntax", 4),
    ("template", 5),
    ("plan", 5),
    ("sema", 6),
    ("builtins", 6),
    ("codegen", 7),
    ("compile", 8),
    ("loader", 9),
    ("runtime", 10),
    ("api", 11),
    ("cli", 12),
];

/// Same-layer edges that are allowed.
const SAME_LAYER: &[(&str, &str)] = &[
    // The builtin registry and the checker are one stage: each names the other's types.
    ("sema", "builtins"),
    ("builtins", "sema"),
    // The plan holds templates.
    ("plan", "template"),
];

/// Modules that may import only the modules listed (tighter than their layer).
/// The plan may also name `elf`'s parsed USDT note (a plain record of an ELF file's contents).
const ONLY: &[(&str, &[&str])] = &[("plan", &["asm", "template", "diag", "elf", "kinds"])];

/// Back edges not removed yet, each with what it is. Fix one by moving what is shared down to
/// the lower module (or passing it in), then delete its entry here.
const KNOWN_DEBT: &[(&str, &str, &str)] = &[];

fn rust_files(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(entries) = std::fs::read_dir(dir) else {
        return;
    };
    for entry in entries.flatten() {
        let path = entry.path();
        if path.is_dir() {
            rust_files(&path, out);
        } else if path.extension().is_some_and(|e| e == "rs") {
            out.push(path);
        }
    }
}

/// A source file of the crate: its path relative to `src/` (with `/`) and its text.
struct Source {
    rel: String,
    text: String,
}

impl Source {
    /// Its module path ([`module_path`]).
    fn module(&self) -> Option<Vec<String>> {
        module_path(Path::new(&self.rel))
    }

    /// Its file name without `.rs`.
    fn stem(&self) -> &str {
        let name = self.rel.rsplit('/').next().unwrap_or(&self.rel);
        name.strip_suffix(".rs").unwrap_or(name)
    }
}

/// Every `.rs` file under `src/`, sorted by path, read.
fn sources() -> Vec<Source> {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let mut files = Vec::new();
    rust_files(&root, &mut files);
    files.sort();
    files
        .iter()
        .map(|f| Source {
            rel: f
                .strip_prefix(&root)
                .unwrap()
                .to_string_lossy()
                .replace('\\', "/"),
            text: std::fs::read_to_string(f).unwrap(),
        })
        .collect()
}

/// The module path of a file relative to `src/`: `codegen/lower/probe.rs` → `[codegen, lower,
/// probe]`, `codegen/mod.rs` → `[codegen]`. `None` for the crate roots and binaries.
fn module_path(rel: &Path) -> Option<Vec<String>> {
    let mut parts: Vec<String> = rel
        .with_extension("")
        .iter()
        .map(|p| p.to_string_lossy().into_owned())
        .collect();
    if matches!(parts[0].as_str(), "lib" | "main" | "bin") {
        return None;
    }
    if parts.last().is_some_and(|p| p == "mod") {
        parts.pop();
    }
    Some(parts)
}

/// The code of a line without its `//` comment (doc comments included). String literals
/// holding `//` are rare enough in `src/` not to matter here.
fn code_of(line: &str) -> &str {
    match line.find("//") {
        Some(i) => &line[..i],
        None => line,
    }
}

fn ident_at(s: &str) -> &str {
    let end = s
        .find(|c: char| !(c.is_ascii_alphanumeric() || c == '_'))
        .unwrap_or(s.len());
    &s[..end]
}

/// The top-level modules `text` (a file at module path `path`) refers to outside its own.
fn imports(path: &[String], text: &str) -> BTreeSet<String> {
    let own = &path[0];
    let mut out = BTreeSet::new();
    for line in text.lines().map(code_of) {
        for (at, _) in line.match_indices("crate::") {
            let before = line[..at].chars().next_back();
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_') {
                continue;
            }
            let target = ident_at(&line[at + "crate::".len()..]);
            if !target.is_empty() && target != own {
                out.insert(target.to_string());
            }
        }
        let mut rest = line;
        while let Some(at) = rest.find("super::") {
            let before = rest[..at].chars().next_back();
            let mut tail = &rest[at..];
            let mut n = 0;
            while let Some(t) = tail.strip_prefix("super::") {
                n += 1;
                tail = t;
            }
            rest = tail;
            if before.is_some_and(|c| c.is_ascii_alphanumeric() || c == '_' || c == ':') {
                continue;
            }
            // Climbing `n` levels from `path` reaches the crate root when n >= its depth.
            if n >= path.len() {
                let target = ident_at(tail);
                if !target.is_empty() && target != own {
                    out.insert(target.to_string());
                }
            }
        }
    }
    out
}

fn layer(m: &str) -> Option<u32> {
    LAYERS.iter().find(|(n, _)| *n == m).map(|(_, l)| *l)
}

fn allowed(from: &str, to: &str) -> bool {
    if let Some((_, only)) = ONLY.iter().find(|(m, _)| *m == from) {
        return only.contains(&to);
    }
    match (layer(from), layer(to)) {
        (Some(a), Some(b)) => b < a || (b == a && SAME_LAYER.contains(&(from, to))),
        _ => false,
    }
}

#[test]
fn the_import_detector_sees_crate_paths_and_super_paths_that_leave_the_module() {
    let at = |p: &str| p.split('/').map(String::from).collect::<Vec<_>>();
    let text = "use crate::runtime::format::Value;\n\
                use super::super::syntax::ast;\n\
                use super::sibling;\n\
                /// [`crate::cli::run`]\n\
                let x = crate::sema::check(); // crate::loader\n";
    let found = imports(&at("codegen/lower"), text);
    let want: BTreeSet<String> = ["runtime", "syntax", "sema"].map(String::from).into();
    assert_eq!(found, want);
    // One level up from a top-level module's file is still that module.
    assert!(imports(&at("sema/typeck"), "use super::types::Type;").is_empty());
    assert_eq!(
        imports(&at("sema/typeck"), "use super::super::plan::agg::AggKind;"),
        ["plan".to_string()].into()
    );
    assert!(allowed("runtime", "plan") && !allowed("plan", "runtime"));
    assert!(allowed("sema", "builtins") && !allowed("template", "plan"));
    assert!(allowed("plan", "template") && !allowed("plan", "kernel"));
}

#[test]
fn module_imports_follow_the_data_flow() {
    let files = sources();
    assert!(files.len() > 100, "scanned only {} files", files.len());
    let mut edges: BTreeMap<(String, String), Vec<String>> = BTreeMap::new();
    let mut modules = BTreeSet::new();
    for file in &files {
        let Some(path) = file.module() else {
            continue;
        };
        modules.insert(path[0].clone());
        for to in imports(&path, &file.text) {
            edges
                .entry((path[0].clone(), to))
                .or_default()
                .push(file.rel.clone());
        }
    }
    let unlisted: Vec<&String> = modules.iter().filter(|m| layer(m).is_none()).collect();
    assert!(
        unlisted.is_empty(),
        "give each new top-level module a layer in LAYERS: {unlisted:?}"
    );
    let mut bad = Vec::new();
    for ((from, to), files) in &edges {
        if layer(to).is_none() || allowed(from, to) {
            continue;
        }
        if KNOWN_DEBT.iter().any(|(f, t, _)| f == from && t == to) {
            continue;
        }
        bad.push(format!("{from} → {to} in {}", files.join(", ")));
    }
    assert!(
        bad.is_empty(),
        "imports against the data flow (move the shared item down a layer, or pass it in):\n{}",
        bad.join("\n")
    );
    let stale: Vec<String> = KNOWN_DEBT
        .iter()
        .filter(|(f, t, _)| !edges.contains_key(&(f.to_string(), t.to_string())))
        .map(|(f, t, _)| format!("{f} → {t}"))
        .collect();
    assert!(
        stale.is_empty(),
        "these KNOWN_DEBT edges are gone; delete them from the list: {stale:?}"
    );
}

/// Paths a module may not name although its layer would allow the module: the checker's
/// decisions travel in the checked program (`sema::AttachTargets::slots`, the targets, the
/// grouping), so the code generator and the loader do not rebuild them by calling back into
/// the checker's passes. Each entry: (importing module, forbidden path, what to use instead).
const NO_CALL_BACK: &[(&str, &str, &str)] = &[
    (
        "codegen",
        "sema::context",
        "the per-target slots in `AttachTargets::slots`",
    ),
    ("codegen", "ProbeContext", "`AttachTargets::slots`"),
    ("codegen", "sema::driver", "the checked program"),
    ("codegen", "sema::expand::expand", "the checked targets"),
    ("loader", "sema::", "the plan"),
];

/// The code of `text` without `//` comments, as one string per line.
fn code_lines(text: &str) -> impl Iterator<Item = &str> {
    text.lines().map(code_of)
}

#[test]
fn code_generation_does_not_call_back_into_the_checker() {
    let mut bad = Vec::new();
    for file in &sources() {
        let Some(path) = file.module() else {
            continue;
        };
        for (from, forbidden, instead) in NO_CALL_BACK {
            if path[0] != *from {
                continue;
            }
            if code_lines(&file.text).any(|l| l.contains(forbidden)) {
                bad.push(format!("{} names `{forbidden}`; use {instead}", file.rel));
            }
        }
    }
    assert!(
        bad.is_empty(),
        "the code generator and loader take the checker's decisions from the checked \
         program:\n{}",
        bad.join("\n")
    );
}

/// What the code generator may name of `kernel`: the types of plain records the checked
/// program carries (a tracepoint's format fields, a USDT note's argument descriptions), not
/// the functions of those modules (the checker parses and reads). Everything else there
/// asks the running system (BTF, kallsyms, trial loads, ELF files), which the checker does once
/// and leaves in `CheckedProgram::env` (`sema::environment`).
const KERNEL_RECORDS: &[&str] = &["tracefs", "usdt"];

/// Names the code generator may not use at all, with what to use instead: the ways of asking
/// the system about itself.
const NO_KERNEL_QUESTIONS: &[(&str, &str)] = &[
    ("KernelInfo", "the facts in `CheckedProgram::env`"),
    ("HostKernel", "the facts in `CheckedProgram::env`"),
    (
        "MockKernel",
        "facts built by the checker (or constructed directly)",
    ),
    (
        "crate::btf",
        "the member layouts and BTF ids in `CheckedProgram::env`",
    ),
    (
        "crate::dwarf",
        "the DWARF parameters in `AttachTargets::slots`",
    ),
    ("crate::sys", "nothing: code generation makes no syscalls"),
];

/// Where `text` (code of the code generator) asks the system: each `crate::kernel::MODULE` of a
/// module that is not one of [`KERNEL_RECORDS`], and each name of [`NO_KERNEL_QUESTIONS`].
fn kernel_questions(text: &str) -> Vec<String> {
    let mut out = Vec::new();
    for line in code_lines(text) {
        for (at, _) in line.match_indices("crate::kernel::") {
            let rest = &line[at + "crate::kernel::".len()..];
            let module = ident_at(rest);
            if !KERNEL_RECORDS.contains(&module) {
                out.push(format!("`crate::kernel::{module}`"));
                continue;
            }
            // Of those modules only their types (records), not their functions.
            let item = rest[module.len()..].strip_prefix("::").map(ident_at);
            if item.is_some_and(|i| i.starts_with(|c: char| c.is_ascii_lowercase())) {
                let item = item.unwrap_or_default();
                out.push(format!("`crate::kernel::{module}::{item}` (a function)"));
            }
        }
        if line.contains("crate::kernel;") || line.contains("crate::kernel::{") {
            out.push("`crate::kernel` itself".to_string());
        }
        for (name, instead) in NO_KERNEL_QUESTIONS {
            if line.contains(name) {
                out.push(format!("`{name}` (use {instead})"));
            }
        }
    }
    out
}

#[test]
fn the_kernel_question_detector_tells_questions_from_records() {
    let asks = "use crate::kernel::info::KernelInfo;\n\
                let a = lw.kernel.kernel_symbol_address(&s); // crate::kernel::features\n\
                let f = crate::kernel::features::helper_support(h);\n\
                let b = crate::btf::Kind::Var;\n";
    let found = kernel_questions(asks);
    assert_eq!(found.len(), 4, "{found:?}");
    assert!(found[0].contains("crate::kernel::info"));
    assert!(found[1].contains("KernelInfo"));
    assert!(found[2].contains("crate::kernel::features"));
    assert!(found[3].contains("crate::btf"));
    let parse = "let a = crate::kernel::usdt::parse_args(&note.args);";
    assert_eq!(kernel_questions(parse).len(), 1);
    let records = "use crate::kernel::usdt::{UsdtArg, UsdtLoc};\n\
                   Tracepoint(Vec<crate::kernel::tracefs::Field>),\n\
                   /// [`crate::kernel::info::KernelInfo`] in a comment\n";
    assert!(kernel_questions(records).is_empty());
}

/// The code generator lowers what the checker decided: it never asks the kernel (or reads
/// BTF, DWARF or ELF files, or makes a syscall) itself, so a checked program lowers the same
/// way wherever it is lowered and every fact it depends on is in it (issue #14).
#[test]
fn code_generation_does_not_ask_the_kernel() {
    let mut bad = Vec::new();
    for file in &sources() {
        if file.module().is_none_or(|p| p[0] != "codegen") {
            continue;
        }
        for q in kernel_questions(&file.text) {
            bad.push(format!("{} names {q}", file.rel));
        }
    }
    assert!(
        bad.is_empty(),
        "the code generator takes kernel facts from the checked program \
         (`CheckedProgram::env`, `sema::environment`):\n{}",
        bad.join("\n")
    );
}

/// Files outside `src/kinds/` and the kinds' own per-layer files that may still name a probe
/// kind, each with why. Keep it short: a kind set is a fact of the descriptors
/// (`KindInfo::facts`), and per-kind behaviour is a hook in the kind's own file.
const KIND_NAMES_ALLOWED: &[(&str, &str)] = &[];

/// The probe kinds (`kinds::ProbeKind`'s variants) and the stem of their descriptor's file in
/// `src/kinds/` (`kprobe` for `Kprobe` and `Kretprobe`), from the descriptors themselves
/// (`kind: ProbeKind::X` in `src/kinds/STEM.rs`).
fn kind_stems(root: &Path) -> BTreeMap<String, String> {
    let mut out = BTreeMap::new();
    let mut files = Vec::new();
    rust_files(&root.join("kinds"), &mut files);
    for file in files {
        let stem = file.file_stem().unwrap().to_string_lossy().into_owned();
        let text = std::fs::read_to_string(&file).unwrap();
        for line in code_lines(&text) {
            if let Some(rest) = line.trim().strip_prefix("kind: ProbeKind::") {
                out.insert(ident_at(rest).to_string(), stem.clone());
            }
        }
    }
    out
}

/// Where `text` names a variant of `kinds::ProbeKind` (one of `kinds`): `ProbeKind::X` when
/// the file's `ProbeKind` is the kind id (not the plan's attach data, `plan::ProbeKind`), the
/// qualified `kinds::ProbeKind::X` (or its re-exports `ast::`/`attach::ProbeKind::X`), an
/// alias of the kind id (`use … ProbeKind as K;` then `K::X`), and glob imports of the
/// variants. Returns (line number, variant).
fn kind_mentions(text: &str, kinds: &BTreeMap<String, String>) -> Vec<(usize, String)> {
    let lines: Vec<&str> = code_lines(text).collect();
    let plan_path = |l: &str| l.contains("plan::");
    // What a bare `ProbeKind` is here: the plan's when the file imports the plan's, or
    // defines it (`src/plan/mod.rs`).
    let bare_is_plan = lines.iter().any(|l| {
        let l = l.trim();
        (l.starts_with("use ") && plan_path(l) && l.contains("ProbeKind") && !l.contains(" as "))
            || l.starts_with("pub enum ProbeKind")
    });
    let mut names: Vec<String> = Vec::new();
    if !bare_is_plan {
        names.push("ProbeKind".into());
    }
    for prefix in ["kinds::", "ast::", "attach::"] {
        names.push(format!("{prefix}ProbeKind"));
    }
    for l in &lines {
        if let Some(i) = l.find("ProbeKind as ") {
            let alias = ident_at(&l[i + "ProbeKind as ".len()..]);
            if !plan_path(l) && !alias.is_empty() {
                names.push(alias.to_string());
            }
        }
    }
    let mut out = Vec::new();
    for (n, l) in lines.iter().enumerate() {
        if l.contains("ProbeKind::*") && !plan_path(l) {
            out.push((n + 1, "*".to_string()));
        }
        for name in &names {
            let pat = format!("{name}::");
            let mut from = 0;
            while let Some(i) = l[from..].find(&pat) {
                let at = from + i;
                from = at + pat.len();
                // `crate::plan::ProbeKind::X` and `RunKind::X` are the plan's; `XProbeKind::`
                // is another name.
                let before = &l[..at];
                let joined = before.ends_with(|c: char| c.is_ascii_alphanumeric() || c == '_');
                if joined || (name == "ProbeKind" && before.ends_with("plan::")) {
                    continue;
                }
                let variant = ident_at(&l[from..]);
                if kinds.contains_key(variant) {
                    out.push((n + 1, variant.to_string()));
                }
            }
        }
    }
    // `kinds::ProbeKind::X` is also a bare `ProbeKind::X`: one mention.
    out.sort();
    out.dedup();
    out
}

#[test]
fn the_kind_mention_detector_tells_kind_ids_from_the_plans_attach_data() {
    let kinds: BTreeMap<String, String> = [("Kprobe", "kprobe"), ("Begin", "begin_end")]
        .iter()
        .map(|(k, s)| (k.to_string(), s.to_string()))
        .collect();
    let ids =
        "use crate::syntax::ast::ProbeKind;\nfn f(k: ProbeKind) -> bool { k == ProbeKind::Kprobe }";
    assert_eq!(kind_mentions(ids, &kinds), [(2, "Kprobe".to_string())]);
    let plan =
        "use crate::plan::{ProbeKind, ProbeSpec};\nmatch k { ProbeKind::Kprobe { .. } => 1 }";
    assert!(kind_mentions(plan, &kinds).is_empty());
    let alias = "    use crate::syntax::ast::ProbeKind as K;\n    matches!(k, K::Begin)";
    assert_eq!(kind_mentions(alias, &kinds), [(2, "Begin".to_string())]);
    let qualified =
        "use crate::plan::ProbeKind;\nlet k = crate::kinds::ProbeKind::Begin; // ProbeKind::Kprobe";
    assert_eq!(kind_mentions(qualified, &kinds), [(2, "Begin".to_string())]);
    assert_eq!(
        kind_mentions("    use ProbeKind::*;", &kinds),
        [(1, "*".to_string())]
    );
}

/// Adding a probe kind touches its own files (its descriptor `src/kinds/K.rs` and, in each
/// layer, `…/K.rs`, named as its descriptor's file) and its one line in the registry
/// (`registry!` in `src/kinds/mod.rs`): no central `match` or list names kinds.
#[test]
fn probe_kinds_are_named_only_in_their_own_files() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let kinds = kind_stems(&root);
    assert!(
        kinds.len() >= 20 && kinds.contains_key("Kretprobe") && kinds["Kretprobe"] == "kprobe",
        "the descriptors were not found: {kinds:?}"
    );
    let mut bad = Vec::new();
    let mut allowed_used = BTreeSet::new();
    for file in &sources() {
        let rel_s = &file.rel;
        if rel_s.starts_with("kinds/") {
            continue;
        }
        for (line, variant) in kind_mentions(&file.text, &kinds) {
            if kinds.get(&variant).map(String::as_str) == Some(file.stem()) {
                continue;
            }
            if let Some((f, _)) = KIND_NAMES_ALLOWED.iter().find(|(f, _)| *f == rel_s) {
                allowed_used.insert(*f);
                continue;
            }
            bad.push(format!("src/{rel_s}:{line}: ProbeKind::{variant}"));
        }
    }
    assert!(
        bad.is_empty(),
        "a probe kind named outside src/kinds/ and its own per-layer files: make the kind set a \
         fact of the descriptors (`KindInfo::facts`, `KindSet`) or the behaviour a hook in the \
         kind's own file (`…/{{stem}}.rs`, found through the registry in src/kinds/mod.rs):\n{}",
        bad.join("\n")
    );
    let stale: Vec<_> = KIND_NAMES_ALLOWED
        .iter()
        .filter(|(f, _)| !allowed_used.contains(f))
        .map(|(f, why)| format!("{f} ({why})"))
        .collect();
    assert!(
        stale.is_empty(),
        "allowed files that no longer name a kind (remove them from KIND_NAMES_ALLOWED):\n{}",
        stale.join("\n")
    );
}

/// The registry (`registry! { stem { Variant => ITEM, … } … }` in `src/kinds/mod.rs`): each
/// kind's variant, the stem of its files and the name of its items there, in order.
fn registry(root: &Path) -> Vec<(String, String, String)> {
    let text = std::fs::read_to_string(root.join("kinds/mod.rs")).unwrap();
    let mut lines = code_lines(&text).map(str::trim);
    assert!(
        lines.any(|l| l == "registry! {"),
        "no `registry! {{` in src/kinds/mod.rs"
    );
    let mut out = Vec::new();
    let mut stem: Option<String> = None;
    for l in lines {
        if l.is_empty() {
            continue;
        }
        // A stem of one kind is one line: `stem { Variant => ITEM, }`.
        if let (None, Some((s, entry))) = (
            &stem,
            l.strip_suffix(" }").and_then(|l| l.split_once(" { ")),
        ) {
            let (variant, item) = entry.split_once(" => ").expect("Variant => ITEM");
            out.push((
                variant.to_string(),
                s.to_string(),
                item.trim_end_matches(',').to_string(),
            ));
            continue;
        }
        match (&stem, l.strip_suffix(" {"), l.split_once(" => ")) {
            (None, _, _) if l == "}" => return out,
            (None, Some(s), _) => stem = Some(s.to_string()),
            (Some(_), _, _) if l == "}" => stem = None,
            (Some(s), _, Some((variant, item))) => out.push((
                variant.to_string(),
                s.clone(),
                item.trim_end_matches(',').to_string(),
            )),
            _ => panic!("unexpected line in the registry: {l}"),
        }
    }
    panic!("the registry in src/kinds/mod.rs does not end")
}

/// The layers that build a table of the kinds' hooks (`kind_table!()`), as directories of
/// `src/` holding the `mod.rs` that does.
fn kind_table_layers(root: &Path) -> Vec<PathBuf> {
    let mut files = Vec::new();
    rust_files(root, &mut files);
    let mut out: Vec<PathBuf> = files
        .into_iter()
        .filter(|f| !f.starts_with(root.join("kinds")))
        .filter(|f| {
            let text = std::fs::read_to_string(f).unwrap();
            let builds = code_lines(&text).any(|l| l.contains("kinds::kind_table!()"));
            builds
        })
        .map(|f| {
            assert!(
                f.ends_with("mod.rs"),
                "{} builds a kind table outside a layer's mod.rs",
                f.display()
            );
            f.parent().unwrap().to_path_buf()
        })
        .collect();
    out.sort();
    out
}

/// The registry is the one list of kinds: it agrees with the descriptors' files, every layer
/// builds its table from it (so the compiler names a layer a new kind is missing from), each
/// layer has a file per stem, and no file writes a table of the kinds by hand.
#[test]
fn adding_a_kind_touches_its_own_files_and_one_registry_line() {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("src");
    let reg = registry(&root);
    let stems = kind_stems(&root);
    let listed: BTreeMap<String, String> =
        reg.iter().map(|(v, s, _)| (v.clone(), s.clone())).collect();
    assert_eq!(
        listed, stems,
        "the registry's stems differ from the descriptors' files (`kind: ProbeKind::X` in \
         src/kinds/STEM.rs)"
    );
    assert_eq!(listed.len(), reg.len(), "a kind is in the registry twice");
    let layers = kind_table_layers(&root);
    let rel = |p: &Path| {
        p.strip_prefix(&root)
            .unwrap()
            .to_string_lossy()
            .replace('\\', "/")
    };
    let names: Vec<String> = layers.iter().map(|l| rel(l)).collect();
    for want in [
        "syntax/attach/spec",
        "sema/context",
        "sema/list",
        "codegen/lower/probe",
    ] {
        assert!(
            names.iter().any(|n| n == want),
            "{want} no longer builds its table with kind_table!(): {names:?}"
        );
    }
    let mut bad = Vec::new();
    for layer in &layers {
        let text = std::fs::read_to_string(layer.join("mod.rs")).unwrap();
        if !code_lines(&text).any(|l| l.trim() == "crate::kinds::kind_modules!();") {
            bad.push(format!("src/{}/mod.rs: no kind_modules!()", rel(layer)));
        }
        for (variant, stem, item) in &reg {
            let file = layer.join(format!("{stem}.rs"));
            let Ok(text) = std::fs::read_to_string(&file) else {
                bad.push(format!("src/{}/{stem}.rs: missing ({variant})", rel(layer)));
                continue;
            };
            let decl = format!("const {item}: ");
            if !code_lines(&text).any(|l| l.contains(&decl)) {
                bad.push(format!(
                    "src/{}/{stem}.rs: no `{item}` ({variant})",
                    rel(layer)
                ));
            }
        }
    }
    assert!(bad.is_empty(), "{}", bad.join("\n"));
    // A table of the kinds written out by hand: a fixed-size array of `KINDS`' length that
    // is not `kind_table!()`.
    let mut by_hand = Vec::new();
    for file in &sources() {
        for (n, l) in code_lines(&file.text).enumerate() {
            if l.contains("KINDS.len()] =") && !l.contains("kind_table!()") {
                by_hand.push(format!("src/{}:{}", file.rel, n + 1));
            }
        }
    }
    assert!(
        by_hand.is_empty(),
        "a table of the kinds written out by hand (build it with `crate::kinds::kind_table!()` \
         from the layer's per-kind files):\n{}",
        by_hand.join("\n")
    );
}
