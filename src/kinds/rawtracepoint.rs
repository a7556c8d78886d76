//! `rawtracepoint:`/`rt:`: a kernel tracepoint without the tracefs layer; its arguments come
//! from BTF's `btf_trace_<name>` typedef. One patched clone per expanded name (for `probe`),
//! attached with BPF_RAW_TRACEPOINT_OPEN.

use super::{AttachKind, Context, Facts, KindInfo, Listed, PidFilter, ProbeKind, Runner, Space};
use crate::asm::isa::ProgType;

pub(super) const RAWTRACEPOINT: KindInfo = KindInfo {
    kind: ProbeKind::RawTracepoint,
    name: "rawtracepoint",
    aliases: &["rt"],
    usage: "`rawtracepoint[:module]:name`",
    prog: ProgType::RawTracepoint,
    attach: None,
    multi_attach: None,
    space: Space::Kernel,
    runner: Runner::Loader,
    armed: true,
    template: AttachKind::RawTracepoint,
    clones_per_target: true,
    context: Context {
        args: true,
        argn: true,
        retval: false,
        func: false,
    },
    pid_filter: PidFilter::Always,
    facts: Facts {
        signal: true,
        skb_output: true,
        listed: Some(Listed {
            space: Space::Kernel,
            rank: 2,
        }),
        agg_cache: true,
        ..Facts::NONE
    },
};
