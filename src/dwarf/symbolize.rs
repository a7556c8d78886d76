//! Source locations of code addresses, for stack frames printed as `func+off@file.c:LINE` and
//! the `[inlined] f@file.c:LINE` frames of functions the compiler inlined there.
//!
//! Input: a binary's link-time (virtual) address. Output: its [`SourceFrame`]s, innermost
//! inlined call first, the function that holds the code last.
//! The work is the `addr2line` crate's (gimli's own address→line library, on the same gimli
//! and the same mapped sections as the rest of this module). Laziness: [`LineInfo::open`]
//! maps the files and indexes unit ranges only; a unit's line table and functions are parsed
//! when an address inside it is first asked about. Split units (`.dwo`) are not loaded here: the
//! skeleton's line table still gives file and line, without inlined frames.
//! Invariant: malformed DWARF gives fewer frames, never a panic or an error at print time.

use std::path::Path;

use super::load::{DebugError, DebugFiles};
use super::R;

/// One source-level frame at an address.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct SourceFrame {
    /// The function's name from DWARF (`None`: the unit has no entry for it).
    pub function: Option<String>,
    /// The source file's path as DWARF spells it (directory joined), and the line.
    pub file: Option<String>,
    pub line: Option<u32>,
    /// A call the compiler inlined into the frame after it.
    pub inlined: bool,
}

/// The line tables and inlined-call trees of one binary.
pub struct LineInfo {
    ctx: addr2line::Context<R>,
}

impl std::fmt::Debug for LineInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("LineInfo")
    }
}

impl LineInfo {
    /// Maps `path`'s DWARF (its own sections or a separate debug file found as
    /// [`super::DebugInfo::open`] finds it; `search` are `--debuginfo` directories).
    pub fn open(path: &Path, search: &[std::path::PathBuf]) -> Result<LineInfo, DebugError> {
        let files = DebugFiles::open(path, search)?;
        let ctx = addr2line::Context::from_arc_dwarf(files.dwarf.clone())
            .map_err(|e| files.malformed(e))?;
        Ok(LineInfo { ctx })
    }

    /// The frames at link-time address `vaddr`: inlined calls innermost first, then the
    /// function holding the code. Empty when no unit covers the address.
    pub fn frames(&self, vaddr: u64) -> Vec<SourceFrame> {
        let mut out = Vec::new();
        let Ok(mut it) = self.ctx.find_frames(vaddr).skip_all_loads() else {
            return out;
        };
        while let Ok(Some(f)) = it.next() {
            let function = f
                .function
                .as_ref()
                .and_then(|n| n.raw_name().ok())
                .map(|n| n.into_owned());
            let (file, line) = match &f.location {
                Some(l) => (l.file.map(str::to_string), l.line),
                None => (None, None),
            };
            out.push(SourceFrame {
                function,
                file,
                line,
                inlined: true,
            });
        }
        if let Some(last) = out.last_mut() {
            last.inlined = false;
        }
        out
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_file_is_an_error_not_a_panic() {
        let e = LineInfo::open(Path::new("/nonexistent/strobe-test-binary"), &[]).unwrap_err();
        assert!(matches!(e, DebugError::File { .. }), "{e}");
    }
}
