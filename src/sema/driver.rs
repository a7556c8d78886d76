//! The checking driver: per probe, expand its attach points ([`super::expand`]) and build its
//! context ([`super::context`]), then check its predicate and body; `fn` bodies are checked
//! once with their typed parameters. Typing runs in two rounds (see [`super::check`]); this file
//! also reads `config = { … }` and `#define` constants, and groups each attach point's targets
//! by the facts the body assumes.
//!
//! Input/output: see [`super::check`].

use std::collections::HashMap;
use std::sync::Arc;

use super::context::ProbeContext;
use super::ctypes::ScriptTypes;
use super::expand::{expand, ExpandError, Target};
use super::program::{AttachTargets, CheckedProbe, CheckedProgram, VarTable};
use super::resolve::Checker;
use super::resources::{Maps, MAP_KINDS};
use super::types::Type;
use super::{CheckOptions, CheckOutput, MissingProbes};
use crate::btf::Btf;
use crate::diag::{Diagnostic, Span};
use crate::kernel::info::KernelInfo;
use crate::syntax::ast::CTypeKind;
use crate::syntax::ast::*;
use crate::template::{group_targets, Fact, Grouping, SkipReason, TargetGroup};

/// Config variables bpftrace knows (`config = { … }`, without the `BPFTRACE_` prefix).
const CONFIG_KEYS: &[&str] = &[
    "cache_user_symbols",
    "cpp_demangle",
    "lazy_symbolication",
    "license",
    "log_size",
    "max_bpf_progs",
    "max_cat_bytes",
    "max_map_keys",
    "max_probes",
    "max_strlen",
    "max_type_res_iterations",
    "missing_probes",
    "on_stack_limit",
    "perf_rb_pages",
    "print_maps_on_exit",
    "show_debug_info",
    "stack_mode",
    "str_trunc_trailer",
    "symbol_source",
    "unstable_import",
    "unstable_macro",
    "unstable_map_decl",
    "unstable_tseries",
    "unstable_dw_ustack",
    "unstable_addr",
    "use_blazesym",
];

/// The `license` values bpftrace accepts (all GPL-compatible).
const LICENSES: &[&str] = &[
    "Dual MIT/GPL",
    "Dual BSD/GPL",
    "Dual MPL/GPL",
    "GPL and additional rights",
    "GPL v2",
    "GPL",
];

fn config_overrides(program: &Program, opts: &mut CheckOptions, diags: &mut Vec<Diagnostic>) {
    let Some(cfg) = &program.config else {
        return;
    };
    for e in &cfg.entries {
        let key = e
            .key
            .name
            .trim_start_matches("BPFTRACE_")
            .to_ascii_lowercase();
        // The environment wins over the script's config block, as in bpftrace.
        let upper = key.to_ascii_uppercase();
        if CONFIG_KEYS.contains(&key.as_str())
            && (std::env::var_os(format!("BPFTRACE_{upper}")).is_some()
                || std::env::var_os(format!("STROBE_{upper}")).is_some())
        {
            continue;
        }
        match (key.as_str(), &e.value) {
            ("max_strlen", ConfigValue::Int(n)) => {
                opts.max_strlen = (*n).clamp(1, 1 << 20) as usize
            }
            ("max_map_keys", ConfigValue::Int(n)) => opts.max_map_keys = (*n).max(1),
            ("perf_rb_pages", ConfigValue::Int(n)) => opts.perf_rb_pages = Some((*n).max(1)),
            ("on_stack_limit", ConfigValue::Int(n)) => opts.on_stack_limit = Some(*n),
            ("log_size", ConfigValue::Int(n)) => opts.log_size = Some(*n),
            ("str_trunc_trailer", ConfigValue::Str(t) | ConfigValue::Ident(t)) => {
                opts.str_trunc_trailer = t.clone()
            }
            ("missing_probes", ConfigValue::Ident(m) | ConfigValue::Str(m)) => {
                opts.missing_probes = match m.as_str() {
                    "error" => MissingProbes::Error,
                    "warn" => MissingProbes::Warn,
                    "ignore" => MissingProbes::Ignore,
                    _ => {
                        diags.push(Diagnostic::error(
                            e.value_span,
                            format!("Invalid missing_probes '{m}' (error, warn, ignore)"),
                        ));
                        opts.missing_probes
                    }
                };
            }
            ("stack_mode", ConfigValue::Ident(m) | ConfigValue::Str(m)) => {
                use crate::plan::layout::StackMode;
                opts.stack_mode = match m.as_str() {
                    "perf" => StackMode::Perf,
                    "raw" => StackMode::Raw,
                    "bpftrace" => StackMode::Bpftrace,
                    _ => {
                        diags.push(Diagnostic::error(
                            e.value_span,
                            format!("Invalid stack_mode '{m}' (bpftrace, perf, raw)"),
                        ));
                        opts.stack_mode
                    }
                };
            }
            // Every license bpftrace accepts is GPL-compatible, so the programs' load (as
            // "GPL") and the helpers they may call are the same for each.
            ("license", ConfigValue::Str(l) | ConfigValue::Ident(l))
                if !LICENSES.contains(&l.as_str()) =>
            {
                diags.push(Diagnostic::error(
                    Span::new(e.key.span.start as usize, e.value_span.end as usize),
                    format!(
                        "Invalid value for license. Found: {l}. Valid values: {}",
                        LICENSES.join(", ")
                    ),
                ));
            }
            (k, _) if !CONFIG_KEYS.contains(&k) => {
                // bpftrace's words; the span covers `key=value`.
                let mut d = Diagnostic::error(
                    Span::new(e.key.span.start as usize, e.value_span.end as usize),
                    format!("{}: not a known configuration option", e.key.name),
                );
                d.help = crate::diag::nearest(k, CONFIG_KEYS.iter().copied())
                    .map(|n| format!("did you mean '{n}'?"));
                diags.push(d);
            }
            _ => {}
        }
    }
}

/// Runs both rounds and assembles the output.
pub(super) fn run(program: &Program, kernel: &dyn KernelInfo, opts: &CheckOptions) -> CheckOutput {
    // Each macro call gets its own copy of the body (`sema::macros`).
    let expanded_program = super::macros::expand(program, super::calls::MAX_MACRO_DEPTH);
    let program = expanded_program.as_ref().unwrap_or(program);
    let mut first = Checker::new(program, kernel, opts, false);
    let expanded = first.expand_all();
    first.check_all(&expanded);
    let mut second = Checker::new(program, kernel, opts, true);
    second.maps = first.maps.clone();
    second.contexts = std::mem::take(&mut first.contexts);
    second.var_types_learned = std::mem::take(&mut first.var_types_learned);
    // Keep only what round 1 learned about types; declarations and reports are redone.
    for e in &mut second.maps.entries {
        e.assigned = false;
        e.declared = None;
    }
    let probes = second.check_all(&expanded);
    second.check_unassigned_maps();
    second.check_named_params();
    second.check_dummy_ts_map();
    let mut diagnostics = std::mem::take(&mut second.diags);
    diagnostics.sort_by_key(|d| (d.span.start, !d.is_error()));
    let has_errors = diagnostics.iter().any(Diagnostic::is_error);
    let gathered = std::mem::take(&mut second.gathered);
    let program = (!has_errors)
        .then(|| CheckedProgram {
            env: super::environment::finish(
                gathered,
                &second.builtin_ids,
                &probes,
                kernel,
                &second.opts,
            ),
            program: program.clone(),
            types: second.types,
            var_slots: second.var_slots,
            map_refs: second
                .map_refs
                .into_iter()
                .map(|(e, m)| (e, super::MapId(m as u32)))
                .collect(),
            map_index: Default::default(),
            maps: second.maps.finish(second.opts.max_map_keys),
            format_of: second
                .formats
                .iter()
                .enumerate()
                .map(|(i, f)| (f.call, super::FormatId(i as u32)))
                .collect(),
            formats: second.formats,
            consts: second.consts,
            str_consts: second.str_consts,
            addr_spaces: second.addr_spaces,
            builtins: second.builtin_ids,
            script_types: second.script_types,
            probes,
            fn_vars: second.fn_vars,
            options: second.getopts,
            str_trunc_trailer: second.opts.str_trunc_trailer.clone(),
            str_trunc_size: second.opts.max_strlen,
            perf_rb_pages: second.opts.perf_rb_pages,
            on_stack_limit: second.opts.on_stack_limit,
            log_size: second.opts.log_size,
            warnings: diagnostics
                .iter()
                .filter(|d| !d.is_error())
                .cloned()
                .collect(),
        })
        .map(|mut cp| {
            cp.map_index = CheckedProgram::index_maps(&cp.maps);
            cp
        });
    CheckOutput {
        program,
        diagnostics,
    }
}

/// Per probe, per attach point: kind, raw text, targets, and the expansion error if any.
type Expanded = Vec<Vec<(ProbeKind, String, Vec<Target>, Option<ExpandError>)>>;

impl<'a> Checker<'a> {
    pub(super) fn new(
        program: &'a Program,
        kernel: &'a dyn KernelInfo,
        opts: &CheckOptions,
        report: bool,
    ) -> Checker<'a> {
        let mut opts = opts.clone();
        let mut diags = Vec::new();
        config_overrides(program, &mut opts, &mut diags);
        // Kernel BTF only when the script defines types (they may embed kernel records);
        // otherwise the first question that needs it reads it (see `Checker::vmlinux`).
        let vmlinux = std::cell::OnceCell::new();
        if program.type_defs().next().is_some() || !program.header_types.is_empty() {
            let _ = vmlinux.set(kernel.btf(None).ok());
        }
        let btf = vmlinux.get().and_then(|b: &Option<Arc<Btf>>| b.as_deref());
        let member_btf = super::incomplete::member_btf(program, btf);
        diags.extend(super::incomplete::incomplete_members(program, member_btf));
        // A header's struct is used when neither the script nor the kernel defines one of
        // that name (the kernel's layout is the one probes read).
        let script_tags: std::collections::HashSet<(CTypeKind, &str)> = program
            .type_defs()
            .filter_map(|d| Some((d.kind, d.name.as_ref()?.name.as_str())))
            .collect();
        let from_headers = program.header_types.iter().filter(|d| {
            d.name.as_ref().is_some_and(|n| {
                !script_tags.contains(&(d.kind, n.name.as_str()))
                    && !btf.is_some_and(|b| {
                        super::ctypes::find_btf_record(b, d.kind, &n.name).is_some()
                    })
            })
        });
        let script_types = ScriptTypes::build(
            from_headers.chain(program.type_defs()),
            member_btf,
            opts.max_strlen,
        );
        let defines = HashMap::new();
        Checker {
            program,
            kernel,
            opts,
            report,
            diags,
            types: vec![Type::None; program.expr_count as usize],
            consts: HashMap::new(),
            str_consts: HashMap::new(),
            addr_spaces: HashMap::new(),
            builtin_ids: HashMap::new(),
            var_slots: HashMap::new(),
            map_refs: HashMap::new(),
            maps: Maps::default(),
            formats: Vec::new(),
            defines,
            script_types,
            vmlinux,
            scopes: Vec::new(),
            vars: VarTable::default(),
            cx: ProbeContext::default(),
            facts: Vec::new(),
            loop_depth: 0,
            frames: Vec::new(),
            fn_ret: None,
            fn_vars: HashMap::new(),
            warned: Default::default(),
            getopts: Vec::new(),
            format_literal: false,
            hoist_floor: 0,
            contexts: HashMap::new(),
            typed_vars: Default::default(),
            unassigned: Default::default(),
            var_types_learned: HashMap::new(),
            gathered: Default::default(),
        }
    }

    /// The kernel's vmlinux BTF, read on first use; `None` when the kernel has none.
    pub fn vmlinux(&self) -> Option<Arc<Btf>> {
        self.vmlinux
            .get_or_init(|| self.kernel.btf(None).ok())
            .clone()
    }

    pub fn error(&mut self, span: Span, msg: impl Into<String>) -> Option<&mut Diagnostic> {
        if !self.report {
            return None;
        }
        let mut d = Diagnostic::error(span, msg);
        d.set_expansion(self.frames.iter().rev().map(|f| f.call).collect());
        self.diags.push(d);
        self.diags.last_mut()
    }

    pub fn error_help(&mut self, span: Span, msg: impl Into<String>, help: String) {
        if let Some(d) = self.error(span, msg) {
            d.help = Some(help);
        }
    }

    /// Whether an error was already reported inside `span` (round 1 says yes: it reports
    /// nothing anyway).
    pub fn had_error_in(&self, span: Span) -> bool {
        !self.report
            || self.diags.iter().any(|d| {
                let inside = |s: &Span| s.start >= span.start && s.end <= span.end;
                // An error in a macro's body counts for each call it was expanded from.
                d.is_error() && (inside(&d.span) || d.expansion().any(|s| inside(&s)))
            })
    }

    pub fn warn(&mut self, span: Span, msg: impl Into<String>) -> Option<&mut Diagnostic> {
        if !self.report {
            return None;
        }
        let mut d = Diagnostic::warning(span, msg);
        d.set_expansion(self.frames.iter().rev().map(|f| f.call).collect());
        self.diags.push(d);
        self.diags.last_mut()
    }

    pub(super) fn expand_all(&mut self) -> Expanded {
        self.program
            .probes()
            .map(|p| {
                p.attach_points
                    .iter()
                    .map(|ap| match expand(ap, self.kernel) {
                        Ok(t) => (ap.kind, ap.raw.clone(), t, None),
                        Err(e) => (ap.kind, ap.raw.clone(), Vec::new(), Some(e)),
                    })
                    .collect()
            })
            .collect()
    }

    pub(super) fn check_all(&mut self, expanded: &Expanded) -> Vec<CheckedProbe> {
        for d in self.program.map_decls() {
            let i = self.maps.id(&d.map.name, d.map.span);
            if !MAP_KINDS.contains(&d.kind.name.as_str()) {
                let help = crate::diag::nearest(&d.kind.name, MAP_KINDS.iter().copied())
                    .map(|n| format!("did you mean '{n}'?"));
                if let Some(e) = self.error(
                    d.kind.span,
                    format!(
                        "unknown map kind '{}' (known: {})",
                        d.kind.name,
                        MAP_KINDS.join(", ")
                    ),
                ) {
                    e.help = help;
                }
            }
            self.maps.entries[i].declared = Some((d.kind.name.clone(), d.max_entries));
        }
        for f in self.program.fns() {
            self.check_fn(f);
        }
        let mut out = Vec::new();
        for (index, (probe, exp)) in self.program.probes().zip(expanded).enumerate() {
            out.push(self.check_probe(index, probe, exp));
        }
        out
    }

    pub(super) fn check_unassigned_maps(&mut self) {
        let unassigned: Vec<(Span, String)> = self
            .maps
            .entries
            .iter()
            .filter(|e| !e.assigned && e.declared.is_none())
            .map(|e| (e.span, e.name.clone()))
            .collect();
        for (span, name) in unassigned {
            self.error(span, format!("Undefined map: {name}"));
        }
        // A declared map no probe uses (bpftrace's warning).
        let unused: Vec<(Span, String)> = self
            .maps
            .entries
            .iter()
            .filter(|e| {
                e.declared.is_some() && !e.assigned && e.value.is_none() && e.keys.is_none()
            })
            .map(|e| (e.span, e.name.clone()))
            .collect();
        for (span, name) in unused {
            self.warn(span, format!("Unused map: {name}"));
        }
        self.check_map_kinds();
    }

    /// A declared kind must suit the value: aggregations live in per-CPU maps (`percpuhash`,
    /// `percpulruhash`), other values in shared ones (`hash`, `lruhash`), as bpftrace has it.
    fn check_map_kinds(&mut self) {
        let bad: Vec<(Span, &'static str, &'static str)> = self
            .maps
            .entries
            .iter()
            .filter_map(|e| {
                let kind = e.declared.as_ref()?.0.as_str();
                let value = e.value.as_ref()?;
                let from_value = if matches!(value, Type::Agg(_)) {
                    "BPF_MAP_TYPE_PERCPU_HASH"
                } else {
                    "BPF_MAP_TYPE_HASH"
                };
                let (declared, per_cpu) = match kind {
                    "hash" => ("BPF_MAP_TYPE_HASH", false),
                    "lruhash" => ("BPF_MAP_TYPE_LRU_HASH", false),
                    "percpuhash" => ("BPF_MAP_TYPE_PERCPU_HASH", true),
                    "percpulruhash" => ("BPF_MAP_TYPE_LRU_PERCPU_HASH", true),
                    _ => return None,
                };
                (per_cpu != matches!(value, Type::Agg(_))).then_some((e.span, declared, from_value))
            })
            .collect();
        for (span, declared, from_value) in bad {
            self.error(
                span,
                format!(
                    "Incompatible map types. Type from declaration: {declared}. \
                     Type from value/key type: {from_value}"
                ),
            );
        }
    }

    pub(super) fn check_probe(
        &mut self,
        index: usize,
        probe: &Probe,
        exp: &[(ProbeKind, String, Vec<Target>, Option<ExpandError>)],
    ) -> CheckedProbe {
        // An attach point that matched nothing is an error, or with `missing_probes` set to
        // warn/ignore is left out (bpftrace's words, and its warning when a whole probe goes).
        let mut skipped = 0;
        for (ap, (kind, _, targets, err)) in probe.attach_points.iter().zip(exp) {
            match (err, self.opts.missing_probes) {
                (None, _) => {}
                (Some(e @ ExpandError::NoMatch { .. }), MissingProbes::Warn) => {
                    skipped += 1;
                    self.warn(ap.span, format!("{e} Skipping."));
                }
                (Some(ExpandError::NoMatch { .. }), MissingProbes::Ignore) => skipped += 1,
                (Some(e), _) => {
                    self.error(ap.span, e.to_string());
                }
            }
            for why in uprobe_site_errors(*kind, targets, self.opts.unsafe_mode) {
                // bpftrace finds these when it attaches: its message has no script location.
                self.error(Span::NOWHERE, why);
            }
        }
        if skipped > 0
            && skipped == probe.attach_points.len()
            && self.opts.missing_probes == MissingProbes::Warn
        {
            self.warn(
                probe.attach_points[0].span,
                "Probe has no valid attach points. It is being removed which may cause issues \
                 with program behavior.",
            );
        }
        // Built in round 1, reused in round 2: moved in and out, never copied (a wildcard's
        // context has a row per target).
        self.cx = match self.contexts.remove(&index) {
            Some(cx) => cx,
            None => {
                let attach: Vec<(ProbeKind, Vec<Target>)> =
                    exp.iter().map(|(k, _, t, _)| (*k, t.clone())).collect();
                ProbeContext::build(
                    &attach,
                    self.kernel,
                    self.opts.max_strlen,
                    // Only these kinds read more when the probe uses `args`.
                    exp.iter().any(|(k, ..)| k.info().facts.args_on_use)
                        && super::proto_cache::reads_args(self.program, probe),
                )
            }
        };
        if let Some(sp) = probe.attach_points.first().map(|a| a.span) {
            let unreadable = std::mem::take(&mut self.cx.unreadable);
            for (t, why) in &unreadable {
                self.warn(sp, format!("{t}: arguments unavailable: {why}"));
            }
            self.cx.unreadable = unreadable;
        }
        self.facts.clear();
        self.warned.clear();
        self.vars = VarTable::default();
        self.scopes = vec![HashMap::new()];
        if let Some(pred) = &probe.predicate {
            let t = self.expr(pred);
            if !(t.is_scalar() || t.is_none()) {
                self.error(
                    pred.span,
                    format!("Invalid type for predicate: {t}; it must be an integer or a pointer"),
                );
            }
        }
        self.block(&probe.body, false);
        self.warn_unassigned();
        self.learn_var_types();
        self.scopes.clear();
        let facts = std::mem::take(&mut self.facts);
        // Round 1 only learns types: its targets and groups would be thrown away.
        let report = self.report;
        let attach = exp
            .iter()
            .filter(|_| report)
            .map(|(kind, raw, targets, _)| {
                let grouping = self.group(*kind, targets, &facts);
                AttachTargets {
                    kind: *kind,
                    raw: raw.clone(),
                    targets: targets.clone(),
                    facts: facts.clone(),
                    grouping,
                    slots: self.target_slots(targets),
                }
            })
            .collect();
        self.contexts.insert(index, std::mem::take(&mut self.cx));
        CheckedProbe {
            index,
            attach,
            vars: std::mem::take(&mut self.vars),
        }
    }

    /// The context's targets by name, looked up once each: wildcards reach tens of thousands.
    /// The first entry of a name wins.
    fn context_by_name(&self) -> HashMap<&str, &super::context::TargetArgs> {
        self.cx
            .targets
            .iter()
            .rev()
            .map(|a| (a.name.as_str(), a))
            .collect()
    }

    /// The argument names and prototype shapes the probe's context read for each target.
    fn target_slots(&self, targets: &[Target]) -> Vec<super::program::TargetSlots> {
        let by_name = self.context_by_name();
        targets
            .iter()
            .map(|t| {
                let mut slots = match by_name.get(t.name.as_str()) {
                    Some(a) => super::program::TargetSlots {
                        args: a.args.clone(),
                        proto: a.proto.clone(),
                        fields: a.fields.clone(),
                        unreadable: a.unreadable.clone(),
                        btf_id: a.btf_id,
                        anchor: None,
                        usdt_args: Vec::new(),
                    },
                    None => super::program::TargetSlots::default(),
                };
                // Once, in the round whose output is kept (each lookup reads the binary).
                if let (
                    true,
                    super::expand::TargetKind::User {
                        path,
                        func,
                        offset,
                        address,
                    },
                ) = (self.report, &t.kind)
                {
                    slots.anchor = address.or_else(|| {
                        self.kernel
                            .elf_symbol_address(path, func)
                            .map(|(a, _)| a + offset.unwrap_or(0))
                    });
                }
                if let super::expand::TargetKind::Usdt { note, .. } = &t.kind {
                    slots.usdt_args = crate::kernel::usdt::parse_args(&note.args);
                }
                slots
            })
            .collect()
    }

    /// Groups fentry/fexit targets by the facts the body assumes; other kinds form one group.
    pub(super) fn group(
        &mut self,
        kind: ProbeKind,
        targets: &[Target],
        facts: &[Fact],
    ) -> Grouping {
        if kind.info().facts.btf_func {
            let facts: Vec<Fact> = facts
                .iter()
                .filter(|f| kind.info().facts.retprobe || !matches!(f, Fact::ReturnsScalar))
                .cloned()
                .collect();
            // Nothing to tell targets apart by: one group, whatever their prototypes.
            if facts.is_empty() {
                return Grouping {
                    groups: vec![TargetGroup {
                        outcomes: Vec::new(),
                        targets: (0..targets.len()).collect(),
                    }],
                    ..Grouping::default()
                };
            }
            let by_name = self.context_by_name();
            let protos: Vec<_> = targets
                .iter()
                .filter_map(|t| by_name.get(t.name.as_str()).and_then(|a| a.proto.clone()))
                .collect();
            if protos.len() == targets.len() {
                return group_targets(&facts, &protos);
            }
        }
        let by_name = self.context_by_name();
        // Other kinds need no per-target code: one group, minus targets lacking a used field.
        let mut grouping = Grouping::default();
        let mut kept = Vec::new();
        for (i, t) in targets.iter().enumerate() {
            let args = by_name.get(t.name.as_str()).copied();
            let missing = facts.iter().find_map(|f| match f {
                Fact::Param { name, .. }
                    if !args.is_some_and(|a| a.args.iter().any(|(n, _)| n == name)) =>
                {
                    Some(name.clone())
                }
                _ => None,
            });
            match missing {
                Some(param) => grouping.skipped.push((
                    i,
                    SkipReason::NoSuchParam {
                        target: t.name.clone(),
                        param,
                    },
                )),
                None => kept.push(i),
            }
        }
        if !kept.is_empty() {
            grouping.groups.push(TargetGroup {
                outcomes: Vec::new(),
                targets: kept,
            });
        }
        grouping
    }

    pub(super) fn check_fn(&mut self, f: &FnDef) {
        self.cx = ProbeContext::default();
        self.vars = VarTable::default();
        self.scopes = vec![HashMap::new()];
        for (name, ty) in &f.params {
            let t = self.type_ref(ty);
            self.declare(&name.name, t, name.span);
        }
        let ret = self.type_ref(&f.ret);
        self.fn_ret = Some(ret);
        self.block(&f.body, false);
        self.warn_unassigned();
        self.learn_var_types();
        self.fn_vars
            .insert(f.name.name.clone(), std::mem::take(&mut self.vars));
        self.fn_ret = None;
        self.scopes.clear();
    }
}

/// Why uprobe targets at an offset or an address cannot be attached (outside the function,
/// inside an instruction, a uretprobe), checked here so that nothing is loaded for a script
/// that cannot run; binaries that cannot be read are left to the attach step.
fn uprobe_site_errors(kind: ProbeKind, targets: &[Target], unsafe_mode: bool) -> Vec<String> {
    let retprobe = kind.info().facts.retprobe;
    targets
        .iter()
        .filter_map(|t| match &t.kind {
            super::expand::TargetKind::User {
                path,
                func,
                offset,
                address,
            } if offset.is_some_and(|o| o != 0) || address.is_some() => {
                std::fs::File::open(path).ok()?;
                crate::elf::symbols::resolve_uprobe_site(
                    path,
                    path,
                    crate::elf::symbols::FuncPattern::glob(func),
                    offset.unwrap_or(0),
                    *address,
                    retprobe,
                    unsafe_mode,
                )
                .err()
            }
            _ => None,
        })
        .collect()
}
