//! `strobe asm FILE.s [-o FILE.o] [--legacy-maps]`: assembles a multi-program source file into
//! a relocatable BPF ELF object (see `crate::elf::write_object` for the layout).
//!
//! Input: the source path and an optional output path (default: the input with `.o`); maps are
//! written as BTF-defined `.maps`, or as a legacy `maps` section with `--legacy-maps`.
//! Output: the object file; assembler diagnostics on stderr as `file:line:col: error: …` with
//! the line and a caret. Exit codes: 0, 1 for bad input (source errors, unreadable input,
//! unwritable output, an object the ELF writer refuses), 2 for bad usage.

use std::ffi::OsString;
use std::path::PathBuf;

use clap::Parser;

use super::{EXIT_INPUT, EXIT_OK, EXIT_USAGE};
use crate::diag::{render_all_styled, SourceFile, Style};

#[derive(Parser, Debug)]
#[command(
    name = "strobe asm",
    about = "Assemble BPF assembly into a relocatable ELF object"
)]
struct Args {
    /// Assembly source (the syntax `llvm-objdump -d` and the verifier log print).
    input: PathBuf,
    /// Output object; defaults to the input's name with a `.o` extension.
    #[arg(short, long)]
    output: Option<PathBuf>,
    /// Write maps as a legacy `maps` section of `struct bpf_map_def` (for loaders older than
    /// libbpf 1.0) instead of BTF-defined `.maps`.
    #[arg(long)]
    legacy_maps: bool,
}

pub fn run(args: &[OsString]) -> i32 {
    let args = match Args::try_parse_from(
        std::iter::once(OsString::from("strobe asm")).chain(args.iter().cloned()),
    ) {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
        }
    };
    let text = match std::fs::read_to_string(&args.input) {
        Ok(t) => t,
        Err(e) => {
            eprintln!("strobe asm: cannot read {}: {e}", args.input.display());
            return EXIT_INPUT;
        }
    };
    let src = SourceFile::new(args.input.display().to_string(), text);
    let obj = match crate::asm::assemble(&src) {
        Ok(obj) => obj,
        Err(diags) => {
            eprint!("{}", render_all_styled(&diags, &src, Style::Llvm));
            return EXIT_INPUT;
        }
    };
    let opts = crate::elf::WriteOptions {
        maps: if args.legacy_maps {
            crate::elf::MapEncoding::Legacy
        } else {
            crate::elf::MapEncoding::Btf
        },
    };
    let bytes = match crate::elf::write_object_with(&obj, &opts) {
        Ok(b) => b,
        Err(e) => {
            eprintln!("strobe asm: {}: {e}", args.input.display());
            return EXIT_INPUT;
        }
    };
    let output = args
        .output
        .unwrap_or_else(|| args.input.with_extension("o"));
    if let Err(e) = std::fs::write(&output, bytes) {
        eprintln!("strobe asm: cannot write {}: {e}", output.display());
        return EXIT_INPUT;
    }
    EXIT_OK
}
