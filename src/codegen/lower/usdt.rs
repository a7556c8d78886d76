//! `argN` of a `usdt:` probe: lowered from the site's argument description
//! ([`crate::kernel::usdt`]) — a register of the `pt_regs` context, user memory at a
//! register plus a displacement, or a constant — read at the description's width and
//! sign-extended (signed sizes) or zero-extended into the u64 `argN` is, as bpftrace does.
//!
//! A probe with several sites is lowered once per site (`probe.rs`), so each program reads
//! its own site's registers.

use super::{Lower, LowerError};
use crate::asm::isa::{AluOp, Size};
use crate::codegen::emit::{arith::normalize, mem::load_int, IntTy, Place, Value};
use crate::diag::Span;
use crate::kernel::usdt::{UsdtArg, UsdtArgError, UsdtLoc};

/// `arg{i}` of the site whose arguments are `args`, normalized to `it`.
pub(crate) fn lower_arg(
    lw: &mut Lower<'_>,
    args: &[Result<UsdtArg, UsdtArgError>],
    i: usize,
    it: IntTy,
    span: Span,
) -> Result<Value, LowerError> {
    let arg = match args.get(i) {
        Some(Ok(a)) => a.clone(),
        Some(Err(e)) => return Err(LowerError::unsupported(e.to_string(), span)),
        None => {
            return Err(LowerError::unsupported(
                format!("`arg{i}` (this USDT probe has {} arguments)", args.len()),
                span,
            ))
        }
    };
    let ty = IntTy::new(arg.size * 8, arg.signed);
    let v = match arg.loc {
        UsdtLoc::Const(c) => Value::Imm(ty.normalize(c)),
        UsdtLoc::Reg { pt_regs_offset } => {
            let r = lw.b.vreg();
            let ctx = lw.b.ctx();
            lw.b.load(Size::Dw, r, ctx, pt_regs_offset);
            normalize(&mut lw.b, r, ty);
            Value::Reg(r)
        }
        UsdtLoc::Deref {
            pt_regs_offset,
            disp,
        } => {
            let addr = lw.b.vreg();
            let ctx = lw.b.ctx();
            lw.b.load(Size::Dw, addr, ctx, pt_regs_offset);
            let disp = i32::try_from(disp).map_err(|_| {
                LowerError::unsupported(format!("a USDT displacement of {disp}"), span)
            })?;
            if disp != 0 {
                lw.b.alu(true, AluOp::Add, addr, disp);
            }
            let slot = lw.b.slot(8, 8);
            let p = Place::new(slot, 0);
            let ret = crate::codegen::emit::builtins::read_mem(
                &mut lw.b,
                true,
                p,
                arg.size as u32,
                Value::Reg(addr),
            );
            lw.check_helper(ret, crate::asm::isa::Helper::ProbeReadUser, span)?;
            load_int(&mut lw.b, p, ty)
        }
    };
    Ok(crate::codegen::emit::arith::cast(&mut lw.b, v, ty, it))
}
