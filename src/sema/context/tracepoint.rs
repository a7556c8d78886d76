//! tracepoint: `args` are the fields of the event's tracefs format, typed (strings, arrays,
//! enums by BTF, pointers to BTF structs); the fields themselves travel on for their offsets.

use super::{
    btf_to_type, AddrSpace, Btf, Field, FieldLayout, Hooks, KernelInfo, ProbeContext, ProbeKind,
    Read, TargetArgs, TargetKind, Type,
};

/// The arguments of tracepoint `category:name` (target `target`).
pub(super) fn args(
    target: &str,
    kernel: &dyn KernelInfo,
    category: &str,
    name: &str,
    max_strlen: usize,
) -> Result<TargetArgs, String> {
    let f = kernel
        .tracepoint_format(category, name)
        .map_err(|e| e.to_string())?;
    let vmlinux = kernel.btf(None).ok();
    Ok(TargetArgs {
        name: target.to_string(),
        args: std::sync::Arc::new(
            f.fields
                .iter()
                .map(|fl| {
                    (
                        fl.name.clone(),
                        tracepoint_field_type(fl, category, max_strlen, vmlinux.as_deref()),
                    )
                })
                .collect(),
        ),
        fields: f.fields,
        ..TargetArgs::default()
    })
}

/// The type of tracepoint field `f`. A pointer to a struct or union (`struct
/// __kernel_timespec *rqtp`) points at the kernel BTF's type of that name when there is one,
/// so its members can be read (`args.rqtp->tv_sec`, as bpftrace allows); otherwise it is
/// an opaque pointer.
fn tracepoint_field_type(
    f: &Field,
    category: &str,
    max_strlen: usize,
    btf: Option<&Btf>,
) -> Option<Type> {
    let space = if category == "syscalls" {
        AddrSpace::User
    } else {
        AddrSpace::Kernel
    };
    match f.layout {
        FieldLayout::DataLoc | FieldLayout::RelLoc | FieldLayout::FlexibleArray
            if f.type_text == "char" =>
        {
            return Some(Type::Str { size: max_strlen })
        }
        FieldLayout::Array { len } if f.type_text == "char" => {
            return Some(Type::Str { size: len as usize })
        }
        _ => {}
    }
    let t = f.type_text.trim();
    if t.ends_with('*') {
        // `const char *const *argv`: one pointer per `*`, qualifiers dropped.
        let mut base = t;
        let mut depth = 0;
        while let Some(rest) = base.strip_suffix('*') {
            depth += 1;
            let rest = rest.trim_end();
            base = match rest.strip_suffix("const") {
                Some(r) if r.is_empty() || r.ends_with([' ', '*']) => r.trim_end(),
                _ => rest,
            };
        }
        let base = base.trim().trim_start_matches("const ").trim();
        let pointee = super::super::ctypes::named_type(base, max_strlen)
            .filter(|t| !t.is_string())
            .or_else(|| {
                let b = btf?;
                let id = match base.split_once(' ') {
                    Some(("struct", n)) => b.find_struct(n.trim())?,
                    Some(("union", n)) => b.find_union(n.trim())?,
                    _ => return None,
                };
                btf_to_type(b, None, id, space)
            });
        let mut ty = match pointee {
            Some(Type::None) | None => Type::Pointer {
                pointee: super::super::types::Pointee::Opaque,
                space,
            },
            Some(p) => Type::ptr_to(p, space),
        };
        for _ in 1..depth {
            ty = Type::ptr_to(ty, space);
        }
        return Some(ty);
    }
    let scalar = match (f.size, f.layout) {
        (_, FieldLayout::Array { len }) if len > 0 => {
            let elem = (f.size / len).clamp(1, 8) as u8;
            return Some(Type::Array {
                elem: Box::new(Type::Int {
                    bytes: elem,
                    signed: f.signed,
                }),
                len: len as usize,
            });
        }
        (1 | 2 | 4 | 8, FieldLayout::Scalar) => Type::Int {
            bytes: f.size as u8,
            signed: f.signed,
        },
        _ => return None,
    };
    if let (Some(name), Some(b), Type::Int { bytes, signed }) =
        (t.strip_prefix("enum "), btf, &scalar)
    {
        // `enum skb_drop_reason reason`: printed by enumerator name when the kernel's BTF has
        // the enum; the record's size and signedness stay tracefs'.
        if let Some(Type::Enum {
            name, ty, variants, ..
        }) = b
            .find_enum(name.trim())
            .and_then(|id| btf_to_type(b, None, id, space))
        {
            return Some(Type::Enum {
                name,
                ty,
                bytes: *bytes,
                signed: *signed,
                variants,
            });
        }
    }
    Some(if t == "bool" { Type::Bool } else { scalar })
}

pub(super) const TRACEPOINT: Hooks = Hooks {
    kinds: &[ProbeKind::Tracepoint],
    target_args,
};

fn target_args(_: &mut ProbeContext, r: &mut Read<'_>) -> Result<TargetArgs, String> {
    match &r.t.kind {
        TargetKind::Tracepoint { category, name } => {
            args(&r.t.name, r.kernel, category, name, r.max_strlen)
        }
        _ => Ok(r.plain()),
    }
}
