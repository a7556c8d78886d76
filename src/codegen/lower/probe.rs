//! One probe block → one [`ProbeSpec`] per attach point: the attach kind the runtime needs
//! (BEGIN/END, interval, profile, tracepoint, rawtracepoint, uprobe, kprobe, fentry) and the
//! program lowered for that attach point's context (`args` differ between kinds, so a probe
//! with several attach points is lowered once per point).
//!
//! Program shape: [predicate → exit] body; `r0 = 0; exit` at the single exit label. Every
//! probe except BEGIN/END gets the arming guard (runtime plan invariant).

use crate::syntax::ast::ProbeKind as AstKind;
use std::path::PathBuf;

use super::{ArgsSource, Lower, LowerError, ScriptState};
use crate::codegen::{finish, Builder, FinishOptions};
use crate::kernel::info::KernelInfo;
use crate::plan::{ProbeKind as RunKind, ProbeSpec, Sampling};
use crate::sema::expand::TargetKind;
use crate::sema::{AttachTargets, CheckedProbe, CheckedProgram};
use crate::syntax::ast::ProbeKind;
use crate::syntax::attach::{AttachNum, AttachSpec, TimeUnit};
use crate::template::{AttachKind, Template};

/// Lowers `checked` (probe `start` of the compiled script is its first attach point).
pub(crate) fn lower_probe(
    cp: &CheckedProgram,
    checked: &CheckedProbe,
    kernel: &dyn KernelInfo,
    script: &mut ScriptState,
    start: usize,
    opts: &crate::sema::CheckOptions,
    need_start: &mut bool,
) -> Result<Vec<ProbeSpec>, LowerError> {
    let Some(probe) = cp.program.probes().nth(checked.index) else {
        return Ok(Vec::new());
    };
    let mut out = Vec::new();
    // A usdt attach point is lowered once per probe site: each site's arguments live in
    // different registers (`usdt_sites`).
    let points: Vec<_> = checked
        .attach
        .iter()
        .zip(&probe.attach_points)
        .enumerate()
        .flat_map(|(i, (at, ap))| usdt_sites(at).into_iter().map(move |at| (i, (at, ap))))
        .collect();
    for (i, (at, ap)) in points {
        let at = &*at;
        // Every attach point has a target but one that matched nothing and was left out
        // (`missing_probes = warn|ignore`).
        if at.targets.is_empty() {
            continue;
        }
        let kind = run_kind(at, &ap.spec, ap.span, &opts.params, kernel)?;
        let Some(kind) = kind else { continue };
        let (attach, args) = context(at, kernel, ap.span)?;
        let index = start + out.len();
        let name = match &kind {
            RunKind::Begin => "BEGIN".to_string(),
            RunKind::End => "END".to_string(),
            _ => at
                .targets
                .first()
                .map(|t| t.name.clone())
                .unwrap_or_else(|| at.raw.clone()),
        };
        let point = Point {
            cp,
            checked,
            probe,
            at,
            kernel,
            opts,
            index,
            point: i,
            name: &name,
            special: kind.is_special(),
            begin: matches!(kind, RunKind::Begin),
            bounded: matches!(kind, RunKind::Begin | RunKind::End),
        };
        let compiled = lower_point(&point, script, need_start, attach, args.clone(), false)?;
        // fentry/fexit wildcards using `probe`: a second program for kprobe_multi groups, which
        // tells targets apart by the BPF cookie (`loader::attach_fentry`). Not lowerable (e.g.
        // no bpf_get_attach_cookie): the targets stay on trampolines.
        let multi = match &kind {
            RunKind::Fentry { fexit, .. }
                if at.targets.len() > 1
                    && compiled
                        .template
                        .relocs
                        .iter()
                        .any(|r| r.kind == crate::template::RelocKind::TargetIndex) =>
            {
                let kprobe = AttachKind::Kprobe { retprobe: *fexit };
                lower_point(&point, script, need_start, kprobe, args, true)
                    .ok()
                    .map(|c| Box::new(c.template))
            }
            _ => None,
        };
        let kind = with_fentry_targets(kind, &compiled.template, at, kernel);
        out.push(ProbeSpec {
            name,
            kind,
            template: compiled.template,
            multi_template: multi,
        });
    }
    Ok(out)
}

/// What lowering one attach point needs besides the script state.
struct Point<'a> {
    cp: &'a CheckedProgram,
    checked: &'a CheckedProbe,
    probe: &'a crate::syntax::ast::Probe,
    at: &'a AttachTargets,
    kernel: &'a dyn KernelInfo,
    opts: &'a crate::sema::CheckOptions,
    /// The probe's index in the compiled script.
    index: usize,
    /// The attach point's index in the probe.
    point: usize,
    name: &'a str,
    /// BEGIN/END and the other probes without the arming guard.
    special: bool,
    begin: bool,
    /// BEGIN/END: their ring records count towards the ring buffer's size.
    bounded: bool,
}

/// Lowers one attach point's program as `attach`, with `args` meaning what the attach point's
/// kind gives. `shared_fentry`: an fentry/fexit body for one kprobe_multi program shared by
/// many targets (`probe` from the BPF cookie instead of a per-clone constant).
fn lower_point(
    pt: &Point<'_>,
    script: &mut ScriptState,
    need_start: &mut bool,
    attach: AttachKind,
    args: ArgsSource,
    shared_fentry: bool,
) -> Result<crate::codegen::Compiled, LowerError> {
    let Point {
        cp,
        checked,
        probe,
        at,
        kernel,
        opts,
        index,
        ..
    } = *pt;
    let mut lw = Lower {
        cp,
        kernel,
        b: Builder::new(),
        script,
        probe_index: index,
        probe_kind: at.kind,
        args,
        vars: Default::default(),
        scopes: Default::default(),
        var_types: checked
            .vars
            .slots
            .iter()
            .map(|(_, t, _)| t.clone())
            .collect(),
        exit: crate::codegen::Label(0),
        loops: Vec::new(),
        max_strlen: opts.max_strlen,
        dummy_ts_map: opts.dummy_ts_map.clone(),
        scratch_used: 0,
        subprogs: Vec::new(),
        lazy_vars: false,
        macros: Vec::new(),
        fn_ret: None,
        raw_bytes: Vec::new(),
        shared_scratch: Vec::new(),
        user_binary: at.targets.iter().find_map(|t| match &t.kind {
            TargetKind::User { path, .. } | TargetKind::Usdt { path, .. } => Some(path.clone()),
            _ => None,
        }),
        user_func: at.targets.iter().find_map(|t| match &t.kind {
            TargetKind::User { func, .. } if !func.is_empty() => Some(func.clone()),
            _ => None,
        }),
        target_count: at.targets.len(),
        target_names: at.targets.iter().map(|t| t.name.clone()).collect(),
        helper_warnings: opts.helper_warnings,
        stack_value_max: super::stack_value_max(cp.on_stack_limit),
        shared_fentry,
        user_anchors: at
            .targets
            .iter()
            .filter_map(|t| match &t.kind {
                TargetKind::User {
                    path,
                    func,
                    offset,
                    address,
                } => Some(address.or_else(|| {
                    kernel
                        .elf_symbol_address(path, func)
                        .map(|(a, _)| a + offset.unwrap_or(0))
                })),
                _ => None,
            })
            .collect(),
    };
    lw.exit = lw.b.label();
    lw.b.signed_division = kernel.signed_division();
    lw.b.set_span(probe.span);
    if *need_start && pt.begin {
        super::elapsed::record_start(&mut lw.b);
        *need_start = false;
    }
    // strobe's own pid is left out where its own syscalls would feed the probe
    // (tracepoints, raw tracepoints); kprobes and fentry keep bpftrace 0.17's size
    // budget (`tests/lower_sizes.rs`) unless `-p`/`-c` filters anyway.
    let own_feed = matches!(at.kind, AstKind::Tracepoint | AstKind::RawTracepoint);
    if super::pid_filter::applies(at.kind) && (opts.pid_filter || own_feed) {
        let exit = lw.exit;
        let task = kernel.task_fields();
        super::pid_filter::emit(&mut lw.b, exit, opts.pid_filter, task);
    }
    if at.kind == AstKind::Iter {
        // The kernel runs an iterator program once more after the last object, with a
        // NULL object (`ctx->task`, `ctx->file`, …: the field after `meta`); bpftrace's
        // probes skip that call, so do these.
        let object =
            crate::codegen::emit::builtins::ctx_u64(&mut lw.b, 1, crate::codegen::emit::IntTy::U64);
        let exit = lw.exit;
        crate::codegen::emit::control::jump_if_false(&mut lw.b, object, exit);
    }
    super::stmt::init_vars(&mut lw, checked)?;
    if let Some(pred) = &probe.predicate {
        lw.b.set_span(pred.span);
        let v = super::expr::lower_expr(&mut lw, pred)?;
        let exit = lw.exit;
        crate::codegen::emit::control::branch_if(&mut lw.b, v.value(), false, exit);
    }
    super::stmt::lower_block(&mut lw, &probe.body)?;
    let exit = lw.exit;
    lw.b.bind(exit);
    lw.b.exit(0);
    let regions = lw.scratch_used.div_ceil(super::SCRATCH_SIZE);
    lw.script.scratch_regions = lw.script.scratch_regions.max(regions);
    let bounded = pt.bounded;
    let ring = lw.b.ring_bytes + lw.subprogs.iter().map(|s| s.ring_bytes).sum::<u64>();
    if bounded {
        lw.script.ring_bytes += ring;
    } else if ring > 0 {
        lw.script.ring_unbounded = true;
    }
    let opts = FinishOptions {
        name: prog_name(pt.point, index),
        attach,
        arming_guard: !pt.special,
    };
    crate::codegen::finish_program(lw.b, lw.subprogs, &opts).map_err(|source| LowerError::Codegen {
        probe: pt.name.to_string(),
        span: probe.span,
        source,
    })
}

/// A BEGIN program that only records the start time for `elapsed` (scripts without BEGIN).
pub(crate) fn start_only_begin(index: usize) -> Result<ProbeSpec, LowerError> {
    let mut b = Builder::new();
    super::elapsed::record_start(&mut b);
    b.exit(0);
    let opts = FinishOptions {
        name: prog_name(0, index),
        attach: AttachKind::RawTracepoint,
        arming_guard: false,
    };
    let c = finish(b, &opts).map_err(|source| LowerError::Codegen {
        probe: "BEGIN".into(),
        span: crate::diag::Span { start: 0, end: 0 },
        source,
    })?;
    Ok(ProbeSpec {
        name: "BEGIN".into(),
        kind: RunKind::Begin,
        template: c.template,
        multi_template: None,
    })
}

/// The kernel's program name (16 bytes): distinct per probe so `bpftool prog` tells them apart.
fn prog_name(_point: usize, index: usize) -> String {
    format!("strobe_p{index}")
}

/// A number in an attach point; `$N` is positional parameter N (an integer).
fn num(n: AttachNum, span: crate::diag::Span, params: &[String]) -> Result<u64, LowerError> {
    match n {
        AttachNum::Lit(v) => Ok(v),
        AttachNum::Param(i) => {
            let text = params.get((i as usize).wrapping_sub(1));
            text.and_then(|t| t.trim().parse::<u64>().ok())
                .ok_or_else(|| LowerError::Kernel {
                    what: match text {
                        Some(t) => format!("positional parameter ${i} is '{t}', not a number"),
                        None => format!("positional parameter ${i} is not given"),
                    },
                    span,
                })
        }
    }
}

fn period_ns(unit: TimeUnit, v: u64) -> u64 {
    match unit {
        TimeUnit::S => v.saturating_mul(1_000_000_000),
        TimeUnit::Ms => v.saturating_mul(1_000_000),
        TimeUnit::Us => v.saturating_mul(1_000),
        TimeUnit::Ns => v,
        TimeUnit::Hz => 1_000_000_000 / v.max(1),
    }
}

/// The runtime's attach kind for one attach point (`None`: nothing to attach, e.g. a
/// wildcard that matched nothing was already warned about).
fn run_kind(
    at: &AttachTargets,
    spec: &AttachSpec,
    span: crate::diag::Span,
    params: &[String],
    kernel: &dyn KernelInfo,
) -> Result<Option<RunKind>, LowerError> {
    let unsupported = |what: &str| Err(LowerError::unsupported(what, span));
    Ok(Some(match (at.kind, spec) {
        (ProbeKind::Begin, _) => RunKind::Begin,
        (ProbeKind::Test, AttachSpec::Named { name, .. }) => RunKind::Test { name: name.clone() },
        (ProbeKind::Bench, AttachSpec::Named { name, .. }) => RunKind::Bench { name: name.clone() },
        (ProbeKind::SelfEvent, AttachSpec::Named { name, .. }) => {
            match crate::builtins::signal_number(name) {
                Some(n) => RunKind::Signal { signal: n as i32 },
                None => return unsupported(&format!("the signal `{name}`")),
            }
        }
        (ProbeKind::End, _) => RunKind::End,
        (ProbeKind::Interval, AttachSpec::Timer { unit, value }) => RunKind::Interval {
            period_ns: period_ns(*unit, num(*value, span, params)?).max(1),
        },
        (ProbeKind::Profile, AttachSpec::Timer { unit, value }) => {
            let v = num(*value, span, params)?;
            RunKind::Profile {
                sampling: match unit {
                    TimeUnit::Hz => Sampling::Frequency(v.max(1)),
                    u => Sampling::Period(period_ns(*u, v).max(1)),
                },
            }
        }
        (ProbeKind::Tracepoint, _) => {
            let targets: Vec<(String, String)> = at
                .targets
                .iter()
                .filter_map(|t| match &t.kind {
                    TargetKind::Tracepoint { category, name } => {
                        Some((category.clone(), name.clone()))
                    }
                    _ => None,
                })
                .collect();
            if targets.is_empty() {
                return Ok(None);
            }
            RunKind::Tracepoint { targets }
        }
        (ProbeKind::RawTracepoint, _) => {
            let targets: Vec<String> = at
                .targets
                .iter()
                .filter_map(|t| match &t.kind {
                    TargetKind::RawTracepoint { name, .. } => Some(name.clone()),
                    _ => None,
                })
                .collect();
            if targets.is_empty() {
                return Ok(None);
            }
            RunKind::RawTracepoint { targets }
        }
        (ProbeKind::Uprobe | ProbeKind::Uretprobe, _) => {
            let Some(TargetKind::User {
                path,
                func,
                address: target_address,
                ..
            }) = at.targets.first().map(|t| &t.kind)
            else {
                return Ok(None);
            };
            // One spec per binary; the runtime resolves the function glob itself.
            let func = match spec {
                AttachSpec::Uprobe { func: f, .. } if !f.is_empty() => f.clone(),
                _ => func.clone(),
            };
            let cpp = matches!(spec, AttachSpec::Uprobe { lang: Some(l), .. } if l == "cpp");
            let (offset, address) = match spec {
                AttachSpec::Uprobe {
                    offset, address, ..
                } => (offset.unwrap_or(0), *address),
                // A source line is the address its DWARF line table gave.
                AttachSpec::UprobeSourceLine { .. } => (0, *target_address),
                _ => (0, None),
            };
            RunKind::Uprobe {
                binary: PathBuf::from(path),
                func,
                retprobe: at.kind == ProbeKind::Uretprobe,
                offset,
                address,
                cpp,
            }
        }
        (
            ProbeKind::Watchpoint | ProbeKind::AsyncWatchpoint,
            AttachSpec::Watchpoint { address, len, mode },
        ) => RunKind::Watchpoint {
            address: num(*address, span, params)?,
            len: num(*len, span, params)?,
            // HW_BREAKPOINT_R = 1, _W = 2, _X = 4 (include/uapi/linux/hw_breakpoint.h).
            bp_type: mode.chars().fold(0, |t, c| {
                t | match c {
                    'r' => 1,
                    'w' => 2,
                    _ => 4,
                }
            }),
        },
        (ProbeKind::Usdt, _) => {
            let Some(TargetKind::Usdt { path, note }) = at.targets.first().map(|t| &t.kind) else {
                return Ok(None);
            };
            RunKind::Usdt {
                binary: path.clone(),
                note: note.clone(),
            }
        }
        (ProbeKind::Kprobe | ProbeKind::Kretprobe, _) => RunKind::Kprobe {
            funcs: at
                .targets
                .iter()
                .filter_map(|t| match &t.kind {
                    TargetKind::KernelFunc { func, .. } => Some(func.clone()),
                    _ => None,
                })
                .collect(),
            retprobe: at.kind == ProbeKind::Kretprobe,
        },
        (ProbeKind::Fentry | ProbeKind::Fexit, _) => RunKind::Fentry {
            targets: Vec::new(),
            fexit: at.kind == ProbeKind::Fexit,
        },
        (ProbeKind::Software | ProbeKind::Hardware, AttachSpec::PerfEvent { event, count }) => {
            let hw = at.kind == ProbeKind::Hardware;
            let Some((config, default)) = perf_event(hw, event) else {
                return unsupported(&format!("the perf event `{event}`"));
            };
            let n = match count {
                Some(c) => num(*c, span, params)?,
                None => default,
            };
            let sampling = Sampling::Period(n.max(1));
            if hw {
                RunKind::Hardware { config, sampling }
            } else {
                RunKind::Software { config, sampling }
            }
        }
        (ProbeKind::Iter, AttachSpec::Iter { name, pin }) => {
            if pin.is_some() {
                // A pinned iterator is read by others (`cat /sys/fs/bpf/PIN`): its output must
                // go to the iterator's seq file, and strobe's printf writes the ring buffer.
                return unsupported(
                    "pinning an iterator (`iter:NAME:PIN`): strobe's printf writes to its ring \
                     buffer, not to the iterator's seq file (bpf_seq_printf), so readers of the \
                     pin would see nothing",
                );
            }
            // bpftrace's words when the kernel lacks the iterator.
            let missing = || LowerError::Kernel {
                what: format!("iter {name} not available for your kernel version."),
                span,
            };
            let btf = kernel.btf(None).map_err(|_| missing())?;
            let btf_id = btf
                .find_func(&format!("bpf_iter_{name}"))
                .ok_or_else(missing)?;
            RunKind::Iter {
                name: name.clone(),
                btf_id,
            }
        }
        (k, _) => {
            return Ok(Some(RunKind::Unsupported {
                what: format!("{} probes", k.name()),
            }))
        }
    }))
}

/// A software (`perf_sw_ids`) or hardware (`perf_hw_id`) event by bpftrace's names and
/// aliases, with bpftrace's default sample period (include/uapi/linux/perf_event.h).
fn perf_event(hw: bool, name: &str) -> Option<(u64, u64)> {
    let sw: &[(&[&str], u64, u64)] = &[
        (&["cpu-clock", "cpu"], 0, 1_000_000),
        (&["task-clock"], 1, 1_000_000),
        (&["page-faults", "faults"], 2, 100),
        (&["context-switches", "cs"], 3, 1_000),
        (&["cpu-migrations"], 4, 1),
        (&["minor-faults"], 5, 100),
        (&["major-faults"], 6, 1),
        (&["alignment-faults"], 7, 1),
        (&["emulation-faults"], 8, 1),
        (&["dummy"], 9, 1),
        (&["bpf-output"], 10, 1),
    ];
    let hwt: &[(&[&str], u64, u64)] = &[
        (&["cpu-cycles", "cycles"], 0, 1_000_000),
        (&["instructions"], 1, 1_000_000),
        (&["cache-references"], 2, 1_000_000),
        (&["cache-misses"], 3, 1_000_000),
        (&["branch-instructions", "branches"], 4, 100_000),
        (&["branch-misses"], 5, 100_000),
        (&["bus-cycles"], 6, 100_000),
        (&["frontend-stalls"], 7, 1_000_000),
        (&["backend-stalls"], 8, 1_000_000),
        (&["ref-cycles"], 9, 1_000_000),
    ];
    let table = if hw { hwt } else { sw };
    table
        .iter()
        .find(|(names, _, _)| names.contains(&name))
        .map(|(_, c, d)| (*c, *d))
}

/// fentry/fexit: one clone target per target that has every fact the template needs, with
/// its argument and return-value slots from the function's prototype (BTF).
fn with_fentry_targets(
    kind: RunKind,
    t: &Template,
    at: &AttachTargets,
    kernel: &dyn KernelInfo,
) -> RunKind {
    let RunKind::Fentry { fexit, .. } = kind else {
        return kind;
    };
    let mut targets = Vec::new();
    let mut protos = crate::sema::proto_cache::ProtoCache::default();
    let skipped: std::collections::HashSet<usize> =
        at.grouping.skipped.iter().map(|(s, _)| *s).collect();
    for (i, target) in at.targets.iter().enumerate() {
        if skipped.contains(&i) {
            continue;
        }
        // `fentry:bpf:`: no `args` (bpftrace has none for these either), `retval` after the
        // function's parameters; the runtime opens the program to attach to.
        if let TargetKind::BpfFunc {
            prog_id,
            btf_id,
            params,
            ..
        } = &target.kind
        {
            if t.params.is_empty() {
                let mut c = crate::plan::target::CloneTarget::named(&target.name, *btf_id);
                c.ret_slot = Some(8 * i64::from(*params));
                c.prog = Some(*prog_id);
                targets.push(c);
            }
            continue;
        }
        let TargetKind::KernelFunc {
            btf_id: Some(id),
            module,
            func,
            ..
        } = &target.kind
        else {
            continue;
        };
        // Shapes only (no script types): a wildcard reaches tens of thousands of targets.
        let Some(proto) = protos.target_proto(kernel, target) else {
            continue;
        };
        if let Ok(mut c) = crate::plan::target::CloneTarget::from_proto(t, &proto, *id) {
            // `func` prints the target's name (the target-index table).
            c.name = target.name.clone();
            c.func = func.clone();
            // A module function's BTF id is in the module's BTF: the loader loads it with
            // that module's BTF object.
            c.module = module.clone();
            targets.push(c);
        }
    }
    RunKind::Fentry { targets, fexit }
}

/// The template's attach kind and what `args` means for this attach point.
fn context(
    at: &AttachTargets,
    kernel: &dyn KernelInfo,
    span: crate::diag::Span,
) -> Result<(AttachKind, ArgsSource), LowerError> {
    Ok(match at.kind {
        ProbeKind::Tracepoint => {
            let mut fields = Vec::new();
            if let Some(TargetKind::Tracepoint { category, name }) =
                at.targets.first().map(|t| &t.kind)
            {
                let f =
                    kernel
                        .tracepoint_format(category, name)
                        .map_err(|e| LowerError::Kernel {
                            what: format!("tracepoint {category}:{name}: {e}"),
                            span,
                        })?;
                fields = f.fields;
            }
            (AttachKind::RawTracepoint, ArgsSource::Tracepoint(fields))
        }
        ProbeKind::RawTracepoint => {
            let mut names = Vec::new();
            if let Some(TargetKind::RawTracepoint { module, name }) =
                at.targets.first().map(|t| &t.kind)
            {
                names = raw_tp_args(kernel, module.as_deref(), name);
            }
            (AttachKind::RawTracepoint, ArgsSource::RawTracepoint(names))
        }
        ProbeKind::Uprobe => (AttachKind::Uprobe { retprobe: false }, ArgsSource::Regs),
        ProbeKind::Uretprobe => (AttachKind::Uprobe { retprobe: true }, ArgsSource::Regs),
        ProbeKind::Kprobe => (AttachKind::Kprobe { retprobe: false }, ArgsSource::Regs),
        ProbeKind::Kretprobe => (AttachKind::Kprobe { retprobe: true }, ArgsSource::Regs),
        ProbeKind::Fentry => (AttachKind::Fentry, ArgsSource::Fentry),
        ProbeKind::Fexit => (AttachKind::Fexit, ArgsSource::Fentry),
        ProbeKind::Usdt => {
            let args = match at.targets.first().map(|t| &t.kind) {
                Some(TargetKind::Usdt { note, .. }) => crate::kernel::usdt::parse_args(&note.args),
                _ => Vec::new(),
            };
            (
                AttachKind::Uprobe { retprobe: false },
                ArgsSource::Usdt(args),
            )
        }
        _ => (AttachKind::RawTracepoint, ArgsSource::None),
    })
}

/// The attach points to lower for `at`: itself, or for `usdt:` one per probe site (target).
fn usdt_sites(at: &AttachTargets) -> Vec<std::borrow::Cow<'_, AttachTargets>> {
    if matches!(at.kind, ProbeKind::Uprobe | ProbeKind::Uretprobe) {
        return user_binaries(at);
    }
    if at.kind != ProbeKind::Usdt || at.targets.len() < 2 {
        return vec![std::borrow::Cow::Borrowed(at)];
    }
    // The sites of one probe next to each other: `Attached N probes` counts probes.
    let mut sites: Vec<&crate::sema::expand::Target> = at.targets.iter().collect();
    sites.sort_by(|a, b| a.name.cmp(&b.name));
    sites
        .into_iter()
        .map(|t| {
            let mut one = at.clone();
            one.targets = vec![t.clone()];
            std::borrow::Cow::Owned(one)
        })
        .collect()
}

/// A uprobe attach point split by binary (`uprobe:*:f` with `-p`, `uprobe:./bin*:f`): one
/// spec per file, in the order the files were found, each attaching its own functions.
fn user_binaries(at: &AttachTargets) -> Vec<std::borrow::Cow<'_, AttachTargets>> {
    let path = |t: &crate::sema::expand::Target| match &t.kind {
        TargetKind::User { path, .. } => Some(path.clone()),
        _ => None,
    };
    let mut seen = std::collections::HashSet::new();
    let paths: Vec<PathBuf> = at
        .targets
        .iter()
        .filter_map(path)
        .filter(|p| seen.insert(p.clone()))
        .collect();
    if paths.len() < 2 {
        return vec![std::borrow::Cow::Borrowed(at)];
    }
    paths
        .into_iter()
        .map(|p| {
            let mut one = at.clone();
            one.targets.retain(|t| path(t).as_ref() == Some(&p));
            std::borrow::Cow::Owned(one)
        })
        .collect()
}

/// A raw tracepoint's argument names, from BTF's `btf_trace_<name>` typedef (a pointer to a
/// function whose first parameter is the `void *__data` the kernel passes internally).
fn raw_tp_args(kernel: &dyn KernelInfo, module: Option<&str>, name: &str) -> Vec<String> {
    let cx = crate::sema::context::ProbeContext::build(
        &[(
            ProbeKind::RawTracepoint,
            vec![crate::sema::expand::Target {
                name: format!("rawtracepoint:{name}"),
                kind: TargetKind::RawTracepoint {
                    module: module.map(str::to_string),
                    name: name.to_string(),
                },
            }],
        )],
        kernel,
        64,
        false,
    );
    cx.targets
        .first()
        .map(|t| t.args.iter().map(|(n, _)| n.clone()).collect())
        .unwrap_or_default()
}
