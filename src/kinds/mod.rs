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
//! What the other layers ask about kinds they ask here: a kind set is a fact of the
//! descriptors ([`Facts`], [`KindSet`] for the builtins' "only in these probes" rules), never a
//! list of kinds; behaviour that differs per kind is a hook in the kind's own file of the layer,
//! found through that layer's table indexed by the kind id.
//!
//! Adding a kind touches its own files and one registry line:
//! - its line in the registry below (`Variant => ITEM` under the stem of its files), which
//!   gives it its [`ProbeKind`] variant and its place in [`KINDS`] and in every layer's table;
//! - its descriptor `ITEM` in its own file `src/kinds/STEM.rs` (names, load types,
//!   [`Context`], [`Facts`]);
//! - its item `ITEM` in its own file `STEM.rs` of each layer that builds a table with
//!   `kind_table!()`: the attach-point parser (`syntax::attach::spec`), the checker's argument
//!   readers (`sema::context`), `-l` (`sema::list`) and the code generator's attach plans
//!   (`codegen::lower::probe`). A kind that behaves like no other in a layer points at the
//!   layer's default there (`pub(super) const ITEM: Hooks = PLAIN;`). A layer without the
//!   item (or the file) does not compile, and the error names the item and the module; a
//!   unit test beside each table checks entry i is kind i;
//! - if its attach data is new, a variant of the plan's `plan::ProbeKind` and its attach step
//!   in `runtime::probes` (the one match on the attach data);
//! - nothing else: `tests/pure/architecture.rs` fails when a kind is named outside
//!   `src/kinds/` and its own per-layer files, when the registry and the descriptors' files
//!   disagree, and when a layer's table is written out by hand.

use crate::asm::isa::{AttachType, ProgType};

/// The registry: every probe kind, grouped by the stem of its files (`src/kinds/STEM.rs` and
/// the layers' `…/STEM.rs`), each as `Variant => ITEM`, where `ITEM` is the name of its
/// descriptor in `src/kinds/STEM.rs` and of its hooks in each layer's `STEM.rs`. From it come
/// [`ProbeKind`], [`KINDS`], and the two macros each layer builds its table with:
/// `kind_modules!()` declares the layer's per-stem modules and `kind_table!()` is the array of
/// `&STEM::ITEM`, one per kind in [`ProbeKind`]'s order, resolved in the layer. A layer that
/// lacks a kind's item fails to compile, naming the item and the module. A stem of one kind
/// is one line (`usdt { Usdt => USDT, }`), so a kind of a new stem is one line too.
macro_rules! registry {
    ($($stem:ident { $($(#[$meta:meta])* $variant:ident => $item:ident,)+ })+) => {
        $(mod $stem;)+

        /// Every probe kind bpftrace knows.
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
        pub enum ProbeKind {
            $($($(#[$meta])* $variant,)+)+
        }

        /// The table: one descriptor per kind, in [`ProbeKind`]'s order.
        pub const KINDS: [&KindInfo; [$($(ProbeKind::$variant,)+)+].len()] =
            [$($(&$stem::$item,)+)+];

        /// Declares a layer's per-kind modules, one per stem of the registry.
        macro_rules! kind_modules {
            () => {
                $(mod $stem;)+
            };
        }
        pub(crate) use kind_modules;

        /// A layer's table: `[&STEM::ITEM, …]`, one entry per kind in [`ProbeKind`]'s order,
        /// from the layer's own per-kind modules.
        macro_rules! kind_table {
            () => {
                [$($(&$stem::$item,)+)+]
            };
        }
        pub(crate) use kind_table;
    };
}

registry! {
    begin_end {
        Begin => BEGIN,
        End => END,
    }
    runner {
        /// `self:signal:SIGUSR1`: events of the tracer process itself.
        SelfEvent => SELF,
        Test => TEST,
        Bench => BENCH,
    }
    kprobe {
        Kprobe => KPROBE,
        Kretprobe => KRETPROBE,
    }
    uprobe {
        Uprobe => UPROBE,
        Uretprobe => URETPROBE,
    }
    usdt { Usdt => USDT, }
    tracepoint { Tracepoint => TRACEPOINT, }
    rawtracepoint { RawTracepoint => RAWTRACEPOINT, }
    fentry {
        Fentry => FENTRY,
        Fexit => FEXIT,
    }
    timer {
        Profile => PROFILE,
        Interval => INTERVAL,
    }
    perf {
        Software => SOFTWARE,
        Hardware => HARDWARE,
    }
    watchpoint {
        Watchpoint => WATCHPOINT,
        AsyncWatchpoint => ASYNCWATCHPOINT,
    }
    iter { Iter => ITER, }
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
    /// The kind sets it belongs to, which the other layers ask instead of listing kinds.
    pub facts: Facts,
}

/// Where `-l` and a wildcard provider (`*:…`, `t*point:…`) take a kind in: kernel kinds always,
/// user-space kinds when a process or a file scopes them; `rank` is its place in bpftrace's
/// order among the kinds of its space.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Listed {
    pub space: Space,
    pub rank: u8,
}

/// A kind's membership in the kind sets the checker, the code generator and the runtime ask
/// about (every field `false`/`None` in [`Facts::NONE`]; a kind's file sets what holds for it).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Facts {
    /// Fires when the traced function returns (kretprobe, uretprobe, fexit).
    pub retprobe: bool,
    /// Its context is (or starts with) a `struct pt_regs`, as bpftrace 0.17 decides where
    /// `reg()` is allowed (perf events' context starts with one).
    pub regs: bool,
    /// `func` is the traced function's address, printed as a symbol (kernel or user as
    /// [`KindInfo::space`] says); otherwise a name.
    pub func_symbol: bool,
    /// A BTF function trampoline (fentry/fexit): typed arguments from the prototype, targets
    /// grouped by the facts the body assumes, the `bpf_d_path` helper.
    pub btf_func: bool,
    /// Reads more about its targets when the probe uses `args` (BTF prototypes, DWARF).
    pub args_on_use: bool,
    /// Has `ctx`: an iterator's typed context, or the kernel's perf event data.
    pub ctx: bool,
    /// May call `signal()`/`signal_thread()`: bpftrace's list of probes whose programs may
    /// call `bpf_send_signal` (its stdlib's `__signal`).
    pub signal: bool,
    /// May call `bpf_skb_output`, a tracing-program helper (`skboutput()`).
    pub skb_output: bool,
    /// Taken in by `-l` and wildcard providers, and where.
    pub listed: Option<Listed>,
    /// bpftrace's probe type name when it is not [`KindInfo::name`] (`special` for
    /// begin/end/self, whose programs bpftrace runs from user space).
    pub type_name: Option<&'static str>,
    /// Runs once at the start or the end of the whole run (BEGIN/END): the probe filter keeps
    /// it, `probe` names it by its kind, its target is named in capitals.
    pub whole_run: bool,
    /// Its program's return value is a verdict: non-zero fails a test or skips a benchmark.
    pub verdict: bool,
    /// A per-CPU perf event probe: counted once in `Attached N probes`, not once per CPU.
    pub counted_once: bool,
    /// Lowered as one plan entry per site (usdt), which together count once in `Attached N
    /// probes`.
    pub spec_per_site: bool,
    /// The kernel runs the programs attached to one place newest first (uprobes, usdt,
    /// kprobes, fentry/fexit), so the runtime attaches them in reverse script order.
    pub newest_first: bool,
    /// Counts and sums go through the per-CPU last-key cache: the kinds that fire the most
    /// (others keep within bpftrace 0.17's instruction counts).
    pub agg_cache: bool,
}

impl Facts {
    /// In none of the sets.
    pub const NONE: Facts = Facts {
        retprobe: false,
        regs: false,
        func_symbol: false,
        btf_func: false,
        args_on_use: false,
        ctx: false,
        signal: false,
        skb_output: false,
        listed: None,
        type_name: None,
        whole_run: false,
        verdict: false,
        counted_once: false,
        spec_per_site: false,
        newest_first: false,
        agg_cache: false,
    };
}

impl KindInfo {
    /// bpftrace's probe type name (`special` for begin/end/self, `benchmark`, `watchpoint`
    /// for asyncwatchpoint).
    pub fn type_name(&self) -> &'static str {
        self.facts.type_name.unwrap_or(self.name)
    }

    /// One of bpftrace's "special" probes, which it runs from user space (begin, end, self).
    pub fn special(&self) -> bool {
        self.type_name() == "special"
    }

    /// Fires in a user process ([`Space::User`]).
    pub fn user_space(&self) -> bool {
        self.space == Space::User
    }

    /// Fires at a function's entry with its registers (kprobe, uprobe): stack arguments
    /// (`sargN`) are where the caller put them.
    pub fn entry_regs(&self) -> bool {
        self.facts.regs && self.facts.func_symbol && !self.facts.retprobe
    }

    /// A kprobe proper: a kernel function's entry with its registers (`override()`; `func`
    /// through `bpf_get_func_ip_kprobe` or the saved ip).
    pub fn kernel_entry_regs(&self) -> bool {
        self.entry_regs() && self.space == Space::Kernel
    }

    /// Its targets share one program, told apart by the BPF cookie (kprobes and uprobes on
    /// multi links or one perf event each).
    pub fn one_program_for_targets(&self) -> bool {
        self.runner == Runner::Loader && !self.clones_per_target
    }

    /// Its programs are BPF_PROG_TYPE_TRACING (fentry, fexit, iter), whose BTF pointers
    /// helpers such as `bpf_get_socket_cookie` accept.
    pub fn tracing_prog(&self) -> bool {
        self.prog == ProgType::Tracing
    }
}

/// A set of kinds named by a fact of their descriptors, for the builtins' "only in these
/// probes" rules.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum KindSet {
    /// [`Context::args`].
    Args,
    /// [`Context::argn`].
    ArgN,
    /// [`Context::retval`].
    Retval,
    /// [`Context::func`].
    Func,
    /// [`Facts::ctx`].
    Ctx,
    /// [`Facts::regs`].
    Regs,
    /// [`KindInfo::entry_regs`].
    EntryRegs,
    /// [`KindInfo::kernel_entry_regs`].
    KernelEntryRegs,
    /// [`KindInfo::user_space`].
    UserSpace,
    /// [`Facts::btf_func`].
    BtfFunc,
    /// [`Facts::signal`].
    Signal,
    /// [`Facts::skb_output`].
    SkbOutput,
}

impl KindSet {
    /// Whether `k` is in the set.
    pub fn contains(self, k: ProbeKind) -> bool {
        let i = k.info();
        match self {
            KindSet::Args => i.context.args,
            KindSet::ArgN => i.context.argn,
            KindSet::Retval => i.context.retval,
            KindSet::Func => i.context.func,
            KindSet::Ctx => i.facts.ctx,
            KindSet::Regs => i.facts.regs,
            KindSet::EntryRegs => i.entry_regs(),
            KindSet::KernelEntryRegs => i.kernel_entry_regs(),
            KindSet::UserSpace => i.user_space(),
            KindSet::BtfFunc => i.facts.btf_func,
            KindSet::Signal => i.facts.signal,
            KindSet::SkbOutput => i.facts.skb_output,
        }
    }

    /// The set's kinds in the order messages name them: kernel kinds, then user-space
    /// kinds, each in the table's order (`tracepoint, rawtracepoint, fentry, fexit, uprobe`).
    pub fn kinds(self) -> Vec<ProbeKind> {
        let mut v: Vec<ProbeKind> = ProbeKind::all().filter(|k| self.contains(*k)).collect();
        v.sort_by_key(|k| k.user_space());
        v
    }
}

/// What a body outside any probe (a `fn`) is checked as.
pub const OUTSIDE_PROBES: ProbeKind = ProbeKind::Begin;

/// The kinds `-l` and wildcard providers take in for `space`, in bpftrace's order.
pub fn listed(space: Space) -> Vec<ProbeKind> {
    let mut v: Vec<(u8, ProbeKind)> = KINDS
        .iter()
        .filter_map(|k| match k.facts.listed {
            Some(l) if l.space == space => Some((l.rank, k.kind)),
            _ => None,
        })
        .collect();
    v.sort_by_key(|(r, _)| *r);
    v.into_iter().map(|(_, k)| k).collect()
}

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
    fn listing_ranks_are_unique_per_space() {
        for space in [Space::Kernel, Space::User] {
            let mut ranks: Vec<u8> = KINDS
                .iter()
                .filter_map(|k| k.facts.listed.filter(|l| l.space == space).map(|l| l.rank))
                .collect();
            let n = ranks.len();
            ranks.sort_unstable();
            ranks.dedup();
            assert_eq!(ranks.len(), n, "two {space:?} kinds share a listing rank");
        }
    }

    #[test]
    fn kind_sets_name_kernel_kinds_first() {
        let names = |set: KindSet| set.kinds().iter().map(|k| k.name()).collect::<Vec<_>>();
        assert_eq!(
            names(KindSet::Args),
            ["tracepoint", "rawtracepoint", "fentry", "fexit", "uprobe"]
        );
        assert_eq!(names(KindSet::Retval), ["kretprobe", "fexit", "uretprobe"]);
        assert_eq!(names(KindSet::KernelEntryRegs), ["kprobe"]);
        assert_eq!(names(KindSet::EntryRegs), ["kprobe", "uprobe"]);
        assert_eq!(names(KindSet::UserSpace), ["uprobe", "uretprobe", "usdt"]);
    }

    #[test]
    fn bpftrace_type_names() {
        let t = |k: ProbeKind| k.info().type_name();
        assert_eq!(t(ProbeKind::Begin), "special");
        assert_eq!(t(ProbeKind::End), "special");
        assert_eq!(t(ProbeKind::Tracepoint), "tracepoint");
        assert_eq!(t(ProbeKind::Bench), "benchmark");
        assert_eq!(t(ProbeKind::Uretprobe), "uretprobe");
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
