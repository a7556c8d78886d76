//! One probe block → one [`ProbeSpec`] per attach point: the attach kind the runtime needs
//! (BEGIN/END, interval, profile, tracepoint, rawtracepoint, uprobe, kprobe, fentry) and the
//! program lowered for that attach point's context (`args` differ between kinds, so a probe
//! with several attach points is lowered once per point). What differs between kinds (the
//! attach plan, what `args` means) is in one file per kind beside this one, named as in
//! [`crate::kinds`].
//!
//! Program shape: [predicate → exit] body; `r0 = 0; exit` at the single exit label. Every
//! probe except BEGIN/END gets the arming guard (runtime plan invariant).

crate::kinds::kind_modules!();

use super::{ArgsSource, Lower, LowerError, ScriptState};
use crate::codegen::{Builder, FinishOptions};
use crate::plan::{ProbeKind as RunKind, ProbeSpec};
use crate::sema::expand::TargetKind;
use crate::sema::{AttachTargets, CheckedProbe, CheckedProgram};
use crate::syntax::ast::ProbeKind;
use crate::syntax::attach::{AttachNum, AttachSpec};
use crate::template::AttachKind;

/// Lowers `checked` (probe `start` of the compiled script is its first attach point).
pub(crate) fn lower_probe(
    cp: &CheckedProgram,
    checked: &CheckedProbe,
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
    // different registers ([`sites`]).
    let points: Vec<_> = checked
        .attach
        .iter()
        .zip(&probe.attach_points)
        .enumerate()
        .flat_map(|(i, (at, ap))| sites(at).into_iter().map(move |at| (i, (at, ap))))
        .collect();
    for (i, (at, ap)) in points {
        let at = &*at;
        // Every attach point has a target but one that matched nothing and was left out
        // (`missing_probes = warn|ignore`).
        if at.targets.is_empty() {
            continue;
        }
        let kind = run_kind(&Input {
            at,
            spec: &ap.spec,
            span: ap.span,
            params: &opts.params,
        })?;
        let Some(kind) = kind else { continue };
        let (attach, args) = context(at, ap.span)?;
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
            opts,
            index,
            point: i,
            name: &name,
            special: !at.kind.info().armed,
            begin: matches!(kind, RunKind::Begin),
            bounded: matches!(kind, RunKind::Begin | RunKind::End),
        };
        // strobe's own syscalls are left out only where they would feed the probe without
        // end: a tracepoint or raw tracepoint probe that sends records to strobe, whose
        // handling makes syscalls (`raw_syscalls:sys_enter { printf(…) }`). A probe that
        // only updates maps sees strobe's few syscalls as bpftrace sees its own, and skips
        // the filter's helper call on every event. Lowered once without the filter; a body
        // that turns out to send records is lowered again with it, and one that asks the
        // helpers for the current task more than once, again with one call at the top that
        // the whole body shares (as the filter's call is shared).
        let mark = script.events.mark();
        let lower = |script: &mut ScriptState, need_start: &mut bool, prelude| {
            lower_point(
                &point,
                script,
                need_start,
                attach,
                args.clone(),
                false,
                prelude,
            )
        };
        let (mut compiled, feeds) = lower(script, need_start, Prelude::Nothing)?;
        let again = match at.kind.info().pid_filter == crate::kinds::PidFilter::Always {
            true if feeds => Some(Prelude::SelfFilter),
            true if current_task_calls(&compiled.template) > 1 => Some(Prelude::SharedTask),
            _ => None,
        };
        if let Some(prelude) = again {
            script.events.truncate(&mark);
            compiled = lower(script, need_start, prelude)?.0;
        }
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
                lower_point(
                    &point,
                    script,
                    need_start,
                    kprobe,
                    args,
                    true,
                    Prelude::Nothing,
                )
                .ok()
                .map(|(c, _)| Box::new(c.template))
            }
            _ => None,
        };
        let kind = fentry::with_fentry_targets(kind, &compiled.template, at, &cp.env);
        out.push(ProbeSpec {
            name,
            id: at.kind,
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
/// many targets (`probe` from the BPF cookie instead of a per-clone constant). `prelude`: what
/// goes before the body besides `-p`/`-c`'s filter ([`Prelude`]). Returns the program and
/// whether it sends records to strobe (ring buffer output).
fn lower_point(
    pt: &Point<'_>,
    script: &mut ScriptState,
    need_start: &mut bool,
    attach: AttachKind,
    args: ArgsSource,
    shared_fentry: bool,
    prelude: Prelude,
) -> Result<(crate::codegen::Compiled, bool), LowerError> {
    let Point {
        cp,
        checked,
        probe,
        at,
        opts,
        index,
        ..
    } = *pt;
    let mut lw = Lower {
        cp,
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
        user_params: at
            .targets
            .iter()
            .zip(&at.slots)
            .find_map(|(t, s)| match &t.kind {
                TargetKind::User { func, .. } if !func.is_empty() => Some(s.args.clone()),
                _ => None,
            }),
        target_count: at.targets.len(),
        target_names: at.targets.iter().map(|t| t.name.clone()).collect(),
        helper_warnings: opts.helper_warnings,
        stack_value_max: super::stack_value_max(cp.on_stack_limit),
        shared_fentry,
        // The link-time addresses the checker found for the uprobe targets.
        user_anchors: at
            .targets
            .iter()
            .zip(&at.slots)
            .filter(|(t, _)| matches!(t.kind, TargetKind::User { .. }))
            .map(|(_, s)| s.anchor)
            .collect(),
    };
    lw.exit = lw.b.label();
    lw.b.signed_division = cp.env.signed_division;
    lw.b.set_span(probe.span);
    if *need_start && pt.begin {
        super::elapsed::record_start(&mut lw.b);
        *need_start = false;
    }
    // strobe's own pid is left out where its own syscalls would feed the probe
    // (`Prelude::SelfFilter`: tracepoints, raw tracepoints sending records); kprobes and fentry
    // keep bpftrace 0.17's size budget (`tests/lower_sizes.rs`) unless `-p`/`-c` filters anyway.
    let own_feed = prelude == Prelude::SelfFilter
        && at.kind.info().pid_filter == crate::kinds::PidFilter::Always;
    // A probe without predicate or statements has no effect to keep from any process (or to
    // hold back until armed): its program is `r0 = 0; exit`, the kernel's accounting floor.
    let no_effect = probe.predicate.is_none()
        && probe.body.stmts.is_empty()
        && probe.body.tail.is_none()
        && !pt.special;
    if super::pid_filter::applies(at.kind) && (opts.pid_filter || own_feed) && !no_effect {
        let exit = lw.exit;
        let task = cp.env.task_fields;
        super::pid_filter::emit(&mut lw.b, exit, opts.pid_filter, task);
    } else if prelude == Prelude::SharedTask && !no_effect {
        super::pid_filter::current(&mut lw.b, cp.env.task_fields);
    }
    if let Some(prologue) = hooks(at.kind).prologue {
        prologue(&mut lw);
    }
    super::stmt::init_vars(&mut lw, checked)?;
    if let Some(pred) = &probe.predicate {
        lw.b.set_span(pred.span);
        let v = super::expr::lower_expr(&mut lw, pred)?;
        let exit = lw.exit;
        crate::codegen::emit::control::branch_if(&mut lw.b, v.value(), false, exit);
    }
    super::stmt::lower_block(&mut lw, &probe.body)?;
    // After the body's maps, so their indices do not move.
    fentry::reserve_maps(&mut lw.b, attach);
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
        arming_guard: !pt.special && !no_effect,
    };
    crate::codegen::finish_program(lw.b, lw.subprogs, &opts)
        .map(|c| (c, ring > 0))
        .map_err(|source| LowerError::Codegen {
            probe: pt.name.to_string(),
            span: probe.span,
            source,
        })
}

pub(crate) use begin_end::start_only_begin;

/// What a program has before its body besides `-p`/`-c`'s filter.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Prelude {
    Nothing,
    /// One helper call for the current task (or pid/tgid), which the body's `pid`, `tid`,
    /// `comm`, … share.
    SharedTask,
    /// That call and the test that leaves strobe's own process out.
    SelfFilter,
}

/// How many helper calls in `t`'s main program ask for the current task or pid/tgid.
fn current_task_calls(t: &crate::template::Template) -> usize {
    use crate::asm::isa::Helper;
    use crate::asm::Insn;
    let asks = [
        Insn::call_helper(Helper::GetCurrentTaskBtf),
        Insn::call_helper(Helper::GetCurrentTask),
        Insn::call_helper(Helper::GetCurrentPidTgid),
    ];
    let main_end = t.funcs.first().copied().unwrap_or(t.insns.len());
    t.insns[..main_end]
        .iter()
        .filter(|i| asks.contains(i))
        .count()
}

/// The kernel's program name (16 bytes): distinct per probe so `bpftool prog` tells them apart.
fn prog_name(_point: usize, index: usize) -> String {
    format!("strobe_p{index}")
}

/// The attach points to lower for `at`: itself, or one per binary (uprobes) or per probe site
/// (usdt).
fn sites(at: &AttachTargets) -> Vec<std::borrow::Cow<'_, AttachTargets>> {
    (hooks(at.kind).sites)(at)
}

/// What lowering differs in between kinds, from the kind's file here.
struct Hooks {
    /// The kinds it is for (a file may serve a kind and its return-probe twin).
    kinds: &'static [ProbeKind],
    /// The runtime's attach plan for one attach point (`None`: nothing to attach).
    plan: fn(&Input<'_>) -> Result<Option<RunKind>, LowerError>,
    /// What `args` means, from what the checker read about the first target.
    args: fn(&AttachTargets, crate::diag::Span) -> Result<ArgsSource, LowerError>,
    /// The attach points to lower for one: itself, or one per binary (uprobes) or per probe
    /// site (usdt), whose arguments live in different registers.
    sites: for<'a> fn(&'a AttachTargets) -> Vec<std::borrow::Cow<'a, AttachTargets>>,
    /// Code before the predicate (the iterators' skip of their last, empty call).
    prologue: Option<fn(&mut Lower<'_>)>,
}

impl Hooks {
    /// No `args`, the attach point itself, no prologue; `plan` refuses (each kind sets its
    /// own).
    const PLAIN: Hooks = Hooks {
        kinds: &[],
        plan: mismatch,
        args: |_, _| Ok(ArgsSource::None),
        sites: |at| vec![std::borrow::Cow::Borrowed(at)],
        prologue: None,
    };
}

/// The kinds' hooks, one per kind in [`crate::kinds::KINDS`]' order.
const HOOKS: [&Hooks; crate::kinds::KINDS.len()] = crate::kinds::kind_table!();

fn hooks(kind: ProbeKind) -> &'static Hooks {
    let h = HOOKS[kind as usize];
    debug_assert!(
        h.kinds.contains(&kind),
        "{} has another kind's hooks",
        kind.name()
    );
    h
}

/// kprobes' and uprobes' `args`: the registers.
fn regs(_: &AttachTargets, _: crate::diag::Span) -> Result<ArgsSource, LowerError> {
    Ok(ArgsSource::Regs)
}

/// What planning one attach point reads: the checked targets, the parsed spec and the
/// positional parameters (`$N` in numbers).
struct Input<'a> {
    at: &'a AttachTargets,
    spec: &'a AttachSpec,
    span: crate::diag::Span,
    params: &'a [String],
}

impl Input<'_> {
    /// A number in an attach point; `$N` is positional parameter N (an integer).
    fn num(&self, n: AttachNum) -> Result<u64, LowerError> {
        match n {
            AttachNum::Lit(v) => Ok(v),
            AttachNum::Param(i) => {
                let text = self.params.get((i as usize).wrapping_sub(1));
                text.and_then(|t| t.trim().parse::<u64>().ok())
                    .ok_or_else(|| LowerError::Kernel {
                        what: match text {
                            Some(t) => format!("positional parameter ${i} is '{t}', not a number"),
                            None => format!("positional parameter ${i} is not given"),
                        },
                        span: self.span,
                    })
            }
        }
    }

    fn unsupported<T>(&self, what: &str) -> Result<T, LowerError> {
        Err(LowerError::unsupported(what, self.span))
    }
}

/// The parser gives each kind its own spec form; another is an internal inconsistency,
/// refused as unsupported rather than guessed at.
fn mismatch(i: &Input<'_>) -> Result<Option<RunKind>, LowerError> {
    Ok(Some(RunKind::Unsupported {
        what: format!("{} probes with this attach point", i.at.kind.name()),
    }))
}

/// The runtime's attach plan for one attach point (`None`: nothing to attach, e.g. a
/// wildcard that matched nothing was already warned about), from the kind's own file.
fn run_kind(i: &Input<'_>) -> Result<Option<RunKind>, LowerError> {
    (hooks(i.at.kind).plan)(i)
}

/// The template's attach kind (the kind table's shape) and what `args` means for this attach
/// point, from what the checker read about its first target.
fn context(
    at: &AttachTargets,
    span: crate::diag::Span,
) -> Result<(AttachKind, ArgsSource), LowerError> {
    let args = (hooks(at.kind).args)(at, span)?;
    Ok((at.kind.info().template, args))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_hooks_table_has_one_entry_per_kind_in_order() {
        for (i, k) in crate::kinds::KINDS.iter().enumerate() {
            assert!(
                HOOKS[i].kinds.contains(&k.kind),
                "{} is out of place",
                k.name
            );
        }
    }
}
