//! `begin`/`end` and the other kinds the runtime runs itself (`self:signal:…`, `test:`,
//! `bench:`): their attach plans. Their programs read no context (`args` is none).

use super::{mismatch, Input, LowerError, RunKind};
use crate::syntax::ast::ProbeKind;
use crate::syntax::attach::AttachSpec;

pub(super) fn plan(i: &Input<'_>) -> Result<Option<RunKind>, LowerError> {
    Ok(Some(match i.at.kind {
        ProbeKind::Begin => RunKind::Begin,
        ProbeKind::End => RunKind::End,
        ProbeKind::Test | ProbeKind::Bench => {
            let AttachSpec::Named { name, .. } = i.spec else {
                return mismatch(i);
            };
            let name = name.clone();
            if i.at.kind == ProbeKind::Test {
                RunKind::Test { name }
            } else {
                RunKind::Bench { name }
            }
        }
        ProbeKind::SelfEvent => {
            let AttachSpec::Named { name, .. } = i.spec else {
                return mismatch(i);
            };
            match crate::builtins::signal_number(name) {
                Some(n) => RunKind::Signal { signal: n as i32 },
                None => return i.unsupported(&format!("the signal `{name}`")),
            }
        }
        _ => return mismatch(i),
    }))
}
