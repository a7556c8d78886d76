//! Running a [`CompiledScript`]: the one place that knows the order of a run.
//!
//! 1. validate the plan; raise RLIMIT_MEMLOCK; create the arming flag and every map;
//! 2. start `-c`'s command, held before exec;
//! 3. load BEGIN/END, load and attach every other probe (disarmed: their guard returns at once);
//! 4. print `Attached N probes` (stderr); run each BEGIN (BPF_PROG_TEST_RUN) and handle its records,
//!    so BEGIN's output comes first and an `exit()` in BEGIN ends the run before any probe fires;
//! 5. arm, release the command, then loop: one epoll set over the ring buffer's set and a
//!    signalfd (SIGINT, SIGTERM, SIGCHLD; SIGUSR1 runs `self:signal` probes with
//!    BPF_PROG_TEST_RUN); no timer, no busy polling;
//! 6. on `exit()`, a signal or the command's exit: disarm, handle the records already written
//!    (after `exit()`: drop them; the probes ran on until the disarm, as bpftrace's run on until
//!    it detaches), run each END, print every non-empty script map (bpftrace's exit format), report lost
//!    records, map-full drops and the probe runs the kernel skipped while armed (the growth of
//!    its miss counters from arming to disarming, read before detaching), then close
//!    everything (dropping the owned fds detaches).
//!
//! Invariants: every kernel object is an owned fd held by this function's locals, so an error,
//! a panic (which also disarms through a panic hook, see [`install_panic_hook`]) or a kill
//! leaves nothing attached; output is flushed before detaching, so users never wait for it.

use std::collections::HashMap;
use std::io::Write;
use std::ops::ControlFlow;
use std::os::fd::{AsFd, AsRawFd, RawFd};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use super::child::Child;
use super::epoll::{BufferSet, Epoll};
use super::events::{EventSink, Step};
use super::exit_flag::ExitFlag;
use super::format::maps::MapSnapshot;
use super::format::{OutputFormat, Printer};
use super::probes::{self, AttachContext, ProbeError, SpecialProg};
use super::ringbuf::{LostCounter, RingBuf};
use super::signals::SignalFd;
use super::snapshot;
use super::symbolize::Symbolizer;
use crate::loader::{Arming, KernelMisses, KernelObject};
use crate::plan::{probe_id, CompiledScript, MapRole, PlanError, ProbeKind};
use crate::sys::{Map, MapCreateOptions, SysError};

/// `-B`: when output reaches the writer.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum Buffering {
    /// After every event (bpftrace's default on a terminal and for `-B line`).
    #[default]
    Line,
    /// When the buffer fills or at exit.
    Full,
    /// Unbuffered: written as produced (same as `Line` here: each event is one write).
    None,
}

/// What a run does with the script's probes (bpftrace's `--mode`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum RunMode {
    /// Attach and trace; `test:`/`bench:` probes are left out.
    #[default]
    Trace,
    /// `--test`: run BEGIN, each `test:` probe once (a pass or a fail), then END; nothing
    /// else is attached.
    Test,
    /// `--bench`: run BEGIN, each `bench:` probe many times (its average time), then END;
    /// nothing else is attached.
    Bench,
}

/// How to run.
#[derive(Clone, Debug, Default)]
pub struct RunOptions {
    pub format: OutputFormat,
    /// Trace, or run the script's `test:`/`bench:` probes.
    pub mode: RunMode,
    /// `-q`: no `Attached N probes`.
    pub quiet: bool,
    /// `-v`: per-probe attach details on stderr.
    pub verbose: bool,
    pub buffering: Buffering,
    /// `--unsafe`: `system()` may run commands.
    pub unsafe_mode: bool,
    /// `-c`: the command (already split into words).
    pub command: Option<Vec<String>>,
    /// `-p`: the process to trace.
    pub pid: Option<i32>,
    /// Ends the run from another thread (the library API's `Session::stop`).
    pub stop: Option<super::stop::StopHandle>,
    /// Told the number of attached probes once every probe is attached and armed.
    pub on_armed: Option<std::sync::mpsc::Sender<usize>>,
    /// `print_maps_on_exit = 0`: the maps are not printed at exit.
    pub no_exit_maps: bool,
    /// `--no-warnings`: runtime warnings (`warnf()`) are not printed.
    pub no_warnings: bool,
    /// `show_debug_info = 0`: user stacks without file:line and inlined frames (DWARF).
    pub no_debug_info: bool,
    /// `cpp_demangle = 0`: user symbols of C++ functions stay mangled.
    pub no_cpp_demangle: bool,
    /// `--serve`: answer Prometheus scrapes of the maps while running; no map dump at exit.
    pub serve: Option<Arc<crate::runtime::serve::ServeConfig>>,
    /// `--no-feature`: attach mechanisms not to use.
    pub disabled: super::probes::DisabledFeatures,
    /// `log_size`: programs load with a verifier log of this many bytes.
    pub log_size: Option<u32>,
    /// `--fentry-via`: how fentry/fexit targets are attached.
    pub fentry_via: crate::loader::FentryVia,
    /// `STROBE_SESSION_ENTRIES`: calls of fexit functions read through kprobe.session that can
    /// be in flight at once (0: [`crate::loader::SESSION_ENTRIES`]).
    pub session_entries: u32,
}

/// Why the run ended.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ExitReason {
    /// `exit()` in a probe.
    Exit,
    /// SIGINT or SIGTERM.
    Signal(i32),
    /// `-c`'s command exited.
    CommandExited,
    /// `-p`'s process exited.
    ProcessExited,
    /// [`RunOptions::stop`] was used.
    Stopped,
}

/// What a finished run reports.
#[derive(Clone, Debug)]
pub struct RunOutcome {
    pub reason: ExitReason,
    /// Probes attached (attach points, BEGIN/END included), as `Attached N probes` says.
    pub attached: usize,
    pub lost: u64,
    pub drops: u64,
    /// Probe runs the kernel skipped without running the programs (see [`KernelMisses`]).
    pub missed: KernelMisses,
    /// The code `exit(code)` gave (0 for a bare `exit()`), when a probe called it.
    pub exit_code: Option<i32>,
    /// `-c`'s command's pid.
    pub child_pid: Option<i32>,
    /// The non-empty script maps as they were printed at exit.
    pub maps: Vec<super::format::maps::MapSnapshot>,
}

/// Why a run failed.
#[derive(Debug, thiserror::Error)]
pub enum RunError {
    #[error("internal error: invalid compiled script: {0}")]
    Plan(#[from] PlanError),
    #[error("cannot create map `{map}`: {source}")]
    MapCreate {
        map: String,
        #[source]
        source: SysError,
    },
    /// Hash maps with keys past 512 bytes (`max_strlen` strings as keys) need kernel 5.11+:
    /// older kernels required a key to fit the BPF stack (kernel/bpf/hashtab.c).
    #[error(
        "cannot create map `{map}`: this kernel refuses its {key_size}-byte keys (E2BIG; \
         kernels before 5.11 allow map keys of at most 512 bytes): lower max_strlen, e.g. \
         config = {{ max_strlen = 64 }}"
    )]
    MapKeyTooLarge { map: String, key_size: u32 },
    #[error("cannot create the arming flag: {0}")]
    Arming(#[source] SysError),
    #[error(transparent)]
    Probe(Box<ProbeError>),
    #[error("cannot start `{cmd}`: {source}")]
    Command {
        cmd: String,
        #[source]
        source: std::io::Error,
    },
    #[error("event loop: {what}: {source}")]
    Loop {
        what: &'static str,
        #[source]
        source: std::io::Error,
    },
    #[error("event loop: {0}")]
    Poll(#[from] super::epoll::PollError),
    #[error("ring buffer: {0}")]
    Ring(#[from] super::ringbuf::RingBufError),
    #[error("cannot write the output: {0}")]
    Output(#[source] std::io::Error),
    #[error("{0}")]
    Serve(String),
    /// Nothing to run: every probe was left out (`test:`/`bench:` probes without their mode).
    #[error("{0}")]
    NothingAttached(&'static str),
}

impl From<ProbeError> for RunError {
    fn from(e: ProbeError) -> RunError {
        RunError::Probe(Box::new(e))
    }
}

/// What kind of failure a [`RunError`] is; the CLI maps it to an exit code.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Failure {
    /// The output pipe was closed.
    BrokenPipe,
    /// The kernel refused a map, a program, an attachment or the arming flag.
    KernelRefused,
    /// A bad `--serve` setup (address in use, labels that do not fit the map).
    Usage,
    /// Anything else (bad input, a missing binary, …).
    Other,
}

impl RunError {
    /// What kind of failure this is.
    pub fn failure(&self) -> Failure {
        match self {
            RunError::Output(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
                Failure::BrokenPipe
            }
            RunError::Probe(p) if p.is_kernel_refusal() => Failure::KernelRefused,
            RunError::MapCreate { .. } | RunError::MapKeyTooLarge { .. } | RunError::Arming(_) => {
                Failure::KernelRefused
            }
            RunError::Serve(_) => Failure::Usage,
            _ => Failure::Other,
        }
    }

    /// The probe and the kernel's refusal when a program load failed.
    pub fn refused_load(&self) -> Option<(&str, &crate::sys::LoadError)> {
        match self {
            RunError::Probe(p) => match p.as_ref() {
                ProbeError::Load { probe, source } => Some((probe, source)),
                _ => None,
            },
            _ => None,
        }
    }
}

/// The line strobe prints once its probes are armed when this variable is set: test
/// harnesses (bpftrace's runtime-test convention) start their `AFTER` workloads on it.
pub const NOTIFY_ATTACHED: &str = "__STROBE_NOTIFY_PROBES_ATTACHED";

static ARMED: Mutex<Vec<Arc<Arming>>> = Mutex::new(Vec::new());

/// Installs (once) a panic hook that disarms every running script before the default hook
/// prints the panic, so no event is delivered after a panic even before unwinding closes the
/// links.
pub fn install_panic_hook() {
    static ONCE: std::sync::Once = std::sync::Once::new();
    ONCE.call_once(|| {
        let prev = std::panic::take_hook();
        std::panic::set_hook(Box::new(move |info| {
            if let Ok(armed) = ARMED.try_lock() {
                for a in armed.iter() {
                    let _ = a.disarm();
                }
            }
            prev(info);
        }));
    });
}

/// Deregisters an arming flag from the panic hook when the run ends.
struct ArmedGuard(Arc<Arming>);

impl Drop for ArmedGuard {
    fn drop(&mut self) {
        let _ = self.0.disarm();
        if let Ok(mut v) = ARMED.lock() {
            v.retain(|a| !Arc::ptr_eq(a, &self.0));
        }
    }
}

/// The kernel's name for a map: `[A-Za-z0-9_.]`, at most 15 characters.
pub fn kernel_map_name(name: &str) -> String {
    let s: String = name
        .trim_start_matches('@')
        .chars()
        .map(|c| {
            if c.is_ascii_alphanumeric() || c == '.' {
                c
            } else {
                '_'
            }
        })
        .take(15)
        .collect();
    if s.is_empty() {
        "at".into()
    } else {
        s
    }
}

fn create_maps(script: &CompiledScript) -> Result<Vec<Map>, RunError> {
    script
        .maps
        .iter()
        .map(|m| {
            let name = kernel_map_name(&m.name);
            Map::create(
                m.map_type,
                &MapCreateOptions {
                    name: &name,
                    key_size: m.key_size,
                    value_size: m.value_size,
                    max_entries: m.max_entries,
                    flags: if crate::plan::parse_build_id_stack_map_name(&m.name).is_some() {
                        crate::sys::MapFlags::STACK_BUILD_ID
                    } else if m.role == MapRole::KeyCount {
                        // `clear()` takes deleted elements off the count through a mapping.
                        crate::sys::MapFlags::MMAPABLE
                    } else {
                        Default::default()
                    },
                    ..Default::default()
                },
            )
            .map_err(|source| {
                if source.errno == crate::sys::Errno::E2BIG && m.key_size > 512 {
                    RunError::MapKeyTooLarge {
                        map: m.name.clone(),
                        key_size: m.key_size,
                    }
                } else {
                    RunError::MapCreate {
                        map: m.name.clone(),
                        source,
                    }
                }
            })
        })
        .collect()
}

/// Start → armed and its phases on stderr: a human line under `-v`, a JSON line under
/// `STROBE_TIMINGS=1`.
/// Writes `value` to key 0 of `map` (script map `name`) before arming.
fn set_slot0(map: &Map, name: &str, value: &[u8]) -> Result<(), RunError> {
    map.update(&0u32.to_ne_bytes(), value, crate::sys::UpdateFlags::empty())
        .map_err(|source| RunError::MapCreate {
            map: name.to_string(),
            source,
        })
}

fn report_timings(verbose: bool) {
    if !crate::timings::enabled() {
        return;
    }
    let armed = crate::timings::since_start().as_secs_f64();
    let phases = crate::timings::phases();
    if verbose {
        let line = crate::timings::human(&phases);
        eprintln!("strobe: start → armed {armed:.3} s: {line}");
    }
    if std::env::var_os(crate::timings::ENV).is_some_and(|v| v != "0" && !v.is_empty()) {
        let json = crate::timings::json(&phases);
        eprintln!("{{\"start_to_armed_s\":{armed:.4},\"phases\":{json}}}");
    }
}

/// With `STROBE_TIMINGS=1`, when the run stopped (probes disarmed, detach started) and when
/// its results were printed, in seconds from the start, on stderr as one JSON line: the
/// benchmarks measure the detach from `stop_s` to the end of the background child.
/// `missed_s`: reading the kernel's miss counters of every program and link (before `stop_s`).
fn report_stop(stop: std::time::Duration, missed_read: std::time::Duration) {
    if std::env::var_os(crate::timings::ENV).is_some_and(|v| v != "0" && !v.is_empty()) {
        let printed = crate::timings::since_start().as_secs_f64();
        eprintln!(
            "{{\"stop_s\":{:.4},\"printed_s\":{printed:.4},\"missed_s\":{:.4}}}",
            stop.as_secs_f64(),
            missed_read.as_secs_f64()
        );
    }
}

impl RunError {
    /// Whether the CLI should say nothing of it: a closed output pipe is how `| head` ends a
    /// run, not a failure to report.
    pub fn is_quiet(&self) -> bool {
        matches!(self, RunError::Output(e) if e.kind() == std::io::ErrorKind::BrokenPipe)
    }
}

/// The order to attach `probes` in so that probes on one place fire in script order: the
/// kernel runs the programs of one uprobe, usdt site, kprobe or fentry newest first, and
/// those of one tracepoint, kretprobe or perf event oldest first (bpftrace's two passes:
/// the latter forward, then the former backward).
fn attach_order(probes: &[crate::runtime::plan::ProbeSpec]) -> Vec<usize> {
    let newest_first = |i: usize| probes[i].id.info().facts.newest_first;
    let forward = (0..probes.len()).filter(|&i| !newest_first(i));
    let backward = (0..probes.len()).rev().filter(|&i| newest_first(i));
    forward.chain(backward).collect()
}

/// Runs `script` to the end, writing its output to `out`.
pub fn run(
    script: &CompiledScript,
    opts: &RunOptions,
    out: &mut dyn Write,
) -> Result<RunOutcome, RunError> {
    script.validate()?;
    install_panic_hook();
    let signals = SignalFd::new().map_err(|source| RunError::Loop {
        what: "signalfd",
        source,
    })?;
    let _ = crate::sys::raise_memlock_rlimit();
    // Until everything is loaded, Ctrl-C and SIGTERM end the run at once, even inside a
    // long verification (see `Interruptible`).
    let load_phase = super::signals::Interruptible::new();
    let arming = Arc::new(Arming::create().map_err(RunError::Arming)?);
    if let Ok(mut v) = ARMED.lock() {
        v.push(arming.clone());
    }
    let _armed_guard = ArmedGuard(arming.clone());
    let exit_flag = ExitFlag::create().map_err(RunError::Arming)?;
    let maps = crate::timings::time("maps", || create_maps(script))?;
    let mut map_fds: Vec<(&str, RawFd)> = script
        .maps
        .iter()
        .zip(&maps)
        .map(|(s, m)| (s.name.as_str(), m.as_raw_fd()))
        .collect();
    map_fds.push(arming.map_entry());
    map_fds.push(exit_flag.map_entry());
    let serve = match &opts.serve {
        Some(c) => Some(crate::runtime::serve::prepare(c, script, &maps).map_err(RunError::Serve)?),
        None => None,
    };
    let mut probe_status = Vec::new();

    let mut child = match &opts.command {
        Some(argv) => Some(Child::spawn(argv).map_err(|source| RunError::Command {
            cmd: argv.join(" "),
            source,
        })?),
        None => None,
    };
    let pid = opts.pid.or(child.as_ref().map(Child::pid));
    if let Some((i, spec)) = script.map_with_role(&MapRole::PidFilter) {
        // Kernel probes' process filter and strobe's own pid, which they leave out
        // (`codegen::lower::pid_filter`), set before arming.
        let mut value = [0u8; 8];
        value[..4].copy_from_slice(&(pid.unwrap_or(0) as u32).to_ne_bytes());
        value[4..].copy_from_slice(&std::process::id().to_ne_bytes());
        set_slot0(&maps[i], &spec.name, &value)?;
    }
    if opts.serve.is_some() {
        // Scrapes read the maps while the probes run, without the last-key caches' deltas:
        // keep the programs off the caches (`codegen::lower::agg_cache`).
        for (spec, m) in script.maps.iter().zip(&maps) {
            let MapRole::AggCache(c) = &spec.role else {
                continue;
            };
            let stride = (c.value_size() as usize).div_ceil(8) * 8;
            let mut value = vec![0u8; m.value_buf_len()];
            for e in value.chunks_exact_mut(stride) {
                e[..8].copy_from_slice(&crate::plan::AggCache::DISABLED.to_ne_bytes());
            }
            set_slot0(m, &spec.name, &value)?;
        }
    }
    let ctx = AttachContext {
        maps: &map_fds,
        pid,
        unsafe_mode: opts.unsafe_mode,
        disabled: opts.disabled,
        log_size: opts.log_size,
        fentry_via: opts.fentry_via,
        session_entries: opts.session_entries,
    };

    // Load and attach everything, still disarmed.
    let mut begins = Vec::new();
    let mut ends = Vec::new();
    // `self:signal:…` probes with their signal, in script order.
    let mut on_signal: Vec<(i32, SpecialProg)> = Vec::new();
    // `test:`/`bench:` probes of `--test`/`--bench`, in script order; and whether the script
    // has any the mode leaves out (for the hint when nothing else runs).
    let mut runs: Vec<(String, SpecialProg)> = Vec::new();
    let mut left_out: Option<&'static str> = None;
    let mut objects: Vec<KernelObject> = Vec::new();
    // Per object: whether it belongs to a uprobe or USDT probe (they run on after `exit()`
    // until closed).
    let mut user_probe: Vec<bool> = Vec::new();
    let mut attached = 0usize;
    // The watchpoint probes' perf events by address, for `unwatch()` (open until the end).
    let mut watchpoints: Vec<(u64, std::os::fd::RawFd)> = Vec::new();
    let mut probe_names = HashMap::new();
    // `interval` events (object index, period): restarted when the run is armed, so the first
    // tick comes one period after BEGIN, as in bpftrace (not one period after attaching).
    let mut intervals: Vec<(usize, u64)> = Vec::new();
    // `iter:` probes (object index of their link, probe name): run once everything is armed.
    let mut iterators: Vec<(usize, String)> = Vec::new();
    for i in attach_order(&script.probes) {
        let p = &script.probes[i];
        for (t, name) in p.target_names().into_iter().enumerate() {
            // The `probe` builtin says `begin`/`end` in current bpftrace (0.17: BEGIN/END).
            let info = p.id.info();
            let name = if info.facts.whole_run {
                info.name.to_string()
            } else {
                name
            };
            probe_names.insert(probe_id(i, t as u32), name);
        }
        match p.kind {
            ProbeKind::Begin => begins.push(SpecialProg::load(p, &ctx)?),
            ProbeKind::End => ends.push(SpecialProg::load(p, &ctx)?),
            ProbeKind::Test { ref name } if opts.mode == RunMode::Test => {
                runs.push((name.clone(), SpecialProg::load(p, &ctx)?))
            }
            ProbeKind::Bench { ref name } if opts.mode == RunMode::Bench => {
                runs.push((name.clone(), SpecialProg::load(p, &ctx)?))
            }
            ProbeKind::Test { .. } => {
                left_out.get_or_insert("No probes attached; use --test to run test probes.");
                continue;
            }
            ProbeKind::Bench { .. } => {
                left_out.get_or_insert("No probes attached; use --bench to run benchmark probes.");
                continue;
            }
            // The test and bench modes run only BEGIN, their probes and END.
            _ if opts.mode != RunMode::Trace => continue,
            ProbeKind::Signal { signal } => on_signal.push((signal, SpecialProg::load(p, &ctx)?)),
            _ => {
                let a = crate::timings::time("attach_probes", || probes::attach(p, &ctx))?;
                if opts.verbose {
                    match &a.via {
                        Some(via) => {
                            eprintln!("strobe: {}: {} attached through {via}", p.name, a.attached)
                        }
                        None => eprintln!("strobe: {}: {} attached", p.name, a.attached),
                    }
                    for note in &a.notes {
                        eprintln!("strobe: {}: {note}", p.name);
                    }
                }
                for (t, name) in a.target_names.iter().flatten().enumerate() {
                    probe_names.insert(probe_id(i, t as u32), name.clone());
                }
                for r in &a.refused {
                    // A refusal names its own target; `p.name` is only the first one's.
                    eprintln!("strobe: warning: {r}");
                }
                if serve.is_some() {
                    let s = crate::runtime::serve::ProbeStatus::new(
                        p,
                        a.attached,
                        a.refused.len(),
                        pid,
                    );
                    probe_status.push(s);
                }
                // bpftrace counts a per-CPU perf event probe (profile, software, hardware,
                // a watchpoint without -p) once in `Attached N probes`, not once per CPU.
                // A USDT probe with several sites (lowered one spec per site, consecutively)
                // is one probe to bpftrace.
                let same_probe = p.id.info().facts.spec_per_site
                    && i > 0
                    && script.probes[i - 1].id == p.id
                    && script.probes[i - 1].name == p.name;
                attached += if same_probe {
                    0
                } else if p.id.info().facts.counted_once {
                    a.attached.min(1)
                } else {
                    a.attached
                };
                if let ProbeKind::Iter { .. } = &p.kind {
                    iterators.push((objects.len(), p.name.clone()));
                }
                if let ProbeKind::Interval { period_ns } = p.kind {
                    intervals.extend(
                        (objects.len()..objects.len() + a.objects.len())
                            .map(|o| (o, period_ns.max(1))),
                    );
                }
                if let ProbeKind::Watchpoint { address, .. } = p.kind {
                    watchpoints.extend(a.objects.iter().filter_map(|o| match o {
                        KernelObject::Event(ev) => Some((address, ev.as_raw_fd())),
                        _ => None,
                    }));
                }
                let user = p.id.info().user_space();
                user_probe.extend(a.objects.iter().map(|_| user));
                objects.extend(a.objects);
                continue;
            }
        }
        attached += 1;
    }

    drop(load_phase);
    if let Some(hint) = left_out.filter(|_| attached == 0) {
        // bpftrace's words: only probes of another mode, so nothing would ever run.
        return Err(RunError::NothingAttached(hint));
    }

    // The output ring buffer and the counters.
    let mut buffers = BufferSet::new()?;
    if let Some((i, _)) = script.map_with_role(&MapRole::RingBuf) {
        let mut ring = RingBuf::from_map(&maps[i])?;
        if let Some((l, _)) = script.map_with_role(&MapRole::LostCounter) {
            ring = ring.with_lost_counter(LostCounter::new(maps[l].as_fd(), 0)?);
        }
        buffers.add(ring)?;
    }

    let mut symbolizer = Symbolizer::new(probe_names);
    symbolizer.no_debug_info = opts.no_debug_info;
    symbolizer.no_cpp_demangle = opts.no_cpp_demangle;
    for (i, p) in script.probes.iter().enumerate() {
        if let ProbeKind::Uprobe { binary, .. } | ProbeKind::Usdt { binary, .. } = &p.kind {
            symbolizer.add_probe_binary(i as u32, binary);
        }
    }
    // The symbolizer reads the stack maps through fds of its own.
    let dup_map = |spec: &crate::plan::MapSpec, map: &Map| {
        map.as_fd()
            .try_clone_to_owned()
            .map_err(|e| {
                SysError::bare(
                    "dup",
                    crate::sys::Errno(e.raw_os_error().unwrap_or(libc::EBADF)),
                )
            })
            .and_then(Map::from_fd)
            .map_err(|source| RunError::MapCreate {
                map: spec.name.clone(),
                source,
            })
    };
    for (spec, map) in script.maps.iter().zip(&maps) {
        if let Some((user, limit)) = crate::plan::parse_stack_map_name(&spec.name) {
            symbolizer.add_stack_map(user, limit, dup_map(spec, map)?);
        } else if let Some(limit) = crate::plan::parse_build_id_stack_map_name(&spec.name) {
            symbolizer.add_build_id_stack_map(limit, dup_map(spec, map)?);
        }
    }
    let mut printer = Printer::new(opts.format);
    // One string per run, shared by every `Copy` of the style.
    printer.style.str_trunc_trailer =
        Box::leak(script.events.str_trunc_trailer.clone().into_boxed_str());
    printer.style.str_trunc_size = script.events.str_trunc_size;
    let mut sink = EventSink::new(script, &maps, printer, &symbolizer, opts.unsafe_mode);
    sink.no_warnings = opts.no_warnings;
    sink.watchpoints = watchpoints;
    sink.verbose = opts.verbose;
    let mut buf = Vec::with_capacity(4096);
    if !opts.quiet && opts.mode == RunMode::Trace {
        let mut err = Vec::new();
        printer.attached_probes(&mut buf, &mut err, attached as u64);
        let _ = std::io::stderr().write_all(&err);
    }
    flush(out, &mut buf, true)?;

    // BEGIN, in order; its records first. As in bpftrace, an `exit()` in one does not keep the
    // later ones from running (their map updates count), but what they print is dropped.
    let mut reason = None;
    for b in &begins {
        b.run()?;
        if reason.is_some() {
            discard_pending(&mut buffers)?;
        } else if handle_pending(&mut buffers, &mut sink, out, &mut buf, opts.buffering)?
            || exit_flag.code().is_some()
        {
            reason = Some(ExitReason::Exit);
            discard_pending(&mut buffers)?;
        }
    }

    // `--test`/`--bench`: their probes run now, disarmed, and the run ends.
    let mut failed_runs = false;
    if reason.is_none() && opts.mode != RunMode::Trace {
        failed_runs = run_modes(
            opts,
            &runs,
            (&mut buffers, &mut sink, &exit_flag),
            out,
            &mut buf,
        )?;
        reason = Some(ExitReason::Exit);
    }

    // Like current bpftrace, a script whose only probes are BEGIN/END ends after BEGIN: no
    // event can arrive, so nothing is left to wait for.
    if reason.is_none() && only_begin_end(script) {
        reason = Some(ExitReason::Exit);
    }
    // The miss counters when the probes start recording: runs the kernel skipped while they
    // were attached but disarmed (loading the rest can take minutes) lost nothing, so only the
    // growth from here is reported.
    let mut missed_before = KernelMisses::default();
    if reason.is_none() {
        missed_before = crate::timings::time("misses_baseline", || KernelMisses::of(&objects));
        crate::timings::time("arm", || arming.arm()).map_err(RunError::Arming)?;
        for &(o, period) in &intervals {
            if let Some(KernelObject::Event(e)) = objects.get(o) {
                // Best effort: on failure the first tick just comes early.
                let _ = e.set_period(period);
            }
        }
        report_timings(opts.verbose);
        // Test harnesses (bpftrace's runtime-test convention) start their `AFTER` workloads
        // when this line appears: the probes are armed from here on.
        if std::env::var_os(NOTIFY_ATTACHED).is_some() {
            flush(out, &mut buf, true)?;
            let _ = writeln!(out, "{}", NOTIFY_ATTACHED);
            let _ = out.flush();
        }
        if let Some(c) = child.as_mut() {
            c.release();
        }
        // Test hook: a panic while armed must disarm (panic hook) and detach (unwinding).
        if std::env::var_os("STROBE_TEST_PANIC_WHEN_ARMED").is_some() {
            panic!("internal error: test panic requested by STROBE_TEST_PANIC_WHEN_ARMED");
        }
        if let Some(tx) = &opts.on_armed {
            let _ = tx.send(attached);
        }
        // Scrapes run on the server's threads until the loop ends (END runs unserved).
        let _serving = match serve {
            Some(s) => Some(
                s.start(probe_status, symbolizer.probe_names.clone())
                    .map_err(RunError::Serve)?,
            ),
            None => None,
        };
        reason = Some(if iterators.is_empty() {
            event_loop(
                &mut buffers,
                (&signals, &on_signal, opts.stop.as_ref(), &exit_flag),
                (&mut child, opts.pid),
                &mut sink,
                out,
                &mut buf,
                opts.buffering,
            )?
        } else {
            run_iterators(
                &iterators,
                &objects,
                (&mut buffers, &mut sink),
                out,
                &mut buf,
                opts.buffering,
            )?
        });
    }
    // Probe runs the kernel skipped (read before each set of objects is closed).
    let mut missed = KernelMisses::default();
    if reason == Some(ExitReason::Exit) {
        // bpftrace stops a run that `exit()` ends by detaching its probes, which keep firing
        // until each is detached: a uretprobe that calls `exit()` on a traced program's first
        // return sees its later ones (the suite's `intcast.Sum casted retval`), while an
        // interval probe that exits on its first tick fires once (`call.tseries`). So every
        // probe but the uprobes stops at once, and the uprobes count on until their
        // attachments are closed (a perf uprobe's close lets the traced program run on).
        let _ = arming.user_only();
        let (user, rest): (Vec<_>, Vec<_>) = objects
            .into_iter()
            .zip(user_probe.iter().copied().chain(std::iter::repeat(false)))
            .partition(|(o, u)| *u && o.is_attachment());
        let user: Vec<_> = user.into_iter().map(|(o, _)| o).collect();
        missed += KernelMisses::of(&user);
        crate::loader::detach(user, crate::loader::DetachMode::Sequential);
        objects = rest.into_iter().map(|(o, _)| o).collect();
    }
    let _ = arming.disarm();
    // The kernel's own counts of the runs it skipped, while the programs and links are still
    // this process's to ask about: one info call per object.
    let reading = std::time::Instant::now();
    missed += KernelMisses::of(&objects);
    let missed_read = reading.elapsed();
    let missed = missed.since(&missed_before);
    // Nothing records any more: detach now, in a background child, so the kernel's work
    // (kprobe_multi unregistering patches every call site back and waits for RCU-tasks grace
    // periods; each trampoline waits for its own) overlaps reading and printing the results
    // instead of starting after them. Closing a perf event or raw tracepoint takes microseconds;
    // the loader's clones detach on the child's side.
    let stop = crate::timings::since_start();
    crate::loader::detach(
        std::mem::take(&mut objects),
        crate::loader::DetachMode::Background,
    );
    if matches!(reason, Some(ExitReason::Signal(_))) {
        sink.stopping = true;
    }
    // Records written before disarming still count, unless exit() ended the run: the probes
    // ran on until the disarm above, and bpftrace drops their records behind the exit record.
    if reason == Some(ExitReason::Exit) {
        discard_pending(&mut buffers)?;
    } else {
        handle_pending(&mut buffers, &mut sink, out, &mut buf, opts.buffering)?;
    }
    // END probes all run; after an `exit()` in one, the rest print nothing (as in bpftrace).
    // The first `exit()` in END sets the status over the run's own, as bpftrace reads END's
    // exit record after it has reset its finalizing state.
    let run_code = exit_flag.code();
    if !ends.is_empty() {
        exit_flag.clear().map_err(RunError::Arming)?;
    }
    let mut end_exited = false;
    for e in &ends {
        e.run()?;
        if end_exited {
            discard_pending(&mut buffers)?;
        } else if handle_pending(&mut buffers, &mut sink, out, &mut buf, opts.buffering)? {
            end_exited = true;
            discard_pending(&mut buffers)?;
        }
    }

    // Exit: maps, lost records, drops.
    let lost = buffers.total_lost().unwrap_or(0);
    if lost > 0 {
        printer.lost_events(&mut buf, lost);
    }
    // Text: a warning on stderr after the results; JSON: a message beside `lost_events`.
    let mut missed_warning = Vec::new();
    printer.kernel_missed(&mut buf, &mut missed_warning, &missed);
    let all: Vec<_> = script
        .maps
        .iter()
        .enumerate()
        // A signal while large maps are read stops reading them.
        .take_while(|_| !super::signals::stop_pending() && opts.serve.is_none())
        .filter_map(|(i, s)| {
            let parts = snapshot::MapParts::of(script, &maps, i)?;
            Some((s, snapshot::snapshot(s, parts, &symbolizer).ok().flatten()?))
        })
        .collect();
    // The test and bench modes print their reports instead of the maps.
    if !opts.no_exit_maps && opts.serve.is_none() && opts.mode == RunMode::Trace {
        printer.exit_maps(&mut buf, &exit_shapes(&all));
    }
    let snaps: Vec<_> = all
        .into_iter()
        .map(|(_, s)| s)
        .filter(|s| !s.entries.is_empty())
        .collect();
    let drops = match script.map_with_role(&MapRole::DropCounter) {
        Some((i, _)) => LostCounter::new(maps[i].as_fd(), 0)?.read().unwrap_or(0),
        None => 0,
    };
    flush(out, &mut buf, true)?;
    if drops > 0 {
        eprintln!(
            "WARNING: Map full; can't update element ({drops} map updates were dropped); \
             raise max_map_keys (STROBE_MAX_MAP_KEYS)"
        );
    }
    if !opts.no_warnings {
        let _ = std::io::stderr().write_all(&missed_warning);
    }
    let child_pid = child.as_ref().map(Child::pid);
    report_stop(stop, missed_read);
    drop(child);
    Ok(RunOutcome {
        reason: reason.unwrap_or(ExitReason::Exit),
        attached,
        lost,
        drops,
        missed,
        exit_code: if failed_runs {
            Some(1)
        } else {
            exit_flag.code().or(run_code)
        },
        child_pid,
        maps: snaps,
    })
}

/// Runs each `iter:` probe's iterator to its end, then handles every record
/// it wrote: the iterator's run is the whole trace, as in bpftrace, so `exit()` in it ends the
/// run after the iteration but loses none of its output.
fn run_iterators(
    iterators: &[(usize, String)],
    objects: &[KernelObject],
    (buffers, sink): (&mut BufferSet, &mut EventSink<'_>),
    out: &mut dyn Write,
    buf: &mut Vec<u8>,
    mode: Buffering,
) -> Result<ExitReason, RunError> {
    for (o, name) in iterators {
        let Some(KernelObject::Link(link)) = objects.get(*o) else {
            panic!("internal error: iter probe {name} has no link at object {o}");
        };
        let text = probes::iter::run(name, link)?;
        buf.extend_from_slice(&text);
        while handle_pending(buffers, sink, out, buf, mode)? {}
    }
    flush(out, buf, true)?;
    Ok(ExitReason::Exit)
}

/// Runs the `test:`/`bench:` probes of `--test`/`--bench` in order and prints their report;
/// whether one failed. Their records are handled between runs: a test's are kept for its
/// report, a benchmark's dropped; `exit()` in one is its failure, not the run's end.
fn run_modes(
    opts: &RunOptions,
    runs: &[(String, SpecialProg)],
    (buffers, sink, exit_flag): (&mut BufferSet, &mut EventSink<'_>, &ExitFlag),
    out: &mut dyn Write,
    buf: &mut Vec<u8>,
) -> Result<bool, RunError> {
    use super::format::results::{write_bench_result, write_test_result};
    use super::modes::{run_bench, run_test, BenchOutcome};
    let names: Vec<String> = runs.iter().map(|(n, _)| n.clone()).collect();
    let mut any_failed = false;
    let mut passed = Vec::new();
    let mut bench_shown = false;
    for (index, (name, prog)) in runs.iter().enumerate() {
        // Each probe starts without an `exit()` or `errorf()` of its own.
        exit_flag.clear().map_err(RunError::Arming)?;
        sink.errors = 0;
        // A test's output is kept as text, as bpftrace reports it (in JSON too).
        let printer = sink.printer;
        if opts.mode == RunMode::Test {
            sink.printer = Printer::new(OutputFormat::Text);
        }
        let mut drain = |into: &mut dyn Write| -> Result<bool, RunError> {
            let mut scratch = Vec::new();
            handle_pending(buffers, sink, into, &mut scratch, Buffering::Full)?;
            into.write_all(&scratch).map_err(RunError::Output)?;
            Ok(exit_flag.code().is_some() || sink.errors > 0)
        };
        if opts.mode == RunMode::Test {
            let r = run_test(prog, &mut |o: &mut Vec<u8>| drain(o));
            sink.printer = printer;
            let r = r?;
            any_failed |= !r.passed;
            passed.push(r.passed);
            write_test_result(
                opts.format,
                buf,
                &names,
                index,
                &passed,
                r.duration_ns,
                &r.output,
            );
        } else {
            match run_bench(prog, &mut || drain(&mut std::io::sink()))? {
                BenchOutcome::Measured { average_ns, iters } => {
                    let heading = !bench_shown;
                    bench_shown = true;
                    write_bench_result(
                        opts.format,
                        buf,
                        (&names, index, heading),
                        average_ns,
                        iters,
                    )
                }
                BenchOutcome::Skipped => {}
                BenchOutcome::Failed => {
                    eprintln!("ERROR: Benchmark '{name}' failed.");
                    any_failed = true;
                }
            }
        }
        flush(out, buf, true)?;
    }
    exit_flag.clear().map_err(RunError::Arming)?;
    Ok(any_failed)
}

/// Whether every probe of `script` is a BEGIN or END probe (or a `test:`/`bench:` one).
fn only_begin_end(script: &CompiledScript) -> bool {
    script
        .probes
        .iter()
        // `test:`/`bench:` probes run only in their modes, which end by themselves.
        .all(|p| p.is_special())
}

/// The maps as bpftrace prints them at exit, empty ones included: an empty map is a blank
/// line (two for `avg`/`stats`, which print a blank line of their own). A key-less `count()`
/// map with no value (after `clear()` or `delete()`, or never written) prints nothing more, as
/// in current bpftrace (its suite's `clear count-map`, `delete count-map`); bpftrace 0.17
/// printed `@: 0`.
fn exit_shapes(all: &[(&crate::plan::MapSpec, MapSnapshot)]) -> Vec<MapSnapshot> {
    use super::format::agg::AggKind;
    use crate::plan::MapValueSpec;
    let mut out = Vec::new();
    for (spec, snap) in all {
        if !snap.entries.is_empty() {
            out.push(snap.clone());
            continue;
        }
        match &spec.role {
            MapRole::Script {
                value: MapValueSpec::Agg(AggKind::Avg { .. } | AggKind::Stats { .. }),
                ..
            } => out.extend([snap.clone(), snap.clone()]),
            _ => out.push(snap.clone()),
        }
    }
    out
}

/// Writes the buffered output. A failed write ends the run ([`RunError::Output`]): a closed
/// pipe (`strobe … | head -1`) or a full disk would otherwise leave it running, attached,
/// with its output going nowhere. Unwinding from the error still detaches everything.
fn flush(out: &mut dyn Write, buf: &mut Vec<u8>, force: bool) -> Result<(), RunError> {
    if buf.is_empty() || (!force && buf.len() < 64 << 10) {
        return Ok(());
    }
    // In pieces, so a Ctrl-C during a long print (a large map) stops it promptly.
    let mut r = Ok(());
    for (i, piece) in buf.chunks(64 << 10).enumerate() {
        if i > 0 && super::signals::stop_pending() {
            break;
        }
        r = out.write_all(piece);
        if r.is_err() {
            break;
        }
    }
    let r = r.and_then(|_| out.flush());
    buf.clear();
    r.map_err(RunError::Output)
}

/// Drops every record already in the buffers: what probes wrote after an `exit()` record,
/// which bpftrace reads past without printing.
fn discard_pending(buffers: &mut BufferSet) -> Result<(), RunError> {
    buffers.drain(|_, _| ControlFlow::Continue(()))?;
    Ok(())
}

/// Handles every record already in the buffers up to an `exit()` record, which stays the last
/// one handled (the rest stay in the buffers); true when one was `exit()`.
fn handle_pending(
    buffers: &mut BufferSet,
    sink: &mut EventSink<'_>,
    out: &mut dyn Write,
    buf: &mut Vec<u8>,
    mode: Buffering,
) -> Result<bool, RunError> {
    let mut exit = false;
    let mut failed = None;
    let mut seen = 0u32;
    buffers.drain(|_, rec| {
        // Probes may fill the buffers as fast as records are handled (a `system()` per
        // sched_switch): a stop request ends the drain so the event loop can see it.
        seen = seen.wrapping_add(1);
        if !sink.stopping && seen % 64 == 0 && super::signals::stop_pending() {
            sink.stopping = true;
            return ControlFlow::Break(());
        }
        if sink.handle(rec, buf) == Step::Exit {
            exit = true;
            return ControlFlow::Break(());
        }
        if mode != Buffering::Full {
            if let Err(e) = flush(out, buf, true) {
                failed = Some(e);
                return ControlFlow::Break(());
            }
        }
        ControlFlow::Continue(())
    })?;
    if let Some(e) = failed {
        return Err(e);
    }
    flush(out, buf, mode != Buffering::Full)?;
    Ok(exit)
}

const TOKEN_BUFFERS: u64 = 0;
const TOKEN_SIGNALS: u64 = 1;
const TOKEN_CHILD: u64 = 2;
const TOKEN_STOP: u64 = 3;
const TOKEN_TRACED: u64 = 4;

/// A pidfd for `-p`'s process (pidfd_open, 5.3): readable once it exits. None where the
/// kernel has no pidfds or the process is already gone (`kill(pid, 0)` tells the latter).
fn traced_pidfd(pid: i32) -> Option<std::os::fd::OwnedFd> {
    use std::os::fd::FromRawFd;
    // SAFETY: pidfd_open with no flags; a fresh fd on success.
    let fd = unsafe { libc::syscall(libc::SYS_pidfd_open, pid, 0) };
    // SAFETY: `fd` is a new descriptor owned by nobody else.
    (fd >= 0).then(|| unsafe { std::os::fd::OwnedFd::from_raw_fd(fd as RawFd) })
}

/// Whether `-p`'s process is gone.
fn traced_gone(pid: i32) -> bool {
    // SAFETY: signal 0 only checks for the process.
    let r = unsafe { libc::kill(pid, 0) };
    r != 0 && std::io::Error::last_os_error().raw_os_error() == Some(libc::ESRCH)
}

fn event_loop(
    buffers: &mut BufferSet,
    // What else ends the loop: signals, and the library API's stop switch; and the
    // `self:signal` probes some signals run.
    (signals, on_signal, stop, exit_flag): (
        &SignalFd,
        &[(i32, SpecialProg)],
        Option<&super::stop::StopHandle>,
        &ExitFlag,
    ),
    // Processes whose end ends the run: the `-c` command and `-p`'s process.
    (child, traced): (&mut Option<Child>, Option<i32>),
    sink: &mut EventSink<'_>,
    out: &mut dyn Write,
    buf: &mut Vec<u8>,
    mode: Buffering,
) -> Result<ExitReason, RunError> {
    let epoll = Epoll::new().map_err(|source| RunError::Loop {
        what: "epoll",
        source,
    })?;
    let add = |fd, token| {
        epoll.add(fd, token).map_err(|source| RunError::Loop {
            what: "epoll add",
            source,
        })
    };
    add(buffers.as_fd(), TOKEN_BUFFERS)?;
    add(signals.as_fd(), TOKEN_SIGNALS)?;
    if let Some(s) = stop {
        add(s.as_fd(), TOKEN_STOP)?;
    }
    if let Some(fd) = child.as_ref().and_then(Child::pidfd) {
        add(fd, TOKEN_CHILD)?;
    }
    // bpftrace ends a `-p` run when that process exits.
    let traced_fd = traced.and_then(traced_pidfd);
    if let Some(fd) = &traced_fd {
        add(fd.as_fd(), TOKEN_TRACED)?;
    }
    if traced.is_some_and(traced_gone) {
        return Ok(ExitReason::ProcessExited);
    }
    // The command may have exited before SIGCHLD was blocked-and-read; check once up front.
    if child.as_mut().is_some_and(|c| c.exited().is_some()) {
        return Ok(ExitReason::CommandExited);
    }
    let mut ready = Vec::new();
    loop {
        let timeout = if buffers.has_pending() {
            Some(Duration::ZERO)
        } else {
            None
        };
        ready.clear();
        if let Err(source) = epoll.wait(timeout, &mut ready) {
            if source.kind() != std::io::ErrorKind::Interrupted {
                return Err(RunError::Loop {
                    what: "epoll wait",
                    source,
                });
            }
        }
        if handle_pending(buffers, sink, out, buf, mode)? {
            return Ok(ExitReason::Exit);
        }
        if exit_flag.code().is_some() {
            // Its record was lost (or is still being written): one more pass, bounded by one
            // look at the buffers' fill, takes what was written before it and ends (at the
            // exit record if it has arrived meanwhile).
            handle_pending(buffers, sink, out, buf, mode)?;
            return Ok(ExitReason::Exit);
        }
        if stop.is_some_and(|s| s.is_stopped()) {
            return Ok(ExitReason::Stopped);
        }
        // A pidfd is readable once the process has exited (a zombie still answers kill()).
        if ready.contains(&TOKEN_TRACED) {
            return Ok(ExitReason::ProcessExited);
        }
        if ready.contains(&TOKEN_CHILD) && child.as_mut().is_some_and(|c| c.exited().is_some()) {
            return Ok(ExitReason::CommandExited);
        }
        while let Some(sig) = signals.read() {
            match sig {
                libc::SIGCHLD => {
                    if child.as_mut().is_some_and(|c| c.exited().is_some()) {
                        return Ok(ExitReason::CommandExited);
                    }
                }
                // `self:signal` probes run in script order, their records handled as they
                // come; with none, the signal is dropped (bpftrace's SIGUSR1 does nothing).
                s if super::signals::SELF_EVENTS.contains(&s) => {
                    for (_, p) in on_signal.iter().filter(|(sig, _)| *sig == s) {
                        p.run()?;
                        if handle_pending(buffers, sink, out, buf, mode)? {
                            return Ok(ExitReason::Exit);
                        }
                        if exit_flag.code().is_some() {
                            handle_pending(buffers, sink, out, buf, mode)?;
                            return Ok(ExitReason::Exit);
                        }
                    }
                }
                s => return Ok(ExitReason::Signal(s)),
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn kernel_map_names_are_sanitised_and_short() {
        assert_eq!(kernel_map_name("@"), "at");
        assert_eq!(kernel_map_name("@count"), "count");
        assert_eq!(kernel_map_name("@a-b[c]"), "a_b_c_");
        assert_eq!(kernel_map_name("@a_very_long_map_name"), "a_very_long_map");
    }
}
