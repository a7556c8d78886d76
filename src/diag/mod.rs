//! Diagnostics shared by every text front end (the script parser, the checker, the assembler).
//!
//! Input: a [`SourceFile`] and [`Diagnostic`]s whose spans are byte ranges into it.
//! Output: text in the `file:line:col: error: message` form, followed by the source line and
//! a caret/underline under the span, then notes and a help line.
//! Invariant: rendering never panics, whatever the spans are (out-of-range spans are clamped),
//! because a diagnostic about bad input must not itself fail on bad input.

#[cfg(test)]
pub(crate) mod skip;
mod suggest;

pub use suggest::{edit_distance, nearest};

use std::fmt;

/// A half-open byte range `start..end` in one source file.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Span {
    pub start: u32,
    pub end: u32,
}

impl Span {
    /// No place in the source: a diagnostic about the command line or the run rather than
    /// the script (bpftrace prints those as a bare `ERROR: …`, hints as `HINT: …`).
    pub const NOWHERE: Span = Span {
        start: u32::MAX,
        end: u32::MAX,
    };

    pub fn new(start: usize, end: usize) -> Span {
        Span {
            start: start as u32,
            end: end.max(start) as u32,
        }
    }

    /// The smallest span covering both.
    pub fn to(self, other: Span) -> Span {
        Span {
            start: self.start.min(other.start),
            end: self.end.max(other.end),
        }
    }

    pub fn len(self) -> usize {
        (self.end - self.start) as usize
    }

    pub fn is_empty(self) -> bool {
        self.start == self.end
    }
}

/// A named text with a line index, built once so that line/column lookups are a binary search.
#[derive(Clone, Debug)]
pub struct SourceFile {
    pub name: String,
    pub text: String,
    line_starts: Box<[u32]>,
    /// Each non-ASCII character's byte offset and the continuation bytes of it and every
    /// one before it: a column is the byte distance less those, found by binary search (a
    /// count of characters per lookup is quadratic on a long line).
    wide_chars: Box<[(u32, u32)]>,
    /// Texts appended after the main one under names of their own (strobe's stdlib files):
    /// each region's byte offset, index of its first line and name. Locations inside a region
    /// read as `NAME:LINE:COL` counted from the region's start.
    regions: Box<[(u32, usize, String)]>,
}

impl SourceFile {
    pub fn new(name: impl Into<String>, text: impl Into<String>) -> SourceFile {
        let text = text.into();
        let mut line_starts = vec![0];
        line_starts.extend(text.match_indices('\n').map(|(i, _)| i as u32 + 1));
        let mut extra = 0;
        let wide_chars = if text.is_ascii() {
            Vec::new()
        } else {
            text.char_indices()
                .filter(|(_, c)| !c.is_ascii())
                .map(|(i, c)| {
                    extra += c.len_utf8() as u32 - 1;
                    (i as u32, extra)
                })
                .collect()
        };
        SourceFile {
            name: name.into(),
            text,
            line_starts: line_starts.into_boxed_slice(),
            wide_chars: wide_chars.into_boxed_slice(),
            regions: Box::default(),
        }
    }

    /// This text with `text` appended as a region named `name` (on lines of its own), and the
    /// byte offset it starts at.
    pub fn with_region(&self, name: &str, text: &str) -> (SourceFile, u32) {
        let mut all = self.text.clone();
        if !all.is_empty() && !all.ends_with('\n') {
            all.push('\n');
        }
        let start = all.len() as u32;
        all.push_str(text);
        let mut out = SourceFile::new(self.name.clone(), all);
        let first_line = out.line_starts.partition_point(|&s| s <= start) - 1;
        let mut regions = self.regions.to_vec();
        regions.push((start, first_line, name.to_string()));
        out.regions = regions.into_boxed_slice();
        (out, start)
    }

    /// The region holding `offset`: its start, first line and name (`None`: the main text).
    fn region(&self, offset: u32) -> Option<&(u32, usize, String)> {
        let i = self.regions.partition_point(|r| r.0 <= offset);
        i.checked_sub(1).map(|i| &self.regions[i])
    }

    /// The name of the file `offset` is in: the main text's or a region's.
    pub fn name_at(&self, offset: u32) -> &str {
        self.region(offset.min(self.text.len() as u32))
            .map_or(&self.name, |r| &r.2)
    }

    /// 1-based line and column (in characters) of a byte offset, clamped to the text; inside
    /// a region, counted from the region's first line.
    pub fn line_col(&self, offset: u32) -> (usize, usize) {
        let offset = offset.min(self.text.len() as u32);
        let (line, col) = self.abs_line_col(offset);
        let first = self.region(offset).map_or(0, |r| r.1);
        (line - first, col)
    }

    /// The text of the line holding byte `offset`, without its newline.
    pub fn line_text_at(&self, offset: u32) -> &str {
        let offset = offset.min(self.text.len() as u32);
        self.line_text(self.abs_line_col(offset).0)
    }

    /// [`Self::line_col`] with lines counted over the whole text.
    fn abs_line_col(&self, offset: u32) -> (usize, usize) {
        let line = self.line_starts.partition_point(|&s| s <= offset) - 1;
        let start = self.line_starts[line] as usize;
        // Continuation bytes before `at` (an offset inside a character counts it whole).
        let before = |at: u32| {
            let i = self.wide_chars.partition_point(|&(p, _)| p < at);
            i.checked_sub(1).map_or(0, |i| self.wide_chars[i].1)
        };
        let cont = before(offset) - before(start as u32);
        let col = (offset as usize - start).saturating_sub(cont as usize);
        (line + 1, col + 1)
    }

    /// The text of a 1-based line of the whole text (regions included), without its newline.
    pub fn line_text(&self, line: usize) -> &str {
        let Some(&start) = self.line_starts.get(line.wrapping_sub(1)) else {
            return "";
        };
        let end = self
            .line_starts
            .get(line)
            .map_or(self.text.len(), |&e| e as usize - 1);
        self.text
            .get(start as usize..end.max(start as usize))
            .unwrap_or("")
            .trim_end_matches('\r')
    }
}

#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Severity {
    Error,
    Warning,
    Note,
}

impl fmt::Display for Severity {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(match self {
            Severity::Error => "error",
            Severity::Warning => "warning",
            Severity::Note => "note",
        })
    }
}

/// The label of a macro call a diagnostic's place was expanded from.
pub const EXPANDED_FROM: &str = "expanded from";

/// One message about one place in a source file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Diagnostic {
    pub severity: Severity,
    pub message: String,
    pub span: Span,
    /// Secondary places, each with a short label, rendered as `note:` lines with their own caret.
    pub labels: Vec<(Span, String)>,
    pub notes: Vec<String>,
    pub help: Option<String>,
    /// A line printed before the diagnostic, in the words of the tool bpftrace leaves the job
    /// to (clang's `definitions.h:2:10: fatal error: 'x.h' file not found`), which bpftrace's
    /// users and tests look for. Boxed: diagnostics travel in `Result`s and stay small.
    pub preface: Option<Box<String>>,
}

impl Diagnostic {
    pub fn error(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Error,
            message: message.into(),
            span,
            labels: Vec::new(),
            notes: Vec::new(),
            help: None,
            preface: None,
        }
    }

    pub fn warning(span: Span, message: impl Into<String>) -> Diagnostic {
        Diagnostic {
            severity: Severity::Warning,
            ..Diagnostic::error(span, message)
        }
    }

    pub fn with_help(mut self, help: impl Into<String>) -> Diagnostic {
        self.help = Some(help.into());
        self
    }

    pub fn with_note(mut self, note: impl Into<String>) -> Diagnostic {
        self.notes.push(note.into());
        self
    }

    pub fn with_label(mut self, span: Span, label: impl Into<String>) -> Diagnostic {
        self.labels.push((span, label.into()));
        self
    }

    /// The macro calls this diagnostic's place was expanded from, innermost first (labels
    /// [`EXPANDED_FROM`]).
    pub fn expansion(&self) -> impl Iterator<Item = Span> + '_ {
        self.labels
            .iter()
            .filter(|(_, l)| l == EXPANDED_FROM)
            .map(|(s, _)| *s)
    }

    /// Adds the macro calls the diagnostic's place was expanded from, innermost first, each
    /// rendered after it as `FILE:L:C: ERROR: expanded from`, as bpftrace does.
    pub fn set_expansion(&mut self, calls: Vec<Span>) {
        self.labels
            .extend(calls.into_iter().map(|s| (s, EXPANDED_FROM.to_string())));
    }

    pub fn is_error(&self) -> bool {
        self.severity == Severity::Error
    }

    /// Renders a script diagnostic as bpftrace does: `file:line:col-endcol: ERROR: message`
    /// (`file:line-endline` for a span over several lines), the source line, a caret line,
    /// then labels, notes and help.
    pub fn render(&self, src: &SourceFile) -> String {
        self.render_styled(src, Style::Bpftrace)
    }

    /// Renders in `style`: [`Style::Llvm`] is `file:line:col: error: message`, as LLVM's
    /// assembler reports (the `strobe asm` side).
    pub fn render_styled(&self, src: &SourceFile, style: Style) -> String {
        let mut out = String::new();
        if let Some(p) = &self.preface {
            out.push_str(p);
            out.push('\n');
        }
        if self.span == Span::NOWHERE {
            let sev = self.severity.to_string().to_uppercase();
            out.push_str(&format!("{sev}: {}\n", self.message));
            for note in &self.notes {
                out.push_str(&format!("NOTE: {note}\n"));
            }
            if let Some(help) = &self.help {
                out.push_str(&format!("HINT: {help}\n"));
            }
            return out;
        }
        render_at(
            &mut out,
            src,
            self.span,
            self.severity,
            &self.message,
            style,
        );
        for (span, label) in &self.labels {
            // A macro call the place was expanded from reads with the diagnostic's severity,
            // as bpftrace's; other labels are notes.
            let sev = if label == EXPANDED_FROM {
                self.severity
            } else {
                Severity::Note
            };
            render_at(&mut out, src, *span, sev, label, style);
        }
        for note in &self.notes {
            out.push_str("note: ");
            out.push_str(note);
            out.push('\n');
        }
        if let Some(help) = &self.help {
            out.push_str("help: ");
            out.push_str(help);
            out.push('\n');
        }
        out
    }
}

/// How a diagnostic's location and severity read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Style {
    /// bpftrace's: `stdin:1:15-35: ERROR: …`, `WARNING:`.
    Bpftrace,
    /// LLVM's: `p.s:1:15: error: …`.
    Llvm,
}

fn render_at(
    out: &mut String,
    src: &SourceFile,
    span: Span,
    sev: Severity,
    msg: &str,
    style: Style,
) {
    use std::fmt::Write;
    let (line, col) = src.line_col(span.start);
    let (end_line, end_col) = src.line_col(span.end.max(span.start));
    let name = src.name_at(span.start);
    match style {
        Style::Llvm => {
            let _ = writeln!(out, "{}:{}:{}: {}: {}", name, line, col, sev, msg);
        }
        Style::Bpftrace => {
            let at = if end_line != line {
                format!("{line}-{end_line}")
            } else {
                format!("{line}:{col}-{}", end_col.max(col + 1))
            };
            let sev = sev.to_string().to_uppercase();
            let _ = writeln!(out, "{name}:{at}: {sev}: {msg}");
        }
    }
    let text = src.line_text_at(span.start);
    let width = if end_line == line && end_col > col {
        end_col - col
    } else {
        1
    };
    if style == Style::Bpftrace {
        // bpftrace's context: tabs as four spaces, the span underlined with `~`.
        let _ = writeln!(out, "{}", text.replace('\t', "    "));
        let mut marks = String::new();
        for (i, c) in text.chars().chain(std::iter::repeat(' ')).enumerate() {
            if i + 1 >= col + width {
                break;
            }
            let m = if i + 1 < col { ' ' } else { '~' };
            let n = if c == '\t' { 4 } else { 1 };
            marks.extend(std::iter::repeat(m).take(n));
        }
        let _ = writeln!(out, "{marks}");
        return;
    }
    let _ = writeln!(out, "{text}");
    // Tabs in the source line are kept in the padding so the caret lines up in a terminal.
    let pad: String = text
        .chars()
        .take(col - 1)
        .map(|c| if c == '\t' { '\t' } else { ' ' })
        .collect();
    let _ = writeln!(out, "{pad}^{}", "~".repeat(width - 1));
}

/// Renders a list of diagnostics, errors and warnings in source order, as bpftrace does.
pub fn render_all(diags: &[Diagnostic], src: &SourceFile) -> String {
    render_all_styled(diags, src, Style::Bpftrace)
}

/// [`render_all`] in `style`.
pub fn render_all_styled(diags: &[Diagnostic], src: &SourceFile, style: Style) -> String {
    let mut sorted: Vec<&Diagnostic> = diags.iter().collect();
    sorted.sort_by_key(|d| d.span.start);
    sorted.iter().map(|d| d.render_styled(src, style)).collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn render_points_caret_under_span() {
        let src = SourceFile::new("t.bt", "BEGIN {\n  printf(\"x\", foo);\n}\n");
        let start = src.text.find("foo").unwrap();
        let d = Diagnostic::error(Span::new(start, start + 3), "unknown identifier 'foo'")
            .with_help("did you mean 'for'?");
        assert_eq!(
            d.render(&src),
            "t.bt:2:15-18: ERROR: unknown identifier 'foo'\n  printf(\"x\", foo);\n              ~~~\nhelp: did you mean 'for'?\n"
        );
    }

    #[test]
    fn render_without_place_is_a_bare_line_with_its_hint() {
        let src = SourceFile::new("t.bt", "BEGIN {}\n");
        let d = Diagnostic::error(Span::NOWHERE, "bad option").with_help("try --aa");
        assert_eq!(d.render(&src), "ERROR: bad option\nHINT: try --aa\n");
    }

    #[test]
    fn llvm_style_has_a_column_and_lowercase_severity() {
        let src = SourceFile::new("p.s", "exti\n");
        let d = Diagnostic::error(Span::new(0, 4), "unknown instruction");
        assert_eq!(
            d.render_styled(&src, Style::Llvm),
            "p.s:1:1: error: unknown instruction\nexti\n^~~~\n"
        );
    }

    #[test]
    fn bpftrace_style_spans_several_lines_as_a_line_range() {
        let src = SourceFile::new("t.bt", "BEGIN {\n  x\n}\n");
        let d = Diagnostic::warning(Span::new(0, 12), "w");
        assert!(d.render(&src).starts_with("t.bt:1-3: WARNING: w\n"));
    }

    #[test]
    fn render_clamps_out_of_range_spans() {
        let src = SourceFile::new("t.bt", "ab");
        let d = Diagnostic::error(Span::new(10, 20), "eof");
        assert_eq!(d.render(&src), "t.bt:1:3-4: ERROR: eof\nab\n  ~\n");
    }

    #[test]
    fn a_region_reads_as_its_own_file() {
        let src = SourceFile::new("stdin", "BEGIN { f(1) }");
        let (all, start) = src.with_region("stdlib/x.bt", "// x\nmacro f(a) { a + \"s\" }\n");
        assert_eq!(start, 15);
        let plus = all.text.find("a + ").unwrap();
        let mut d = Diagnostic::error(Span::new(plus, plus + 7), "bad +");
        d.set_expansion(vec![Span::new(8, 12)]);
        assert_eq!(
            d.render(&all),
            "stdlib/x.bt:2:14-21: ERROR: bad +\nmacro f(a) { a + \"s\" }\n             ~~~~~~~\n\
             stdin:1:9-13: ERROR: expanded from\nBEGIN { f(1) }\n        ~~~~\n"
        );
        assert_eq!(all.name_at(3), "stdin");
        assert_eq!(all.line_col(3), (1, 4));
    }

    #[test]
    fn line_col_counts_characters_not_bytes() {
        let src = SourceFile::new("t", "é = x\nsecond");
        assert_eq!(src.line_col(5), (1, 5));
        assert_eq!(src.line_col(7), (2, 1));
        assert_eq!(src.line_text(2), "second");
        assert_eq!(src.line_text(3), "");
        let wide = SourceFile::new("t", "aé\n€x🦀y\nz");
        let by_count = |off: usize| {
            let start = wide.text[..off].rfind('\n').map_or(0, |i| i + 1);
            wide.text[start..off].chars().count() + 1
        };
        for (off, _) in wide.text.char_indices().chain([(wide.text.len(), ' ')]) {
            assert_eq!(wide.line_col(off as u32).1, by_count(off), "offset {off}");
        }
    }
}
