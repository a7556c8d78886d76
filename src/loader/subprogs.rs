//! Loading programs that have subprograms (loop callbacks): their function BTF
//! ([`crate::template::funcs`]) is loaded into the kernel once per template and passed with
//! every load of it as `prog_btf_fd` + `func_info`.
//!
//! A BTF load that fails is not an error here: the program load then fails with the
//! verifier's own reason (`missing btf func_info`), which the caller reports.

use std::os::fd::AsFd;

use crate::sys::{BtfObj, ProgLoadOptions};
use crate::template::funcs::func_btf;
use crate::template::Template;

/// The loaded function BTF of one template.
#[derive(Debug)]
pub struct FuncBtfObj {
    obj: BtfObj,
    func_info: Vec<[u32; 2]>,
}

impl FuncBtfObj {
    /// Loads `t`'s function BTF; `None` when `t` has no subprograms (or the load failed).
    pub fn load(t: &Template) -> Option<FuncBtfObj> {
        let f = func_btf(t)?;
        let obj = BtfObj::load(&f.blob).ok()?;
        Some(FuncBtfObj {
            obj,
            func_info: f.func_info,
        })
    }

    /// Adds the BTF and its func info to a load of the template.
    pub fn apply<'a>(&'a self, o: &mut ProgLoadOptions<'a>) {
        o.prog_btf_fd = Some(self.obj.as_fd());
        o.func_info = &self.func_info;
    }
}
