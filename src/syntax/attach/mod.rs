//! Attach points: the split of an attach point's text (`kprobe:vfs_read+0x10`,
//! `uprobe:/bin/bash:readline`, `interval:s:1`) into a typed [`AttachSpec`]; the kinds
//! themselves (names, aliases, forms) are [`crate::kinds`]' table.
//!
//! Input: the raw attach-point text and its span. Output: an [`AttachPoint`] or an
//! [`AttachError`] with the span of the offending part.
//! Invariants: nothing here looks at the system (no kallsyms, no tracefs, no ELF): wildcards stay
//! patterns and `$N` positional parameters stay unexpanded ([`AttachNum::Param`], or the `$N`
//! text in a name), so expansion is a later, mockable step.

use crate::diag::Span;

/// The probe kinds with their names and aliases: the one table in [`crate::kinds`].
pub use crate::kinds::ProbeKind;

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
