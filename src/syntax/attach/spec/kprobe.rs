//! `kprobe:[module:]function[+offset]`, an address, `kretprobe:[module:]function`.

use super::{
    count_error, func_or_address, nonempty, split_offset, AttachError, AttachSpec, Hooks, Part,
    ProbeKind, Span,
};

/// The parser of `kprobe`, `kretprobe` attach points.
pub(super) const KPROBE: Hooks = Hooks {
    kinds: &[ProbeKind::Kprobe, ProbeKind::Kretprobe],
    spec,
};
pub(super) const KRETPROBE: Hooks = KPROBE;

pub(super) fn spec(kind: ProbeKind, parts: &[Part], span: Span) -> Result<AttachSpec, AttachError> {
    let n = parts.len();
    let bad = |expected: &str| count_error(kind, expected, parts, span);
    if n != 2 && n != 3 {
        return Err(bad("1 or 2"));
    }
    let module = (n == 3).then(|| parts[1].text.clone());
    let fpart = &parts[n - 1];
    nonempty(fpart, "function")?;
    let (func, offset) = split_offset(fpart, kind == ProbeKind::Kprobe, kind)?;
    let (func, address) = if offset.is_none() {
        func_or_address(func)
    } else {
        (func, None)
    };
    Ok(AttachSpec::Kprobe {
        module,
        func,
        offset,
        address,
    })
}
