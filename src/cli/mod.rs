//! Command-line dispatch. bpftrace's own flags (`-e`, `-l`, a script file) are the default
//! mode; toolkit subcommands (`asm`, `disasm`, `info`, …) are recognised by the first word.
//!
//! Exit codes: 0 success, 1 script or input error, 2 usage error, 3 kernel refused
//! (attach, load or permission failure).

use std::ffi::OsString;

pub mod aot;
pub mod asm;
pub mod disasm;
mod flags;
pub mod info;
pub mod load;
pub mod trace;
pub mod trace_run;
mod version;

pub const EXIT_OK: i32 = 0;
pub const EXIT_INPUT: i32 = 1;
pub const EXIT_USAGE: i32 = 2;
pub const EXIT_KERNEL: i32 = 3;
/// A write to a closed pipe (`strobe … | head -1`): the status a shell shows for a process
/// that SIGPIPE ended (128 + 13), as bpftrace's.
pub const EXIT_PIPE: i32 = 141;

/// The exit code for a run that failed: 3 when the kernel refused, 141 for a closed output
/// pipe (SIGPIPE's status, as bpftrace), 1 otherwise.
pub fn run_exit_code(e: &crate::runtime::driver::RunError) -> i32 {
    use crate::runtime::driver::Failure;
    match e.failure() {
        Failure::BrokenPipe => EXIT_PIPE,
        Failure::KernelRefused => EXIT_KERNEL,
        Failure::Usage => EXIT_USAGE,
        Failure::Other => EXIT_INPUT,
    }
}

/// The exit code for a failed write of strobe's output: [`EXIT_PIPE`] (silently) for a closed
/// pipe, else [`EXIT_INPUT`] with the reason on stderr (`-o /dev/full`: "No space left").
pub fn output_error(e: &std::io::Error) -> i32 {
    if e.kind() == std::io::ErrorKind::BrokenPipe {
        return EXIT_PIPE;
    }
    eprintln!("strobe: cannot write the output: {e}");
    EXIT_INPUT
}

/// Writes `text` to stdout and flushes it; a failed write gives [`output_error`]'s code
/// (Rust ignores SIGPIPE, so a closed pipe is an `EPIPE` here, never a panic).
pub fn write_stdout(text: impl AsRef<[u8]>) -> Result<(), i32> {
    use std::io::Write;
    let mut out = std::io::stdout().lock();
    out.write_all(text.as_ref())
        .and_then(|_| out.flush())
        .map_err(|e| output_error(&e))
}

/// [`write_stdout`] as an exit code: `EXIT_OK` when the write went through.
pub fn print_stdout(text: impl AsRef<[u8]>) -> i32 {
    write_stdout(text).err().unwrap_or(EXIT_OK)
}

/// One toolkit subcommand: its name, a one-line summary, and its entry point, which receives
/// the arguments after the subcommand's name.
pub struct Subcommand {
    pub name: &'static str,
    pub about: &'static str,
    pub run: fn(&[OsString]) -> i32,
}

/// The registry of subcommands: adding one is a new file plus one line here.
pub const SUBCOMMANDS: &[Subcommand] = &[
    Subcommand {
        name: "asm",
        about: "Assemble BPF assembly into a relocatable ELF object",
        run: asm::run,
    },
    Subcommand {
        name: "disasm",
        about: "Disassemble the program sections of a BPF ELF object (like llvm-objdump -dr)",
        run: disasm::run,
    },
    Subcommand {
        name: "info",
        about: "Show the kernel's BPF features (also --info)",
        run: info::run,
    },
    Subcommand {
        name: "load",
        about: "Load one program of a BPF object and attach it to every target of a wildcard",
        run: load::run,
    },
];

pub fn run(args: Vec<OsString>) -> i32 {
    if let Some(stored) = aot::embedded() {
        return aot::run(stored, args.get(1..).unwrap_or_default());
    }
    let first = args.get(1).and_then(|a| a.to_str());
    if let Some(sub) = SUBCOMMANDS.iter().find(|s| Some(s.name) == first) {
        return (sub.run)(&args[2..]);
    }
    match first {
        Some("--info") => info::run(&args[2..]),
        Some("--version" | "-V") => {
            print_stdout(format!("{}{}", version::banner(), version::details()))
        }
        Some(_) => trace::run(&args[1..]),
        _ => {
            print_usage();
            EXIT_USAGE
        }
    }
}

fn print_usage() {
    eprintln!("usage: strobe <subcommand> [args]\n\nsubcommands:");
    for s in SUBCOMMANDS {
        eprintln!("  {:<10} {}", s.name, s.about);
    }
}
