//! uprobe/uretprobe targets: ELF symbols of the binaries a target names (C++ names by their
//! demangled form with `cpp:`), an address, or a source line through the DWARF line table.

use super::{binaries, glob, has_wildcard, Cx, ExpandError, Target, TargetKind};

pub(super) fn expand(
    cx: &Cx<'_>,
    target: &str,
    lang: Option<&str>,
    func: &str,
    offset: Option<u64>,
    address: Option<u64>,
) -> Result<Vec<Target>, ExpandError> {
    let (k, probe, kind_name) = (cx.k, &cx.probe, cx.kind_name);
    let paths = binaries(k, probe, target)?;
    if let Some(addr) = address {
        return Ok(paths
            .into_iter()
            .map(|path| address_target(kind_name, path, addr))
            .collect());
    }
    let cpp = lang == Some("cpp");
    let g = glob(probe, func)?;
    let cpp_pattern = if cpp {
        Some(
            crate::elf::cpp::CppPattern::new(func).map_err(|e| ExpandError::Pattern {
                probe: probe.clone(),
                reason: e.to_string(),
            })?,
        )
    } else {
        None
    };
    let several = paths.len() > 1 || has_wildcard(target);
    let mut out = Vec::new();
    for path in paths {
        let syms = match k.elf_symbols(&path) {
            Ok(s) => s,
            // Of many files (a process's mappings, a path glob) the unreadable
            // ones (data files, non-ELF) have no functions.
            Err(_) if several => continue,
            Err(e) => return Err(cx.kerr(e)),
        };
        let p = path.display().to_string();
        let matches = |s: &String| match &cpp_pattern {
            Some(c) => c.matches(s),
            None => g.matches(s),
        };
        out.extend(syms.into_iter().filter(matches).map(|s| Target {
            // bpftrace lists a `cpp:` probe by its demangled name, quoted so the
            // line is an attach point again.
            name: match crate::elf::cpp::demangle(&s).filter(|_| cpp) {
                Some(d) => format!("{kind_name}:{p}:cpp:\"{d}\""),
                None if cpp => format!("{kind_name}:{p}:cpp:{s}"),
                None => format!("{kind_name}:{p}:{s}"),
            },
            kind: TargetKind::User {
                path: path.clone(),
                func: s,
                offset,
                address: None,
            },
        }));
    }
    Ok(out)
}

/// `uprobe:BIN@FILE:LINE[:COLUMN]`: the line's address in each binary.
pub(super) fn expand_source_line(
    cx: &Cx<'_>,
    target: &str,
    file: &str,
    line: u64,
    column: Option<u64>,
) -> Result<Vec<Target>, ExpandError> {
    let at = crate::dwarf::SourceLine { file, line, column };
    let kind_name = cx.kind_name;
    binaries(cx.k, &cx.probe, target)?
        .into_iter()
        .map(|path| {
            let addr = source_line_address(&path, target, &at)?;
            Ok(address_target(kind_name, path, addr))
        })
        .collect::<Result<_, _>>()
        .map_err(|reason| ExpandError::SourceLine {
            probe: cx.probe.clone(),
            reason,
        })
}

/// The link-time address of source line `at` in binary `path` (named `target` in the script),
/// through its DWARF line table.
fn source_line_address(
    path: &std::path::Path,
    target: &str,
    at: &crate::dwarf::SourceLine<'_>,
) -> Result<u64, String> {
    use crate::dwarf::DebugError;
    let info = crate::dwarf::for_binary(path).map_err(|e| match e {
        DebugError::NoDwarf { .. } => format!(
            "No DWARF debug info found for '{target}', cannot attach by source code location."
        ),
        e => format!("{e}, cannot attach by source code location."),
    })?;
    info.line_address(at).map_err(|e| e.to_string())
}

/// The target at address `addr` of binary `path` (an address or a source line).
fn address_target(kind_name: &str, path: std::path::PathBuf, addr: u64) -> Target {
    Target {
        name: format!("{kind_name}:{}:0x{addr:x}", path.display()),
        kind: TargetKind::User {
            path,
            func: String::new(),
            offset: None,
            address: Some(addr),
        },
    }
}
