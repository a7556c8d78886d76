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
            btf_id,
            arg_slots: arg_slots(&template.params, proto)?,
            ret_slot: Some(ret_slot(proto)),
            ..Default::default()
        })
    }

    pub fn named(name: &str, btf_id: u32) -> CloneTarget {
        CloneTarget {
            name: name.to_string(),
            btf_id,
            ..Default::default()
        }
    }
}
