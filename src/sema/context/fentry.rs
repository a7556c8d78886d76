//! fentry/fexit: a kernel function's parameters and return type from its BTF prototype, and
//! the prototype's shapes (where each argument and the return value sit in the context).

use super::{btf_to_type, AddrSpace, Btf, BtfClass, FactClass, TargetArgs, TargetProto};

fn fact_class(btf: &Btf, id: u32) -> FactClass {
    match btf.classify(id) {
        Ok(BtfClass::Void) => FactClass::Void,
        Ok(BtfClass::Int { size, signed, .. }) | Ok(BtfClass::Enum { size, signed }) => {
            FactClass::Int { size, signed }
        }
        Ok(BtfClass::Pointer { .. }) => FactClass::Pointer,
        Ok(BtfClass::Float { size }) => FactClass::Float { size },
        Ok(BtfClass::Record {
            size, union: false, ..
        }) => FactClass::Struct { size },
        Ok(BtfClass::Record {
            size, union: true, ..
        }) => FactClass::Union { size },
        _ => FactClass::Other,
    }
}

pub(super) fn args(
    btf: &Btf,
    module: Option<&str>,
    func: &str,
    btf_id: Option<u32>,
    name: &str,
) -> Result<TargetArgs, String> {
    let id = btf_id
        .or_else(|| btf.find_func(func))
        .ok_or_else(|| format!("no BTF for function {func}"))?;
    let proto = btf.func_proto(id).map_err(|e| e.to_string())?;
    let mut out = TargetArgs {
        name: name.to_string(),
        ..TargetArgs::default()
    };
    let mut fact = TargetProto {
        name: name.to_string(),
        params: Vec::new(),
        ret: fact_class(btf, proto.ret),
    };
    for p in proto.params() {
        out.args.push((
            p.name.to_string(),
            btf_to_type(btf, module, p.type_id, AddrSpace::Kernel),
        ));
        fact.params
            .push((p.name.to_string(), fact_class(btf, p.type_id)));
    }
    out.retval = btf_to_type(btf, module, proto.ret, AddrSpace::Kernel);
    out.proto = Some(fact);
    Ok(out)
}
