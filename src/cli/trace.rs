//! The default, bpftrace-compatible mode: `strobe [options] -e PROGRAM [ARGS…]` or
//! `strobe [options] FILE [ARGS…]` (`-` reads the script from stdin).
//!
//! Input: the arguments after the program name. Output: diagnostics on stderr, `-d ast` trees
//! on stdout, and an exit code from [`crate::cli`].
//! `--dry-run` parses, checks (types, BTF, tracefs; [`crate::sema`]) and compiles the script,
//! attaching nothing, and exits;
//! `-l [PATTERN]` / `-lv` list probes ([`crate::sema::list`]); `-d asm` prints the compiled
//! templates. Otherwise the checked script is lowered ([`crate::compile`]) and run:
//! `trace_run.rs` turns these flags into `runtime::driver::RunOptions`.

use std::ffi::OsString;
use std::io::Read;

use clap::Parser as ClapParser;

use super::{EXIT_INPUT, EXIT_OK, EXIT_USAGE};
use crate::diag::{render_all, SourceFile};

#[derive(ClapParser, Debug)]
#[command(
    name = "strobe",
    version,
    about = "Trace the kernel and processes with bpftrace scripts (no LLVM needed)",
    override_usage = "strobe [OPTIONS] FILE [ARGS]...\n       strobe [OPTIONS] -e PROGRAM [ARGS]...\n       strobe <SUBCOMMAND> [ARGS]...",
    after_help = AFTER_HELP,
    // bpftrace's heading, which scripts and tests look for.
    help_template = "{about}\n\nUSAGE:\n    {usage}\n\n{all-args}{after-help}"
)]
pub struct TraceArgs {
    /// The program text to run (the last `-e` wins, as in bpftrace).
    #[arg(short = 'e', value_name = "PROGRAM", overrides_with = "program")]
    pub program: Option<String>,

    /// Print a debug stage's output; `ast` prints the parsed tree.
    #[arg(short = 'd', long = "debug", value_name = "STAGE")]
    pub debug: Vec<String>,

    /// Parse, check and compile the script without loading or attaching anything.
    #[arg(long = "dry-run")]
    pub dry_run: bool,

    /// Run this command and trace it; exit when it exits.
    #[arg(short = 'c', long = "cmd", value_name = "CMD")]
    pub cmd: Option<String>,

    /// Enable USDT probes of, and filter by, this process id.
    #[arg(short = 'p', long = "pid", value_name = "PID")]
    pub pid_text: Option<String>,

    /// Write a standalone executable that runs this script to FILE (bpftrace's `--aot`),
    /// instead of running it.
    #[arg(long = "aot", value_name = "FILE")]
    pub aot: Option<String>,

    /// Whether the command line had a `--` (set from the arguments, not a flag).
    #[arg(skip)]
    pub had_dashes: bool,

    /// `-p`'s value once checked by [`parse_pid`].
    #[arg(skip)]
    pub pid: Option<u32>,

    /// Output format: text or json.
    #[arg(short = 'f', value_name = "FORMAT")]
    pub format: Option<String>,

    /// Write output to this file instead of stdout.
    #[arg(short = 'o', long = "output", value_name = "FILE")]
    pub output: Option<String>,

    /// Keep messages quiet.
    #[arg(short = 'q', long = "quiet")]
    pub quiet: bool,

    /// Verbose messages.
    #[arg(short = 'v', long = "verbose")]
    pub verbose: bool,

    /// Print no warnings (the checker's or `warnf()`'s).
    #[arg(long = "no-warnings")]
    pub no_warnings: bool,

    /// Warn at run time when a probe read fails or a map lookup finds no element (the
    /// generated code checks each helper's result and reports its error and script location).
    #[arg(short = 'k', long = "warnings", action = clap::ArgAction::Count)]
    pub helper_warnings: u8,

    /// Do not use these kernel features even where the kernel has them (comma-separated:
    /// kprobe_multi, uprobe_multi, kprobe_session; repeatable).
    #[arg(long = "no-feature", value_name = "FEATURES")]
    pub no_feature: Vec<String>,

    /// Read the traceable kernel functions (kprobe targets) from FILE, in the format of
    /// tracefs' available_filter_functions, instead of from tracefs.
    #[arg(long = "traceable-functions", value_name = "FILE")]
    pub traceable_functions: Option<std::path::PathBuf>,

    /// Print the kernel's and strobe's features (as `strobe info`), with `--no-feature`'s
    /// shown as off.
    #[arg(long = "info", hide = true)]
    pub info: bool,

    /// Accepted for bpftrace's compatibility: kernel BTF is always used when present.
    #[arg(short = 'b', long = "btf", hide = true)]
    pub btf: bool,

    /// Accepted for bpftrace's compatibility: strobe generates no LLVM IR to verify.
    #[arg(long = "verify-llvm-ir", hide = true)]
    pub verify_llvm_ir: bool,

    /// bpftrace options strobe refuses, with the reason ([`super::flags`]).
    #[arg(long = "fmt", hide = true)]
    pub fmt: bool,
    #[arg(long = "emit-elf", value_name = "FILE", hide = true)]
    pub emit_elf: Option<String>,
    #[arg(long = "emit-llvm", value_name = "FILE", hide = true)]
    pub emit_llvm: Option<String>,
    #[arg(long = "dwarf-pid", value_name = "PID", hide = true)]
    pub dwarf_pid: Option<String>,

    /// List probes matching PATTERN (all when omitted); with -v, show their arguments.
    #[arg(short = 'l', long = "list")]
    pub list: bool,

    /// Attach and run only the probes whose name (`interval:ms:200`) matches REGEX; BEGIN
    /// and END always run.
    #[arg(long = "probe-filter", value_name = "REGEX")]
    pub probe_filter: Option<String>,

    /// Activate USDT semaphores in every process that runs the probe's file (strobe always
    /// does: the kernel counts the semaphore through the uprobe's ref_ctr_offset).
    #[arg(long = "usdt-file-activation")]
    pub usdt_file_activation: bool,

    /// How fentry/fexit probes attach: auto (kprobe_multi links from 32 targets on, where the
    /// kernel has them; fexit reading `args` through kprobe.session programs, 6.10+),
    /// kprobe_multi (whenever possible) or trampoline (one per function).
    #[arg(long = "fentry-via", value_name = "MODE")]
    pub fentry_via: Option<String>,

    /// Allow unsafe builtins (system, address probes).
    #[arg(long = "unsafe")]
    pub unsafe_mode: bool,

    /// Also look for separate debug files (uprobe DWARF) in this directory (repeatable).
    #[arg(long = "debuginfo", value_name = "DIR")]
    pub debuginfo: Vec<std::path::PathBuf>,

    /// Add DIR to the search path for C headers (repeatable).
    #[arg(short = 'I', long = "include-dir", value_name = "DIR")]
    pub include_dirs: Vec<std::path::PathBuf>,

    /// Include the C header FILE before the program, as `#include "FILE"` at its top would
    /// (repeatable, in order).
    #[arg(long = "include", value_name = "FILE")]
    pub includes: Vec<String>,

    /// Output buffering: line (default), full or none.
    #[arg(short = 'B', value_name = "MODE")]
    pub buffering: Option<String>,

    /// Serve the script's maps to Prometheus at ADDR (HOST:PORT or PORT; default
    /// 127.0.0.1:9435): GET /metrics reads them at scrape time. Runs until stopped; END still
    /// runs, the map dump at exit is left out. See docs/prometheus.md.
    #[arg(
        long = "serve",
        value_name = "ADDR",
        num_args = 0..=1,
        default_missing_value = crate::runtime::serve::DEFAULT_ADDR
    )]
    pub serve: Option<String>,

    /// With --serve: label names for a map's key fields, `@MAP=NAME[,NAME…]` (repeatable;
    /// default key0, key1, …).
    #[arg(long = "serve-labels", value_name = "@MAP=NAMES")]
    pub serve_labels: Vec<String>,

    /// Run the script's `test:` probes (each once, reporting pass or fail) instead of
    /// attaching its probes; same as `--mode test`.
    #[arg(long = "test")]
    pub test: bool,

    /// Run the script's `bench:` probes (each many times, reporting the average time)
    /// instead of attaching its probes; same as `--mode bench`.
    #[arg(long = "bench")]
    pub bench: bool,

    /// Run mode: `test` (as --test) or `bench` (as --bench).
    #[arg(long = "mode", value_name = "MODE")]
    pub mode: Option<String>,

    /// Run a hand-built script from the plans a test binary installed
    /// (`trace_run::set_plans`; the product has none).
    #[arg(long = "x-plan", value_name = "NAME", hide = true)]
    pub x_plan: Option<String>,

    /// The script file (unless -e is given) followed by the script's positional arguments.
    #[arg(
        value_name = "FILE/ARGS",
        trailing_var_arg = true,
        allow_hyphen_values = true
    )]
    pub rest: Vec<String>,
}

/// A script and its positional arguments, as named on the command line.
pub struct ScriptInput {
    pub source: SourceFile,
    pub params: Vec<String>,
    /// `--name[=value]` after `--` (`getopt`).
    pub named: Vec<(String, Option<String>)>,
}

/// Splits the arguments after the script: positional ones anywhere, named options
/// (`--name`, `--name=value`) only after a `--`, as bpftrace takes them.
/// `after_dashes`: the command line's `--` came before `args` (the parser drops a `--` that
/// precedes every free argument).
/// A `--name` before the `--` is a flag strobe does not know (bpftrace's option parser sees it
/// there too): the error names it, and the caller shows the usage.
fn split_params(args: &[String], mut after_dashes: bool) -> Result<SplitParams, String> {
    let mut positional = Vec::new();
    let mut named = Vec::new();
    for a in args {
        if a == "--" && !after_dashes {
            after_dashes = true;
        } else if let Some(opt) = a.strip_prefix("--").filter(|_| after_dashes) {
            match opt.split_once('=') {
                Some((n, v)) => named.push((n.to_string(), Some(v.to_string()))),
                None => named.push((opt.to_string(), None)),
            }
        } else if a.starts_with("--") {
            return Err(format!("ERROR: unknown option '{a}'"));
        } else {
            positional.push(a.clone());
        }
    }
    Ok((positional, named))
}

/// Positional parameters and named options (`--name[=value]`) of a script.
type SplitParams = (Vec<String>, Vec<(String, Option<String>)>);

impl TraceArgs {
    /// `--serve FILE`: the parser took the script file for the address (`--serve`'s value is
    /// optional); give it back and serve on the default address.
    fn fix_serve_value(&mut self) {
        if let Some(v) = &self.serve {
            if !crate::runtime::serve::looks_like_addr(v) {
                self.rest.insert(0, v.clone());
                self.serve = Some(crate::runtime::serve::DEFAULT_ADDR.to_string());
            }
        }
    }

    /// Whether the command line had a `--` that is not among the free arguments: the argument
    /// parser consumed it, so it came before all of them.
    fn dashes_dropped(&self) -> bool {
        self.had_dashes && !self.rest.iter().any(|a| a == "--")
    }

    /// Loads the script text (from -e, a file, or stdin for `-`).
    pub fn load(&self) -> Result<ScriptInput, String> {
        if self.program.as_deref() == Some("") {
            // bpftrace's words for `-e ''`, as for no program at all.
            return Err(
                "USAGE: filename or -e 'program' required (the -e program is empty)".into(),
            );
        }
        if let Some(p) = &self.program {
            let (params, named) = split_params(&self.rest, self.dashes_dropped())?;
            return Ok(ScriptInput {
                source: SourceFile::new("stdin", p.clone()),
                params,
                named,
            });
        }
        let Some((file, params)) = self.rest.split_first() else {
            return Err("no program given: use -e 'PROGRAM' or a script FILE".into());
        };
        let bytes = if file == "-" {
            read_script(std::io::stdin().lock(), "stdin")?
        } else {
            let f = std::fs::File::open(file).map_err(|e| {
                format!(
                    "ERROR: failed to open file '{file}': {}",
                    crate::sys::Errno(e.raw_os_error().unwrap_or(libc::EIO)).meaning()
                )
            })?;
            read_script(f, &format!("'{file}'"))?
        };
        let text = String::from_utf8(bytes).map_err(|e| {
            format!(
                "'{file}' is not UTF-8 text (byte {})",
                e.utf8_error().valid_up_to()
            )
        })?;
        let (params, named) = split_params(params, self.dashes_dropped())?;
        Ok(ScriptInput {
            source: SourceFile::new(file.clone(), text),
            params,
            named,
        })
    }
}

/// `-p`'s value as bpftrace checks it: a decimal number with nothing after it, no larger than
/// the kernel's `pid_max`.
pub fn parse_pid(text: &str) -> Result<u32, String> {
    let digits = text.bytes().take_while(u8::is_ascii_digit).count();
    if digits == 0 {
        return Err(format!("Failed to parse pid: invalid integer: {text}"));
    }
    if digits < text.len() {
        return Err(format!(
            "Failed to parse pid: invalid trailing bytes: {text}"
        ));
    }
    let pid_max: u64 = std::fs::read_to_string("/proc/sys/kernel/pid_max")
        .ok()
        .and_then(|s| s.trim().parse().ok())
        .unwrap_or(4 << 20);
    match text.parse::<u64>() {
        Ok(p) if p <= pid_max && p <= i32::MAX as u64 => Ok(p as u32),
        _ => Err(format!("Pid out of range: {text}")),
    }
}

/// The largest script strobe reads: far beyond any real script, and a bound for a file that
/// never ends (`/dev/zero`, a pipe).
pub const MAX_SCRIPT_BYTES: u64 = 16 << 20;

/// Reads a whole script from `r`, refusing one past [`MAX_SCRIPT_BYTES`].
fn read_script(r: impl Read, what: &str) -> Result<Vec<u8>, String> {
    let mut bytes = Vec::new();
    r.take(MAX_SCRIPT_BYTES + 1)
        .read_to_end(&mut bytes)
        .map_err(|e| format!("cannot read the script from {what}: {e}"))?;
    if bytes.len() as u64 > MAX_SCRIPT_BYTES {
        return Err(format!(
            "the script in {what} is larger than {} MiB",
            MAX_SCRIPT_BYTES >> 20
        ));
    }
    Ok(bytes)
}

/// `-l [PATTERN]`, `-lv`: the pattern is the first free argument (or `-e`'s text).
fn list(opts: &TraceArgs, kernel: crate::kernel::info::HostKernel) -> i32 {
    // `-l -e PROGRAM`: the free arguments are all options; else the first is the pattern.
    let skip = usize::from(opts.program.is_none());
    let pattern = match &opts.program {
        Some(p) => Some(p.as_str()),
        None => opts.rest.first().map(String::as_str),
    };
    // `-l PATTERN -p PID` (bpftrace's options may follow the pattern): the arguments after a
    // listing pattern are no script's parameters.
    let mut pid = opts.pid;
    let mut after = opts.rest.iter().skip(skip);
    while let Some(a) = after.next() {
        let value = match a.strip_prefix("--pid").or_else(|| a.strip_prefix("-p")) {
            Some("") => after.next().map(String::as_str),
            Some(v) => Some(v.strip_prefix('=').unwrap_or(v)),
            None => None,
        };
        if let Some(v) = value {
            match v
                .parse::<u32>()
                .map_err(|_| format!("invalid pid '{v}'"))
                .and_then(|p| {
                    super::trace_run::check_pid(p)?;
                    Ok(p)
                }) {
                Ok(p) => pid = Some(p),
                Err(msg) => {
                    eprintln!("strobe: {msg}");
                    return EXIT_USAGE;
                }
            }
        }
    }
    let kernel = if pid == opts.pid {
        kernel
    } else {
        match host_kernel(pid, opts) {
            Ok(k) => k,
            Err(msg) => {
                eprintln!("ERROR: {msg}");
                return EXIT_USAGE;
            }
        }
    };
    // `-l -e PROGRAM` (or a program file): the probes each attach point matches.
    let patterns: Vec<Option<String>> = match program_attach_points(opts, pattern) {
        Ok(Some(aps)) => aps.into_iter().map(Some).collect(),
        Ok(None) => vec![pattern.map(str::to_string)],
        Err(code) => return code,
    };
    let mut text = String::new();
    for pattern in &patterns {
        match crate::sema::list::list_probes_reporting(pattern.as_deref(), opts.verbose, &kernel) {
            Ok(listing) => {
                for p in &listing.problems {
                    eprintln!("strobe: warning: {p}");
                }
                for l in listing.lines {
                    text.push_str(&l);
                    text.push('\n');
                }
            }
            Err(e) => return list_error(e),
        }
    }
    super::print_stdout(text)
}

/// The attach points of `-l`'s program (`-e PROGRAM`, or a script file named instead of a
/// pattern), `None` when `-l` was given a pattern. A program that does not parse is reported
/// as when running it.
fn program_attach_points(
    opts: &TraceArgs,
    pattern: Option<&str>,
) -> Result<Option<Vec<String>>, i32> {
    let text = match (&opts.program, pattern) {
        (Some(p), _) if p.contains('{') => p.clone(),
        (None, Some(f)) if f.ends_with(".bt") && std::path::Path::new(f).is_file() => {
            match std::fs::read_to_string(f) {
                Ok(t) => t,
                Err(e) => {
                    eprintln!("strobe: cannot read '{f}': {e}");
                    return Err(EXIT_USAGE);
                }
            }
        }
        _ => return Ok(None),
    };
    let src = crate::diag::SourceFile::new("stdin", text);
    match crate::syntax::parse_ok(&src) {
        Ok(prog) => Ok(Some(
            prog.probes()
                .flat_map(|p| &p.attach_points)
                .filter(|ap| ap.raw.contains(':'))
                .map(|ap| ap.raw.trim_matches('"').to_string())
                .collect(),
        )),
        Err(diags) => {
            for d in diags {
                eprint!("{}", d.render(&src));
            }
            Err(EXIT_INPUT)
        }
    }
}

fn list_error(e: crate::sema::list::ListError) -> i32 {
    match e {
        e @ crate::sema::list::ListError::Unavailable(_) => {
            eprintln!("strobe: {e}");
            super::EXIT_KERNEL
        }
        e => {
            eprintln!("strobe: {e}");
            EXIT_USAGE
        }
    }
}

/// Runs the default mode on a thread with a large stack: the passes over the syntax tree are
/// recursive, and the parser bounds the tree's depth, not each pass's frame sizes.
pub fn run(args: &[OsString]) -> i32 {
    let args = args.to_vec();
    // Signals a running script reads from its signalfd must be blocked in every thread, so
    // block them here before the worker thread exists (it inherits the mask).
    let _ = crate::runtime::signals::block();
    // SIGUSR1 runs `self:signal:SIGUSR1` probes and is otherwise harmless, as in bpftrace:
    // `block` above keeps it blocked in every thread for the signalfd, and its disposition
    // must not be an inherited SIG_IGN, which discards it even while blocked.
    // SAFETY: setting a standard disposition.
    unsafe { libc::signal(libc::SIGUSR1, libc::SIG_DFL) };
    // A shell starts a background command (`strobe … &` in a script) with SIGINT ignored; an
    // ignored signal that arrives while the load phase or the parser has it unblocked is
    // discarded, so that Ctrl-C/`kill -INT` was lost and the run went on. strobe reads these
    // signals itself (signalfd) and acts on them at once while loading, as bpftrace's handler
    // does whatever it inherited.
    // SAFETY: setting standard dispositions.
    unsafe {
        libc::signal(libc::SIGINT, libc::SIG_DFL);
        libc::signal(libc::SIGTERM, libc::SIG_DFL);
    }
    // The run has a worker thread with a large stack; the main thread meanwhile runs BEGIN
    // and END (`runtime::main_thread`), so their `tid`, `comm` and `curtask` are the main
    // task's, as bpftrace's are.
    crate::runtime::main_thread::serve_while(64 << 20, move || run_on_this_thread(&args))
        .unwrap_or(EXIT_INPUT)
}

/// `--debuginfo DIR` after the script or listing pattern: bpftrace's getopt takes options
/// anywhere before a `--`, while the free arguments swallow everything after the first one.
fn take_debuginfo(opts: &mut TraceArgs) {
    let mut rest = Vec::with_capacity(opts.rest.len());
    let mut it = std::mem::take(&mut opts.rest).into_iter();
    while let Some(a) = it.next() {
        if a == "--" {
            rest.push(a);
            rest.extend(it.by_ref());
            break;
        }
        if let Some(d) = a.strip_prefix("--debuginfo=") {
            opts.debuginfo.push(d.into());
        } else if a == "--debuginfo" {
            match it.next() {
                Some(d) => opts.debuginfo.push(d.into()),
                None => rest.push(a),
            }
        } else {
            rest.push(a);
        }
    }
    opts.rest = rest;
}

/// `-IDIR` as `-I DIR` (bpftrace and C compilers take both), for the options before the
/// script; the script's own arguments are left alone.
fn split_attached_include_dir(args: &[OsString]) -> Vec<OsString> {
    const VALUED_SHORT: &[&str] = &["-e", "-d", "-c", "-p", "-f", "-o", "-B", "-I"];
    const VALUED_LONG: &[&str] = &[
        "--include",
        "--include-dir",
        "--debuginfo",
        "--serve-labels",
        "--no-feature",
        "--traceable-functions",
        "--emit-elf",
        "--emit-llvm",
        "--dwarf-pid",
    ];
    let mut out = Vec::with_capacity(args.len());
    let mut value_next = false;
    let mut it = args.iter();
    while let Some(a) = it.next() {
        let s = a.to_str().unwrap_or("");
        if value_next {
            value_next = false;
        } else if s == "--" || !s.starts_with('-') || s == "-" {
            out.push(a.clone());
            out.extend(it.cloned());
            break;
        } else if let Some(dir) = s.strip_prefix("-I").filter(|d| !d.is_empty()) {
            out.push("-I".into());
            out.push(dir.into());
            continue;
        } else {
            value_next = VALUED_SHORT.contains(&s) || VALUED_LONG.contains(&s);
        }
        out.push(a.clone());
    }
    out
}

/// The arguments with strobe's own options that follow the script file moved before it, as
/// bpftrace's getopt permutes them (`bpftrace script.bt -c CMD` runs CMD). Only options
/// strobe knows move (with their value when they take one); everything else after the file
/// stays a positional parameter, and nothing after `--` moves. With `-e` the same holds for
/// options after the first parameter (`strobe -e PROG 5 -o FILE`).
fn permute_options(args: &[OsString]) -> Vec<OsString> {
    let mut cmd = <TraceArgs as clap::CommandFactory>::command();
    cmd.build();
    // For a known option token: whether it takes a value in the next argument.
    let option = |a: &str| -> Option<bool> {
        let takes = |arg: &clap::Arg| {
            arg.get_num_args().map_or(true, |n| n.takes_values())
                && !matches!(
                    arg.get_action(),
                    clap::ArgAction::SetTrue
                        | clap::ArgAction::Count
                        | clap::ArgAction::Help
                        | clap::ArgAction::Version
                )
        };
        if let Some(long) = a.strip_prefix("--") {
            let (name, inline) = match long.split_once('=') {
                Some((n, _)) => (n, true),
                None => (long, false),
            };
            let arg = cmd.get_arguments().find(|x| x.get_long() == Some(name))?;
            return Some(
                takes(arg) && !inline && arg.get_num_args().map_or(true, |n| n.min_values() > 0),
            );
        }
        let mut chars = a.strip_prefix('-')?.chars();
        let c = chars.next()?;
        let arg = cmd.get_arguments().find(|x| x.get_short() == Some(c))?;
        Some(takes(arg) && chars.as_str().is_empty())
    };
    let text: Vec<Option<&str>> = args.iter().map(|a| a.to_str()).collect();
    // The script file: the first argument that is neither an option nor an option's value.
    let mut i = 0;
    let mut file = None;
    while i < args.len() {
        let Some(a) = text[i] else { break };
        if a == "--" {
            break;
        }
        match option(a) {
            Some(true) => i += 2,
            Some(false) => i += 1,
            None if a.starts_with('-') && a.len() > 1 => i += 1,
            None => {
                file = Some(i);
                break;
            }
        }
    }
    let Some(file) = file else {
        return args.to_vec();
    };
    let (mut moved, mut kept) = (Vec::new(), Vec::new());
    let mut j = file + 1;
    while j < args.len() {
        match text[j] {
            Some("--") => {
                kept.extend(args[j..].iter().cloned());
                break;
            }
            Some(a) if option(a).is_some() => {
                let n = if option(a) == Some(true) { 2 } else { 1 };
                moved.extend(args[j..(j + n).min(args.len())].iter().cloned());
                j += n;
            }
            _ => {
                kept.push(args[j].clone());
                j += 1;
            }
        }
    }
    let mut out: Vec<OsString> = args[..file].to_vec();
    out.extend(moved);
    out.push(args[file].clone());
    out.extend(kept);
    out
}

/// `--probe-filter REGEX`: keeps the attach points whose name (`interval:ms:200`, the probe
/// type's full name and the rest as written) matches, drops probes left with none, and keeps
/// BEGIN and END whatever they are named. An invalid regex or a filter that leaves no other
/// probe is an error, as in bpftrace.
fn filter_probes(program: &mut crate::syntax::ast::Program, filter: &str) -> Result<(), i32> {
    use crate::syntax::ast::{Item, ProbeKind};
    // BEGIN and END whatever they are named.
    let re = regex_lite::Regex::new(filter).map_err(|e| {
        eprintln!("ERROR: Invalid --probe-filter regex '{filter}': {e}");
        EXIT_USAGE
    })?;
    let special = |k: ProbeKind| k.info().facts.whole_run;
    let (mut seen, mut others) = (0, 0);
    program.items.retain_mut(|item| {
        let Item::Probe(p) = item else {
            return true;
        };
        p.attach_points.retain(|ap| {
            if special(ap.kind) {
                return true;
            }
            seen += 1;
            let rest = ap.raw.strip_prefix(ap.provider.as_str()).unwrap_or(&ap.raw);
            let keep = re.is_match(&format!("{}{rest}", ap.kind.name()));
            others += usize::from(keep);
            keep
        });
        !p.attach_points.is_empty()
    });
    if seen > 0 && others == 0 {
        eprintln!("ERROR: No probes to attach");
        return Err(EXIT_INPUT);
    }
    Ok(())
}

fn run_on_this_thread(args: &[OsString]) -> i32 {
    crate::timings::mark_start();
    // The main thread blocks the runtime's signals (see `run`); until this thread runs a
    // script, Ctrl-C keeps its default meaning here.
    super::trace_run::unblock_signals();
    let fixed = split_attached_include_dir(&permute_options(args));
    let argv = std::iter::once(OsString::from("strobe")).chain(fixed);
    let mut opts = match TraceArgs::try_parse_from(argv) {
        Ok(o) => o,
        Err(e) => {
            let code = if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
            let _ = e.print();
            if e.kind() == clap::error::ErrorKind::UnknownArgument {
                // bpftrace answers an unknown flag with its usage text.
                let _ = <TraceArgs as clap::CommandFactory>::command()
                    .write_help(&mut std::io::stderr());
            }
            return code;
        }
    };
    opts.had_dashes = args.iter().any(|a| a == "--");
    opts.fix_serve_value();
    let disabled = match super::flags::check(&opts) {
        Ok(d) => d,
        Err(msg) => {
            eprintln!("{msg}");
            return EXIT_USAGE;
        }
    };
    if opts.info {
        return super::info::print(false, disabled);
    }
    if let Some(text) = &opts.pid_text {
        match parse_pid(text) {
            Ok(pid) => opts.pid = Some(pid),
            Err(msg) => {
                eprintln!("ERROR: {msg}");
                return EXIT_USAGE;
            }
        }
    }
    if let Some(pid) = opts.pid {
        if let Err(msg) = super::trace_run::check_pid(pid) {
            eprintln!("strobe: {msg}");
            return EXIT_USAGE;
        }
    }
    let kernel = match host_kernel(opts.pid, &opts) {
        Ok(k) => k,
        Err(msg) => {
            eprintln!("ERROR: {msg}");
            return EXIT_USAGE;
        }
    };
    take_debuginfo(&mut opts);
    crate::dwarf::set_search_dirs(opts.debuginfo.clone());
    if opts.list {
        return list(&opts, kernel);
    }
    if opts.verbose {
        crate::timings::enable();
    }
    crate::timings::enable_from_env();
    for stage in &opts.debug {
        if stage != "ast" && stage != "all" && stage != "asm" {
            eprintln!("strobe: unknown debug stage '{stage}' (known: ast, asm, all)");
            return EXIT_USAGE;
        }
    }
    if let Some(plan) = &opts.x_plan {
        return super::trace_run::run_canned(&opts, plan);
    }
    if let (None, Some(flag)) = (&opts.program, opts.rest.first()) {
        if flag.starts_with('-') && flag != "-" && flag != "--" {
            // An option strobe does not know, not a script file: bpftrace shows its usage.
            eprintln!("ERROR: unknown option '{flag}'");
            let _ =
                <TraceArgs as clap::CommandFactory>::command().write_help(&mut std::io::stderr());
            return EXIT_USAGE;
        }
    }
    let input = match opts.load() {
        Ok(i) => i,
        // bpftrace's own words are printed as they are, strobe's own under its name.
        Err(msg) if msg.starts_with("ERROR: unknown option") => {
            eprintln!("{msg}");
            let _ =
                <TraceArgs as clap::CommandFactory>::command().write_help(&mut std::io::stderr());
            return EXIT_USAGE;
        }
        Err(msg) if msg.starts_with("ERROR: ") => {
            eprintln!("{msg}");
            return EXIT_USAGE;
        }
        Err(msg) => {
            eprintln!("strobe: {msg}");
            return EXIT_USAGE;
        }
    };
    let cpp = crate::syntax::cpp::CppOptions {
        include_dirs: opts.include_dirs.clone(),
        includes: opts.includes.clone(),
        ..Default::default()
    };
    let parsed = crate::timings::time("parse", || {
        crate::syntax::parse_with_params(&input.source, &cpp, &input.params)
    });
    if !parsed.diagnostics.is_empty() {
        eprint!("{}", render_all(&parsed.diagnostics, &input.source));
    }
    let wants = |stage: &str| opts.debug.iter().any(|s| s == stage || s == "all");
    if wants("ast") {
        let tree = crate::syntax::print::print_program(&parsed.program, &input.source);
        if let Err(code) = super::write_stdout(tree) {
            return code;
        }
    }
    if parsed.has_errors() {
        return EXIT_INPUT;
    }
    // Imported scripts are appended to the text (spans of the script itself are unchanged).
    let base = std::path::Path::new(&input.source.name)
        .parent()
        .map(|p| p.to_path_buf())
        .unwrap_or_default();
    let combined = match crate::sema::imports::inline_imports(&input.source, &parsed.program, &base)
    {
        Ok(c) => c,
        Err(d) => {
            eprint!("{}", d.render(&input.source));
            return EXIT_INPUT;
        }
    };
    let parsed = if combined.text.len() == input.source.text.len() {
        parsed
    } else {
        let p = crate::syntax::parse_with_params(&combined, &cpp, &input.params);
        if p.has_errors() {
            eprint!("{}", render_all(&p.diagnostics, &combined));
            return EXIT_INPUT;
        }
        p
    };
    // strobe's stdlib is appended (and the whole parsed again) only for a script that calls it.
    let (combined, mut parsed) =
        match crate::builtins::stdlib::link(&combined, &parsed.program, |s| {
            crate::syntax::parse_with_params(s, &cpp, &input.params)
        }) {
            Some((all, p, start)) => {
                if p.has_errors() {
                    eprint!("{}", render_all(&p.diagnostics, &all));
                    return EXIT_INPUT;
                }
                let mut p = p;
                p.program.split_stdlib(start);
                (all, p)
            }
            None => (combined, parsed),
        };
    if let Some(filter) = &opts.probe_filter {
        if let Err(code) = filter_probes(&mut parsed.program, filter) {
            return code;
        }
    }
    let check_opts = crate::sema::CheckOptions {
        params: input.params.clone(),
        named_params: input.named.clone(),
        unsafe_mode: opts.unsafe_mode,
        pid_filter: opts.pid.is_some() || opts.cmd.is_some(),
        child_command: opts.cmd.is_some(),
        helper_warnings: opts.helper_warnings > 0,
        ..crate::sema::CheckOptions::from_env()
    };
    let checked = crate::timings::time("check", || {
        crate::sema::check(&parsed.program, &kernel, &check_opts)
    });
    let shown: Vec<_> = checked
        .diagnostics
        .iter()
        .filter(|d| d.is_error() || !opts.no_warnings)
        .cloned()
        .collect();
    if !shown.is_empty() {
        eprint!("{}", render_all(&shown, &combined));
    }
    if checked.has_errors() {
        return EXIT_INPUT;
    }
    let Some(program) = checked.program else {
        return EXIT_INPUT;
    };
    if input.named.iter().any(|(n, _)| n == "help") {
        // bpftrace lists the options as a hint and fails: the script does not run.
        let help = crate::sema::getopt::describe(&program.options);
        eprintln!("HINT: {help}");
        return EXIT_INPUT;
    }
    if wants("asm") {
        return match crate::compile::lower_checked(&program, &check_opts) {
            Ok(script) => {
                super::print_stdout(crate::codegen::lower::listing::listing(&script, &combined))
            }
            Err(d) => {
                eprint!("{}", d.render(&combined));
                EXIT_INPUT
            }
        };
    }
    if let Some(out) = &opts.aot {
        return write_aot(
            args,
            &opts,
            &input,
            out,
            || crate::compile::lower_checked(&program, &check_opts).map(|_| ()),
            &combined,
        );
    }
    if opts.dry_run {
        // A dry run goes as far as a run without touching the kernel: parse, check and lower.
        let lowered = crate::timings::time("lower", || {
            crate::compile::lower_checked(&program, &check_opts)
        });
        if crate::timings::enabled() {
            let t = crate::timings::since_start().as_secs_f64();
            let line = crate::timings::human(&crate::timings::phases());
            eprintln!("strobe: dry run {t:.3} s: {line}");
        }
        return match lowered {
            Ok(_) => EXIT_OK,
            Err(d) => {
                eprint!("{}", d.render(&combined));
                EXIT_INPUT
            }
        };
    }
    if !opts.debug.is_empty() {
        return EXIT_OK;
    }
    run_checked(&opts, disabled, &program, &check_opts, &combined)
}

/// The running kernel as the flags describe it: seen by `-p`'s process, with
/// `--traceable-functions`' list of kprobe targets.
fn host_kernel(
    pid: Option<u32>,
    opts: &TraceArgs,
) -> Result<crate::kernel::info::HostKernel, String> {
    let kernel = crate::kernel::info::HostKernel::for_pid(pid);
    match &opts.traceable_functions {
        Some(path) => kernel.with_traceable_functions(path),
        None => Ok(kernel),
    }
}

/// `--aot FILE`: compiles the script (so that its errors show now) and writes the executable
/// that runs it, with the script's text in place of its file name.
fn write_aot(
    args: &[OsString],
    opts: &TraceArgs,
    input: &ScriptInput,
    out: &str,
    compile: impl FnOnce() -> Result<(), crate::diag::Diagnostic>,
    source: &SourceFile,
) -> i32 {
    if let Err(d) = compile() {
        eprint!("{}", d.render(source));
        return EXIT_INPUT;
    }
    let (mut stored, _) = super::aot::strip_aot_flag(args);
    if opts.program.is_none() {
        if let Some(i) = stored.iter().position(|a| *a == *input.source.name) {
            stored.splice(
                i..=i,
                [OsString::from("-e"), OsString::from(&input.source.text)],
            );
        }
    }
    match super::aot::write(out, &stored) {
        Ok(()) => EXIT_OK,
        Err(msg) => {
            eprintln!("ERROR: {msg}");
            EXIT_INPUT
        }
    }
}

/// Lowers a checked script and runs it (the compile stage order lives in [`crate::compile`]).
fn run_checked(
    opts: &TraceArgs,
    disabled: crate::runtime::probes::DisabledFeatures,
    program: &crate::sema::CheckedProgram,
    check_opts: &crate::sema::CheckOptions,
    source: &SourceFile,
) -> i32 {
    let lowered = crate::timings::time("lower", || {
        crate::compile::lower_checked(program, check_opts)
    });
    let mut script = match lowered {
        Ok(s) => s,
        Err(d) => {
            eprint!("{}", d.render(source));
            return EXIT_INPUT;
        }
    };
    script.events.locate(source);
    if script.probes.is_empty() {
        // bpftrace's words and status; a run with nothing attached would never end.
        if !opts.quiet {
            let _ = super::write_stdout("No probes to attach\n");
        }
        return EXIT_INPUT;
    }
    // As bpftrace (through libbpf): with -v every program loads with a verifier log of
    // `log_size` bytes from the start; without, a load asks for a log only once it failed,
    // and strobe's then grows to whatever the verifier writes.
    let log_size = program
        .log_size
        .filter(|_| opts.verbose)
        .map(|n| n.clamp(1, u32::MAX as u64 >> 2) as u32);
    let run_opts = match super::trace_run::run_options(opts) {
        Ok(o) => crate::runtime::driver::RunOptions {
            no_exit_maps: !config_flag(&program.program, "print_maps_on_exit"),
            no_debug_info: !config_flag(&program.program, "show_debug_info"),
            no_cpp_demangle: !config_flag(&program.program, "cpp_demangle"),
            no_warnings: opts.no_warnings,
            disabled,
            log_size,
            ..o
        },
        Err(msg) if msg.starts_with("ERROR: ") => {
            eprintln!("{msg}");
            return super::EXIT_USAGE;
        }
        Err(msg) => {
            eprintln!("strobe: {msg}");
            return super::EXIT_USAGE;
        }
    };
    let mut out: Box<dyn std::io::Write> = match &opts.output {
        Some(path) => match std::fs::File::create(path) {
            Ok(f) => Box::new(f),
            Err(e) => {
                eprintln!("strobe: cannot create '{path}': {e}");
                return super::EXIT_USAGE;
            }
        },
        None => Box::new(std::io::stdout().lock()),
    };
    match crate::runtime::driver::run(&script, &run_opts, &mut out) {
        Ok(o) => o.exit_code.unwrap_or(EXIT_OK),
        Err(e) if e.is_quiet() => super::run_exit_code(&e),
        Err(e) => {
            if let Some(msg) = e.refused_load().and_then(|(probe, load)| {
                super::trace_run::sized_log_failure(&script, probe, load, log_size, opts.verbose)
            }) {
                eprintln!("{msg}");
                return super::run_exit_code(&e);
            }
            let refusal = match &e {
                crate::runtime::driver::RunError::Probe(p) => p.bpftrace_message(),
                _ => None,
            };
            match e
                .refused_load()
                .and_then(|(probe, load)| crate::compile::verifier_diagnostic(&script, probe, load))
            {
                Some(d) => eprint!("{}", d.render(source)),
                None => match refusal {
                    Some(m) => eprintln!("ERROR: {m}"),
                    None => eprintln!("strobe: {e}"),
                },
            }
            if opts.verbose {
                if let crate::runtime::driver::RunError::Probe(p) = &e {
                    if let crate::runtime::probes::ProbeError::Load { source, .. } = p.as_ref() {
                        eprintln!("{}", source.log);
                    }
                }
            }
            super::run_exit_code(&e)
        }
    }
}

/// An on/off setting that is on by default (`print_maps_on_exit`, `show_debug_info`): the
/// environment (`STROBE_`/`BPFTRACE_NAME`) wins over the script's `config` block, as in
/// bpftrace.
fn config_flag(program: &crate::syntax::ast::Program, key: &str) -> bool {
    use crate::syntax::ast::ConfigValue;
    let truthy = |v: &str| !matches!(v.trim(), "0" | "false");
    let upper = key.to_ascii_uppercase();
    let env = [format!("STROBE_{upper}"), format!("BPFTRACE_{upper}")]
        .iter()
        .find_map(|n| std::env::var(n).ok());
    if let Some(v) = env {
        return truthy(&v);
    }
    let mut entries = program.config.iter().flat_map(|c| &c.entries);
    let setting = entries.rfind(|e| {
        e.key
            .name
            .trim_start_matches("BPFTRACE_")
            .eq_ignore_ascii_case(key)
    });
    match setting.map(|e| &e.value) {
        Some(ConfigValue::Int(n)) => *n != 0,
        Some(ConfigValue::Bool(b)) => *b,
        Some(ConfigValue::Str(s) | ConfigValue::Ident(s)) => truthy(s),
        None => true,
    }
}

const AFTER_HELP: &str = "\
Examples:
  strobe -e 'tracepoint:syscalls:sys_enter_openat { @[comm] = count(); }'
  strobe -c 'ls /tmp' -e 'tracepoint:syscalls:sys_enter_getpid { @ = count(); }'
  strobe -f json -o out.json script.bt
  strobe --serve=127.0.0.1:9435 script.bt   (Prometheus scrapes http://127.0.0.1:9435/metrics)

Exit codes:
  0  success (the script ran and ended by exit(), Ctrl-C, SIGTERM or -c's command exiting)
  1  script or input error
  2  usage error
  3  the kernel refused: load, attach or permission failure

Environment (STROBE_NAME, or bpftrace's BPFTRACE_NAME as an alias):
  MAX_STRLEN, MAX_MAP_KEYS, MAP_KEYS_MAX, STRLEN, NO_CPP_DEMANGLE, MAX_PROBES,
  LOG_SIZE (verifier log bytes each program loads with), PERF_RB_PAGES (ring buffer pages),
  ON_STACK_LIMIT (larger values go to per-CPU scratch memory), CACHE_USER_SYMBOLS,
  STACK_MODE, SHOW_DEBUG_INFO
  STROBE_SESSION_ENTRIES (strobe only): fexit calls reading `args` through kprobe.session
  that can be in flight at once (default 65536; a call beyond it is a lost event)

--dry-run parses, checks (types, maps, BTF and tracefs) and compiles the script without
loading or attaching anything.
-l [PATTERN] lists probes (e.g. -l 'fentry:vfs_*'), -lv with arguments.
-d asm prints each probe's compiled template (assembler with script lines and relocations).";

#[cfg(test)]
mod permute_tests {
    use super::permute_options;
    use std::ffi::OsString;

    fn p(args: &[&str]) -> Vec<String> {
        let a: Vec<OsString> = args.iter().map(OsString::from).collect();
        permute_options(&a)
            .into_iter()
            .map(|s| s.into_string().unwrap())
            .collect()
    }

    #[test]
    fn options_after_the_script_file_move_before_it() {
        assert_eq!(
            p(&["s.bt", "-c", "./prog", "1", "-q"]),
            ["-c", "./prog", "-q", "s.bt", "1"]
        );
        assert_eq!(
            p(&["-v", "s.bt", "--dry-run", "x"]),
            ["-v", "--dry-run", "s.bt", "x"]
        );
    }

    #[test]
    fn parameters_after_dashdash_or_with_e_stay() {
        assert_eq!(p(&["s.bt", "--", "-c", "x"]), ["s.bt", "--", "-c", "x"]);
        assert_eq!(
            p(&["-e", "BEGIN {}", "-c", "x"]),
            ["-e", "BEGIN {}", "-c", "x"]
        );
        assert_eq!(
            p(&["-e", "BEGIN {}", "7", "--output", "f"]),
            ["-e", "BEGIN {}", "--output", "f", "7"]
        );
        assert_eq!(p(&["s.bt", "-5", "abc"]), ["s.bt", "-5", "abc"]);
    }
}
