//! From the bpftrace-style flags to a run: output format and file (`-f`, `-o`), `-q`, `-v`,
//! `-B`, `--unsafe`, `-c`, `-p`, environment settings, and the exit code of a finished run.
//!
//! Input: parsed [`TraceArgs`] and a compiled script. Output: the run's output on stdout or the
//! `-o` file, diagnostics on stderr, an exit code (see `--help`).

use std::io::Write;

use super::trace::TraceArgs;
use super::{EXIT_INPUT, EXIT_OK, EXIT_USAGE};
use crate::plan::CompiledScript;
use crate::runtime::driver::{run, Buffering, RunMode, RunOptions};
use crate::runtime::format::OutputFormat;

/// A setting from the environment: `STROBE_<name>`, else bpftrace's `BPFTRACE_<name>`.
pub fn env_setting(name: &str) -> Option<String> {
    std::env::var(format!("STROBE_{name}"))
        .or_else(|_| std::env::var(format!("BPFTRACE_{name}")))
        .ok()
}

/// Undoes `signals::block` for this thread (while it parses, Ctrl-C must still work).
pub fn unblock_signals() {
    // SAFETY: a local set filled by sigemptyset/sigaddset; no old mask wanted.
    unsafe {
        let mut s: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut s);
        for sig in crate::runtime::signals::HANDLED {
            libc::sigaddset(&mut s, sig);
        }
        libc::pthread_sigmask(libc::SIG_UNBLOCK, &s, std::ptr::null_mut());
    }
}

/// `-p PID`: the process must exist (bpftrace: "No such process").
pub fn check_pid(pid: u32) -> Result<(), String> {
    if pid == 0 || pid > i32::MAX as u32 {
        return Err(format!("invalid pid {pid}"));
    }
    // SAFETY: signal 0 only checks that the process exists and may be signalled.
    let r = unsafe { libc::kill(pid as i32, 0) };
    let e = std::io::Error::last_os_error();
    if r != 0 && e.raw_os_error() == Some(libc::ESRCH) {
        return Err(format!("-p {pid}: no such process"));
    }
    Ok(())
}

/// The run options the flags ask for, or a usage message.
pub fn run_options(a: &TraceArgs) -> Result<RunOptions, String> {
    let format = match a.format.as_deref() {
        None | Some("text") => OutputFormat::Text,
        Some("json") => OutputFormat::Json,
        // bpftrace's words (its tests look for them); strobe knows text and json.
        Some(f) => return Err(format!("ERROR: Invalid output format \"{f}\"")),
    };
    let buffering = match a.buffering.as_deref() {
        None | Some("line") => Buffering::Line,
        Some("full") => Buffering::Full,
        Some("none") => Buffering::None,
        Some(b) => {
            return Err(format!(
                "unknown buffering mode '{b}' (known: line, full, none)"
            ))
        }
    };
    let pid = match a.pid {
        Some(p) if p == 0 || p > i32::MAX as u32 => return Err(format!("invalid pid {p}")),
        Some(p) => Some(p as i32),
        None => None,
    };
    if pid.is_some() && a.cmd.is_some() {
        return Err("-p and -c cannot be used together".into());
    }
    if a.serve.is_none() && !a.serve_labels.is_empty() {
        return Err("--serve-labels needs --serve".into());
    }
    let serve = match &a.serve {
        Some(addr) => Some(std::sync::Arc::new(crate::runtime::serve::ServeConfig {
            labels: crate::runtime::serve::parse_labels(&a.serve_labels)?,
            listener: crate::runtime::serve::bind(addr)?,
        })),
        None => None,
    };
    // bpftrace's modes and words; its other modes (codegen, compiler-bench, format) are
    // about its LLVM compiler and formatter, which strobe does not have.
    let mode = match (a.mode.as_deref(), a.test, a.bench) {
        (Some(_), true, _) => {
            return Err("ERROR: USAGE: --test conflicts with existing --mode".into())
        }
        (Some(_), _, true) | (None, true, true) => {
            return Err("ERROR: USAGE: --bench conflicts with existing --mode".into())
        }
        (Some("test"), ..) | (None, true, false) => RunMode::Test,
        (Some("bench"), ..) | (None, false, true) => RunMode::Bench,
        (Some(m), ..) => {
            return Err(format!(
                "ERROR: USAGE: --mode can only be 'test' or 'bench' in strobe (found '{m}'; \
                 bpftrace's codegen, compiler-bench and format modes are about its LLVM \
                 compiler and formatter)"
            ))
        }
        (None, false, false) => RunMode::Trace,
    };
    Ok(RunOptions {
        format,
        mode,
        quiet: a.quiet,
        verbose: a.verbose,
        buffering,
        unsafe_mode: a.unsafe_mode,
        fentry_via: match &a.fentry_via {
            Some(v) => v.parse().map_err(|e| format!("ERROR: USAGE: {e}"))?,
            None => Default::default(),
        },
        command: a.cmd.as_deref().map(crate::runtime::child::split_command),
        pid,
        serve,
        session_entries: session_entries()?,
        ..Default::default()
    })
}

/// `STROBE_SESSION_ENTRIES`: how many calls of fexit functions read through kprobe.session
/// may be in flight at once (their arguments wait in a map; a call beyond it is a lost event).
fn session_entries() -> Result<u32, String> {
    match std::env::var("STROBE_SESSION_ENTRIES") {
        Err(_) => Ok(0),
        Ok(v) => match v.trim().parse::<u32>() {
            Ok(n) if n > 0 => Ok(n),
            _ => Err(format!(
                "ERROR: STROBE_SESSION_ENTRIES must be a positive integer (found '{v}')"
            )),
        },
    }
}

/// Runs a compiled script with the flags' options; returns the exit code.
pub fn run_script(a: &TraceArgs, script: &CompiledScript) -> i32 {
    let opts = match run_options(a) {
        Ok(o) => o,
        Err(msg) => {
            eprintln!("strobe: {msg}");
            return EXIT_USAGE;
        }
    };
    let mut out: Box<dyn Write> = match &a.output {
        Some(path) => match std::fs::File::create(path) {
            Ok(f) => Box::new(f),
            Err(e) => {
                eprintln!("strobe: cannot create '{path}': {e}");
                return EXIT_USAGE;
            }
        },
        None => Box::new(std::io::stdout().lock()),
    };
    match run(script, &opts, &mut out) {
        Ok(o) => o.exit_code.unwrap_or(EXIT_OK),
        Err(e) if e.is_quiet() => super::run_exit_code(&e),
        Err(e) => {
            eprintln!("strobe: {e}");
            super::run_exit_code(&e)
        }
    }
}

/// Where `--x-plan NAME` finds hand-built scripts. The product has none; a test binary (the
/// dev crate's `strobe-plan`) installs its canned plans with [`set_plans`] and then runs this
/// same CLI, so exit paths are tested through the code the product runs.
static PLANS: std::sync::OnceLock<fn(&str) -> Option<CompiledScript>> = std::sync::OnceLock::new();

/// Installs the source of `--x-plan` scripts (once; later calls are ignored).
pub fn set_plans(plans: fn(&str) -> Option<CompiledScript>) {
    let _ = PLANS.set(plans);
}

/// `--x-plan NAME`: a hand-built script from the plans [`set_plans`] installed.
pub fn run_canned(a: &TraceArgs, name: &str) -> i32 {
    match PLANS.get().and_then(|plans| plans(name)) {
        Some(script) => run_script(a, &script),
        None => {
            eprintln!("strobe: unknown built-in plan '{name}'");
            EXIT_INPUT
        }
    }
}

/// A program load refused while `log_size` was set, in bpftrace's words: `Error loading BPF
/// program for NAME. Error code: -28 (…).`, then with `-v` the verifier log and, when the log
/// did not fit its buffer, a warning naming the setting to raise. `None` without `log_size`
/// (strobe's own report then says more).
pub fn sized_log_failure(
    script: &CompiledScript,
    probe: &str,
    load: &crate::sys::LoadError,
    log_size: Option<u32>,
    verbose: bool,
) -> Option<String> {
    let size = log_size?;
    let errno = load.errno();
    let index = script.probes.iter().position(|p| p.name == probe)?;
    let kind = probe
        .split(':')
        .next()
        .unwrap_or(probe)
        .to_ascii_lowercase();
    let mut msg = format!(
        "ERROR: Error loading BPF program for {kind}_{}. Error code: -{} ({}).",
        index + 1,
        errno.0,
        errno.meaning()
    );
    if !verbose {
        msg.push_str(" Use -v for full kernel error log.");
        return Some(msg);
    }
    msg.push_str(&format!("\nKernel error log: \n{}\n", load.log));
    if load.log_truncated {
        msg.push_str(&format!(
            "WARNING: Kernel log seems to be trimmed. The verifier log did not fit its buffer \
             of {size} bytes: raise STROBE_LOG_SIZE (or BPFTRACE_LOG_SIZE), or set \
             `config = {{ log_size = N }}` in the script."
        ));
    }
    Some(msg)
}
