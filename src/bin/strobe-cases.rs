//! `strobe-cases`: runs declarative runtime test cases (bpftrace's runtime test format, see
//! `strobe::testkit::cases`) against a strobe binary. The VM harness runs it inside each guest
//! with `--machine STROBE-VMTEST`; host-side runtime tests can run it on tests/ directories.
//! It is a test tool, kept out of the `strobe` binary and its help.
//!
//! Exit codes: 0 no case failed, 1 some case failed, 2 usage error or unreadable case file.

use std::path::{Path, PathBuf};
use std::process::ExitCode;

use clap::Parser;
use strobe::testkit::cases::{parse_file, Case};
use strobe::testkit::kernels::KernelVersion;
use strobe::testkit::report::{self, Summary};
use strobe::testkit::runner::{run_case, RunOptions};

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

fn main() -> ExitCode {
    let args = Args::parse();
    let machine = args.machine.as_deref();
    let usage_error = |msg: String| {
        eprintln!("strobe-cases: {msg}");
        if let Some(p) = machine {
            println!("{p}-ERROR\t{}", msg.replace(['\t', '\n'], " "));
        }
        ExitCode::from(2)
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
                println!("{l}");
            }
        }
    }
    match machine {
        Some(p) => println!("{}", report::machine_result(p, &summary)),
        None => println!(
            "cases: {} passed, {} failed, {} skipped",
            summary.passed, summary.failed, summary.skipped
        ),
    }
    if summary.failed == 0 {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
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
