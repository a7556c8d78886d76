//! `fentry:`/`fexit:`: one clone target per expanded function that has every fact the
//! template needs, with its argument and return-value slots from the prototype shapes the
//! checker read (BTF).

use super::{ArgsSource, Hooks, Input, LowerError, RunKind};
use crate::sema::expand::TargetKind;
use crate::sema::AttachTargets;
use crate::syntax::ast::ProbeKind;
use crate::template::Template;

pub(super) const FENTRY: Hooks = Hooks {
    kinds: &[ProbeKind::Fentry, ProbeKind::Fexit],
    plan,
    args: |_, _| Ok(ArgsSource::Fentry),
    ..Hooks::PLAIN
};
pub(super) const FEXIT: Hooks = FENTRY;

/// The plan before lowering: the clone targets are filled in by [`with_fentry_targets`] once
/// the template is known.
fn plan(i: &Input<'_>) -> Result<Option<RunKind>, LowerError> {
    Ok(Some(RunKind::Fentry {
        targets: Vec::new(),
        fexit: i.at.kind == ProbeKind::Fexit,
        session_kfuncs: None,
    }))
}

/// fentry/fexit: one clone target per target that has every fact the template needs, with
/// its argument and return-value slots from the function's prototype (BTF); fexit also gets
/// the session kfuncs the checker found (`env`).
pub(super) fn with_fentry_targets(
    kind: RunKind,
    t: &Template,
    at: &AttachTargets,
    env: &crate::sema::Environment,
) -> RunKind {
    let RunKind::Fentry { fexit, .. } = kind else {
        return kind;
    };
    let session_kfuncs = env.session_kfuncs.clone().filter(|_| fexit);
    let mut targets = Vec::new();
    let skipped: std::collections::HashSet<usize> =
        at.grouping.skipped.iter().map(|(s, _)| *s).collect();
    for (i, target) in at.targets.iter().enumerate() {
        if skipped.contains(&i) {
            continue;
        }
        // `fentry:bpf:`: no `args` (bpftrace has none for these either), `retval` after the
        // function's parameters; the runtime opens the program to attach to.
        if let TargetKind::BpfFunc {
            prog_id,
            btf_id,
            params,
            ..
        } = &target.kind
        {
            if t.params.is_empty() {
                let mut c = crate::plan::target::CloneTarget::named(&target.name, *btf_id);
                c.ret_slot = Some(8 * i64::from(*params));
                c.prog = Some(*prog_id);
                targets.push(c);
            }
            continue;
        }
        let TargetKind::KernelFunc {
            btf_id: Some(id),
            module,
            func,
            ..
        } = &target.kind
        else {
            continue;
        };
        // The prototype's shapes the checker read (none: its BTF could not be read).
        let Some(proto) = at.slots.get(i).and_then(|s| s.proto.as_ref()) else {
            continue;
        };
        if let Ok(mut c) = crate::plan::target::CloneTarget::from_proto(t, proto, *id) {
            // `func` prints the target's name (the target-index table).
            c.name = target.name.clone();
            c.func = func.clone();
            // A module function's BTF id is in the module's BTF: the loader loads it with
            // that module's BTF object.
            c.module = module.clone();
            targets.push(c);
        }
    }
    RunKind::Fentry {
        targets,
        fexit,
        session_kfuncs,
    }
}

/// Maps an fexit program names whether or not its body uses them: the lost-events counter,
/// which the loader's kprobe.session form of the program (`loader::session`) bumps when an
/// entry's arguments find no room.
pub(super) fn reserve_maps(b: &mut crate::codegen::Builder, attach: crate::template::AttachKind) {
    if attach == crate::template::AttachKind::Fexit {
        b.map(crate::codegen::lower::LOST);
    }
}
