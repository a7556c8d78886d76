//! The probe-kind table: every probe kind strobe knows, one descriptor each ([`KindInfo`]):
//! its names and aliases, what its attach point looks like, the program type and expected
//! attach type its programs are loaded with, what its context offers (`args`, `argN`,
//! `retval`, `func`), and how its templates are attached.
//!
//! Input: nothing (constant data). Output: [`ProbeKind`], the one id of a probe kind that the
//! parser, the checker, the code generator, the plan and the runtime share, and its
//! [`KindInfo`]. Invariant: [`KINDS`] has exactly one descriptor per [`ProbeKind`], in the
//! enum's order (a test checks it); the program type and expected attach type of a kind are
//! decided here and nowhere else ([`ProbeKind::load_types`]).
//!
//! Adding a kind: a variant of [`ProbeKind`], a file here with its descriptor, and its line in
//! [`KINDS`]; the compiler then lists every exhaustive `match` that needs it (the spec parser,
//! expansion, the code generator's attach kind and the runtime's attach step).

mod begin_end;
mod fentry;
mod iter;
mod kprobe;
mod perf;
mod rawtracepoint;
mod runner;
mod timer;
mod tracepoint;
mod uprobe;
mod usdt;
mod watchpoint;

use crate::asm::isa::{AttachType, ProgType};

/// Every probe kind bpftrace knows.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ProbeKind {
    Begin,
    End,
    /// `self:signal:SIGUSR1`: events of the tracer process itself.
    SelfEvent,
    Test,
    Bench,
    Kprobe,
    Kretprobe,
    Uprobe,
    Uretprobe,
    Usdt,
    Tracepoint,
    RawTracepoint,
    Fentry,
    Fexit,
    Profile,
    Interval,
    Software,
    Hardware,
    Watchpoint,
    AsyncWatchpoint,
    Iter,
}

/// Where a kind's programs run, which decides the address space of what they read.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Space {
    /// In the kernel (kernel functions, tracepoints, perf events, the tracer's own runs).
    Kernel,
    /// In a user process: arguments and integers cast to pointers are user addresses unless
    /// `kptr()` says otherwise (bpftrace infers the space from the probe type).
    User,
}

/// Who attaches a kind's programs, and how.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Runner {
    /// The runtime runs the program itself with BPF_PROG_TEST_RUN (begin, end, self, test,
    /// bench).
    TestRun,
    /// The runtime attaches it (perf events, tracepoints, uprobes, usdt, iterators).
    Runtime,
    /// The loader instantiates the template per target and attaches the clones or one multi
    /// link (fentry/fexit, kprobes, raw tracepoints).
    Loader,
}

/// When a kind's program checks the current process against the traced one (`-p`/`-c`):
/// kinds that fire in every process and are not attached to one.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum PidFilter {
    /// Never (attached to the process already, or not tied to a process).
    Never,
    /// With `-p`/`-c`.
    WithPid,
    /// Always: without `-p`/`-c` the program leaves strobe's own pid out, whose own
    /// syscalls would feed the probe (tracepoints, raw tracepoints).
    Always,
}

/// How clones of a template are attached by the loader; decides the template's load
/// attributes through its [`ProbeKind`] ([`AttachKind::kind`]).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum AttachKind {
    /// BPF_PROG_TYPE_TRACING, BPF_TRACE_FENTRY, one clone per BTF function.
    #[doc(alias = "BPF_TRACE_FENTRY")]
    Fentry,
    /// BPF_PROG_TYPE_TRACING, BPF_TRACE_FEXIT, one clone per BTF function.
    #[doc(alias = "BPF_TRACE_FEXIT")]
    Fexit,
    /// BPF_PROG_TYPE_RAW_TRACEPOINT, one clone per tracepoint name.
    RawTracepoint,
    /// BPF_PROG_TYPE_KPROBE on kernel functions: one program for all targets (no clones).
    Kprobe { retprobe: bool },
    /// BPF_PROG_TYPE_KPROBE on user functions: one program for all targets (no clones).
    Uprobe { retprobe: bool },
    /// A program of a kind the runtime loads and runs or attaches itself (begin/end, self,
    /// test and bench through BPF_PROG_TEST_RUN; tracepoints, perf events, watchpoints and
    /// iterators through their own attachments), as that kind's program type
    /// ([`ProbeKind::load_types`]); never given to the loader.
    Runtime(ProbeKind),
}

impl AttachKind {
    /// The probe kind whose programs this is the attach shape of.
    pub fn kind(self) -> ProbeKind {
        match self {
            AttachKind::Fentry => ProbeKind::Fentry,
            AttachKind::Fexit => ProbeKind::Fexit,
            AttachKind::RawTracepoint => ProbeKind::RawTracepoint,
            AttachKind::Kprobe { retprobe: false } => ProbeKind::Kprobe,
            AttachKind::Kprobe { retprobe: true } => ProbeKind::Kretprobe,
            AttachKind::Uprobe { retprobe: false } => ProbeKind::Uprobe,
            AttachKind::Uprobe { retprobe: true } => ProbeKind::Uretprobe,
            AttachKind::Runtime(kind) => kind,
        }
    }

    /// True when each target needs its own loaded program (the kernel binds the target at
    /// load time: fentry/fexit) or its own patched copy (raw tracepoints, for `probe`).
    pub fn clones_per_target(self) -> bool {
        self.kind().info().clones_per_target
    }

    /// The program type, as [`ProbeKind::load_types`] decides it.
    pub fn prog_type(self) -> ProgType {
        self.kind().load_types().0
    }

    /// The probe-kind word users write (`fentry`, `kretprobe`, …).
    pub fn name(self) -> &'static str {
        self.kind().name()
    }
}

/// What the program of a kind can refer to, besides what every probe has.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Context {
    /// `args` (typed arguments: BTF, tracefs or DWARF).
    pub args: bool,
    /// `arg0`…`argN` (registers, or a raw tracepoint's arguments).
    pub argn: bool,
    /// `retval`.
    pub retval: bool,
    /// `func`.
    pub func: bool,
}

impl Context {
    /// Nothing but what every probe has.
    pub const NONE: Context = Context {
        args: false,
        argn: false,
        retval: false,
        func: false,
    };
}

/// One probe kind's descriptor.
#[derive(Clone, Copy, Debug)]
pub struct KindInfo {
    pub kind: ProbeKind,
    /// The canonical name (`kprobe`), as `probe` prints it.
    pub name: &'static str,
    /// Other spellings accepted in scripts (`k`; `kfunc` for fentry; `BEGIN` for begin).
    pub aliases: &'static [&'static str],
    /// What the attach point looks like, for messages (`kprobe:[module:]function[+offset]`).
    pub usage: &'static str,
    /// The program type its programs are loaded as.
    pub prog: ProgType,
    /// The expected attach type of the load (fentry/fexit, iterators), if any.
    pub attach: Option<AttachType>,
    /// The expected attach type when the targets go on one multi link (kprobe_multi,
    /// uprobe_multi), if the kind has such links.
    pub multi_attach: Option<AttachType>,
    pub space: Space,
    pub runner: Runner,
    /// Its program starts with the arming guard (runs only while the probes are armed);
    /// begin/end/test/bench run disarmed.
    pub armed: bool,
    /// The attach shape of the template the code generator emits. Kinds the runtime runs or
    /// attaches itself load by their own kind ([`ProbeKind::load_types`]): their templates are
    /// [`AttachKind::Runtime`] of the kind (usdt's are uprobes').
    pub template: AttachKind,
    /// Each target gets its own clone of the template (fentry/fexit, raw tracepoints).
    pub clones_per_target: bool,
    pub context: Context,
    /// When its program filters on the traced process (`-p`/`-c`).
    pub pid_filter: PidFilter,
}

/// The table: one descriptor per kind, in [`ProbeKind`]'s order.
pub const KINDS: [&KindInfo; 21] = [
    &begin_end::BEGIN,
    &begin_end::END,
    &runner::SELF,
    &runner::TEST,
    &runner::BENCH,
    &kprobe::KPROBE,
    &kprobe::KRETPROBE,
    &uprobe::UPROBE,
    &uprobe::URETPROBE,
    &usdt::USDT,
    &tracepoint::TRACEPOINT,
    &rawtracepoint::RAWTRACEPOINT,
    &fentry::FENTRY,
    &fentry::FEXIT,
    &timer::PROFILE,
    &timer::INTERVAL,
    &perf::SOFTWARE,
    &perf::HARDWARE,
    &watchpoint::WATCHPOINT,
    &watchpoint::ASYNCWATCHPOINT,
    &iter::ITER,
];

impl ProbeKind {
    /// This kind's descriptor.
    pub fn info(self) -> &'static KindInfo {
        KINDS[self as usize]
    }

    /// The one decision of how a kind's programs are loaded: the program type and the
    /// expected attach type (for a single program; see [`KindInfo::multi_attach`] for multi
    /// links).
    pub fn load_types(self) -> (ProgType, Option<AttachType>) {
        let i = self.info();
        (i.prog, i.attach)
    }

    /// The program type ([`ProbeKind::load_types`]).
    pub fn prog_type(self) -> ProgType {
        self.load_types().0
    }

    /// Whether the probe fires in a user process, so the addresses it sees (arguments,
    /// integers cast to pointers) are user addresses unless `kptr()` says otherwise, as
    /// bpftrace infers the address space from the probe type.
    pub fn user_space(self) -> bool {
        self.info().space == Space::User
    }

    /// Looks a provider name up: exact names and aliases first (`U` is usdt, `u` uprobe), then
    /// names case-insensitively (`BEGIN`, `Kprobe`).
    pub fn from_name(name: &str) -> Option<ProbeKind> {
        KINDS
            .iter()
            .find(|k| k.name == name || k.aliases.contains(&name))
            .or_else(|| KINDS.iter().find(|k| k.name.eq_ignore_ascii_case(name)))
            .map(|k| k.kind)
    }

    pub fn name(self) -> &'static str {
        self.info().name
    }

    /// Every spelling accepted, for did-you-mean hints.
    pub fn all_spellings() -> impl Iterator<Item = &'static str> {
        KINDS
            .iter()
            .flat_map(|k| std::iter::once(k.name).chain(k.aliases.iter().copied()))
    }

    /// Every kind, in the table's order.
    pub fn all() -> impl Iterator<Item = ProbeKind> {
        KINDS.iter().map(|k| k.kind)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_table_has_one_descriptor_per_kind_in_order() {
        for (i, k) in KINDS.iter().enumerate() {
            assert_eq!(k.kind as usize, i, "{} is out of place", k.name);
        }
    }

    #[test]
    fn names_and_aliases_are_unique() {
        let mut seen = std::collections::HashSet::new();
        for s in ProbeKind::all_spellings() {
            assert!(seen.insert(s), "{s} names two kinds");
        }
        assert_eq!(ProbeKind::from_name("kfunc"), Some(ProbeKind::Fentry));
        assert_eq!(ProbeKind::from_name("BEGIN"), Some(ProbeKind::Begin));
        assert_eq!(ProbeKind::from_name("U"), Some(ProbeKind::Usdt));
        assert_eq!(ProbeKind::from_name("u"), Some(ProbeKind::Uprobe));
        assert_eq!(ProbeKind::from_name("Kprobe"), Some(ProbeKind::Kprobe));
    }

    #[test]
    fn loader_attached_kinds_have_their_own_template_shape() {
        for k in KINDS {
            if k.runner == Runner::Loader {
                assert_eq!(k.template.kind(), k.kind, "{}", k.name);
                assert_eq!(k.template.prog_type(), k.prog, "{}", k.name);
            }
        }
    }

    #[test]
    fn every_template_names_its_own_kind_and_program_type() {
        for k in KINDS {
            // usdt programs are uprobe programs on the probe sites' addresses.
            if k.kind == ProbeKind::Usdt {
                assert_eq!(k.template, AttachKind::Uprobe { retprobe: false });
                continue;
            }
            assert_eq!(k.template.kind(), k.kind, "{}", k.name);
            assert_eq!(k.template.prog_type(), k.prog, "{}", k.name);
            assert_eq!(
                matches!(k.template, AttachKind::Runtime(_)),
                k.runner != Runner::Loader,
                "{}",
                k.name
            );
        }
    }

    #[test]
    fn tracing_programs_carry_an_expected_attach_type() {
        for k in KINDS {
            assert_eq!(
                k.prog == ProgType::Tracing,
                k.attach.is_some(),
                "{}",
                k.name
            );
        }
    }
}
