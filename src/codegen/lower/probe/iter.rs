//! `iter:`: the iterator's `bpf_iter_NAME` BTF function to load against (as the checker found
//! it); a pinned iterator is refused.

use super::{mismatch, Hooks, Input, LowerError, RunKind};
use crate::syntax::ast::ProbeKind;
use crate::syntax::attach::AttachSpec;

pub(super) const ITER: Hooks = Hooks {
    kinds: &[ProbeKind::Iter],
    plan,
    prologue: Some(skip_the_last_call),
    ..Hooks::PLAIN
};

fn plan(i: &Input<'_>) -> Result<Option<RunKind>, LowerError> {
    let AttachSpec::Iter { name, pin } = i.spec else {
        return mismatch(i);
    };
    if pin.is_some() {
        // A pinned iterator is read by others (`cat /sys/fs/bpf/PIN`): its output must
        // go to the iterator's seq file, and strobe's printf writes the ring buffer.
        return Err(LowerError::Kernel {
            what: "pinning an iterator (`iter:NAME:PIN`) is not supported: strobe's printf \
                   writes to its ring buffer, not to the iterator's seq file \
                   (bpf_seq_printf), so readers of the pin would see nothing; run the \
                   iterator without a pin"
                .into(),
            span: i.span,
        });
    }
    // bpftrace's words when the kernel lacks the iterator.
    let missing = || LowerError::Kernel {
        what: format!("iter {name} not available for your kernel version."),
        span: i.span,
    };
    // The checker looked `bpf_iter_NAME` up in the kernel's BTF.
    let btf_id =
        i.at.slots
            .first()
            .and_then(|s| s.btf_id)
            .ok_or_else(missing)?;
    Ok(Some(RunKind::Iter {
        name: name.clone(),
        btf_id,
    }))
}

/// The kernel runs an iterator program once more after the last object, with a NULL object
/// (`ctx->task`, `ctx->file`, …: the field after `meta`); bpftrace's probes skip that call, so
/// do these.
fn skip_the_last_call(lw: &mut super::Lower<'_>) {
    let object =
        crate::codegen::emit::builtins::ctx_u64(&mut lw.b, 1, crate::codegen::emit::IntTy::U64);
    let exit = lw.exit;
    crate::codegen::emit::control::jump_if_false(&mut lw.b, object, exit);
}
