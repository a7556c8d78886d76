//! Attach points: the probe kinds with their names and aliases, and the split of an attach
//! point's text (`kprobe:vfs_read+0x10`, `uprobe:/bin/bash:readline`, `interval:s:1`) into a
//! typed [`AttachSpec`].
//!
//! Input: the raw attach-point text and its span. Output: an [`AttachPoint`] or an
//! [`AttachError`] with the span of the offending part.
//! Invariants: nothing here looks at the system (no kallsyms, no tracefs, no ELF): wildcards stay
//! patterns and `$N` positional parameters stay unexpanded ([`AttachNum::Param`], or the `$N`
//! text in a name), so expansion is a later, mockable step.

use crate::diag::Span;

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

/// The probe-kind table: canonical name, then the aliases accepted in scripts.
pub const PROBE_KINDS: &[(ProbeKind, &str, &[&str])] = &[
    (ProbeKind::Begin, "begin", &["BEGIN"]),
    (ProbeKind::End, "end", &["END"]),
    (ProbeKind::SelfEvent, "self", &[]),
    (ProbeKind::Test, "test", &[]),
    (ProbeKind::Bench, "bench", &[]),
    (ProbeKind::Kprobe, "kprobe", &["k"]),
    (ProbeKind::Kretprobe, "kretprobe", &["kr"]),
    (ProbeKind::Uprobe, "uprobe", &["u"]),
    (ProbeKind::Uretprobe, "uretprobe", &["ur"]),
    (ProbeKind::Usdt, "usdt", &["U"]),
    (ProbeKind::Tracepoint, "tracepoint", &["t"]),
    (ProbeKind::RawTracepoint, "rawtracepoint", &["rt"]),
    (ProbeKind::Fentry, "fentry", &["f", "kfunc"]),
    (ProbeKind::Fexit, "fexit", &["fr", "kretfunc"]),
    (ProbeKind::Profile, "profile", &["p"]),
    (ProbeKind::Interval, "interval", &["i"]),
    (ProbeKind::Software, "software", &["s"]),
    (ProbeKind::Hardware, "hardware", &["h"]),
    (ProbeKind::Watchpoint, "watchpoint", &["w"]),
    (ProbeKind::AsyncWatchpoint, "asyncwatchpoint", &["aw"]),
    (ProbeKind::Iter, "iter", &["it"]),
];

impl ProbeKind {
    /// Whether the probe fires in a user process, so the addresses it sees (arguments,
    /// integers cast to pointers) are user addresses unless `kptr()` says otherwise, as
    /// bpftrace infers the address space from the probe type.
    pub fn user_space(self) -> bool {
        matches!(
            self,
            ProbeKind::Uprobe | ProbeKind::Uretprobe | ProbeKind::Usdt
        )
    }

    /// Looks a provider name up: exact names and aliases first (`U` is usdt, `u` uprobe), then
    /// names case-insensitively (`BEGIN`, `Kprobe`).
    pub fn from_name(name: &str) -> Option<ProbeKind> {
        PROBE_KINDS
            .iter()
            .find(|(_, n, a)| *n == name || a.contains(&name))
            .or_else(|| {
                PROBE_KINDS
                    .iter()
                    .find(|(_, n, _)| n.eq_ignore_ascii_case(name))
            })
            .map(|(k, _, _)| *k)
    }

    pub fn name(self) -> &'static str {
        PROBE_KINDS
            .iter()
            .find(|(k, _, _)| *k == self)
            .map_or("?", |(_, n, _)| n)
    }

    /// Every spelling accepted, for did-you-mean hints.
    pub fn all_spellings() -> impl Iterator<Item = &'static str> {
        PROBE_KINDS
            .iter()
            .flat_map(|(_, n, a)| std::iter::once(*n).chain(a.iter().copied()))
    }
}

/// A number in an attach point: a literal, or a positional parameter expanded later.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum AttachNum {
    Lit(u64),
    Param(u32),
}

/// The unit of an `interval`/`profile` rate.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum TimeUnit {
    Hz,
    S,
    Ms,
    Us,
    Ns,
}

impl TimeUnit {
    fn from_name(s: &str) -> Option<TimeUnit> {
        Some(match s {
            "hz" => TimeUnit::Hz,
            "s" => TimeUnit::S,
            "ms" => TimeUnit::Ms,
            "us" => TimeUnit::Us,
            "ns" => TimeUnit::Ns,
            _ => return None,
        })
    }

    pub fn name(self) -> &'static str {
        match self {
            TimeUnit::Hz => "hz",
            TimeUnit::S => "s",
            TimeUnit::Ms => "ms",
            TimeUnit::Us => "us",
            TimeUnit::Ns => "ns",
        }
    }
}

/// One attach point of a probe.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttachPoint {
    pub span: Span,
    /// The text as written (quotes included).
    pub raw: String,
    /// `name=` prefix, reserved by bpftrace for naming probes.
    pub label: Option<String>,
    /// The provider as written (`k`, `kprobe`, `BEGIN`).
    pub provider: String,
    pub kind: ProbeKind,
    pub spec: AttachSpec,
}

/// The kind-specific parts of an attach point. Names may hold wildcards (`*`, `?`, `[…]`,
/// `{a,b}`); see [`has_wildcard`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum AttachSpec {
    /// begin/end.
    None,
    /// `self:signal:SIGUSR1`, `test:name`, `bench:name` (`kind` empty for the latter two).
    Named { kind: String, name: String },
    /// kprobe/kretprobe: `[module:]func[+offset]` or an address.
    Kprobe {
        module: Option<String>,
        func: String,
        offset: Option<u64>,
        address: Option<u64>,
    },
    /// uprobe/uretprobe: `target[:lang]:func[+offset]` or an address.
    Uprobe {
        target: String,
        lang: Option<String>,
        func: String,
        offset: Option<u64>,
        address: Option<u64>,
    },
    /// `uprobe:target@file:line[:column]`: a source location, resolved through DWARF later.
    UprobeSourceLine {
        target: String,
        file: String,
        line: u64,
        column: Option<u64>,
    },
    /// `usdt:target[:provider]:name`.
    Usdt {
        target: String,
        provider: Option<String>,
        name: String,
    },
    /// `tracepoint:category:name`.
    Tracepoint { category: String, name: String },
    /// `rawtracepoint[:module]:name`.
    RawTracepoint {
        module: Option<String>,
        name: String,
    },
    /// fentry/fexit: `[module:]func`, or `bpf:[prog_id:]prog_name` (module `bpf`).
    Fentry {
        module: Option<String>,
        func: String,
        prog_id: Option<u64>,
    },
    /// interval/profile: `unit:value` or `value` (nanoseconds, duration suffixes allowed).
    Timer { unit: TimeUnit, value: AttachNum },
    /// software/hardware: `event[:count]`.
    PerfEvent {
        event: String,
        count: Option<AttachNum>,
    },
    /// watchpoint/asyncwatchpoint: `address:length:mode`.
    Watchpoint {
        address: AttachNum,
        len: AttachNum,
        mode: String,
    },
    /// `iter:name[:pin]`.
    Iter { name: String, pin: Option<String> },
}

mod spec;

pub use crate::btf::glob::{glob_match, has_wildcard};
pub use spec::{parse_attach_point, parse_attach_uint, usage, AttachError};
