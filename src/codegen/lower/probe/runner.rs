//! `self:signal:…`, `test:` and `bench:`: their attach plans, which the runtime runs itself.
//! Their programs read no context (`args` is none).

use super::{mismatch, Hooks, Input, LowerError, RunKind};
use crate::syntax::ast::ProbeKind;
use crate::syntax::attach::AttachSpec;

pub(super) const SELF: Hooks = Hooks {
    kinds: &[ProbeKind::SelfEvent, ProbeKind::Test, ProbeKind::Bench],
    plan,
    ..Hooks::PLAIN
};
pub(super) const TEST: Hooks = SELF;
pub(super) const BENCH: Hooks = SELF;

fn plan(i: &Input<'_>) -> Result<Option<RunKind>, LowerError> {
    let AttachSpec::Named { name, .. } = i.spec else {
        return mismatch(i);
    };
    let name = name.clone();
    Ok(Some(match i.at.kind {
        ProbeKind::Test => RunKind::Test { name },
        ProbeKind::Bench => RunKind::Bench { name },
        ProbeKind::SelfEvent => match crate::builtins::signal_number(&name) {
            Some(n) => RunKind::Signal { signal: n as i32 },
            None => return i.unsupported(&format!("the signal `{name}`")),
        },
        _ => return mismatch(i),
    }))
}
