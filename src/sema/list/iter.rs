//! `iter:`: the iterators the kernel's BTF defines, listed without expansion.

use super::Hooks;
use crate::kernel::info::KernelInfo;
use crate::syntax::ast::ProbeKind;
use crate::syntax::attach::glob_match;

pub(super) const ITER: Hooks = Hooks {
    kinds: &[ProbeKind::Iter],
    own: Some(list),
    ..super::PLAIN
};

fn list(
    _kind: ProbeKind,
    rest: &str,
    verbose: bool,
    k: &dyn KernelInfo,
    out: &mut Vec<String>,
    problems: &mut Vec<String>,
) {
    let name_pat = rest.split(':').next().unwrap_or("*");
    match k.btf(None) {
        Ok(btf) => out.extend(iter_lines(&btf, name_pat, verbose)),
        Err(e) => problems.push(format!("iter: {e}")),
    }
}

/// `iter:NAME` for every iterator the kernel's BTF defines (a `struct bpf_iter__NAME` context;
/// the `__safe_trusted` variants 6.4 added are not iterators) whose name matches `pattern`,
/// sorted; with `verbose` each one's context fields (the `bpf_iter_NAME` prototype's
/// parameters after `meta`), as bpftrace lists them.
fn iter_lines(btf: &crate::btf::Btf, pattern: &str, verbose: bool) -> Vec<String> {
    let mut names: Vec<&str> = btf
        .types()
        .filter(|t| matches!(t.kind, crate::btf::TypeKind::Struct(_)))
        .filter_map(|t| t.name.strip_prefix("bpf_iter__"))
        .filter(|n| !n.ends_with("__safe_trusted") && glob_match(pattern, n))
        .collect();
    names.sort_unstable();
    names.dedup();
    let mut lines = Vec::new();
    for n in names {
        lines.push(format!("iter:{n}"));
        if !verbose {
            continue;
        }
        let proto = btf
            .find_func(&format!("bpf_iter_{n}"))
            .and_then(|id| btf.func_proto(id).ok());
        for p in proto.iter().flat_map(|p| p.params().skip(1)) {
            lines.push(format!("    {} {}", btf.type_to_string(p.type_id), p.name));
        }
    }
    lines
}
