//! Names and scopes, and the checking driver: per probe, expand its attach points and build its
//! context, then walk its statements with bpftrace's scoping rules — a `$var` lives in the
//! block where it is declared (`let`) or first assigned, and is visible in nested blocks;
//! using it elsewhere is "Undefined or undeclared variable". Macros are expanded at their call
//! sites (each call checks the body with the arguments bound); `fn` bodies are checked once
//! with their typed parameters; `#define NAME <integer|string>` names are constants;
//! `$1`… are the command line's arguments (an integer when they parse as one, else a string;
//! missing ones are 0 / ""), `$#` their count.
//!
//! Input/output: see [`super::check`]. The expression rules are in `typeck`.

use std::collections::HashMap;
use std::sync::Arc;

use super::context::ProbeContext;
use super::ctypes::ScriptTypes;
use super::expand::{expand, Target};
use super::program::{AttachTargets, CheckedProbe, CheckedProgram, FormatSite, VarSlot, VarTable};
use super::resources::{Maps, MAP_KINDS};
use super::types::Type;
use super::{CheckOptions, CheckOutput};
use crate::btf::Btf;
use crate::diag::{Diagnostic, Span};
use crate::kernel::info::KernelInfo;
use crate::syntax::ast::*;
use crate::template::{group_targets, Fact, Grouping, TargetGroup};

/// A `#define` value.
#[derive(Clone, Debug)]
pub(super) enum Define {
    Int(i64),
    Str(Vec<u8>),
}

/// A macro's expression argument: its type, integer constant and string constant.
pub(super) type MacroArg = (Type, Option<i64>, Option<Vec<u8>>);

/// Bindings of one macro expansion.
#[derive(Default)]
pub(super) struct MacroFrame {
    /// Expression parameters: name → the argument's type and constant values.
    pub idents: HashMap<String, MacroArg>,
    /// Map parameters: `@param` → the caller's map name.
    pub maps: HashMap<String, String>,
}

/// The state of one checking round.
pub(super) struct Checker<'a> {
    pub program: &'a Program,
    pub kernel: &'a dyn KernelInfo,
    pub opts: CheckOptions,
    /// Round 2 reports; round 1 only learns map types.
    pub report: bool,
    pub diags: Vec<Diagnostic>,
    pub types: Vec<Type>,
    pub consts: HashMap<ExprId, i64>,
    pub str_consts: HashMap<ExprId, Vec<u8>>,
    pub var_slots: HashMap<ExprId, VarSlot>,
    pub map_refs: HashMap<ExprId, usize>,
    pub maps: Maps,
    pub formats: Vec<FormatSite>,
    pub defines: HashMap<String, Define>,
    pub script_types: ScriptTypes,
    pub vmlinux: Option<Arc<Btf>>,
    // Per probe / function:
    pub scopes: Vec<HashMap<String, VarSlot>>,
    pub vars: VarTable,
    pub cx: ProbeContext,
    pub facts: Vec<Fact>,
    pub loop_depth: u32,
    pub frames: Vec<MacroFrame>,
    /// Return type of the user function being checked.
    pub fn_ret: Option<Type>,
    /// Probe contexts by probe index, built in round 1 and reused in round 2.
    pub contexts: HashMap<usize, ProbeContext>,
    /// Reported once per name per probe (args fields missing in some targets).
    pub warned: std::collections::HashSet<String>,
}

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
        match (key.as_str(), &e.value) {
            ("max_strlen", ConfigValue::Int(n)) => {
                opts.max_strlen = (*n).clamp(1, 1 << 20) as usize
            }
            ("max_map_keys", ConfigValue::Int(n)) => opts.max_map_keys = (*n).max(1),
            _ => {}
        }
        let _ = diags;
    }
}

fn parse_define(value: &str) -> Option<Define> {
    let v = value
        .trim()
        .trim_start_matches('(')
        .trim_end_matches(')')
        .trim();
    if let Some(s) = v.strip_prefix('"').and_then(|s| s.strip_suffix('"')) {
        return Some(Define::Str(s.as_bytes().to_vec()));
    }
    let (neg, v) = match v.strip_prefix('-') {
        Some(r) => (true, r.trim()),
        None => (false, v),
    };
    let v = v.trim_end_matches(['u', 'U', 'l', 'L']);
    let n = if let Some(h) = v.strip_prefix("0x").or_else(|| v.strip_prefix("0X")) {
        i64::from_str_radix(h, 16).ok()?
    } else if v.len() > 1 && v.starts_with('0') {
        i64::from_str_radix(&v[1..], 8).ok()?
    } else {
        v.parse().ok()?
    };
    Some(Define::Int(if neg { -n } else { n }))
}

/// Runs both rounds and assembles the output.
pub(super) fn run(program: &Program, kernel: &dyn KernelInfo, opts: &CheckOptions) -> CheckOutput {
    let mut first = Checker::new(program, kernel, opts, false);
    let expanded = first.expand_all();
    first.check_all(&expanded);
    let mut second = Checker::new(program, kernel, opts, true);
    second.maps = first.maps.clone();
    second.contexts = std::mem::take(&mut first.contexts);
    // Keep only what round 1 learned about types; declarations and reports are redone.
    for e in &mut second.maps.entries {
        e.assigned = false;
        e.declared = None;
    }
    let probes = second.check_all(&expanded);
    second.check_unassigned_maps();
    let mut diagnostics = std::mem::take(&mut second.diags);
    diagnostics.sort_by_key(|d| (d.span.start, !d.is_error()));
    let has_errors = diagnostics.iter().any(Diagnostic::is_error);
    let program = (!has_errors).then(|| CheckedProgram {
        program: program.clone(),
        types: second.types,
        var_slots: second.var_slots,
        map_refs: second
            .map_refs
            .into_iter()
            .map(|(e, m)| (e, super::MapId(m as u32)))
            .collect(),
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
        script_types: second.script_types,
        probes,
        warnings: diagnostics
            .iter()
            .filter(|d| !d.is_error())
            .cloned()
            .collect(),
    });
    CheckOutput {
        program,
        diagnostics,
    }
}

/// Per probe, per attach point: kind, raw text, targets, and the expansion error if any.
type Expanded = Vec<Vec<(ProbeKind, String, Vec<Target>, Option<String>)>>;

impl<'a> Checker<'a> {
    fn new(
        program: &'a Program,
        kernel: &'a dyn KernelInfo,
        opts: &CheckOptions,
        report: bool,
    ) -> Checker<'a> {
        let mut opts = opts.clone();
        let mut diags = Vec::new();
        config_overrides(program, &mut opts, &mut diags);
        let vmlinux = kernel.btf(None).ok();
        let script_types =
            ScriptTypes::build(program.type_defs(), vmlinux.as_deref(), opts.max_strlen);
        let mut defines = HashMap::new();
        for c in &program.c_items {
            if let CItem::Preprocessor(Preprocessor {
                kind: PreprocessorKind::Define { name, value },
                ..
            }) = c
            {
                if let Some(d) = parse_define(value) {
                    defines.insert(name.clone(), d);
                }
            }
        }
        Checker {
            program,
            kernel,
            opts,
            report,
            diags,
            types: vec![Type::None; program.expr_count as usize],
            consts: HashMap::new(),
            str_consts: HashMap::new(),
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
            warned: Default::default(),
            contexts: HashMap::new(),
        }
    }

    pub fn error(&mut self, span: Span, msg: impl Into<String>) -> Option<&mut Diagnostic> {
        if !self.report {
            return None;
        }
        self.diags.push(Diagnostic::error(span, msg));
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
            || self
                .diags
                .iter()
                .any(|d| d.is_error() && d.span.start >= span.start && d.span.end <= span.end)
    }

    pub fn warn(&mut self, span: Span, msg: impl Into<String>) -> Option<&mut Diagnostic> {
        if !self.report {
            return None;
        }
        self.diags.push(Diagnostic::warning(span, msg));
        self.diags.last_mut()
    }

    fn expand_all(&mut self) -> Expanded {
        self.program
            .probes()
            .map(|p| {
                p.attach_points
                    .iter()
                    .map(|ap| match expand(ap, self.kernel) {
                        Ok(t) => (ap.kind, ap.raw.clone(), t, None),
                        Err(e) => (ap.kind, ap.raw.clone(), Vec::new(), Some(e.to_string())),
                    })
                    .collect()
            })
            .collect()
    }

    fn check_all(&mut self, expanded: &Expanded) -> Vec<CheckedProbe> {
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

    fn check_unassigned_maps(&mut self) {
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
    }

    fn check_probe(
        &mut self,
        index: usize,
        probe: &Probe,
        exp: &[(ProbeKind, String, Vec<Target>, Option<String>)],
    ) -> CheckedProbe {
        for (ap, (_, _, _, err)) in probe.attach_points.iter().zip(exp) {
            if let Some(e) = err {
                self.error(ap.span, e.clone());
            }
        }
        let attach: Vec<(ProbeKind, Vec<Target>)> =
            exp.iter().map(|(k, _, t, _)| (*k, t.clone())).collect();
        self.cx = match self.contexts.get(&index) {
            Some(cx) => cx.clone(),
            None => {
                let cx = ProbeContext::build(&attach, self.kernel, self.opts.max_strlen);
                self.contexts.insert(index, cx.clone());
                cx
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
        self.scopes.clear();
        let facts = std::mem::take(&mut self.facts);
        let attach = exp
            .iter()
            .map(|(kind, raw, targets, _)| {
                let grouping = self.group(*kind, targets, &facts);
                AttachTargets {
                    kind: *kind,
                    raw: raw.clone(),
                    targets: targets.clone(),
                    facts: facts.clone(),
                    grouping,
                }
            })
            .collect();
        CheckedProbe {
            index,
            attach,
            vars: std::mem::take(&mut self.vars),
        }
    }

    /// Groups fentry/fexit targets by the facts the body assumes; other kinds form one group.
    fn group(&mut self, kind: ProbeKind, targets: &[Target], facts: &[Fact]) -> Grouping {
        if matches!(kind, ProbeKind::Fentry | ProbeKind::Fexit) {
            let protos: Vec<_> = targets
                .iter()
                .filter_map(|t| {
                    self.cx
                        .targets
                        .iter()
                        .find(|a| a.name == t.name)
                        .and_then(|a| a.proto.clone())
                })
                .collect();
            if protos.len() == targets.len() {
                let facts: Vec<Fact> = facts
                    .iter()
                    .filter(|f| kind == ProbeKind::Fexit || !matches!(f, Fact::ReturnsScalar))
                    .cloned()
                    .collect();
                return group_targets(&facts, &protos);
            }
        }
        Grouping {
            groups: vec![TargetGroup {
                outcomes: Vec::new(),
                targets: (0..targets.len()).collect(),
            }],
            skipped: Vec::new(),
        }
    }

    fn check_fn(&mut self, f: &FnDef) {
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
        self.fn_ret = None;
        self.scopes.clear();
    }

    // ---- scopes ----

    pub fn declare(&mut self, name: &str, ty: Type, span: Span) -> VarSlot {
        let slot = VarSlot(self.vars.slots.len() as u32);
        self.vars.slots.push((name.to_string(), ty, span));
        if let Some(s) = self.scopes.last_mut() {
            s.insert(name.to_string(), slot);
        }
        slot
    }

    pub fn lookup_var(&self, name: &str) -> Option<VarSlot> {
        self.scopes.iter().rev().find_map(|s| s.get(name).copied())
    }

    /// `block` with its own scope. `loop_body` counts loop nesting for break/continue.
    pub fn block(&mut self, b: &Block, loop_body: bool) -> Type {
        self.scopes.push(HashMap::new());
        if loop_body {
            self.loop_depth += 1;
        }
        for s in &b.stmts {
            self.stmt(s);
        }
        let t = match &b.tail {
            Some(e) => self.expr(e),
            None => Type::None,
        };
        if loop_body {
            self.loop_depth -= 1;
        }
        self.scopes.pop();
        t
    }

    fn stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Let { var, ty, init } => {
                let declared = ty.as_ref().map(|t| self.type_ref(t));
                let init_t = init.as_ref().map(|e| self.value_expr(e));
                if let (Some(d), Some(i), Some(e)) = (&declared, &init_t, init) {
                    self.check_assignable(&var.name, d, i, e);
                }
                let t = declared.or(init_t).unwrap_or(Type::None);
                if self
                    .scopes
                    .last()
                    .is_some_and(|sc| sc.contains_key(&var.name))
                {
                    self.error(
                        var.span,
                        format!("Variable {} was already declared in this scope", var.name),
                    );
                }
                self.declare(&var.name, t, var.span);
            }
            StmtKind::Assign { target, op, value } => self.assign(target, *op, value),
            StmtKind::Expr(e) | StmtKind::Discard(e) => {
                self.expr(e);
            }
            StmtKind::While { cond, body } => {
                let t = self.expr(cond);
                if !t.is_scalar() {
                    self.error(cond.span, format!("Invalid type for loop condition: {t}"));
                }
                self.block(body, true);
            }
            StmtKind::Unroll { count, body } => {
                self.expr(count);
                match self.consts.get(&count.id) {
                    Some(n) if (1..=100).contains(n) => {}
                    Some(n) => {
                        self.error(
                            count.span,
                            format!("unroll count must be between 1 and 100, got {n}"),
                        );
                    }
                    None => {
                        self.error(count.span, "unroll count must be an integer literal");
                    }
                }
                self.block(body, true);
            }
            StmtKind::For { var, iter, body } => {
                let t = match iter {
                    ForIter::Map(m) => {
                        let name = self.map_name(&m.name);
                        match self.maps.get(&name) {
                            Some(e) => {
                                let key = match e.keys.as_deref() {
                                    Some([k]) => k.clone(),
                                    Some(ks) => Type::Tuple(ks.to_vec()),
                                    None => Type::I64,
                                };
                                Type::Tuple(vec![key, e.value.clone().unwrap_or(Type::I64)])
                            }
                            None => {
                                self.error(m.span, format!("Undefined map: {}", m.name));
                                Type::None
                            }
                        }
                    }
                    ForIter::Range { start, end } => {
                        for e in [start, end] {
                            let t = self.expr(e);
                            if !t.is_integer() {
                                self.error(
                                    e.span,
                                    format!("Loop range requires integer bounds, got {t}"),
                                );
                            }
                        }
                        Type::I64
                    }
                };
                self.scopes.push(HashMap::new());
                self.declare(&var.name, t, var.span);
                self.block(body, true);
                self.scopes.pop();
            }
            StmtKind::Return(e) => {
                let t = e.as_ref().map(|e| self.expr(e)).unwrap_or(Type::None);
                if let Some(ret) = self.fn_ret.clone().filter(|_| !t.is_none() || e.is_none()) {
                    if ret.unify(&t).is_none() && !(ret.is_none() && t.is_none()) {
                        self.error(
                            s.span,
                            format!(
                                "Function returns '{t}', but its declared return type is '{ret}'"
                            ),
                        );
                    }
                }
            }
            StmtKind::Break | StmtKind::Continue => {
                if self.loop_depth == 0 {
                    let w = if matches!(s.kind, StmtKind::Break) {
                        "break"
                    } else {
                        "continue"
                    };
                    self.error(s.span, format!("'{w}' used outside of a loop"));
                }
            }
            StmtKind::Import(_) => {}
        }
    }

    fn assign(&mut self, target: &LValue, op: Option<BinaryOp>, value: &Expr) {
        match target {
            LValue::Var(v) => {
                let vt = self.value_expr(value);
                let vt = match op {
                    Some(o) => self.compound(o, value.span, &vt),
                    None => vt,
                };
                match self.lookup_var(&v.name) {
                    Some(slot) => {
                        let have = self.vars.slots[slot.0 as usize].1.clone();
                        if have.is_none() {
                            self.vars.slots[slot.0 as usize].1 = vt;
                        } else if let Some(m) = have.unify(&vt) {
                            if !self.vars_typed_by_let(slot) {
                                self.vars.slots[slot.0 as usize].1 = m;
                            }
                            self.check_assignable(&v.name, &have, &vt, value);
                        } else {
                            self.error(
                                value.span,
                                format!(
                                    "Type mismatch for {}: trying to assign value of type '{vt}' when variable already contains a value of type '{have}'",
                                    v.name
                                ),
                            );
                        }
                    }
                    None => {
                        if op.is_some() {
                            self.error(
                                v.span,
                                format!("Undefined or undeclared variable: {}", v.name),
                            );
                        }
                        if vt.is_none() {
                            self.error(
                                value.span,
                                format!("Value of type 'none' cannot be assigned to {}", v.name),
                            );
                        }
                        self.declare(&v.name, vt, v.span);
                    }
                }
            }
            LValue::Map { map, keys, span } => {
                let name = self.map_name(&map.name);
                let i = self.maps.id(&name, map.span);
                let kts: Vec<Type> = keys.iter().map(|k| self.key_expr(k)).collect();
                if let Err(m) = self.maps.use_keys(i, &kts) {
                    self.error(*span, m);
                }
                let vt = if op.is_none() {
                    self.map_value_expr(value)
                } else {
                    let t = self.value_expr(value);
                    self.compound(op.unwrap_or(BinaryOp::Add), value.span, &t)
                };
                if vt.is_none() {
                    // Usually already reported where the value failed.
                    self.maps.entries[i].assigned = true;
                    if !self.had_error_in(value.span) {
                        self.error(
                            value.span,
                            format!(
                                "{}: a value of type 'none' cannot be stored in a map",
                                map.name
                            ),
                        );
                    }
                    return;
                }
                if !vt.is_agg() && !vt.is_storable() {
                    self.maps.entries[i].assigned = true;
                    self.error(
                        value.span,
                        format!(
                            "{}: a value of type '{vt}' cannot be stored in a map",
                            map.name
                        ),
                    );
                    return;
                }
                if let Err(m) = self.maps.assign(i, &vt) {
                    self.error(value.span, m);
                }
            }
        }
    }

    fn vars_typed_by_let(&self, _slot: VarSlot) -> bool {
        false
    }

    fn compound(&mut self, op: BinaryOp, span: Span, t: &Type) -> Type {
        if !t.is_integer() {
            self.error(
                span,
                format!(
                    "Operator '{}=' requires an integer operand, got {t}",
                    op.symbol()
                ),
            );
        }
        Type::I64
    }

    /// Whether an integer literal fits a declared type (`let $x: uint8 = 300`).
    fn check_assignable(&mut self, name: &str, have: &Type, value: &Type, e: &Expr) {
        if let (Type::Int { bytes, signed }, Some(&v)) = (have, self.consts.get(&e.id)) {
            let bits = *bytes as u32 * 8;
            let fits = if *signed {
                bits >= 64 || (v >= -(1i64 << (bits - 1)) && v < (1i64 << (bits - 1)))
            } else {
                v >= 0 && (bits >= 64 || (v as u64) < (1u64 << bits))
            };
            if !fits {
                self.error(
                    e.span,
                    format!("Integer {v} does not fit in {name} of type '{have}'"),
                );
                return;
            }
        }
        if have.unify(value).is_none() {
            self.error(
                e.span,
                format!("Type mismatch for {name}: trying to assign value of type '{value}' when variable already has type '{have}'"),
            );
        }
    }

    /// Resolves a map name through macro map parameters.
    pub fn map_name(&self, name: &str) -> String {
        for f in self.frames.iter().rev() {
            if let Some(n) = f.maps.get(name) {
                return n.clone();
            }
        }
        name.to_string()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn defines_parse_integers_and_strings() {
        assert!(matches!(parse_define("0x10"), Some(Define::Int(16))));
        assert!(matches!(parse_define("(-5)"), Some(Define::Int(-5))));
        assert!(matches!(parse_define("100UL"), Some(Define::Int(100))));
        assert!(matches!(parse_define("\"abc\""), Some(Define::Str(_))));
        assert!(parse_define("foo(x)").is_none());
    }
}
