//! `tracepoint:`/`t:`: a tracefs event (`category:name`), its `args` the fields of the event's
//! format; the runtime attaches one perf event per expanded tracepoint.

use super::{AttachKind, Context, Facts, KindInfo, Listed, PidFilter, ProbeKind, Runner, Space};
use crate::asm::isa::ProgType;

pub(super) const TRACEPOINT: KindInfo = KindInfo {
    kind: ProbeKind::Tracepoint,
    name: "tracepoint",
    aliases: &["t"],
    usage: "`tracepoint:category:name`",
    prog: ProgType::Tracepoint,
    attach: None,
    multi_attach: None,
    space: Space::Kernel,
    runner: Runner::Runtime,
    armed: true,
    template: AttachKind::Runtime(ProbeKind::Tracepoint),
    clones_per_target: false,
    context: Context {
        args: true,
        argn: false,
        retval: false,
        func: false,
    },
    pid_filter: PidFilter::Always,
    facts: Facts {
        signal: true,
        listed: Some(Listed {
            space: Space::Kernel,
            rank: 1,
        }),
        agg_cache: true,
        ..Facts::NONE
    },
};
