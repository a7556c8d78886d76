//! Splitting an attach point's text into its typed [`AttachSpec`], kind by kind: the parts
//! here, each kind's form in its own file beside this one (named as in [`crate::kinds`]).
//!
//! Input: the raw text and its offset in the source. Output: [`AttachPoint`]s or an
//! [`AttachError`] carrying the span of the offending part.
//! Invariant: pure text processing; nothing here looks at the system.

use super::{glob_match, has_wildcard, AttachNum, AttachPoint, AttachSpec, ProbeKind, TimeUnit};
use crate::diag::Span;

crate::kinds::kind_modules!();

/// An attach point that does not fit its kind: a message and where.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{message}")]
pub struct AttachError {
    pub span: Span,
    pub message: String,
    pub help: Option<String>,
}

struct Part {
    text: String,
    span: Span,
}

/// Splits at unquoted `:`, removing quotes (and backslash escapes inside them).
fn split_parts(raw: &str, base: usize) -> Result<Vec<Part>, AttachError> {
    let mut parts = Vec::new();
    let mut cur = String::new();
    let mut start = 0;
    let mut in_quotes = false;
    let mut chars = raw.char_indices().peekable();
    while let Some((i, c)) = chars.next() {
        match c {
            ':' if !in_quotes => {
                parts.push(Part {
                    text: std::mem::take(&mut cur),
                    span: Span::new(base + start, base + i),
                });
                start = i + 1;
            }
            '"' => in_quotes = !in_quotes,
            '$' if !in_quotes => {
                // `$N` (N ≥ 1) is a positional parameter, expanded later; anything else is a
                // mistake unless quoted.
                let digits: String = raw[i + 1..]
                    .chars()
                    .take_while(char::is_ascii_digit)
                    .collect();
                if digits.is_empty() || digits.starts_with('0') {
                    let bad = raw[i..].chars().take(2).collect::<String>();
                    return Err(AttachError {
                        span: Span::new(base + i, base + i + bad.len()),
                        message: format!("invalid positional parameter '{bad}' in attach point"),
                        help: Some(format!(
                            "positional parameters are $1, $2, …; quote the part if '$' is meant literally, e.g. \"{bad}\""
                        )),
                    });
                }
                cur.push(c);
            }
            '\\' if in_quotes => {
                if let Some((_, n)) = chars.next() {
                    cur.push(n);
                }
            }
            _ => cur.push(c),
        }
    }
    if in_quotes {
        return Err(AttachError {
            span: Span::new(base, base + raw.len()),
            message: "unterminated quote in attach point".into(),
            help: None,
        });
    }
    parts.push(Part {
        text: cur,
        span: Span::new(base + start, base + raw.len()),
    });
    Ok(parts)
}

fn count_error(kind: ProbeKind, expected: &str, parts: &[Part], span: Span) -> AttachError {
    AttachError {
        span,
        message: format!(
            "{} probe type requires {} arguments, found {}",
            kind.name(),
            expected,
            parts.len() - 1
        ),
        help: Some(format!("expected {}", usage(kind))),
    }
}

/// The accepted forms of each kind, for hints.
pub fn usage(kind: ProbeKind) -> &'static str {
    kind.info().usage
}

/// A number as bpftrace's attach-point parser reads it: decimal, `0x`, `0b`, leading-zero octal,
/// `_` separators, `NeM` scientific, and duration suffixes (scaled to nanoseconds).
pub fn parse_attach_uint(text: &str) -> Result<u64, String> {
    let cleaned: String = text.chars().filter(|&c| c != '_').collect();
    match crate::syntax::parser::literal::parse_int_text(&cleaned) {
        Ok(lit) => Ok(lit.value),
        Err(e) => Err(e.to_string()),
    }
}

fn num(part: &Part, what: &str) -> Result<AttachNum, AttachError> {
    if let Some(n) = part.text.strip_prefix('$') {
        if let Ok(n) = n.parse::<u32>() {
            if n > 0 {
                return Ok(AttachNum::Param(n));
            }
        }
    }
    parse_attach_uint(&part.text)
        .map(AttachNum::Lit)
        .map_err(|e| AttachError {
            span: part.span,
            message: format!("invalid {what} '{}': {e}", part.text),
            help: None,
        })
}

/// `func+offset` → (func, offset).
fn split_offset(
    part: &Part,
    allow: bool,
    kind: ProbeKind,
) -> Result<(String, Option<u64>), AttachError> {
    let Some((func, off)) = part.text.split_once('+') else {
        return Ok((part.text.clone(), None));
    };
    let err = |message: String| AttachError {
        span: part.span,
        message,
        help: None,
    };
    if !allow {
        return Err(err(format!("{} probes do not take an offset", kind.name())));
    }
    if off.contains('+') {
        return Err(err("an attach point takes at most one offset".into()));
    }
    let off = parse_attach_uint(off).map_err(|e| err(format!("invalid offset '{off}': {e}")))?;
    Ok((func.to_string(), Some(off)))
}

/// A bare number in a function position is an address.
fn func_or_address(func: String) -> (String, Option<u64>) {
    if func.starts_with(|c: char| c.is_ascii_digit()) {
        if let Ok(a) = parse_attach_uint(&func) {
            return (String::new(), Some(a));
        }
    }
    (func, None)
}

/// One kind's attach-point parser, from the kind's file here.
struct Hooks {
    /// The kinds it parses (a file may serve a kind and its return-probe twin).
    kinds: &'static [ProbeKind],
    /// The kind's own spec form from the attach point's parts.
    spec: fn(ProbeKind, &[Part], Span) -> Result<AttachSpec, AttachError>,
}

/// The parsers, one per kind in [`crate::kinds::KINDS`]' order.
const PARSERS: [&Hooks; crate::kinds::KINDS.len()] = crate::kinds::kind_table!();

/// Parses one attach point's raw text, which starts at byte `start` of the source. A wildcard
/// probe type expands to every kind it matches whose form fits the rest of the text.
pub fn parse_attach_point(raw: &str, start: usize) -> Result<Vec<AttachPoint>, AttachError> {
    let span = Span::new(start, start + raw.len());
    let mut parts = split_parts(raw, start)?;
    let mut label = None;
    if let Some(eq) = parts[0].text.find('=') {
        if eq + 1 < parts[0].text.len() {
            label = Some(parts[0].text[..eq].to_string());
            let rest = parts[0].text[eq + 1..].to_string();
            parts[0].span.start += eq as u32 + 1;
            parts[0].text = rest;
        }
    }
    let provider = parts[0].text.clone();
    let pspan = parts[0].span;
    if provider.is_empty() {
        return Err(AttachError {
            span,
            message: "expected a probe type before ':'".into(),
            help: None,
        });
    }
    if provider.contains(['*', '?']) {
        let user = parts.len() >= 2 && parts[1].text.contains('/');
        let space = if user {
            crate::kinds::Space::User
        } else {
            crate::kinds::Space::Kernel
        };
        let out: Vec<AttachPoint> = crate::kinds::listed(space)
            .into_iter()
            .filter(|k| glob_match(&provider, k.name()))
            .filter_map(|kind| {
                let spec = spec_for(kind, &parts, span).ok()?;
                Some(AttachPoint {
                    span,
                    raw: raw.to_string(),
                    label: label.clone(),
                    provider: provider.clone(),
                    kind,
                    spec,
                })
            })
            .collect();
        if out.is_empty() {
            return Err(AttachError {
                span: pspan,
                message: format!("no probe type matches '{provider}'"),
                help: None,
            });
        }
        return Ok(out);
    }
    let kind = ProbeKind::from_name(&provider).ok_or_else(|| AttachError {
        span: pspan,
        message: format!("unknown probe type '{provider}'"),
        help: crate::diag::nearest(&provider, ProbeKind::all_spellings())
            .map(|n| format!("did you mean '{n}'?")),
    })?;
    let spec = spec_for(kind, &parts, span)?;
    Ok(vec![AttachPoint {
        span,
        raw: raw.to_string(),
        label,
        provider,
        kind,
        spec,
    }])
}

fn nonempty(p: &Part, what: &str) -> Result<String, AttachError> {
    if p.text.is_empty() {
        Err(AttachError {
            span: p.span,
            message: format!("empty {what} in attach point"),
            help: None,
        })
    } else {
        Ok(p.text.clone())
    }
}

/// The kind's own spec form, parsed by the kind's file here.
fn spec_for(kind: ProbeKind, parts: &[Part], span: Span) -> Result<AttachSpec, AttachError> {
    (PARSERS[kind as usize].spec)(kind, parts, span)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_parser_table_has_one_entry_per_kind_in_order() {
        for (i, k) in crate::kinds::KINDS.iter().enumerate() {
            assert!(
                PARSERS[i].kinds.contains(&k.kind),
                "{} is out of place",
                k.name
            );
        }
    }
}
