//! USDT probe sites: argument descriptions and where a site sits in its file.
//!
//! Input: a `.note.stapsdt` probe ([`UsdtNote`]) — its argument string as SystemTap's `sdt.h`
//! writes it (`-4@%eax 8@-8(%rbp) -4@$5`, one `[-]SIZE@OPERAND` per argument, operands in
//! x86-64 AT&T syntax; an operand without `SIZE@` is 8 bytes unsigned) — and the ELF file.
//! Output: [`UsdtArg`]s the code generator lowers to `pt_regs` loads, user-memory reads or
//! constants, and [`UsdtSite`]: the probe's and its semaphore's *file offsets*, which is what
//! the uprobe PMU takes (`config2` and `ref_ctr_offset`, kernel `Documentation/trace/uprobetracer.rst`).
//! Invariant: a description strobe cannot read (index registers, symbolic displacements,
//! high-byte registers) is an error naming the operand, never a wrong read.

use std::path::Path;

use super::info::{KernelInfoError, UsdtNote};

/// Where an argument's value is.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum UsdtLoc {
    /// `$N`: a constant.
    Const(i64),
    /// `%reg`: a register, by its x86-64 `struct pt_regs` offset.
    Reg { pt_regs_offset: i32 },
    /// `DISP(%reg)`: user memory at the register's value plus `disp`.
    Deref { pt_regs_offset: i32, disp: i64 },
}

/// One argument: its location, width in bytes (1, 2, 4 or 8) and signedness.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsdtArg {
    pub size: u8,
    pub signed: bool,
    pub loc: UsdtLoc,
}

/// Why an argument description cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum UsdtArgError {
    #[error("USDT argument `{arg}`: {reason}")]
    Unsupported { arg: String, reason: &'static str },
}

/// x86-64 `struct pt_regs` offsets (arch/x86/include/uapi/asm/ptrace.h) of every register
/// name an operand may use, at any width (`%rax`, `%eax`, `%ax`, `%al`, `%r8d`, `%r8w`, `%r8b`).
fn pt_regs_offset(reg: &str) -> Option<i32> {
    const LEGACY: &[(&[&str], i32)] = &[
        (&["rax", "eax", "ax", "al"], 80),
        (&["rbx", "ebx", "bx", "bl"], 40),
        (&["rcx", "ecx", "cx", "cl"], 88),
        (&["rdx", "edx", "dx", "dl"], 96),
        (&["rsi", "esi", "si", "sil"], 104),
        (&["rdi", "edi", "di", "dil"], 112),
        (&["rbp", "ebp", "bp", "bpl"], 32),
        (&["rsp", "esp", "sp", "spl"], 152),
        (&["rip", "eip"], 128),
    ];
    if let Some((_, off)) = LEGACY.iter().find(|(names, _)| names.contains(&reg)) {
        return Some(*off);
    }
    // r8…r15 with an optional d/w/b (or l) suffix.
    let n = reg.strip_prefix('r')?;
    let digits = n.trim_end_matches(['d', 'w', 'b', 'l']);
    if n.len() - digits.len() > 1 {
        return None;
    }
    // pt_regs: r15 0, r14 8, r13 16, r12 24, (bp, bx), r11 48, r10 56, r9 64, r8 72.
    Some(match digits.parse::<u8>().ok()? {
        8 => 72,
        9 => 64,
        10 => 56,
        11 => 48,
        12 => 24,
        13 => 16,
        14 => 8,
        15 => 0,
        _ => return None,
    })
}

fn parse_int(s: &str) -> Option<i64> {
    let (neg, s) = match s.strip_prefix('-') {
        Some(r) => (true, r),
        None => (false, s.strip_prefix('+').unwrap_or(s)),
    };
    let v = match s.strip_prefix("0x").or_else(|| s.strip_prefix("0X")) {
        Some(h) => u64::from_str_radix(h, 16).ok()? as i64,
        None => s.parse::<u64>().ok()? as i64,
    };
    Some(if neg { v.wrapping_neg() } else { v })
}

/// Parses one argument (`-4@%eax`, `8@-8(%rbp)`, `-4@$5`, `%rdi`).
pub fn parse_arg(arg: &str) -> Result<UsdtArg, UsdtArgError> {
    let bad = |reason| UsdtArgError::Unsupported {
        arg: arg.to_string(),
        reason,
    };
    let (size, signed, op) = match arg.split_once('@') {
        Some((sz, op)) => {
            let n = parse_int(sz).ok_or_else(|| bad("the size is not a number"))?;
            match n.unsigned_abs() {
                1 | 2 | 4 | 8 => (n.unsigned_abs() as u8, n < 0, op),
                _ => return Err(bad("the size is not 1, 2, 4 or 8 bytes")),
            }
        }
        None => (8, false, arg),
    };
    let loc = if let Some(c) = op.strip_prefix('$') {
        UsdtLoc::Const(parse_int(c).ok_or_else(|| bad("a symbolic constant"))?)
    } else if let Some(r) = op.strip_prefix('%') {
        UsdtLoc::Reg {
            pt_regs_offset: pt_regs_offset(r).ok_or_else(|| bad("an unknown register"))?,
        }
    } else if let Some((disp, rest)) = op.split_once('(') {
        let inner = rest
            .strip_suffix(')')
            .ok_or_else(|| bad("an unterminated memory operand"))?;
        if inner.contains(',') {
            return Err(bad("an index register"));
        }
        let r = inner
            .strip_prefix('%')
            .ok_or_else(|| bad("a memory operand without a base register"))?;
        let disp = if disp.is_empty() {
            0
        } else {
            parse_int(disp).ok_or_else(|| bad("a symbolic displacement"))?
        };
        UsdtLoc::Deref {
            pt_regs_offset: pt_regs_offset(r).ok_or_else(|| bad("an unknown register"))?,
            disp,
        }
    } else {
        return Err(bad("an operand strobe cannot read"));
    };
    Ok(UsdtArg { size, signed, loc })
}

/// Every argument of a note, in order; one that cannot be read is kept as its error so
/// only a script that uses it fails.
pub fn parse_args(args: &str) -> Vec<Result<UsdtArg, UsdtArgError>> {
    args.split_whitespace().map(parse_arg).collect()
}

/// A probe site in its file: what a perf uprobe attaches to.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct UsdtSite {
    /// File offset of the probe's instruction.
    pub offset: u64,
    /// File offset of the semaphore (a `u16` the kernel increments while attached), if any.
    pub semaphore_offset: Option<u64>,
    /// The semaphore's virtual address as linked (for poking it through `/proc/PID/mem`).
    pub semaphore_vaddr: Option<u64>,
}

/// Locates `note`'s site in the ELF file at `path`: the note's addresses are link-time
/// virtual addresses, adjusted by the distance between `.stapsdt.base`'s address and the one
/// recorded in the note (prelinking moves both), then mapped to file offsets through the
/// loadable segment that holds them.
pub fn locate(path: &Path, note: &UsdtNote) -> Result<UsdtSite, KernelInfoError> {
    let bytes = std::fs::read(path).map_err(|e| KernelInfoError::Binary {
        path: path.to_path_buf(),
        reason: e.to_string(),
    })?;
    let elf = goblin::elf::Elf::parse(&bytes).map_err(|e| KernelInfoError::Binary {
        path: path.to_path_buf(),
        reason: format!("not a readable ELF file: {e}"),
    })?;
    let base_addr = elf
        .section_headers
        .iter()
        .find(|s| elf.shdr_strtab.get_at(s.sh_name) == Some(".stapsdt.base"))
        .map(|s| s.sh_addr);
    let adjust = |a: u64| match base_addr {
        Some(b) if note.base != 0 => a.wrapping_add(b).wrapping_sub(note.base),
        _ => a,
    };
    let to_offset = |vaddr: u64| {
        elf.program_headers
            .iter()
            .filter(|p| p.p_type == goblin::elf::program_header::PT_LOAD)
            .find(|p| vaddr >= p.p_vaddr && vaddr < p.p_vaddr + p.p_memsz)
            .map(|p| vaddr - p.p_vaddr + p.p_offset)
    };
    let pc = adjust(note.pc);
    let offset = to_offset(pc).ok_or_else(|| KernelInfoError::Binary {
        path: path.to_path_buf(),
        reason: format!(
            "USDT probe {}:{} at 0x{pc:x} is in no loadable segment",
            note.provider, note.name
        ),
    })?;
    let sema = (note.semaphore != 0).then(|| adjust(note.semaphore));
    Ok(UsdtSite {
        offset,
        semaphore_offset: sema.and_then(to_offset),
        semaphore_vaddr: sema,
    })
}

#[cfg(test)]
mod tests;
