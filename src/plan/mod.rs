//! The compiled script: everything the runtime needs to run a bpftrace script, and exactly
//! what the compiler (check + lower) must produce. No syscalls here.
//!
//! Input: built by the compiler (or by hand in tests). Output: read by
//! `runtime::driver::run`. Invariants the producer must keep (checked by
//! [`CompiledScript::validate`] before anything touches the kernel):
//! - every name in a template's `maps` table is the `name` of a [`MapSpec`] (or
//!   [`crate::template::ARM_MAP_NAME`] and [`crate::template::EXIT_MAP_NAME`], which the
//!   runtime creates itself);
//! - exactly one map has [`MapRole::RingBuf`] when any template emits records; the
//!   lost-record counter ([`MapRole::LostCounter`]) and the map-full drop counter
//!   ([`MapRole::DropCounter`]) are (per-CPU) arrays of `u64`, as `codegen::emit::maps::Counter`
//!   and `runtime::ringbuf::LostCounter` expect;
//! - records start with the 8-byte header of `codegen::emit::output` (`u32 kind`, `u32 id`);
//!   `id` indexes the [`EventTable`] list of that kind;
//! - BEGIN and END templates have **no** arming guard: they run by `BPF_PROG_TEST_RUN` before
//!   arming (BEGIN) and after disarming (END). Every other probe's template has it.
//! - the `probe` builtin's value (`FieldType::Probe`) is `probe_index << 32 | target_index`:
//!   the probe's position in [`CompiledScript::probes`] (known when compiling) and the
//!   target's index (the `TargetIndex` relocation, or the BPF cookie for multi links).

use std::path::PathBuf;

pub mod agg;
pub mod helper_error;
pub mod layout;
pub mod printf;
pub mod record;
pub mod requires;
pub mod target;

use crate::asm::isa::MapType;
use crate::template::{Template, ARM_MAP_NAME, EXIT_MAP_NAME};
use agg::AggKind;
use layout::FieldType;
use printf::PrintfCall;

/// A whole compiled script.
#[derive(Clone, Debug, Default)]
pub struct CompiledScript {
    pub maps: Vec<MapSpec>,
    /// In script order; BEGIN and END blocks run in this order too.
    pub probes: Vec<ProbeSpec>,
    pub events: EventTable,
}

/// One BPF map to create.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct MapSpec {
    /// The name templates use in their `maps` table (`@count`, `ringbuf`, …). The kernel gets
    /// a sanitised prefix of it (15 characters, `[A-Za-z0-9_.]`).
    pub name: String,
    pub map_type: MapType,
    pub key_size: u32,
    pub value_size: u32,
    pub max_entries: u32,
    pub role: MapRole,
}

/// What a map is for, and how to print it.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MapRole {
    /// A script map (`@name`), printed at exit when not empty.
    Script {
        /// `key` fields as laid out by `decode::tuple_offsets` (empty for a scalar map, whose
        /// key is one zero `u64`). For a histogram: the user's key fields only; the map's key
        /// has a trailing `u64` bucket index (`codegen::emit::maps::hist_key_fields`).
        key: Vec<FieldType>,
        value: MapValueSpec,
    },
    /// The output ring buffer (`BPF_MAP_TYPE_RINGBUF`).
    RingBuf,
    /// Per-CPU array of `u64`: slot 0 counts records the ring buffer could not take.
    LostCounter,
    /// Per-CPU array of `u64`: slot 0 counts map updates refused because a map was full.
    DropCounter,
    /// Anything else the program needs (scratch space, stack maps): never printed.
    Internal,
    /// The short keys of script map `of` (a map keyed by one long string, see
    /// `codegen::lower::key_class`): the same per-CPU aggregation under a key whose string
    /// field is `str_size` bytes instead of the script map's. A string lives in exactly one of
    /// the two (chosen by its length), so userspace merges them into one logical map by
    /// zero-extending these keys ([`KeyClass::widen`]). `count_slot` is the slot of the
    /// [`MapRole::KeyCount`] array that counts the elements of both against the script map's
    /// `max_entries`.
    KeyClass(KeyClass),
    /// Plain one-element array (`BPF_F_MMAPABLE`) whose value is an array of `u64`: slot `i`
    /// counts the elements of the script map and its [`MapRole::KeyClass`] map with
    /// `count_slot == i`. Programs add one before an insert (and take it back when the insert fails); userspace's `clear()` takes one per
    /// element it deletes, atomically through the mapping.
    KeyCount,
    /// The last-key cache of script map `of` (`codegen::lower::agg_cache`): a one-element
    /// per-CPU array whose value on each CPU is [`AggCache`]'s layout. Userspace adds each
    /// CPU's pending delta to that CPU's value of the cached key when it reads the map
    /// ([`AggCache::pending`]), and writes [`AggCache::DISABLED`] to every CPU before arming
    /// when the maps are read while the probes run (`--serve`).
    AggCache(AggCache),
    /// One-entry array of two `u32`: the process (tgid) kernel probes are limited to, 0 for
    /// any, then strobe's own tgid, which they leave out; the runtime writes the `-p` pid or
    /// the `-c` command's pid and its own before arming.
    PidFilter,
}

/// See [`MapRole::KeyClass`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct KeyClass {
    /// The script map's name.
    pub of: String,
    /// Bytes of the string field in this map's key (the script map's is larger).
    pub str_size: u32,
    /// The string field's size in the script map's key.
    pub full_size: u32,
    pub count_slot: u32,
}

impl KeyClass {
    /// The script map's key for key `k` of the class map: the string zero-extended to the
    /// script map's size, the fields after it (a histogram's bucket index) moved along.
    /// The string is the key's first field, so both keys start with it.
    pub fn widen(&self, k: &[u8]) -> Vec<u8> {
        let (s, f) = (self.str_size as usize, self.full_size as usize);
        let mut out = Vec::with_capacity(k.len() + f - s.min(f));
        out.extend_from_slice(&k[..s.min(k.len())]);
        out.resize(f, 0);
        out.extend_from_slice(k.get(s..).unwrap_or_default());
        out
    }
}

/// See [`MapRole::AggCache`]. The value on each CPU: `u64` state at 0 ([`AggCache::VALID`]:
/// the key below is in the script map; [`AggCache::BUSY`]: a program is using the entry), `u64`
/// delta at 8 (counted since the key was cached, not yet in the script map), the key at 16.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AggCache {
    /// The script map's name.
    pub of: String,
    /// Bytes of the script map's key (a multiple of 8).
    pub key_size: u32,
}

impl AggCache {
    pub const VALID: u64 = 1;
    pub const BUSY: u64 = 2;
    /// What userspace writes to keep programs off the cache: busy, so they take the path
    /// without it.
    pub const DISABLED: u64 = Self::BUSY;
    /// Byte offset of the delta and of the key in the value.
    pub const DELTA_OFF: usize = 8;
    pub const KEY_OFF: usize = 16;

    /// Bytes of the value on one CPU.
    pub fn value_size(&self) -> u32 {
        Self::KEY_OFF as u32 + self.key_size
    }

    /// The (cpu, key, delta) each CPU's entry holds that is not yet in the script map, from
    /// the per-CPU value bytes `v` (`round_up(value_size, 8)` bytes per CPU). Entries
    /// without [`AggCache::VALID`] or with a zero delta hold nothing.
    pub fn pending<'v>(&self, v: &'v [u8]) -> Vec<(usize, &'v [u8], u64)> {
        let stride = (self.value_size() as usize).div_ceil(8) * 8;
        let word = |b: &[u8], at: usize| {
            b.get(at..at + 8)
                .map_or(0, |w| u64::from_ne_bytes(w.try_into().unwrap_or([0; 8])))
        };
        v.chunks_exact(stride)
            .enumerate()
            .filter_map(|(cpu, e)| {
                let delta = word(e, Self::DELTA_OFF);
                let key = e.get(Self::KEY_OFF..Self::KEY_OFF + self.key_size as usize)?;
                (word(e, 0) & Self::VALID != 0 && delta != 0).then_some((cpu, key, delta))
            })
            .collect()
    }
}

/// How a script map's values are stored and printed.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum MapValueSpec {
    /// An aggregation in a per-CPU map, with the slot layout of `format::agg`.
    Agg(AggKind),
    /// A plainly assigned value (`@x = 5`, `@s[pid] = comm`).
    Plain(FieldType),
}

/// One probe block: where it attaches and its program.
#[derive(Clone, Debug)]
pub struct ProbeSpec {
    /// The attach point as written and expanded (`tracepoint:syscalls:sys_enter_getpid`), for
    /// messages and the `probe` builtin.
    pub name: String,
    /// The probe kind, whose descriptor ([`crate::kinds::KindInfo`]) answers what the runtime
    /// asks about it (program type, arming, counting, attach order).
    pub id: crate::kinds::ProbeKind,
    /// What to attach: the kind's attach data.
    pub kind: ProbeKind,
    /// The program. For kinds the runtime attaches itself, `template.attach` is ignored: the
    /// kind decides the program type ([`ProbeSpec::prog_type`]).
    pub template: Template,
    /// fentry/fexit wildcards whose template uses `probe` (a per-target constant): the same
    /// probe lowered as a kprobe program that reads `probe` from the BPF cookie, for
    /// kprobe_multi groups (`loader::attach_fentry`).
    pub multi_template: Option<Box<Template>>,
}

/// Where a probe attaches. One variant per attach kind; the runtime attaches each in
/// `runtime::probes::<kind>`; fentry/fexit/kprobe go through the loader.
#[derive(Clone, Debug)]
pub enum ProbeKind {
    Begin,
    End,
    /// `interval:…`: fires on one CPU every `period_ns`.
    Interval {
        period_ns: u64,
    },
    /// `profile:…`: fires on every online CPU.
    Profile {
        sampling: Sampling,
    },
    /// `tracepoint:CAT:NAME` (wildcards already expanded by the compiler).
    Tracepoint {
        targets: Vec<(String, String)>,
    },
    /// `rawtracepoint:NAME`.
    RawTracepoint {
        targets: Vec<String>,
    },
    /// `uprobe:BINARY:FUNC` / `uretprobe:`; `func` may be a glob, resolved against the ELF's
    /// symbols at run time (through `/proc/PID/root` with `-p`).
    Uprobe {
        binary: PathBuf,
        func: String,
        retprobe: bool,
        /// `FUNC+OFFSET`: bytes past the function's start (0 at its entry).
        offset: u64,
        /// `uprobe:BINARY:0xADDR`: a link-time address instead of a function (`func` empty).
        address: Option<u64>,
        /// `uprobe:BINARY:cpp:FUNC`: `func` also matches C++ symbols by their demangled names.
        cpp: bool,
    },
    /// `software:EVENT:COUNT` (`perf_sw_ids` value) on every online CPU.
    Software {
        config: u64,
        sampling: Sampling,
    },
    /// `hardware:EVENT:COUNT` (`perf_hw_id` value) on every online CPU.
    Hardware {
        config: u64,
        sampling: Sampling,
    },
    /// `kprobe:`/`kretprobe:` kernel functions (expanded), through the loader.
    Kprobe {
        funcs: Vec<String>,
        retprobe: bool,
    },
    /// `fentry:`/`fexit:` targets with their BTF ids and per-target values, through the
    /// loader's clone path.
    Fentry {
        targets: Vec<target::CloneTarget>,
        fexit: bool,
        /// fexit: the session kfuncs' BTF ids `(is_return, cookie)` for kprobe.session groups
        /// that read arguments, or why the kernel has none (the checker asked).
        session_kfuncs: Option<Result<(u32, u32), String>>,
    },
    /// `usdt:BINARY:PROVIDER:NAME`: one probe site (one `.note.stapsdt` note) of a binary;
    /// its arguments are already lowered into the template. The runtime maps the note's
    /// addresses to file offsets (through `/proc/PID/root` with `-p`).
    Usdt {
        binary: PathBuf,
        note: crate::elf::UsdtNote,
    },
    /// `watchpoint:ADDR:LEN:MODE` / `asyncwatchpoint:`: a hardware breakpoint perf event
    /// (`bp_type` is `HW_BREAKPOINT_R|W|X` bits) in the `-p` process, else on every CPU.
    Watchpoint {
        address: u64,
        len: u64,
        bp_type: u32,
    },
    /// `self:signal:SIGUSR1`: run by the runtime with BPF_PROG_TEST_RUN each time strobe
    /// itself receives `signal`, while the probes are armed (in script order).
    Signal {
        signal: i32,
    },
    /// `test:NAME`: run once by the runtime in `--test` mode (BPF_PROG_TEST_RUN, loaded as
    /// an XDP program as bpftrace does, the raw tracepoint runner having no repeat count).
    Test {
        name: String,
    },
    /// `bench:NAME`: run many times by the runtime in `--bench` mode (BPF_PROG_TEST_RUN with
    /// a repeat count, which XDP programs take and time).
    Bench {
        name: String,
    },
    /// `iter:NAME`: a BPF iterator (BPF_PROG_TYPE_TRACING, BPF_TRACE_ITER, loaded against
    /// the kernel's `bpf_iter_NAME` BTF function). The runtime creates the iterator link and
    /// reads it to the end, which runs the program once per object (and once more with no
    /// object, which the program skips).
    Iter {
        name: String,
        /// The BTF id of `bpf_iter_NAME` in vmlinux (the load's `attach_btf_id`).
        btf_id: u32,
    },
    /// Kinds recognised but not run yet.
    Unsupported {
        what: String,
    },
}

impl ProbeSpec {
    /// The BPF program type this probe's programs are loaded as: the kind table's one
    /// decision ([`crate::kinds::ProbeKind::load_types`]).
    pub fn prog_type(&self) -> crate::asm::isa::ProgType {
        self.id.prog_type()
    }

    /// Whether the runtime runs it itself with BPF_PROG_TEST_RUN, disarmed (no arming
    /// guard).
    pub fn is_special(&self) -> bool {
        !self.id.info().armed
    }

    /// What `probe` prints for each target index this probe's programs are instantiated
    /// with: one name per expanded tracepoint, raw tracepoint or fentry clone (their
    /// programs carry the target's index), else the probe's own name.
    pub fn target_names(&self) -> Vec<String> {
        let renamed = |last: &str| match self.name.rsplit_once(':') {
            Some((prefix, _)) => format!("{prefix}:{last}"),
            None => last.to_string(),
        };
        match &self.kind {
            ProbeKind::Tracepoint { targets } if targets.len() > 1 => targets
                .iter()
                .map(|(c, n)| format!("tracepoint:{c}:{n}"))
                .collect(),
            ProbeKind::RawTracepoint { targets } if targets.len() > 1 => {
                targets.iter().map(|n| renamed(n)).collect()
            }
            ProbeKind::Fentry { targets, .. } if !targets.is_empty() => {
                targets.iter().map(|t| t.name.clone()).collect()
            }
            // One kprobe_multi link or one perf event per function: `probe` is the index.
            ProbeKind::Kprobe { funcs, .. } if funcs.len() > 1 => funcs
                .iter()
                .map(|f| {
                    if f.contains(':') {
                        f.clone()
                    } else {
                        renamed(f)
                    }
                })
                .collect(),
            _ => vec![self.name.clone()],
        }
    }
}

/// How often a sampling perf event fires.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Sampling {
    /// Every N events (for the clock events: every N ns).
    Period(u64),
    /// N times per second.
    Frequency(u64),
}

/// What the records of each kind mean: `EventTable::<kind>[id]`.
#[derive(Clone, Debug, Default)]
pub struct EventTable {
    /// `printf(fmt, args…)`: arguments at `PrintfCall::offsets()` after the header.
    pub printf: Vec<PrintfCall>,
    /// `print(@map[, top[, div]])` (`EventKind::Print`).
    pub print: Vec<PrintSpec>,
    /// `time(fmt)`: the record carries no arguments; the runtime formats the current time.
    pub time: Vec<String>,
    /// `cat(fmt, args…)`: the rendered text is a file name whose contents are printed.
    pub cat: Vec<PrintfCall>,
    /// `system(fmt, args…)` (only with `--unsafe`): the rendered text is run by `/bin/sh -c`.
    pub system: Vec<PrintfCall>,
    /// `join(array[, sep])`.
    pub join: Vec<JoinSpec>,
    /// `clear(@map)` / `zero(@map)`: index into [`CompiledScript::maps`].
    pub clear: Vec<usize>,
    pub zero: Vec<usize>,
    /// `errorf`/`warnf` calls: printf records (by id) printed as diagnostics.
    pub printf_diag: Vec<PrintfDiag>,
    /// Text printed after a string that filled its buffer (`str_trunc_trailer`).
    pub str_trunc_trailer: String,
    /// The size of a `str()` buffer (`max_strlen`): the trailer is for strings of that size.
    pub str_trunc_size: usize,
    /// Helper calls checked at run time (`-k`), by [`record::EventKind::HelperError`] id.
    pub helper_errors: Vec<helper_error::HelperErrorSite>,
}

/// An `errorf(fmt, …)` or `warnf(fmt, …)` call: its printf record `id` is printed as
/// `FILE:LINE:COL-END: ERROR: text` (or `WARNING:`) on stderr, like bpftrace; with `-f json`
/// as `{"type": "errorf", "msg": …, "filename": …, "line": …, "col": …}` on the output.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct PrintfDiag {
    pub id: u32,
    pub error: bool,
    pub span: crate::diag::Span,
    pub filename: String,
    pub line: usize,
    pub col: usize,
    /// `FILE:LINE:COL-ENDCOL` (`-ENDLINE:ENDCOL` across lines); set by [`EventTable::locate`].
    pub location: String,
    /// The macro calls the `errorf`/`warnf` was expanded from, innermost first.
    pub expanded_from: Vec<crate::diag::Span>,
    /// Their rendered "expanded from" diagnostics (location, source line, underline), printed
    /// after the message; set by [`EventTable::locate`].
    pub expansion_text: String,
}

impl PrintfDiag {
    /// Sets the location fields to `span` of `src`.
    pub fn set_location(&mut self, src: &crate::diag::SourceFile, span: crate::diag::Span) {
        let (line, col) = src.line_col(span.start);
        let (end_line, end_col) = src.line_col(span.end);
        self.filename = src.name_at(span.start).to_string();
        self.line = line;
        self.col = col;
        self.location = if end_line == line {
            format!("{}:{line}:{col}-{end_col}", self.filename)
        } else {
            format!("{}:{line}:{col}-{end_line}:{end_col}", self.filename)
        };
    }
}

/// How far an [`EventTable`] was filled ([`EventTable::mark`]).
#[derive(Clone, Copy, Debug)]
pub struct EventMark([usize; 10]);

impl EventTable {
    fn lens(&self) -> [usize; 10] {
        // Every field named, so a new kind of event is not forgotten here.
        let EventTable {
            printf,
            print,
            time,
            cat,
            system,
            join,
            clear,
            zero,
            printf_diag,
            str_trunc_trailer: _,
            str_trunc_size: _,
            helper_errors,
        } = self;
        [
            printf.len(),
            print.len(),
            time.len(),
            cat.len(),
            system.len(),
            join.len(),
            clear.len(),
            zero.len(),
            printf_diag.len(),
            helper_errors.len(),
        ]
    }

    /// How far the table is filled, to go back to with [`EventTable::truncate`].
    pub fn mark(&self) -> EventMark {
        EventMark(self.lens())
    }

    /// Forgets the events added since `mark` (a program lowered again).
    pub fn truncate(&mut self, mark: &EventMark) {
        let [a, b, c, d, e, f, g, h, i, j] = mark.0;
        self.printf.truncate(a);
        self.print.truncate(b);
        self.time.truncate(c);
        self.cat.truncate(d);
        self.system.truncate(e);
        self.join.truncate(f);
        self.clear.truncate(g);
        self.zero.truncate(h);
        self.printf_diag.truncate(i);
        self.helper_errors.truncate(j);
    }
    /// Fills in the source locations of `errorf`/`warnf` calls and checked helper calls from
    /// their spans.
    pub fn locate(&mut self, src: &crate::diag::SourceFile) {
        for h in &mut self.helper_errors {
            h.locate(src);
        }
        for d in &mut self.printf_diag {
            // Calls in strobe's own stdlib text come located (`assert`'s errorf).
            if d.location.is_empty() {
                d.set_location(src, d.span);
            }
            d.expansion_text = d
                .expanded_from
                .iter()
                .map(|s| {
                    let diag = if d.error {
                        crate::diag::Diagnostic::error(*s, "expanded from")
                    } else {
                        crate::diag::Diagnostic::warning(*s, "expanded from")
                    };
                    diag.render(src)
                })
                .collect();
        }
    }

    /// The diagnostic form of printf record `id`, if it is one.
    pub fn diag_of(&self, id: u32) -> Option<&PrintfDiag> {
        self.printf_diag.iter().find(|d| d.id == id)
    }
}

/// A `print` record: a map (by index into [`CompiledScript::maps`]) or a value.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum PrintSpec {
    Map {
        map: usize,
        top: usize,
        div: u64,
    },
    /// `print(value)`: the value follows the header, laid out as this type.
    Value(FieldType),
}

/// A `join` record: `count` strings of `elem_size` bytes after the header.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct JoinSpec {
    pub elem_size: usize,
    pub count: usize,
    pub sep: String,
}

/// Why a compiled script cannot run (a compiler bug or a hand-built plan's mistake).
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum PlanError {
    #[error("probe `{probe}` refers to map `{map}`, which the script does not declare")]
    UnknownMap { probe: String, map: String },
    #[error("{count} maps have the role {role}; at most one may")]
    DuplicateRole { role: &'static str, count: usize },
    #[error("map `{map}`: {role} must be a {want}")]
    MapShape {
        map: String,
        role: &'static str,
        want: &'static str,
    },
    #[error("event table entry {what}[{index}] names map {map}, but there are {maps} maps")]
    BadMapIndex {
        what: &'static str,
        index: usize,
        map: usize,
        maps: usize,
    },
}

impl CompiledScript {
    /// The first map with `role`'s variant.
    pub fn map_with_role(&self, role: &MapRole) -> Option<(usize, &MapSpec)> {
        self.maps
            .iter()
            .enumerate()
            .find(|(_, m)| std::mem::discriminant(&m.role) == std::mem::discriminant(role))
    }

    /// Checks the invariants listed in the module documentation.
    pub fn validate(&self) -> Result<(), PlanError> {
        for p in &self.probes {
            for m in &p.template.maps {
                if m != ARM_MAP_NAME
                    && m != EXIT_MAP_NAME
                    && !self.maps.iter().any(|s| &s.name == m)
                {
                    return Err(PlanError::UnknownMap {
                        probe: p.name.clone(),
                        map: m.clone(),
                    });
                }
            }
        }
        let u64_counter = |m: &MapSpec| {
            matches!(m.map_type, MapType::Array | MapType::PercpuArray)
                && m.value_size == 8
                && m.key_size == 4
        };
        for (role, name, check) in [
            (
                MapRole::RingBuf,
                "the ring buffer",
                (|m: &MapSpec| m.map_type == MapType::Ringbuf) as fn(&MapSpec) -> bool,
            ),
            (MapRole::LostCounter, "the lost counter", u64_counter),
            (MapRole::DropCounter, "the drop counter", u64_counter),
        ] {
            let of_role: Vec<&MapSpec> = self
                .maps
                .iter()
                .filter(|m| std::mem::discriminant(&m.role) == std::mem::discriminant(&role))
                .collect();
            if of_role.len() > 1 {
                return Err(PlanError::DuplicateRole {
                    role: name,
                    count: of_role.len(),
                });
            }
            if let Some(m) = of_role.first() {
                if !check(m) {
                    return Err(PlanError::MapShape {
                        map: m.name.clone(),
                        role: name,
                        want: if role == MapRole::RingBuf {
                            "ring buffer"
                        } else {
                            "(per-CPU) array with 4-byte keys and u64 values"
                        },
                    });
                }
            }
        }
        let n = self.maps.len();
        let bad = |what, index, map: usize| PlanError::BadMapIndex {
            what,
            index,
            map,
            maps: n,
        };
        for (i, &m) in self.events.clear.iter().enumerate() {
            if m >= n {
                return Err(bad("clear", i, m));
            }
        }
        for (i, &m) in self.events.zero.iter().enumerate() {
            if m >= n {
                return Err(bad("zero", i, m));
            }
        }
        for (i, p) in self.events.print.iter().enumerate() {
            if let PrintSpec::Map { map, .. } = p {
                if *map >= n {
                    return Err(bad("print", i, *map));
                }
            }
        }
        Ok(())
    }
}

/// The probe id the `probe` builtin records (see the module documentation).
pub fn probe_id(probe_index: usize, target_index: u32) -> u64 {
    ((probe_index as u64) << 32) | target_index as u64
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::AttachKind;

    fn counter(name: &str, role: MapRole) -> MapSpec {
        MapSpec {
            name: name.into(),
            map_type: MapType::PercpuArray,
            key_size: 4,
            value_size: 8,
            max_entries: 1,
            role,
        }
    }

    #[test]
    fn validate_rejects_template_naming_an_undeclared_map() {
        let mut t = Template::new("p", AttachKind::RawTracepoint, vec![]);
        t.map_index("@missing");
        let s = CompiledScript {
            probes: vec![ProbeSpec {
                name: "BEGIN".into(),
                id: crate::kinds::ProbeKind::from_name("begin").unwrap(),
                kind: ProbeKind::Begin,
                template: t,
                multi_template: None,
            }],
            ..Default::default()
        };
        assert!(matches!(
            s.validate(),
            Err(PlanError::UnknownMap { map, .. }) if map == "@missing"
        ));
    }

    #[test]
    fn validate_rejects_lost_counter_of_wrong_shape() {
        let mut m = counter("lost", MapRole::LostCounter);
        m.value_size = 4;
        let s = CompiledScript {
            maps: vec![m],
            ..Default::default()
        };
        assert!(matches!(s.validate(), Err(PlanError::MapShape { .. })));
        let s = CompiledScript {
            maps: vec![
                counter("lost", MapRole::LostCounter),
                counter("drops", MapRole::DropCounter),
            ],
            ..Default::default()
        };
        assert_eq!(s.validate(), Ok(()));
    }

    #[test]
    fn validate_rejects_clear_of_a_map_out_of_range() {
        let s = CompiledScript {
            events: EventTable {
                clear: vec![3],
                ..Default::default()
            },
            ..Default::default()
        };
        assert!(matches!(s.validate(), Err(PlanError::BadMapIndex { .. })));
    }

    #[test]
    fn probe_id_packs_probe_and_target() {
        assert_eq!(probe_id(2, 5), (2 << 32) | 5);
    }
}

/// Entries of each stack-trace map (as bpftrace): distinct stacks beyond this get no id.
pub const STACK_MAP_ENTRIES: u32 = 4096;

/// The name of the stack-trace map holding `user` (`ustack`) or kernel stacks of depth
/// `limit`: one map per kind and depth, so an id always names the first `limit` frames.
pub fn stack_map_name(user: bool, limit: usize) -> String {
    format!("stack_{}{limit}", if user { 'u' } else { 'k' })
}

/// The name of the `BPF_F_STACK_BUILD_ID` stack-trace map of user stacks of depth `limit`
/// (`ustack(build_id)`).
pub fn build_id_stack_map_name(limit: usize) -> String {
    format!("stack_b{limit}")
}

/// The inverse of [`build_id_stack_map_name`].
pub fn parse_build_id_stack_map_name(name: &str) -> Option<usize> {
    name.strip_prefix("stack_b")?.parse().ok()
}

/// Size of one `struct bpf_stack_build_id` (include/uapi/linux/bpf.h): `s32 status`,
/// `u8 build_id[20]`, then a `u64` offset or ip at byte 24.
pub const BUILD_ID_FRAME_SIZE: usize = 32;

/// The stack-trace map for [`build_id_stack_map_name`]`(limit)`; it must be created with
/// `BPF_F_STACK_BUILD_ID` ([`MapSpec`] has no flags: the runtime recognises it by name).
pub fn build_id_stack_map_spec(limit: usize) -> MapSpec {
    MapSpec {
        name: build_id_stack_map_name(limit),
        map_type: MapType::StackTrace,
        key_size: 4,
        value_size: (BUILD_ID_FRAME_SIZE * limit.max(1)) as u32,
        max_entries: STACK_MAP_ENTRIES,
        role: MapRole::Internal,
    }
}

/// The inverse of [`stack_map_name`].
pub fn parse_stack_map_name(name: &str) -> Option<(bool, usize)> {
    let rest = name.strip_prefix("stack_")?;
    let user = match rest.as_bytes().first()? {
        b'u' => true,
        b'k' => false,
        _ => return None,
    };
    Some((user, rest[1..].parse().ok()?))
}

/// The `BPF_MAP_TYPE_STACK_TRACE` map for [`stack_map_name`]`(user, limit)`.
pub fn stack_map_spec(user: bool, limit: usize) -> MapSpec {
    MapSpec {
        name: stack_map_name(user, limit),
        map_type: MapType::StackTrace,
        key_size: 4,
        value_size: 8 * limit.max(1) as u32,
        max_entries: STACK_MAP_ENTRIES,
        role: MapRole::Internal,
    }
}

#[cfg(test)]
mod stack_map_tests {
    use super::*;

    #[test]
    fn stack_map_names_round_trip() {
        assert_eq!(
            parse_stack_map_name(&stack_map_name(true, 127)),
            Some((true, 127))
        );
        assert_eq!(
            parse_stack_map_name(&stack_map_name(false, 3)),
            Some((false, 3))
        );
        assert_eq!(parse_stack_map_name("stack_x3"), None);
        assert_eq!(parse_stack_map_name(&build_id_stack_map_name(5)), None);
        assert_eq!(
            parse_build_id_stack_map_name(&build_id_stack_map_name(5)),
            Some(5)
        );
        assert_eq!(parse_stack_map_name("@stack_k3"), None);
    }
}

#[cfg(test)]
mod agg_cache_tests {
    use super::AggCache;

    /// One CPU's entry: state, delta, key (`key_size` 8 plus the 16-byte head: 24 bytes).
    fn entry(state: u64, delta: u64, key: u64) -> Vec<u8> {
        [state, delta, key]
            .iter()
            .flat_map(|w| w.to_ne_bytes())
            .collect()
    }

    #[test]
    fn pending_deltas_are_the_valid_entries_with_a_delta() {
        let c = AggCache {
            of: "@s".into(),
            key_size: 8,
        };
        assert_eq!(c.value_size(), 24);
        let v: Vec<u8> = [
            entry(AggCache::VALID, 5, 7),
            entry(0, 9, 7),
            entry(AggCache::VALID | AggCache::BUSY, 3, 8),
            entry(AggCache::VALID, 0, 9),
            entry(AggCache::DISABLED, 4, 7),
        ]
        .concat();
        let got: Vec<_> = c
            .pending(&v)
            .into_iter()
            .map(|(cpu, k, d)| (cpu, u64::from_ne_bytes(k.try_into().unwrap()), d))
            .collect();
        assert_eq!(got, vec![(0, 7, 5), (2, 8, 3)]);
    }
}
