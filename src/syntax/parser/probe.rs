//! Probes: a comma-separated list of attach points, an optional `/predicate/`, and a body.
//!
//! Input: the parser at the start of a probe. Output: a [`Probe`].
//! Invariants: an attach point's extent follows bpftrace (it ends at whitespace, `{`, `,`, or a
//! `/` before any `:`, so `uprobe:/bin/bash:f` keeps its path); an attach point that does not
//! fit its kind is reported and dropped while the body is still parsed.

use super::top::tail_to_stmt;
use super::{PResult, Parser};
use crate::diag::Diagnostic;
use crate::syntax::ast::Probe;
use crate::syntax::attach::{parse_attach_point, AttachPoint};

impl Parser<'_> {
    /// `attach[, attach…] [/predicate/] { body }`.
    pub(crate) fn probe(&mut self) -> PResult<Probe> {
        self.skip_layout();
        let start = self.pos;
        let mut attach_points = Vec::new();
        let mut first = true;
        loop {
            attach_points.extend(self.attach_point(first)?);
            first = false;
            if !self.eat(",") {
                break;
            }
            // A trailing comma before the predicate or body is allowed.
            if self.check("{") || (self.check("/") && !self.check("//") && !self.check("/*")) {
                break;
            }
        }
        let predicate = if self.check("/") && !self.check("//") && !self.check("/*") {
            self.skip_layout();
            self.bump(1);
            let e = self.expr()?;
            if !self.eat("/") {
                if self.check("=") {
                    self.skip_layout();
                    let span = self.token_span();
                    self.report(
                        Diagnostic::error(span, "assignment is not allowed in a predicate")
                            .with_help("use '==' to compare"),
                    );
                    return Err(super::Recover);
                }
                return Err(self.expected("'/' to close the predicate"));
            }
            Some(e)
        } else {
            None
        };
        if !self.check("{") {
            return Err(self.expected("'{' to start the probe's body"));
        }
        let mut body = self.block()?;
        tail_to_stmt(&mut body);
        Ok(Probe {
            span: self.span_from(start),
            attach_points,
            predicate,
            body,
        })
    }

    /// One attach point's text, split by kind. An attach point that does not fit its kind is
    /// reported and dropped (an empty list) so the body is still parsed.
    fn attach_point(&mut self, first: bool) -> PResult<Vec<AttachPoint>> {
        self.skip_layout();
        let start = self.pos;
        if !self
            .peek()
            .is_some_and(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '*' | '"' | '$'))
        {
            let what = if first {
                "a probe, macro, function or map declaration"
            } else {
                "an attach point"
            };
            return Err(self.expected(what));
        }
        let mut seen_colon = false;
        let mut end = start;
        let bytes = self.src.as_bytes();
        while end < bytes.len() {
            let c = bytes[end];
            match c {
                b'{' | b'}' | b',' | b';' | b'(' | b')' => break,
                // Before the first ':' a '/' starts the predicate (or a comment); after it, it
                // belongs to a path (`uprobe:/bin/*sh:f`).
                b'/' if !seen_colon => break,
                b'"' => {
                    end += 1;
                    while end < bytes.len() && bytes[end] != b'"' && bytes[end] != b'\n' {
                        end += if bytes[end] == b'\\' { 2 } else { 1 };
                    }
                    end = (end + 1).min(bytes.len());
                    continue;
                }
                c if c.is_ascii_whitespace() => break,
                b':' => seen_colon = true,
                _ => {}
            }
            end += 1;
        }
        while !self.src.is_char_boundary(end) {
            end += 1;
        }
        let raw = &self.src[start..end];
        self.bump(end - start);
        let substituted = substitute_params(raw, &self.params);
        let raw = substituted.as_deref().unwrap_or(raw);
        match parse_attach_point(raw, start) {
            Ok(aps) => Ok(aps),
            Err(e) => {
                let mut d = Diagnostic::error(e.span, e.message);
                if raw.ends_with(':')
                    && self.rest().starts_with([' ', '\t'])
                    && !self.check("{")
                    && !self.check("/")
                {
                    d = d.with_help("an attach point cannot contain spaces: write `kind:target`");
                } else if let Some(h) = e.help {
                    d = d.with_help(h);
                }
                self.report(d);
                Ok(Vec::new())
            }
        }
    }
}

/// `raw` with each unquoted `$N` whose parameter was given replaced by the parameter's text;
/// `None` when nothing was replaced. Numbers in attach points (`interval:s:$1`) read the
/// same either way; names (`BEG$1`, `tracepoint:syscalls:$1`) need the text.
fn substitute_params(raw: &str, params: &[String]) -> Option<String> {
    if params.is_empty() || !raw.contains('$') {
        return None;
    }
    let mut out = String::with_capacity(raw.len());
    let mut changed = false;
    let mut in_quotes = false;
    let mut rest = raw;
    while let Some(c) = rest.chars().next() {
        if c == '"' {
            in_quotes = !in_quotes;
        }
        if c == '$' && !in_quotes {
            let digits = rest[1..].bytes().take_while(u8::is_ascii_digit).count();
            let n = rest[1..1 + digits].parse::<usize>().ok();
            if let Some(text) = n.filter(|n| *n >= 1).and_then(|n| params.get(n - 1)) {
                out.push_str(text);
                rest = &rest[1 + digits..];
                changed = true;
                continue;
            }
        }
        out.push(c);
        rest = &rest[c.len_utf8()..];
    }
    changed.then_some(out)
}

#[cfg(test)]
mod param_tests {
    use super::substitute_params;

    #[test]
    fn positional_parameters_are_replaced_in_attach_points() {
        let p = vec!["IN".to_string(), "i:ms:1".to_string()];
        assert_eq!(substitute_params("BEG$1", &p).as_deref(), Some("BEGIN"));
        assert_eq!(substitute_params("$2", &p).as_deref(), Some("i:ms:1"));
        assert_eq!(substitute_params("u:\"$1\":f", &p), None);
        assert_eq!(substitute_params("i:ms:$3", &p), None);
        assert_eq!(substitute_params("kprobe:f", &p), None);
    }
}
