//! The one place that knows the order of the compiler's stages:
//! parse → (imports inlined) → check → lower → [`CompiledScript`].
//!
//! Input: a script ([`SourceFile`]), a [`KernelInfo`] (asked by the checker only: the checked
//! program carries what lowering needs) and [`CheckOptions`]. Output: the
//! compiled script and every warning, or the diagnostics that stopped compilation (each with
//! its span, rendered by the caller against the same source).

use crate::codegen::lower::{lower, LowerError};
use crate::diag::{Diagnostic, SourceFile};
use crate::kernel::info::KernelInfo;
use crate::plan::CompiledScript;
use crate::sema::{CheckOptions, CheckedProgram};

/// What compiling produced.
#[derive(Debug)]
pub struct CompileOutput {
    /// `Some` when there was no error.
    pub script: Option<CompiledScript>,
    /// The checked program (when checking succeeded), for `-d` listings.
    pub checked: Option<CheckedProgram>,
    /// Errors and warnings in the order found.
    pub diagnostics: Vec<Diagnostic>,
    /// The text the diagnostics' spans are in: the script's, with strobe's stdlib appended
    /// when the script calls it (`builtins::stdlib`).
    pub source: SourceFile,
}

impl CompileOutput {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// A lowering failure as a diagnostic at the construct's span.
pub fn lower_diagnostic(e: &LowerError) -> Diagnostic {
    Diagnostic::error(e.span(), e.to_string())
}

/// Lowers an already checked program (the kernel facts it needs travel in it).
pub fn lower_checked(
    checked: &CheckedProgram,
    opts: &CheckOptions,
) -> Result<CompiledScript, Diagnostic> {
    lower(checked, opts).map_err(|e| lower_diagnostic(&e))
}

/// Parses, checks and lowers `source` (imports are not inlined here: the CLI does that, since
/// it needs the file system).
pub fn compile(source: &SourceFile, kernel: &dyn KernelInfo, opts: &CheckOptions) -> CompileOutput {
    let parsed = crate::syntax::parse(source);
    let (source, parsed) =
        match crate::builtins::stdlib::link(source, &parsed.program, crate::syntax::parse) {
            Some((all, mut linked, start)) if !parsed.has_errors() => {
                linked.program.split_stdlib(start);
                (all, linked)
            }
            _ => (source.clone(), parsed),
        };
    let mut diagnostics = parsed.diagnostics.clone();
    if parsed.has_errors() {
        return CompileOutput {
            script: None,
            checked: None,
            diagnostics,
            source,
        };
    }
    let checked = crate::sema::check(&parsed.program, kernel, opts);
    diagnostics.extend(checked.diagnostics);
    let Some(program) = checked.program else {
        return CompileOutput {
            script: None,
            checked: None,
            diagnostics,
            source,
        };
    };
    match lower_checked(&program, opts) {
        Ok(s) => CompileOutput {
            script: Some(s),
            checked: Some(program),
            diagnostics,
            source,
        },
        Err(d) => {
            diagnostics.push(d);
            CompileOutput {
                script: None,
                checked: Some(program),
                diagnostics,
                source,
            }
        }
    }
}

/// A verifier rejection as a diagnostic at the script position of the rejected instruction
/// (from the template's source map): the verifier's one-line reason, the probe, and a hint
/// that `-v` prints the whole log, for `probe`'s program refused with `source`
/// (`runtime::driver::RunError::refused_load`). `None` when `probe` is not one of
/// `script`'s or the refusal has no instruction.
pub fn verifier_diagnostic(
    script: &CompiledScript,
    probe: &str,
    source: &crate::sys::LoadError,
) -> Option<Diagnostic> {
    let spec = script.probes.iter().find(|s| s.name == probe)?;
    let reason = source.reason().unwrap_or("program rejected");
    let needs = crate::plan::requires::kernel_requirement(&spec.template, source.insn(), reason);
    let insn = source.insn().or(needs.as_ref().and_then(|n| n.0))?;
    let span = spec.template.source_map.lookup(insn)?;
    let d = Diagnostic::error(
        span,
        format!("the kernel's verifier rejected probe {probe}: {reason} (instruction {insn})"),
    )
    .with_note("run with -v for the full verifier log");
    Some(match needs {
        Some((_, help)) => d.with_help(help),
        None if reason.contains("too large") || reason.contains("infinite loop") => d.with_help(
            "the verifier follows every path and every loop iteration, up to 1,000,000 \
             instructions (BPF_COMPLEXITY_LIMIT_INSNS, kernel/bpf/verifier.c): a `while` loop \
             must end within that for every input; bound it by a constant or use \
             `for ($i : 0..N)` (bpf_loop)",
        ),
        None => d,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::info::MockKernel;

    fn compiled(text: &str, opts: &CheckOptions) -> CompiledScript {
        let src = SourceFile::new("stdin", text.to_string());
        let out = compile(&src, &MockKernel::fixture(), opts);
        out.script
            .unwrap_or_else(|| panic!("{text}: {:?}", out.diagnostics))
    }

    fn ring_size(s: &CompiledScript) -> u32 {
        s.maps
            .iter()
            .find(|m| m.role == crate::plan::MapRole::RingBuf)
            .map(|m| m.max_entries)
            .unwrap()
    }

    #[test]
    fn config_perf_rb_pages_sizes_the_ring_buffer() {
        let opts = CheckOptions::default();
        let s = compiled(
            "config = { perf_rb_pages = 512 } BEGIN { printf(\"x\\n\"); }",
            &opts,
        );
        assert_eq!(ring_size(&s), 512 * 4096);
        let s = compiled("BEGIN { printf(\"x\\n\"); }", &opts);
        assert_ne!(ring_size(&s), 512 * 4096);
    }

    #[test]
    fn on_stack_limit_moves_values_to_the_scratch_buffer() {
        let text = |limit: &str| format!("{limit} BEGIN {{ $t = (1, 2, \"abcdef\"); print($t); }}");
        let scratch = |s: &CompiledScript| {
            s.probes
                .iter()
                .any(|p| p.template.maps.iter().any(|m| m == "scratch"))
        };
        let opts = CheckOptions::default();
        assert!(!scratch(&compiled(&text(""), &opts)));
        assert!(scratch(&compiled(
            &text("config = { on_stack_limit = 0 }"),
            &opts
        )));
    }

    /// The first error compiling `text` against a kernel that answers the code generator's
    /// questions (through the checker), with its span's text.
    fn first_error(text: &str) -> (String, String) {
        let src = SourceFile::new("stdin", text.to_string());
        let kernel = crate::sema::environment::tests::Answering(MockKernel::fixture());
        let opts = CheckOptions {
            unsafe_mode: true,
            ..CheckOptions::default()
        };
        let out = compile(&src, &kernel, &opts);
        let d = out
            .diagnostics
            .iter()
            .find(|d| d.is_error())
            .unwrap_or_else(|| panic!("{text}: no error"));
        let at = text[d.span.start as usize..d.span.end as usize].to_string();
        (d.message.clone(), at)
    }

    #[test]
    fn kernel_facts_the_checker_found_missing_are_refused_where_they_are_lowered() {
        let (msg, at) = first_error("BEGIN { print(kaddr(\"nope\")); }");
        assert_eq!(msg, "Failed to resolve kernel symbol: nope");
        assert_eq!(at, "kaddr(\"nope\")");
        let (msg, at) = first_error("BEGIN { print(cgroupid(\"/nope\")); }");
        assert_eq!(
            msg,
            "Failed to get `cgroupid` for path: \"/nope\": No such file or directory"
        );
        assert_eq!(at, "cgroupid(\"/nope\")");
        let (msg, at) = first_error("kprobe:vfs_read { signal(\"KILL\"); }");
        assert_eq!(
            msg,
            "BPF_FUNC_send_signal not available for your kernel version (not in this kernel)"
        );
        assert_eq!(at, "signal(\"KILL\")");
        let (msg, _) = first_error("kprobe:vfs_read { print(comm(1)); }");
        assert_eq!(
            msg,
            "comm(PID) needs the bpf_task_from_pid kfunc, which this kernel does not have"
        );
        // A fact it found is used (kaddr is a constant).
        let src = SourceFile::new("stdin", "BEGIN { print(kaddr(\"vfs_read\")); }");
        let kernel = crate::sema::environment::tests::Answering(MockKernel::fixture());
        let out = compile(&src, &kernel, &CheckOptions::default());
        assert!(out.script.is_some(), "{:?}", out.diagnostics);
    }

    #[test]
    fn helper_warnings_add_checked_sites_only_with_k() {
        let text = "BEGIN { @m[1] = 1; $p = (int8 *)8; printf(\"%d %d\\n\", @m[2], *$p); }";
        let s = compiled(text, &CheckOptions::default());
        assert!(s.events.helper_errors.is_empty());
        let k = CheckOptions {
            helper_warnings: true,
            ..CheckOptions::default()
        };
        let s = compiled(text, &k);
        let helpers: Vec<&str> = s
            .events
            .helper_errors
            .iter()
            .map(|h| h.helper.name())
            .collect();
        assert_eq!(helpers, ["map_lookup_elem", "probe_read_kernel"]);
    }
}

#[cfg(test)]
#[path = "compile/key_class_tests.rs"]
mod key_class_tests;
