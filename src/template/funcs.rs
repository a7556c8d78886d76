//! BTF for a program with subprograms: the kernel wants `func_info` (one BTF `FUNC` per
//! function, by first instruction) before it verifies callbacks (`bpf_for_each_map_elem`,
//! `bpf_loop`); see `check_btf_func` in kernel/bpf/verifier.c. Every function gets the same
//! static prototype `long f(long, long, long, long)`: the verifier checks the arguments of
//! static functions itself and only consults BTF for global ones.
//!
//! Input: a [`Template`] (its [`Template::funcs`]). Output: a BTF blob and the
//! (instruction, type id) records to pass with it. Pure: loading is the loader's job.

use super::Template;
use crate::btf::encode::BtfBuilder;
use crate::btf::Linkage;

/// A program's function BTF.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FuncBtf {
    /// The BTF blob (header, types, strings) for `BPF_BTF_LOAD`.
    pub blob: Vec<u8>,
    /// (first instruction, FUNC type id) of the main program and each subprogram, in order.
    pub func_info: Vec<[u32; 2]>,
}

/// The function BTF `t` needs, or `None` when it has no subprograms.
pub fn func_btf(t: &Template) -> Option<FuncBtf> {
    if t.funcs.is_empty() {
        return None;
    }
    let mut b = BtfBuilder::new();
    let long = b.add_int("long", 8, true);
    let proto = b.add_func_proto(long, &[("a", long), ("b", long), ("c", long), ("d", long)]);
    let mut func_info = vec![[0, b.add_func("strobe_main", proto, Linkage::Static)]];
    for (i, &start) in t.funcs.iter().enumerate() {
        let id = b.add_func(&format!("strobe_cb{i}"), proto, Linkage::Static);
        func_info.push([start as u32, id]);
    }
    let blob = b.finish().ok()?;
    Some(FuncBtf { blob, func_info })
}
