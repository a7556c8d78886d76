//! Source lines to addresses through the DWARF line table, for `uprobe:BIN@FILE:LINE[:COL]`.
//!
//! Input: a binary's main DWARF (its line tables stay there with split DWARF) and a
//! [`SourceLine`]. Output: the link-time address of the first instruction the compiler marked
//! as a statement start of that line (the lowest address of the line's `is_stmt` rows; rows
//! without the flag only when the line has none), or a [`LineError`] naming what did not match.
//!
//! Matching, as bpftrace has it: `FILE` names a source file by a trailing run of path
//! components (`uprobe_test.c`, `tests/uprobe_test.c` or the full path); it must name one file
//! among every unit's line-table files (two different files ending the same way are ambiguous);
//! the first unit listing it is searched, and only rows of that file count, so code a header
//! puts into the unit does not stand for the unit's own lines.

use std::path::{Component, Path, PathBuf};

use gimli::{ColumnType, Dwarf, LineProgramHeader, Unit};

use super::R;

/// A place in the source: `file` as written in the attach point, 1-based `line`, and an
/// optional 1-based `column`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SourceLine<'a> {
    pub file: &'a str,
    pub line: u64,
    pub column: Option<u64>,
}

impl std::fmt::Display for SourceLine<'_> {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.file, self.line)?;
        if let Some(c) = self.column {
            write!(f, ":{c}")?;
        }
        Ok(())
    }
}

/// Why a source line has no address (bpftrace's words).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LineError {
    #[error("No compilation unit matches {file}")]
    NoUnit { file: String },
    #[error("Ambiguous source path, matches multiple files: {first}, {second}")]
    Ambiguous { first: String, second: String },
    /// The file is known but no instruction comes from that line (a comment, a blank line, a
    /// declaration, or code the compiler removed).
    #[error("Unable to map '{place}' to address")]
    NoCode { place: String },
    #[error("malformed DWARF line table: {reason}")]
    Malformed { reason: String },
}

fn malformed(e: gimli::Error) -> LineError {
    LineError::Malformed {
        reason: e.to_string(),
    }
}

/// A path with `.` components dropped and `..` applied lexically (DWARF directories are
/// often `dir/../src`).
fn normalize(p: &Path) -> PathBuf {
    let mut out = PathBuf::new();
    for c in p.components() {
        match c {
            Component::CurDir => {}
            Component::ParentDir => {
                if !out.pop() {
                    out.push("..");
                }
            }
            c => out.push(c),
        }
    }
    out
}

/// Whether `path` ends with the components of `pattern` (`a/b/c.c` ends with `c.c` and
/// `b/c.c`, not with `/c.c` or `bc.c`).
pub(crate) fn path_ends_with(path: &Path, pattern: &Path) -> bool {
    let pattern = normalize(pattern);
    pattern.components().next().is_some() && normalize(path).ends_with(&pattern)
}

/// The full path of line-table file `index`: its directory (relative ones under the unit's
/// compilation directory) joined with its name.
fn file_path(
    dwarf: &Dwarf<R>,
    unit: &Unit<R>,
    header: &LineProgramHeader<R>,
    index: u64,
) -> Option<PathBuf> {
    let file = header.file(index)?;
    let text = |v| {
        dwarf
            .attr_string(unit, v)
            .ok()
            .map(|s| PathBuf::from(s.to_string_lossy().into_owned()))
    };
    let name = text(file.path_name())?;
    if name.is_absolute() {
        return Some(normalize(&name));
    }
    let mut p = unit
        .comp_dir
        .map(|d| PathBuf::from(d.to_string_lossy().into_owned()))
        .unwrap_or_default();
    if let Some(dir) = file.directory(header).and_then(text) {
        p.push(dir);
    }
    p.push(name);
    Some(normalize(&p))
}

/// Every unit of `dwarf` with a line table.
fn units(dwarf: &Dwarf<R>) -> Result<Vec<Unit<R>>, LineError> {
    let mut out = Vec::new();
    let mut it = dwarf.units();
    while let Some(h) = it.next().map_err(malformed)? {
        let unit = dwarf.unit(h).map_err(malformed)?;
        if unit.line_program.is_some() {
            out.push(unit);
        }
    }
    Ok(out)
}

/// The unit to search and the full path of the file `file` names in it.
fn find_file(
    dwarf: &Dwarf<R>,
    units: &[Unit<R>],
    file: &str,
) -> Result<(usize, PathBuf), LineError> {
    let pattern = Path::new(file);
    let mut found: Option<(usize, PathBuf)> = None;
    for (i, unit) in units.iter().enumerate() {
        let Some(program) = &unit.line_program else {
            continue;
        };
        let header = program.header();
        // DWARF 5 numbers files from 0, earlier versions from 1.
        let first = u64::from(header.version() < 5);
        let count = header.file_names().len() as u64;
        for index in first..first + count {
            let Some(path) = file_path(dwarf, unit, header, index) else {
                continue;
            };
            if !path_ends_with(&path, pattern) {
                continue;
            }
            match &found {
                None => found = Some((i, path)),
                Some((_, p)) if *p != path => {
                    return Err(LineError::Ambiguous {
                        first: p.display().to_string(),
                        second: path.display().to_string(),
                    })
                }
                Some(_) => {}
            }
        }
    }
    found.ok_or_else(|| LineError::NoUnit {
        file: file.to_string(),
    })
}

/// Addresses of nothing: a function the linker dropped keeps its rows at 0 (or a tombstone).
fn is_tombstone(addr: u64) -> bool {
    addr == 0 || addr >= u64::MAX - 1
}

/// The address where `at` starts (see the module doc).
pub(super) fn line_address(dwarf: &Dwarf<R>, at: &SourceLine<'_>) -> Result<u64, LineError> {
    let units = units(dwarf)?;
    let (i, path) = find_file(dwarf, &units, at.file)?;
    let unit = &units[i];
    let Some(program) = unit.line_program.clone() else {
        return Err(LineError::NoUnit {
            file: at.file.to_string(),
        });
    };
    // (is_stmt, address) of the best row so far: statement starts first, then the lowest.
    let mut best: Option<(bool, u64)> = None;
    let mut rows = program.rows();
    while let Some((header, row)) = rows.next_row().map_err(malformed)? {
        if row.end_sequence()
            || is_tombstone(row.address())
            || row.line().map(|l| l.get()) != Some(at.line)
        {
            continue;
        }
        if let Some(c) = at.column {
            match row.column() {
                ColumnType::Column(rc) if rc.get() == c => {}
                _ => continue,
            }
        }
        if file_path(dwarf, unit, header, row.file_index()).as_deref() != Some(path.as_path()) {
            continue;
        }
        let cand = (row.is_stmt(), row.address());
        let better = match best {
            None => true,
            Some((stmt, addr)) => (cand.0 && !stmt) || (cand.0 == stmt && cand.1 < addr),
        };
        if better {
            best = Some(cand);
        }
    }
    best.map(|(_, a)| a).ok_or_else(|| LineError::NoCode {
        place: at.to_string(),
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn path_suffix_matches_whole_components() {
        let p = Path::new("/src/proj/tests/uprobe_test.c");
        assert!(path_ends_with(p, Path::new("uprobe_test.c")));
        assert!(path_ends_with(p, Path::new("tests/uprobe_test.c")));
        assert!(path_ends_with(p, Path::new("./uprobe_test.c")));
        assert!(path_ends_with(
            p,
            Path::new("/src/proj/tests/uprobe_test.c")
        ));
        assert!(!path_ends_with(p, Path::new("test.c")));
        assert!(!path_ends_with(p, Path::new("other/uprobe_test.c")));
        assert!(!path_ends_with(p, Path::new("")));
        assert!(path_ends_with(
            Path::new("/build/../src/a.c"),
            Path::new("src/a.c")
        ));
    }

    /// A directory removed on drop.
    struct TempDir(PathBuf);

    impl Drop for TempDir {
        fn drop(&mut self) {
            let _ = std::fs::remove_dir_all(&self.0);
        }
    }

    /// Compiles `src` (as `DIR/name`) with `cc -g -O0`, or `None` (test skipped) without cc.
    fn compile(test: &str, name: &str, src: &str) -> Option<(TempDir, PathBuf)> {
        let dir =
            TempDir(std::env::temp_dir().join(format!("strobe-{test}-{}", std::process::id())));
        std::fs::create_dir_all(&dir.0).ok()?;
        let c = dir.0.join(name);
        std::fs::write(&c, src).ok()?;
        let bin = dir.0.join("bin");
        let ok = std::process::Command::new("cc")
            .args(["-g", "-O0", "-o"])
            .arg(&bin)
            .arg(&c)
            .status()
            .is_ok_and(|s| s.success());
        if !ok {
            crate::diag::skip::skip(test, "no working `cc` to build a target with DWARF");
            return None;
        }
        Some((dir, bin))
    }

    fn symbol(bin: &Path, name: &str) -> u64 {
        let data = std::fs::read(bin).unwrap();
        let elf = goblin::elf::Elf::parse(&data).unwrap();
        elf.syms
            .iter()
            .find(|s| elf.strtab.get_at(s.st_name) == Some(name))
            .map(|s| s.st_value)
            .unwrap()
    }

    const TARGET: &str = "int f(int n)\n{\n  if (n)\n    return 1;\n  return 2;\n}\n\n\
                          int main(void)\n{\n  return f(0);\n}\n";

    #[test]
    fn source_lines_resolve_through_the_line_table() {
        let t = "source_lines_resolve_through_the_line_table";
        let Some((_dir, bin)) = compile(t, "lines_target.c", TARGET) else {
            return;
        };
        let info = super::super::DebugInfo::open(&bin, &[]).unwrap();
        let at = |file, line, column| SourceLine { file, line, column };
        // The line of the opening brace is the function's entry.
        let f = symbol(&bin, "f");
        assert_eq!(info.line_address(&at("lines_target.c", 2, None)), Ok(f));
        // A statement inside the function lies past its entry, in order of the lines.
        let l3 = info.line_address(&at("lines_target.c", 3, None)).unwrap();
        let l5 = info.line_address(&at("lines_target.c", 5, None)).unwrap();
        assert!(f < l3 && l3 < l5, "{f:#x} {l3:#x} {l5:#x}");
        assert_eq!(
            info.line_address(&at("lines_target.c", 9, None)),
            Ok(symbol(&bin, "main"))
        );
        // A directory prefix is part of the match; a column must be one the table has.
        let full = bin.with_file_name("lines_target.c");
        let full = full.to_str().unwrap();
        assert_eq!(info.line_address(&at(full, 2, None)), Ok(f));
        assert!(matches!(
            info.line_address(&at("other/lines_target.c", 2, None)),
            Err(LineError::NoUnit { .. })
        ));
        assert_eq!(
            info.line_address(&at("lines_target.c", 7, None)),
            Err(LineError::NoCode {
                place: "lines_target.c:7".into()
            })
        );
        assert!(matches!(
            info.line_address(&at("lines_target.c", 3, Some(999))),
            Err(LineError::NoCode { .. })
        ));
        assert_eq!(
            info.line_address(&at("target.c", 2, None)),
            Err(LineError::NoUnit {
                file: "target.c".into()
            })
        );
    }

    #[test]
    fn source_line_prints_as_written() {
        let at = SourceLine {
            file: "a.c",
            line: 3,
            column: None,
        };
        assert_eq!(at.to_string(), "a.c:3");
        let at = SourceLine {
            column: Some(7),
            ..at
        };
        assert_eq!(
            LineError::NoCode {
                place: at.to_string()
            }
            .to_string(),
            "Unable to map 'a.c:3:7' to address"
        );
    }
}
