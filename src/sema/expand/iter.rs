//! `iter:NAME`: one target when the kernel's BTF has `struct bpf_iter__NAME`.

use super::{canonical_other, Cx, ExpandError, Target, TargetKind};

pub(super) fn expand(cx: &Cx<'_>, name: &str) -> Result<Vec<Target>, ExpandError> {
    let btf = cx.k.btf(None).map_err(|e| cx.kerr(e))?;
    if btf.find_struct(&format!("bpf_iter__{name}")).is_none() {
        return Err(ExpandError::NoIterator {
            probe: cx.probe.clone(),
            name: name.to_string(),
        });
    }
    Ok(vec![Target {
        name: canonical_other(cx.ap),
        kind: TargetKind::Other,
    }])
}
