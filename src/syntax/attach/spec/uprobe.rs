//! `uprobe:binary[:cpp]:function[+offset]`, an address, or
//! `uprobe:binary@file:line[:column]`; `uretprobe:` without offsets or source lines.

use super::{
    count_error, func_or_address, has_wildcard, nonempty, parse_attach_uint, split_offset,
    AttachError, AttachSpec, Hooks, Part, ProbeKind, Span,
};

/// The parser of `uprobe`, `uretprobe` attach points.
pub(super) const UPROBE: Hooks = Hooks {
    kinds: &[ProbeKind::Uprobe, ProbeKind::Uretprobe],
    spec,
};
pub(super) const URETPROBE: Hooks = UPROBE;

pub(super) fn spec(kind: ProbeKind, parts: &[Part], span: Span) -> Result<AttachSpec, AttachError> {
    if parts.len() >= 2 && parts[1].text.contains('@') {
        return source_location_spec(kind, parts, span);
    }
    function_spec(kind, parts, span)
}

fn function_spec(kind: ProbeKind, parts: &[Part], span: Span) -> Result<AttachSpec, AttachError> {
    let n = parts.len();
    let bad = |expected: &str| count_error(kind, expected, parts, span);
    if n != 3 && n != 4 {
        return Err(bad("2 or 3"));
    }
    let target = nonempty(&parts[1], "binary path")?;
    let lang = (n == 4).then(|| parts[2].text.clone());
    // bpftrace knows one language qualifier: `cpp` (demangled C++ names).
    if let Some(l) = lang.as_deref().filter(|l| *l != "cpp") {
        return Err(AttachError {
            span: parts[2].span,
            message: format!("unsupported language type: {l}"),
            help: Some("the only language qualifier is `cpp`".into()),
        });
    }
    let fpart = &parts[n - 1];
    nonempty(fpart, "function")?;
    let (func, offset) = split_offset(fpart, kind == ProbeKind::Uprobe, kind)?;
    let (func, address) = if offset.is_none() {
        func_or_address(func)
    } else {
        (func, None)
    };
    if address.is_some() && has_wildcard(&target) {
        return Err(AttachError {
            span: fpart.span,
            message: "an absolute address cannot be used with a wildcard binary".into(),
            help: None,
        });
    }
    Ok(AttachSpec::Uprobe {
        target,
        lang,
        func,
        offset,
        address,
    })
}

fn source_location_spec(
    kind: ProbeKind,
    parts: &[Part],
    span: Span,
) -> Result<AttachSpec, AttachError> {
    let err = |span: Span, message: &str| AttachError {
        span,
        message: message.to_string(),
        help: Some("expected `uprobe:binary@file:line[:column]`".into()),
    };
    if kind != ProbeKind::Uprobe {
        return Err(err(span, "only uprobe takes a source location"));
    }
    let (target, file) = parts[1].text.split_once('@').unwrap_or_default();
    if target.is_empty() || file.is_empty() || !(3..=4).contains(&parts.len()) {
        return Err(err(span, "invalid source location"));
    }
    if has_wildcard(target) {
        return Err(err(
            parts[1].span,
            "a source location cannot use a wildcard binary",
        ));
    }
    let line = parse_attach_uint(&parts[2].text)
        .map_err(|e| err(parts[2].span, &format!("invalid line number: {e}")))?;
    let column = match parts.get(3) {
        Some(p) => Some(
            parse_attach_uint(&p.text)
                .map_err(|e| err(p.span, &format!("invalid column number: {e}")))?,
        ),
        None => None,
    };
    Ok(AttachSpec::UprobeSourceLine {
        target: target.to_string(),
        file: file.to_string(),
        line,
        column,
    })
}
