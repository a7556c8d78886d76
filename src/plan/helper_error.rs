//! Helper failures the generated code reports at run time with `-k` (bpftrace's runtime
//! warnings): a `bpf_probe_read_*` that returned an error, a map lookup that found nothing.
//!
//! Input: one [`HelperErrorSite`] per checked call site, pushed by the code generator, which
//! writes an [`super::record::EventKind::HelperError`] record (`id` = the site's index, then
//! the helper's result as an `i64`) when the call fails. Output: the warning text and JSON
//! object the runtime prints, in bpftrace's words. No syscalls.

use crate::asm::isa::Helper;
use crate::diag::{Diagnostic, SourceFile, Span};

/// Bytes of a helper-error record after its header: the helper's result.
pub const HELPER_ERROR_ARG_SIZE: usize = 8;

/// One checked helper call: which helper and where in the script.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct HelperErrorSite {
    pub helper: Helper,
    pub span: Span,
    /// Set by [`HelperErrorSite::locate`]: the script's name, line and column (1-based).
    pub filename: String,
    pub line: usize,
    pub col: usize,
    /// `FILE:LINE:COL-ENDCOL`, as diagnostics print it.
    pub location: String,
    /// The source line and its underline, as a diagnostic prints them after its message.
    pub context: String,
}

impl HelperErrorSite {
    pub fn new(helper: Helper, span: Span) -> HelperErrorSite {
        HelperErrorSite {
            helper,
            span,
            filename: String::new(),
            line: 0,
            col: 0,
            location: String::new(),
            context: String::new(),
        }
    }

    /// Fills in the location fields from the script's text.
    pub fn locate(&mut self, src: &SourceFile) {
        let (line, col) = src.line_col(self.span.start);
        self.filename = src.name_at(self.span.start).to_string();
        self.line = line;
        self.col = col;
        // A warning's rendering: its first line is the location and message, the rest the
        // source context.
        let rendered = Diagnostic::warning(self.span, "").render(src);
        let (first, rest) = rendered.split_once('\n').unwrap_or((&rendered, ""));
        self.location = first
            .strip_suffix(": WARNING: ")
            .unwrap_or(first)
            .to_string();
        self.context = rest.to_string();
    }

    /// The warning's message for the helper's result `retcode` (bpftrace's words).
    pub fn message(&self, retcode: i64) -> String {
        match self.helper {
            Helper::MapLookupElem => "Can't lookup map element because it does not exist.".into(),
            Helper::MapDeleteElem if retcode == -(libc::ENOENT as i64) => {
                "Can't delete map element because it does not exist.".into()
            }
            _ => errno_text(retcode),
        }
    }

    /// The text printed on stderr: location, message, the helper and its result, then the
    /// source line with the call underlined.
    pub fn text(&self, retcode: i64) -> String {
        format!(
            "{}: WARNING: {}\nAdditional Info - helper: {}, retcode: {retcode}\n{}",
            self.location,
            self.message(retcode),
            self.helper.name(),
            self.context
        )
    }

    /// The JSON object printed with `-f json` (one line, no newline).
    pub fn json(&self, retcode: i64) -> String {
        format!(
            "{{\"type\": \"helper_error\", \"msg\": {}, \"helper\": {}, \"retcode\": {retcode}, \
             \"filename\": {}, \"line\": {}, \"col\": {}}}",
            json_str(&errno_text(retcode)),
            json_str(self.helper.name()),
            json_str(&self.filename),
            self.line,
            self.col
        )
    }
}

/// `strerror(-retcode)`: "Bad address" for -14, "Success" for 0.
fn errno_text(retcode: i64) -> String {
    let errno = i32::try_from(-retcode).unwrap_or(0);
    let s = std::io::Error::from_raw_os_error(errno).to_string();
    match s.rfind(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}

fn json_str(s: &str) -> String {
    let mut out = String::from("\"");
    for c in s.chars() {
        match c {
            '"' => out.push_str("\\\""),
            '\\' => out.push_str("\\\\"),
            c if (c as u32) < 0x20 => out.push_str(&format!("\\u{:04x}", c as u32)),
            c => out.push(c),
        }
    }
    out.push('"');
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    fn site(helper: Helper, text: &str, at: &str) -> HelperErrorSite {
        let src = SourceFile::new("stdin", text.to_string());
        let start = text.find(at).unwrap();
        let mut s = HelperErrorSite::new(helper, Span::new(start, start + at.len()));
        s.locate(&src);
        s
    }

    #[test]
    fn map_lookup_warning_reads_as_bpftrace_prints_it() {
        let s = site(
            Helper::MapLookupElem,
            r#"i:ms:100 { @[1] = 1; printf("%d\n", @[2]); exit(); }"#,
            "@[2]",
        );
        assert_eq!(
            s.text(0),
            "stdin:1:37-41: WARNING: Can't lookup map element because it does not exist.\n\
             Additional Info - helper: map_lookup_elem, retcode: 0\n\
             i:ms:100 { @[1] = 1; printf(\"%d\\n\", @[2]); exit(); }\n\
             \x20                                   ~~~~\n"
        );
    }

    #[test]
    fn probe_read_failure_json_names_helper_errno_and_column() {
        let s = site(
            Helper::ProbeReadUser,
            "uprobe:/bin/x:f { $a = *arg0; }",
            "*arg0",
        );
        assert_eq!(
            s.json(-14),
            "{\"type\": \"helper_error\", \"msg\": \"Bad address\", \"helper\": \
             \"probe_read_user\", \"retcode\": -14, \"filename\": \"stdin\", \"line\": 1, \
             \"col\": 24}"
        );
        assert!(s
            .text(-14)
            .starts_with("stdin:1:24-29: WARNING: Bad address\n"));
    }
}
