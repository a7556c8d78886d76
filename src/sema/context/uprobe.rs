//! uprobe/uretprobe: a function's parameters (`args`) and return type (`retval`) from the
//! binary's DWARF.

use super::{
    btf_to_type, AddrSpace, Hooks, ProbeContext, ProbeKind, Read, TargetArgs, TargetKind, Type,
};

/// A uprobe target's parameters (`args`) and return type (`retval`) from the binary's DWARF.
pub(super) fn args(
    path: &std::path::Path,
    func: &str,
    name: &str,
    kind: ProbeKind,
) -> Result<TargetArgs, String> {
    let info = crate::dwarf::for_binary(path).map_err(|e| e.to_string())?;
    let f = info
        .function(func)
        .map_err(|e| e.to_string())?
        .ok_or_else(|| format!("no DWARF for function {func} in {}", path.display()))?;
    let btf = info.btf();
    let module = crate::dwarf::module_name(path);
    let mut out = TargetArgs {
        name: name.to_string(),
        ..TargetArgs::default()
    };
    if !kind.info().facts.retprobe {
        let args = f.params.iter().map(|p| {
            let ty = btf_to_type(&btf, Some(&module), p.type_id, AddrSpace::User)
                // A struct or union passed by value is in registers or on the stack in ways
                // the calling convention decides per type: not read.
                .filter(|t| !matches!(t, Type::CStruct(_)));
            (p.name.clone(), ty)
        });
        out.args = std::sync::Arc::new(args.collect());
    }
    out.retval = btf_to_type(&btf, Some(&module), f.ret, AddrSpace::User)
        .filter(|t| t.is_scalar() || matches!(t, Type::Pointer { .. }));
    Ok(out)
}

pub(super) const UPROBE: Hooks = Hooks {
    kinds: &[ProbeKind::Uprobe, ProbeKind::Uretprobe],
    target_args,
};
pub(super) const URETPROBE: Hooks = UPROBE;

/// DWARF's prototype when the probe uses `args`/`retval` at a function's entry; without
/// DWARF a uretprobe's retval is the raw register.
fn target_args(_: &mut ProbeContext, r: &mut Read<'_>) -> Result<TargetArgs, String> {
    match &r.t.kind {
        TargetKind::User {
            path,
            func,
            offset: None | Some(0),
            ..
        } if r.uses_args && !func.is_empty() => match args(path, func, &r.t.name, r.kind) {
            Err(_) if r.kind.info().facts.retprobe => Ok(r.plain()),
            a => a,
        },
        _ => Ok(r.plain()),
    }
}
