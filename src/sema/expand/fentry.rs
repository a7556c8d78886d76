//! fentry/fexit targets: BTF functions of vmlinux and modules (qualified by module), or with
//! module `bpf` the functions of loaded BPF programs.

use super::{glob, Cx, ExpandError, Target, TargetKind};

pub(super) fn expand(
    cx: &Cx<'_>,
    module: Option<&str>,
    func: &str,
    prog_id: Option<u64>,
) -> Result<Vec<Target>, ExpandError> {
    let kind_name = cx.kind_name;
    let g = glob(&cx.probe, func)?;
    if module == Some("bpf") {
        // `fentry:bpf:[ID:]NAME`: functions of loaded BPF programs.
        return Ok(cx
            .k
            .bpf_functions()
            .map_err(|e| cx.kerr(e))?
            .into_iter()
            .filter(|f| prog_id.map_or(true, |id| u64::from(f.prog_id) == id) && g.matches(&f.name))
            .map(|f| Target {
                name: format!("{kind_name}:bpf:{}:{}", f.prog_id, f.name),
                kind: TargetKind::BpfFunc {
                    prog_id: f.prog_id,
                    func: f.name,
                    btf_id: f.btf_id,
                    params: f.params,
                },
            })
            .collect());
    }
    Ok(cx
        .k
        .btf_functions(module, &g)
        .map_err(|e| cx.kerr(e))?
        .into_iter()
        .map(|f| Target {
            name: format!(
                "{kind_name}:{}:{}",
                f.module.as_deref().unwrap_or("vmlinux"),
                f.name
            ),
            kind: TargetKind::KernelFunc {
                module: f.module,
                func: f.name,
                btf_id: Some(f.btf_id),
                offset: None,
            },
        })
        .collect())
}
