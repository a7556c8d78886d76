//! The `strobe-cases` command: runs declarative runtime test cases (bpftrace's runtime test
//! format, see [`crate::cases`]) against a strobe binary. The VM harness runs the binary inside
//! each guest with `--machine STROBE-VMTEST`; tests run [`run`] in-process on case directories.
//! It is a test tool, kept out of the `strobe` package (`cargo install` does not install it).
//!
//! Exit codes: 0 no case failed, 1 some case failed, 2 usage error or unreadable case file.

use std::ffi::OsString;
use std::io::Write;
use std::path::{Path, PathBuf};

use crate::cases::{parse_file, Case};
use crate::kernels::KernelVersion;
use crate::report::{self, Summary};
use crate::runner::{run_case, RunOptions};
use clap::Parser;

#[derive(Parser)]
#[command(version, about = "Run strobe's declarative runtime test cases")]
struct Args {
    /// Case files, or directories whose `*.case` files are run (sorted by name).
    #[arg(required = true)]
    paths: Vec<PathBuf>,
    /// The strobe binary to test [default: `strobe` beside this program].
    #[arg(long)]
    strobe: Option<PathBuf>,
    /// Kernel release that KERNELS filters are checked against [default: the running one].
    #[arg(long)]
    kernel: Option<String>,
    /// Multiply every case's timeout by this factor (slow emulated VMs).
    #[arg(long, default_value_t = 1.0)]
    timeout_scale: f64,
    /// Run only cases whose `suite.name` matches this regex.
    #[arg(long)]
    filter: Option<String>,
    /// Print machine-readable lines with this prefix (PREFIX-CASE, PREFIX-OUT, PREFIX-RESULT).
    #[arg(long, value_name = "PREFIX")]
    machine: Option<String>,
}

/// Runs `strobe-cases` with `args` (the program name first), writing what the binary prints
/// to `out` and `err`; returns the exit code.
pub fn run(
    args: impl IntoIterator<Item = OsString>,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    let args = match Args::try_parse_from(args) {
        Ok(a) => a,
        Err(e) => {
            let text = e.render().ansi().to_string();
            if e.use_stderr() {
                let _ = write!(err, "{text}");
            } else {
                let _ = write!(out, "{text}");
            }
            return u8::try_from(e.exit_code()).unwrap_or(2);
        }
    };
    let machine = args.machine.as_deref();
    let mut usage_error = |msg: String| {
        let _ = writeln!(err, "strobe-cases: {msg}");
        if let Some(p) = machine {
            let _ = writeln!(out, "{p}-ERROR\t{}", msg.replace(['\t', '\n'], " "));
        }
        2
    };

    let filter = match args
        .filter
        .as_deref()
        .map(regex_lite::Regex::new)
        .transpose()
    {
        Ok(f) => f,
        Err(e) => return usage_error(format!("bad --filter: {e}")),
    };
    let kernel = match &args.kernel {
        Some(k) => match KernelVersion::parse(k) {
            Some(v) => Some(v),
            None => return usage_error(format!("`{k}` is not a kernel release")),
        },
        None => KernelVersion::running(),
    };
    let strobe = args.strobe.clone().unwrap_or_else(default_strobe);

    let mut suites: Vec<(PathBuf, Vec<Case>)> = Vec::new();
    for file in match case_files(&args.paths) {
        Ok(f) => f,
        Err(e) => return usage_error(e),
    } {
        match parse_file(&file) {
            Ok(cases) => suites.push((file, cases)),
            Err(e) => return usage_error(format!("{}: {e}", file.display())),
        }
    }

    let opts = RunOptions {
        strobe,
        kernel,
        timeout_scale: args.timeout_scale,
    };
    let mut summary = Summary::default();
    for (file, cases) in &suites {
        let dir = file.parent().unwrap_or(Path::new("."));
        for case in cases {
            if filter.as_ref().is_some_and(|f| !f.is_match(&case.id())) {
                continue;
            }
            let r = run_case(case, dir, &opts);
            summary.add(&r.verdict);
            let lines = match machine {
                Some(p) => report::machine(p, &r),
                None => report::human(&r),
            };
            for l in lines {
                let _ = writeln!(out, "{l}");
            }
        }
    }
    match machine {
        Some(p) => writeln!(out, "{}", report::machine_result(p, &summary)),
        None => writeln!(
            out,
            "cases: {} passed, {} failed, {} skipped",
            summary.passed, summary.failed, summary.skipped
        ),
    }
    .ok();
    if summary.failed == 0 {
        0
    } else {
        1
    }
}

fn default_strobe() -> PathBuf {
    std::env::current_exe()
        .ok()
        .map(|p| p.with_file_name("strobe"))
        .filter(|p| p.exists())
        .unwrap_or_else(|| PathBuf::from("strobe"))
}

/// Expands directories into their `*.case` files, sorted; files are taken as given.
fn case_files(paths: &[PathBuf]) -> Result<Vec<PathBuf>, String> {
    let mut out = Vec::new();
    for p in paths {
        if !p.is_dir() {
            out.push(p.clone());
            continue;
        }
        let entries = std::fs::read_dir(p).map_err(|e| format!("{}: {e}", p.display()))?;
        let mut found: Vec<PathBuf> = entries
            .filter_map(|e| e.ok().map(|e| e.path()))
            .filter(|f| f.extension().is_some_and(|x| x == "case") && f.is_file())
            .collect();
        found.sort();
        out.extend(found);
    }
    Ok(out)
}
