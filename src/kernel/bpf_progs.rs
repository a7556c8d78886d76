//! The BPF programs loaded in the kernel, as `fentry:bpf:` / `fexit:bpf:` targets: every
//! function (the main program and its subprograms) of every program loaded with BTF, named
//! by its BTF `FUNC` (the full name, not the 16-byte program name).
//!
//! Input: the kernel (BPF_PROG_GET_NEXT_ID, BPF_PROG_GET_FD_BY_ID, BPF_OBJ_GET_INFO_BY_FD on
//! the program and on its BTF). Output: [`BpfFunc`]s in program-id order. A program that
//! disappears while it is being read is skipped; programs without BTF cannot be traced
//! (the kernel needs a `FUNC` id to attach to) and are left out, as bpftrace does.

use std::os::fd::AsFd;

use crate::sys::info::{all_ids, btf_data, fd_by_id, prog_fd_by_id, prog_func_info, ObjKind};
use crate::sys::SysError;

/// One traceable function of a loaded BPF program.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct BpfFunc {
    pub prog_id: u32,
    /// The function's name in the program's BTF.
    pub name: String,
    /// Its `FUNC` id in the program's BTF (the load's `attach_btf_id`).
    pub btf_id: u32,
    /// Its parameter count (fexit's return value follows the parameters in the context).
    pub params: u32,
}

/// Every function of every loaded BPF program that has BTF.
pub fn bpf_functions() -> Result<Vec<BpfFunc>, SysError> {
    let mut out = Vec::new();
    for id in all_ids(ObjKind::Prog)? {
        let Ok(Some(fd)) = prog_fd_by_id(id) else {
            continue;
        };
        let Ok((btf_id, recs)) = prog_func_info(fd.as_fd()) else {
            continue;
        };
        if btf_id == 0 || recs.is_empty() {
            continue;
        }
        let Ok(Some(btf_fd)) = fd_by_id(ObjKind::Btf, btf_id) else {
            continue;
        };
        let Ok(btf) = btf_data(btf_fd.as_fd()).map(crate::btf::Btf::parse) else {
            continue;
        };
        let Ok(btf) = btf else { continue };
        for [_, type_id] in recs {
            let Ok(t) = btf.type_by_id(type_id) else {
                continue;
            };
            let params = btf.func_proto(type_id).map_or(0, |p| p.len() as u32);
            out.push(BpfFunc {
                prog_id: id,
                name: t.name.to_string(),
                btf_id: type_id,
                params,
            });
        }
    }
    Ok(out)
}
