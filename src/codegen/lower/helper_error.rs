//! `-k`: the generated code checks the result of the helpers whose failure a script cannot
//! otherwise see (`bpf_probe_read_*`, which leave zeros; map lookups, which read as 0) and
//! reports a failure to userspace as a [`EventKind::HelperError`] record, as bpftrace's
//! runtime warnings do.
//!
//! Input: a helper's result register and the span of the script expression that made the
//! call. Output: a branch around a record submission, and a
//! [`crate::plan::helper_error::HelperErrorSite`] in the event table. Without `-k` nothing is
//! emitted.

use super::{Lower, LowerError};
use crate::asm::isa::{Helper, JmpOp};
use crate::codegen::builder::VReg;
use crate::codegen::emit::output::{submit, EventKind, Record};
use crate::codegen::emit::Value;
use crate::diag::Span;
use crate::plan::helper_error::HelperErrorSite;
use crate::plan::layout::FieldType;

impl Lower<'_> {
    /// After a helper returning 0 or a negative errno: with `-k`, reports a negative `ret`.
    pub fn check_helper(
        &mut self,
        ret: VReg,
        helper: Helper,
        span: Span,
    ) -> Result<(), LowerError> {
        if !self.helper_warnings {
            return Ok(());
        }
        let ok = self.b.label();
        self.b.jmp64(JmpOp::Jsge, ret, 0, ok);
        self.report_helper_error(helper, span, Value::Reg(ret))?;
        self.b.bind(ok);
        Ok(())
    }

    /// After `bpf_map_lookup_elem`: with `-k`, reports a null `ptr` (the key is absent), with
    /// the result 0 as bpftrace reports it.
    pub fn check_lookup(&mut self, ptr: VReg, span: Span) -> Result<(), LowerError> {
        if !self.helper_warnings {
            return Ok(());
        }
        let found = self.b.label();
        self.b.jmp64(JmpOp::Jne, ptr, 0, found);
        self.report_helper_error(Helper::MapLookupElem, span, Value::Imm(0))?;
        self.b.bind(found);
        Ok(())
    }

    fn report_helper_error(
        &mut self,
        helper: Helper,
        span: Span,
        ret: Value,
    ) -> Result<(), LowerError> {
        let id = self.script.events.helper_errors.len() as u32;
        self.script
            .events
            .helper_errors
            .push(HelperErrorSite::new(helper, span));
        let field = FieldType::Int {
            bytes: 8,
            signed: true,
        };
        let rec =
            Record::new(&mut self.b, EventKind::HelperError, id, &[field]).map_err(|source| {
                LowerError::Codegen {
                    probe: format!("probe {}", self.probe_index),
                    span,
                    source,
                }
            })?;
        crate::codegen::emit::mem::store_int(&mut self.b, rec.arg(0), ret, 8);
        let ring = self.ringbuf();
        let lost = self.lost();
        submit(&mut self.b, ring, &rec, Some(lost));
        Ok(())
    }
}
