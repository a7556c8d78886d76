//! `strobe disasm FILE.o…`: prints every program section of any BPF ELF object (strobe's or
//! clang's) the way `llvm-objdump -dr` does, so the two listings can be compared line by line.
//!
//! Input: object paths. Output: per section a `Disassembly of section NAME:` header, a
//! `ADDR <symbol>:` line where each symbol starts, one `index:\tbytes\ttext` line per
//! instruction (an `ld_imm64` is one line of 16 bytes), jump targets annotated `<symbol+0xoff>`,
//! and each relocation on its own line by type and symbol (`R_BPF_64_64\tmap_name`).
//! Differences from LLVM are strobe's disassembler's spellings: helper calls carry a
//! `# helper_name` comment, BPF-to-BPF calls print as `call pc+N`, and ISA v4 instructions
//! that LLVM 14 shows as `<unknown>` are decoded.
//! With `--source` it prints assembler source instead (`asm::disassemble_object`), which
//! `strobe asm` re-assembles.
//! Exit codes: 0, 1 for an unreadable or malformed object, 2 for bad usage.

use std::ffi::OsString;
use std::fmt::Write;
use std::path::PathBuf;

use clap::Parser;

use super::{EXIT_INPUT, EXIT_OK, EXIT_USAGE};
use crate::asm::decode::{decode, Decoded};
use crate::asm::disasm::disassemble_one;
use crate::asm::{Object, Section};

#[derive(Parser, Debug)]
#[command(
    name = "strobe disasm",
    about = "Disassemble the program sections of a BPF ELF object"
)]
struct Args {
    /// BPF ELF objects (relocatable, EM_BPF).
    #[arg(required = true)]
    inputs: Vec<PathBuf>,
    /// Print assembler source instead (directives, labels, symbolic references) that
    /// `strobe asm` turns back into the object.
    #[arg(long)]
    source: bool,
}

pub fn run(args: &[OsString]) -> i32 {
    let args = match Args::try_parse_from(
        std::iter::once(OsString::from("strobe disasm")).chain(args.iter().cloned()),
    ) {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
        }
    };
    let mut code = EXIT_OK;
    for input in &args.inputs {
        let shown = input.display().to_string();
        let obj = std::fs::read(input)
            .map_err(|e| format!("cannot read {shown}: {e}"))
            .and_then(|b| crate::elf::read_object(&b).map_err(|e| format!("{shown}: {e}")));
        match obj {
            Ok(obj) => {
                let text = if args.source {
                    crate::asm::disassemble_object(&obj)
                } else {
                    listing(&shown, &obj)
                };
                if let Err(c) = super::write_stdout(text) {
                    return c;
                }
            }
            Err(msg) => {
                eprintln!("strobe disasm: {msg}");
                code = EXIT_INPUT;
            }
        }
    }
    code
}

/// The whole `llvm-objdump -dr`-style listing of an object read from `file`.
pub fn listing(file: &str, obj: &Object) -> String {
    let mut out = format!("\n{file}:\tfile format elf64-bpf\n");
    for sec in &obj.sections {
        section_listing(sec, &mut out);
    }
    out
}

const HEX: &[u8; 16] = b"0123456789abcdef";

fn section_listing(sec: &Section, out: &mut String) {
    let _ = write!(out, "\nDisassembly of section {}:\n", sec.name);
    let mut syms: Vec<(usize, &str)> = sec
        .symbols
        .iter()
        .map(|s| (s.insn, s.name.as_str()))
        .collect();
    syms.sort_by_key(|&(at, _)| at);
    if syms.first().map_or(true, |&(at, _)| at > 0) {
        syms.insert(0, (0, sec.name.as_str()));
    }
    // Relocations in instruction order, walked alongside the instructions.
    let mut relocs: Vec<&crate::asm::Reloc> = sec.relocs.iter().collect();
    relocs.sort_by_key(|r| r.insn);
    let mut next_reloc = 0;
    let mut next_sym = 0;
    let mut text = String::new();
    let mut i = 0;
    while i < sec.insns.len() {
        while let Some(&(at, name)) = syms.get(next_sym) {
            if at > i {
                break;
            }
            let _ = write!(out, "\n{:016x} <{name}>:\n", at * 8);
            next_sym += 1;
        }
        text.clear();
        let len = disassemble_one(&sec.insns, i, &mut text).clamp(1, sec.insns.len() - i);
        let _ = write!(out, "{i:>8}:\t");
        for (k, b) in sec.insns[i..i + len]
            .iter()
            .flat_map(|insn| insn.to_bytes())
            .enumerate()
        {
            if k > 0 {
                out.push(' ');
            }
            out.push(HEX[usize::from(b >> 4)] as char);
            out.push(HEX[usize::from(b & 0xf)] as char);
        }
        out.push('\t');
        out.push_str(&text);
        if let Some(target) = jump_target(sec, i) {
            if let Some(label) = describe(&syms, target) {
                let _ = write!(out, " <{label}>");
            }
        }
        out.push('\n');
        // A relocation inside an ld_imm64's second half (malformed) is shown with the first.
        while let Some(r) = relocs.get(next_reloc).filter(|r| r.insn < i + len) {
            let kind =
                crate::elf::reloc_type_name(sec.insns[r.insn.max(i)].code).unwrap_or("R_BPF_NONE");
            let _ = writeln!(out, "\t\t{:016x}:  {kind}\t{}", r.insn * 8, r.symbol);
            next_reloc += 1;
        }
        i += len;
    }
}

/// The instruction index a jump at `i` lands on (calls are not annotated, as in LLVM).
fn jump_target(sec: &Section, i: usize) -> Option<i64> {
    let off = match decode(&sec.insns, i).ok()? {
        Decoded::Ja { off, .. } => i64::from(off),
        Decoded::Jmp { off, .. } => i64::from(off),
        Decoded::MayGoto { off } => i64::from(off),
        _ => return None,
    };
    Some(i as i64 + 1 + off)
}

/// `symbol` or `symbol+0xoff` for an instruction index, from the closest symbol at or before
/// it (the last one listed there when several share the address). `syms` is sorted.
fn describe(syms: &[(usize, &str)], target: i64) -> Option<String> {
    let upto = syms.partition_point(|&(at, _)| at as i64 <= target);
    let &(at, name) = syms.get(upto.checked_sub(1)?)?;
    let delta = (target - at as i64) * 8;
    Some(if delta == 0 {
        name.to_string()
    } else {
        format!("{name}+{delta:#x}")
    })
}
