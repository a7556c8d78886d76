//! `uaddr("sym")`: the symbol is looked up in the binary of every uprobe/usdt target of the
//! probe (ELF `.symtab`/`.dynsym`), as bpftrace 0.17 does at check time. The result points to
//! an integer as wide as the symbol (1, 2, 4 bytes, else 8), so `*uaddr("sym")` reads it; the
//! symbol must have one size in every target's binary.
//!
//! Input: the checked call and the probe's context (targets are named
//! `uprobe:/path:func` / `usdt:/path:provider:name`). Output: the call's type or the error.

use super::resolve::Checker;
use super::types::{AddrSpace, Type};
use crate::builtins::RuleError;
use crate::syntax::ast::Expr;

/// The binary path of a uprobe/uretprobe/usdt target name.
fn binary_of(target: &str) -> Option<&str> {
    let rest = ["uprobe:", "uretprobe:", "usdt:"]
        .iter()
        .find_map(|p| target.strip_prefix(p))?;
    rest.split(':').next().filter(|p| p.starts_with('/'))
}

impl Checker<'_> {
    /// `elf_is_exe` (the probe's binary is an ET_EXEC executable) or `elf_ino` (its inode),
    /// folded from the first target's binary, as bpftrace's `__builtin_elf_is_exe` and
    /// `__builtin_elf_ino` read its first attach point's; only in uprobe, uretprobe and usdt
    /// probes (bpftrace's words for the others).
    pub(super) fn elf_fact(&mut self, e: &Expr, v: crate::builtins::ValueId) -> Type {
        use crate::builtins::ValueId;
        let name = if v == ValueId::ElfIsExe {
            "elf_is_exe"
        } else {
            "elf_info"
        };
        let kinds = &self.cx.kinds;
        if kinds.is_empty() || !kinds.iter().all(|k| k.info().user_space()) {
            let pt = kinds
                .first()
                .map_or("none", |k| super::config_read::probe_type_name(*k));
            self.error(
                e.span,
                format!("{name} can not be used for this probetype: {pt}"),
            );
            return Type::None;
        }
        let Some(path) = self.cx.targets.first().and_then(|t| binary_of(&t.name)) else {
            self.error(e.span, format!("{name}: the probe's binary is not known"));
            return Type::None;
        };
        let path = std::path::Path::new(path);
        let fact = if v == ValueId::ElfIsExe {
            // e_type, at byte 16 of the ELF header: ET_EXEC is 2 (elf.h).
            let mut head = [0u8; 18];
            let read = std::fs::File::open(path)
                .and_then(|mut f| std::io::Read::read_exact(&mut f, &mut head));
            read.map(|()| {
                (head[..4] == *b"\x7fELF" && u16::from_le_bytes([head[16], head[17]]) == 2) as i64
            })
        } else {
            std::fs::metadata(path).map(|m| std::os::unix::fs::MetadataExt::ino(&m) as i64)
        };
        match fact {
            Ok(c) => {
                self.consts.insert(e.id, c);
                if v == ValueId::ElfIsExe {
                    Type::Bool
                } else {
                    Type::U64
                }
            }
            Err(err) => {
                self.error(
                    e.span,
                    format!("{name}: cannot read {}: {err}", path.display()),
                );
                Type::None
            }
        }
    }

    /// The type of `uaddr(args[0])` in the current probe (see the module doc).
    pub(super) fn uaddr_type(&self, args: &[Expr]) -> Result<Type, RuleError> {
        let Some(sym) = args.first().and_then(|a| self.str_consts.get(&a.id)) else {
            return Err(RuleError::arg(
                0,
                "uaddr: the symbol name must be a string literal",
            ));
        };
        let sym = String::from_utf8_lossy(sym).into_owned();
        let mut first: Option<(String, u64)> = None;
        for t in &self.cx.targets {
            let Some(path) = binary_of(&t.name) else {
                continue;
            };
            let Some((_, size)) = self
                .kernel
                .elf_symbol_address(std::path::Path::new(path), &sym)
            else {
                return Err(RuleError::call(format!(
                    "Could not resolve symbol: {path}:{sym}"
                )));
            };
            match &first {
                Some((p0, s0)) if *s0 != size => {
                    return Err(RuleError::call(format!(
                        "Symbol size mismatch between probes. Symbol \"{sym}\" has size {s0} \
                         for probe \"{p0}\" but size {size} for probe \"{}\"",
                        t.name
                    )))
                }
                Some(_) => {}
                None => first = Some((t.name.clone(), size)),
            }
        }
        let bytes = match first.map_or(8, |(_, s)| s) {
            s @ (1 | 2 | 4) => s as u8,
            _ => 8,
        };
        Ok(Type::ptr_to(
            Type::Int {
                bytes,
                signed: true,
            },
            AddrSpace::User,
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::binary_of;

    #[test]
    fn binary_paths_come_from_user_target_names() {
        assert_eq!(
            binary_of("uprobe:/lib/libc.so.6:getenv"),
            Some("/lib/libc.so.6")
        );
        assert_eq!(binary_of("uretprobe:/bin/bash:readline"), Some("/bin/bash"));
        assert_eq!(
            binary_of("usdt:/usr/lib/libc.so.6:libc:setjmp"),
            Some("/usr/lib/libc.so.6")
        );
        assert_eq!(binary_of("kprobe:vfs_read"), None);
    }
}
