//! `software:`/`s:` and `hardware:`/`h:`: sampling perf events (`event[:count]`) on every
//! online CPU, opened by the runtime.

use super::{AttachKind, Context, KindInfo, PidFilter, ProbeKind, Runner, Space};
use crate::asm::isa::ProgType;

pub(super) const SOFTWARE: KindInfo = KindInfo {
    kind: ProbeKind::Software,
    name: "software",
    aliases: &["s"],
    usage: "`software:event[:count]`",
    prog: ProgType::PerfEvent,
    attach: None,
    multi_attach: None,
    space: Space::Kernel,
    runner: Runner::Runtime,
    armed: true,
    template: AttachKind::Runtime(ProbeKind::Software),
    clones_per_target: false,
    context: Context::NONE,
    pid_filter: PidFilter::WithPid,
};

pub(super) const HARDWARE: KindInfo = KindInfo {
    kind: ProbeKind::Hardware,
    template: AttachKind::Runtime(ProbeKind::Hardware),
    name: "hardware",
    aliases: &["h"],
    ..SOFTWARE
};
