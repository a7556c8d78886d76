//! `iter:`/`it:`: a BPF iterator (`iter:name[:pin]`), loaded against the kernel's
//! `bpf_iter_NAME` BTF function; the runtime creates the iterator link and reads it to the
//! end, which runs the program once per object.

use super::{AttachKind, Context, Facts, KindInfo, Listed, PidFilter, ProbeKind, Runner, Space};
use crate::asm::isa::{AttachType, ProgType};

pub(super) const ITER: KindInfo = KindInfo {
    kind: ProbeKind::Iter,
    name: "iter",
    aliases: &["it"],
    usage: "`iter:name[:pin]`",
    prog: ProgType::Tracing,
    attach: Some(AttachType::TraceIter),
    multi_attach: None,
    space: Space::Kernel,
    runner: Runner::Runtime,
    armed: true,
    template: AttachKind::Runtime(ProbeKind::Iter),
    clones_per_target: false,
    context: Context::NONE,
    pid_filter: PidFilter::Never,
    facts: Facts {
        ctx: true,
        listed: Some(Listed {
            space: Space::Kernel,
            rank: 6,
        }),
        ..Facts::NONE
    },
};
