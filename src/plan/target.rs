//! One attach target of a clone-per-target template (fentry/fexit, raw tracepoints): what the
//! compiler resolves per target and the loader instantiates one program for.

use std::os::fd::OwnedFd;
use std::sync::Arc;

use crate::template::{arg_slots, ret_slot, TargetProto, Template};

/// One attach target of a clone-per-target template.
#[derive(Clone, Debug, Default)]
pub struct CloneTarget {
    /// Function or tracepoint name (what `func`/`probe` print).
    pub name: String,
    /// fentry/fexit: the kernel function's own name (`vfs_read`; `name` is the probe's,
    /// `fentry:vmlinux:vfs_read`).
    pub func: String,
    /// fentry/fexit: the BTF id of the function (in vmlinux or in `btf_obj`).
    pub btf_id: u32,
    /// fentry/fexit on a module function: that module's BTF object (`attach_btf_obj_fd`).
    pub btf_obj: Option<Arc<OwnedFd>>,
    /// fentry/fexit on a module function (`btf_id` is in its BTF): the module, whose BTF
    /// object `loader::load_clones` looks up when `btf_obj` is not given.
    pub module: Option<String>,
    /// fentry/fexit on a function of a loaded BPF program (`fentry:bpf:`): that program's
    /// id (`btf_id` is in its BTF); the runtime opens it for the load's `attach_prog_fd`.
    pub prog: Option<u32>,
    /// Values for the template's `params` table (ctx offsets).
    pub arg_slots: Vec<i64>,
    pub ret_slot: Option<i64>,
    pub btf_ids: Vec<i32>,
    pub consts: Vec<i64>,
    /// The target's index in the probe's target table (`probe`), when the loader is given a
    /// part of the table (`None`: its position in the slice it is loaded from).
    pub index: Option<u32>,
    /// fentry/fexit: why this function cannot be reached through a kprobe_multi link (its
    /// prototype: a struct or union passed by value), if so.
    pub multi_refusal: Option<String>,
}

impl CloneTarget {
    /// A fentry/fexit target for `template`: its argument slots and return slot computed from
    /// the function's prototype (8 × position; 8 × parameter count). Fails with the first
    /// parameter of `template.params` the function lacks; `btf_ids`/`consts` stay empty for
    /// the caller to fill.
    pub fn from_proto(
        template: &Template,
        proto: &TargetProto,
        btf_id: u32,
    ) -> Result<CloneTarget, String> {
        Ok(CloneTarget {
            name: proto.name.clone(),
            func: proto.name.clone(),
            btf_id,
            arg_slots: arg_slots(&template.params, proto)?,
            ret_slot: Some(ret_slot(proto)),
            multi_refusal: by_value_aggregate(proto),
            ..Default::default()
        })
    }

    pub fn named(name: &str, btf_id: u32) -> CloneTarget {
        CloneTarget {
            name: name.to_string(),
            func: name.to_string(),
            btf_id,
            ..Default::default()
        }
    }
}

/// Why a function with prototype `proto` takes arguments that are not one register each: its
/// first struct or union parameter passed by value (the registers of later parameters no longer
/// follow their positions).
fn by_value_aggregate(proto: &TargetProto) -> Option<String> {
    use crate::template::TypeClass;
    proto.params.iter().find_map(|(name, class)| match class {
        TypeClass::Struct { .. } | TypeClass::Union { .. } => {
            Some(format!("takes the struct or union `{name}` by value"))
        }
        _ => None,
    })
}
