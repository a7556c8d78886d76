//! `usdt:`/`U:`: a statically defined probe site of a binary (a `.note.stapsdt` note), an
//! uprobe whose arguments the note describes.

use super::{AttachKind, Context, Facts, KindInfo, Listed, PidFilter, ProbeKind, Runner, Space};
use crate::asm::isa::ProgType;

pub(super) const USDT: KindInfo = KindInfo {
    kind: ProbeKind::Usdt,
    name: "usdt",
    aliases: &["U"],
    usage: "`usdt:binary[:provider]:name`",
    prog: ProgType::Kprobe,
    attach: None,
    multi_attach: None,
    space: Space::User,
    runner: Runner::Runtime,
    armed: true,
    // An uprobe at the note's address; the runtime attaches each site.
    template: AttachKind::Uprobe { retprobe: false },
    clones_per_target: false,
    context: Context {
        args: false,
        argn: true,
        retval: false,
        func: true,
    },
    pid_filter: PidFilter::Never,
    facts: Facts {
        regs: true,
        signal: true,
        listed: Some(Listed {
            space: Space::User,
            rank: 1,
        }),
        spec_per_site: true,
        newest_first: true,
        ..Facts::NONE
    },
};
