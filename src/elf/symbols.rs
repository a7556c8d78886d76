//! ELF function symbols of a binary for uprobe wildcards (name → file offset), and the checks
//! of a uprobe FUNC+OFFSET site (an offset must start an x86 instruction) that the checker and
//! the loader share. (Kernel symbols come from `strobe::kernel::kallsyms`, which also maps
//! `bpf_get_func_ip` addresses back to functions for kprobes.)

use std::path::Path;

use crate::btf::Glob;

/// A function in an ELF file: its name and the file offset uprobes attach at.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct ElfFunc {
    pub name: String,
    pub offset: u64,
    /// Link-time address and size (`st_value`, `st_size`).
    pub addr: u64,
    pub size: u64,
}

/// A uprobe's function pattern: a glob over symbol names, or with `cpp` (bpftrace's
/// `uprobe:BIN:cpp:FUNC`) also over their demangled C++ names.
#[derive(Clone, Copy, Debug)]
pub struct FuncPattern<'a> {
    pub text: &'a str,
    pub cpp: bool,
}

/// Whether a symbol name matches a [`FuncPattern`].
type NameMatcher = Box<dyn Fn(&str) -> bool>;

impl<'a> FuncPattern<'a> {
    /// A glob over symbol names as the ELF spells them.
    pub fn glob(text: &'a str) -> FuncPattern<'a> {
        FuncPattern { text, cpp: false }
    }

    fn matcher(self) -> Result<NameMatcher, String> {
        if self.cpp {
            let p = crate::elf::cpp::CppPattern::new(self.text).map_err(|e| e.to_string())?;
            Ok(Box::new(move |s| p.matches(s)))
        } else {
            let g = Glob::new(self.text).map_err(|e| e.to_string())?;
            Ok(Box::new(move |s| g.matches(s)))
        }
    }
}

/// Every defined function symbol of the ELF at `path` (`.symtab` and `.dynsym`) whose name
/// matches `pattern`, with its file offset (address mapped through the PT_LOAD segment that
/// holds it); sorted by name, one entry per name.
pub fn elf_functions(path: &Path, pattern: &str) -> Result<Vec<ElfFunc>, String> {
    elf_functions_matching(path, FuncPattern::glob(pattern))
}

/// [`elf_functions`] for a [`FuncPattern`].
pub fn elf_functions_matching(
    path: &Path,
    pattern: FuncPattern<'_>,
) -> Result<Vec<ElfFunc>, String> {
    let matches = pattern.matcher()?;
    let data = std::fs::read(path).map_err(|e| e.to_string())?;
    let elf = goblin::elf::Elf::parse(&data).map_err(|e| e.to_string())?;
    let mut out = Vec::new();
    let tables = [(&elf.syms, &elf.strtab), (&elf.dynsyms, &elf.dynstrtab)];
    for (syms, strs) in tables {
        for s in syms.iter() {
            if s.st_type() != goblin::elf::sym::STT_FUNC || s.st_value == 0 || s.st_shndx == 0 {
                continue;
            }
            let Some(name) = strs.get_at(s.st_name) else {
                continue;
            };
            if !matches(name) {
                continue;
            }
            let seg = elf.program_headers.iter().find(|ph| {
                ph.p_type == goblin::elf::program_header::PT_LOAD
                    && s.st_value >= ph.p_vaddr
                    && s.st_value < ph.p_vaddr + ph.p_memsz
            });
            if let Some(ph) = seg {
                out.push(ElfFunc {
                    name: name.to_string(),
                    offset: s.st_value - ph.p_vaddr + ph.p_offset,
                    addr: s.st_value,
                    size: s.st_size,
                });
            }
        }
    }
    out.sort_by(|a, b| a.name.cmp(&b.name));
    out.dedup_by(|a, b| a.name == b.name);
    Ok(out)
}

const HINT_UNSAFE: &str = "\nUse --unsafe to force attachment. WARNING: This option could lead \
                           to data corruption in the target process.";

/// The targets of a uprobe attach point in the ELF at `path` (shown to the user as `shown`),
/// checked as bpftrace checks them: `func` is a glob when `offset` is 0 and there is no
/// `address`; an address is named by the function holding it; an offset must lie inside the
/// function, start an instruction (decoded from the file's bytes) and a uretprobe takes none.
/// `--unsafe` (`unsafe_mode`) allows an offset that cannot be shown to start an instruction;
/// the second value is then the warning to print.
pub fn resolve_uprobe_site(
    path: &Path,
    shown: &Path,
    pattern: FuncPattern<'_>,
    offset: u64,
    address: Option<u64>,
    retprobe: bool,
    unsafe_mode: bool,
) -> Result<(Vec<ElfFunc>, Option<String>), String> {
    let func = pattern.text;
    let all = match elf_functions_matching(
        path,
        if address.is_some() {
            FuncPattern::glob("*")
        } else {
            pattern
        },
    ) {
        Ok(all) => all,
        // `--unsafe` attaches an address in a file without symbols (a flat binary, a JIT
        // cache) at that file offset, as bpftrace does.
        Err(_) if unsafe_mode && address.is_some() => Vec::new(),
        Err(e) => return Err(format!("cannot read symbols of {}: {e}", path.display())),
    };
    let (mut f, off) = match address {
        None if offset == 0 => {
            // A function named exactly must have a size, so the probe is known to be at its
            // entry (bpftrace's check; `--unsafe` skips it).
            let wildcard = func.contains(['*', '?', '[']);
            let sizeless = all.iter().find(|f| f.name == func && f.size == 0);
            if let Some(f) = sizeless.filter(|_| !unsafe_mode && !wildcard) {
                return Err(format!(
                    "Could not determine boundary for {} (symbol has size 0).{HINT_UNSAFE}",
                    f.name
                ));
            }
            return Ok((all, None));
        }
        // Under `cpp:` the pattern is a demangled name: it must name one function.
        None if pattern.cpp && all.len() > 1 => {
            return Err(format!(
                "{}:cpp:{func} names {} functions ({}); an offset needs exactly one",
                shown.display(),
                all.len(),
                all.iter()
                    .map(|f| f.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            ))
        }
        None => match all.into_iter().find(|f| f.name == func || pattern.cpp) {
            Some(f) => (f, offset),
            None => {
                return Err(format!(
                    "Could not resolve symbol: {}:{func}",
                    shown.display()
                ))
            }
        },
        Some(a) => match all
            .into_iter()
            .find(|f| a >= f.addr && a < f.addr + f.size.max(1))
        {
            Some(f) => {
                let off = a - f.addr;
                (f, off)
            }
            None if unsafe_mode => {
                let kind = if retprobe { "uretprobe" } else { "uprobe" };
                let warning = format!(
                    "Could not determine instruction boundary for {kind}:{}:{a} (binary appears \
                     stripped). Misaligned probes can lead to tracee crashes!",
                    shown.display()
                );
                let f = ElfFunc {
                    name: String::new(),
                    offset: a,
                    addr: a,
                    size: 0,
                };
                return Ok((vec![f], Some(warning)));
            }
            None => {
                return Err(format!(
                    "Could not resolve address: {}:0x{a:x}",
                    shown.display()
                ))
            }
        },
    };
    let kind = if retprobe { "uretprobe" } else { "uprobe" };
    if retprobe && off != 0 {
        return Err(format!(
            "uretprobes cannot be attached at function offset. (address resolved to: {}+{off})",
            f.name
        ));
    }
    if off == 0 && f.size == 0 {
        if !unsafe_mode {
            return Err(format!(
                "Could not determine boundary for {} (symbol has size 0).{HINT_UNSAFE}",
                f.name
            ));
        }
    } else if off != 0 && off >= f.size {
        return Err(format!(
            "Offset outside the function bounds ('{}' size is {})",
            f.name, f.size
        ));
    }
    let mut warning = None;
    if off != 0 {
        let at = format!("{}:{}+{off}", shown.display(), f.name);
        let refusal = match instruction_boundary(path, &f, off) {
            Boundary::Start => None,
            Boundary::Inside => Some((
                format!("Could not add {kind} into middle of instruction: {at}"),
                format!("Unsafe {kind} in the middle of the instruction: {at}"),
            )),
            Boundary::Unknown(why) => Some((
                format!("Failed to check if {kind} is in proper place ({why}): {at}"),
                format!("Unchecked {kind}: {at}"),
            )),
            Boundary::Unsupported => Some((
                format!(
                    "Can't check if {kind} is in proper place (compiled without (k|u)probe \
                     offset support): {at}"
                ),
                format!("Unchecked {kind}: {at}"),
            )),
        };
        if let Some((refused, warn)) = refusal {
            if !unsafe_mode {
                return Err(format!("{refused}{HINT_UNSAFE}"));
            }
            warning = Some(warn);
        }
    }
    f.offset += off;
    Ok((vec![f], warning))
}

/// Whether an offset into a function starts an instruction.
#[derive(Debug, PartialEq, Eq)]
pub enum Boundary {
    Start,
    /// Inside an instruction.
    Inside,
    /// The bytes could not be read or decoded (the reason).
    Unknown(String),
    /// No decoder for the ELF's machine (x86 only).
    Unsupported,
}

/// Decodes `f`'s instructions from the file at `path`, from its start up to `off` bytes in,
/// as bpftrace's disassembler does: `off` must be where an instruction starts.
pub fn instruction_boundary(path: &Path, f: &ElfFunc, off: u64) -> Boundary {
    let data = match std::fs::read(path) {
        Ok(d) => d,
        Err(e) => return Boundary::Unknown(e.to_string()),
    };
    let bitness = match goblin::elf::Elf::parse_header(&data).map(|h| h.e_machine) {
        Ok(goblin::elf::header::EM_X86_64) => 64,
        Ok(goblin::elf::header::EM_386) => 32,
        Ok(_) => return Boundary::Unsupported,
        Err(e) => return Boundary::Unknown(e.to_string()),
    };
    // The longest x86 instruction is 15 bytes: enough to decode the one holding `off`.
    let start = usize::try_from(f.offset).unwrap_or(usize::MAX);
    let end = usize::try_from(f.offset.saturating_add(f.size.min(off + 15))).unwrap_or(usize::MAX);
    let Some(bytes) = data.get(start..end.min(data.len())) else {
        return Boundary::Unknown("the function lies outside the file".into());
    };
    decode_to(bytes, bitness, f.addr, off)
}

/// Where `off` falls among the instructions decoded from `bytes` (loaded at `ip`).
fn decode_to(bytes: &[u8], bitness: u32, ip: u64, off: u64) -> Boundary {
    let mut dec = iced_x86::Decoder::with_ip(bitness, bytes, ip, iced_x86::DecoderOptions::NONE);
    let mut pos = 0u64;
    while pos < off {
        if !dec.can_decode() {
            return Boundary::Unknown("the function's bytes end first".into());
        }
        let insn = dec.decode();
        if insn.is_invalid() {
            return Boundary::Unknown(format!("no valid instruction at +{pos}"));
        }
        pos = dec.position() as u64;
    }
    if pos == off {
        Boundary::Start
    } else {
        Boundary::Inside
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn offsets_are_checked_against_decoded_x86_instructions() {
        // endbr64; push %rbp; mov %rsp,%rbp; movabs $1,%rax; nop; ret
        let code = [
            0xf3, 0x0f, 0x1e, 0xfa, 0x55, 0x48, 0x89, 0xe5, 0x48, 0xb8, 1, 0, 0, 0, 0, 0, 0, 0,
            0x90, 0xc3,
        ];
        let starts = [0u64, 4, 5, 8, 18, 19];
        for off in 1..code.len() as u64 {
            let want = if starts.contains(&off) {
                Boundary::Start
            } else {
                Boundary::Inside
            };
            assert_eq!(decode_to(&code, 64, 0x1000, off), want, "+{off}");
        }
        assert!(matches!(
            decode_to(&code[..6], 64, 0, 8),
            Boundary::Unknown(_)
        ));
        // 0x06 (push es) is no instruction in 64-bit mode.
        assert!(matches!(
            decode_to(&[0x06, 0x90], 64, 0, 1),
            Boundary::Unknown(_)
        ));
        assert_eq!(decode_to(&[0x06, 0x90], 32, 0, 1), Boundary::Start);
    }

    #[test]
    fn elf_functions_of_this_test_binary_include_its_own_functions() {
        let exe = std::env::current_exe().unwrap();
        let f = elf_functions(&exe, "*elf_functions_of_this_test_binary*").unwrap();
        assert!(!f.is_empty(), "symbols of {}", exe.display());
        assert!(f.iter().all(|x| x.offset > 0));
        assert!(elf_functions(Path::new("/nonexistent"), "*").is_err());
    }
}
