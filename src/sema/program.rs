//! The checker's output: [`CheckedProgram`], the AST plus side tables that the code generator
//! reads — a type per expression, what each name resolved to, the maps, the printf-like call
//! sites and, per probe, the expanded targets grouped by the argument facts they share.
//!
//! Invariant: a `CheckedProgram` exists only for a script without errors; every expression
//! reachable from a probe has a type (`types[id]`), every `$var` use a slot, every map use a
//! [`MapId`], every printf/print call site a [`FormatId`].

use std::collections::HashMap;

use super::expand::Target;
use super::types::{AddrSpace, Type};
use crate::diag::{Diagnostic, Span};
use crate::plan::agg::AggKind;
use crate::plan::printf::PrintfCall;
use crate::syntax::ast::{ExprId, ProbeKind, Program};
use crate::template::{Fact, Grouping, TargetProto};

/// Index into [`CheckedProgram::maps`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct MapId(pub u32);

/// Index into [`CheckedProgram::formats`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct FormatId(pub u32);

/// A scratch variable's storage slot within its probe (or function): one per declaration, so
/// two `let $x` in sibling blocks are two slots.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct VarSlot(pub u32);

/// One map of the script.
#[derive(Clone, Debug, PartialEq)]
pub struct MapInfo {
    /// As written, with `@` (`@` alone for the unnamed map).
    pub name: String,
    /// Key types; empty for a scalar map (`@x = 1`), which bpftrace keys by a constant 0.
    pub keys: Vec<Type>,
    /// The value type (an aggregation's is [`Type::Agg`]).
    pub value: Type,
    /// Set when the value is an aggregation (per-CPU map; merged when printed).
    pub agg: Option<AggKind>,
    /// From a `let @m = hash(N)` declaration or config/env `max_map_keys`.
    pub max_entries: u64,
    /// The kind from a declaration (`hash`, `lruhash`, `percpuhash`, …), if declared.
    pub declared_kind: Option<String>,
    /// Where it is first used (or declared).
    pub span: Span,
}

/// What a printf-like call site prints (`printf`, `errorf`, `warnf`, `system`, `cat`…).
#[derive(Clone, Debug, PartialEq)]
pub struct FormatSite {
    pub call: ExprId,
    /// The builtin called.
    pub function: &'static str,
    /// Format and argument layouts, checked against each other.
    pub printf: PrintfCall,
}

/// The variables of one probe or function: one entry per slot.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct VarTable {
    /// `(name, type, declaration span)` by slot.
    pub slots: Vec<(String, Type, Span)>,
    /// Integer variables assigned an address marked by `kptr()`/`uptr()`: reads through them
    /// use that space's helper (pointer variables carry it in their [`Type`]).
    pub spaces: HashMap<VarSlot, AddrSpace>,
}

/// One probe after checking.
#[derive(Clone, Debug)]
pub struct CheckedProbe {
    /// Index into `Program::probes()`.
    pub index: usize,
    /// Per attach point: its kind, the targets it expanded to, and how they group by facts.
    pub attach: Vec<AttachTargets>,
    pub vars: VarTable,
}

/// The targets of one attach point.
#[derive(Clone, Debug)]
pub struct AttachTargets {
    pub kind: ProbeKind,
    /// The attach point's text as written.
    pub raw: String,
    pub targets: Vec<Target>,
    /// What the probe's body assumes about each target (fentry/fexit/rawtracepoint).
    pub facts: Vec<Fact>,
    /// Targets grouped by those facts (`strobe::template::group_targets`); targets that fail a
    /// fact are in `grouping.skipped` with the reason (and were warned about).
    pub grouping: Grouping,
    /// What the checker read about each target (in `targets` order), so that the code
    /// generator does not read BTF or call back into the checker to learn it again.
    pub slots: Vec<TargetSlots>,
}

/// What the checker read about one target from BTF or tracefs: its named arguments in order
/// (`args.NAME`; a raw tracepoint's `argN` is the Nth) and, for fentry/fexit, the shapes of its
/// prototype (where each argument and the return value sit in the program's context).
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct TargetSlots {
    /// The named arguments with their types, shared with the checker's context (one list per
    /// distinct prototype, however many targets have it).
    pub args: std::sync::Arc<Vec<(String, Option<Type>)>>,
    pub proto: Option<TargetProto>,
    /// A tracepoint's fields at their offsets in the record (tracefs' format).
    pub fields: Vec<crate::kernel::tracefs::Field>,
    /// Why the target's arguments could not be read (the checker warned), if they could not.
    pub unreadable: Option<String>,
    /// The BTF function an iterator's program loads against (`bpf_iter_NAME`), if the
    /// kernel has it.
    pub btf_id: Option<u32>,
    /// A uprobe target's link-time address (function + offset, or the address given), if
    /// its binary's symbols say.
    pub anchor: Option<u64>,
    /// A usdt site's arguments as its note describes them (registers, memory, constants);
    /// one that cannot be read is kept as its error, so only a script that reads it fails.
    pub usdt_args: Vec<Result<crate::kernel::usdt::UsdtArg, crate::kernel::usdt::UsdtArgError>>,
}

/// The result of checking a script without errors.
#[derive(Clone, Debug)]
pub struct CheckedProgram {
    pub program: Program,
    /// Indexed by `ExprId::index()`; [`Type::None`] for ids not reached (macros' bodies are
    /// typed at their call sites, so their own ids may stay `None`).
    pub types: Vec<Type>,
    /// `$var` uses (and `Let`/assignment targets' expression ids where they have one) → slot.
    pub var_slots: HashMap<ExprId, VarSlot>,
    /// Map expressions (`@m[..]` uses) → map.
    pub map_refs: HashMap<ExprId, MapId>,
    pub maps: Vec<MapInfo>,
    pub formats: Vec<FormatSite>,
    /// Call expression → its format site.
    pub format_of: HashMap<ExprId, FormatId>,
    /// Integer constants folded by the checker (`#define`, positional params, `sizeof`,
    /// `offsetof`, enum values), by expression.
    pub consts: HashMap<ExprId, i64>,
    /// String constants (string positional parameters, `#define` strings), by expression.
    pub str_consts: HashMap<ExprId, Vec<u8>>,
    /// Integer expressions holding an address whose space `kptr()`/`uptr()` named: the call
    /// itself, variables assigned from one, and `+`/`-` of one with an integer. Reads through
    /// them (`str`, `buf`, `*`, casts to pointers) use that space's helper.
    pub addr_spaces: HashMap<ExprId, AddrSpace>,
    /// Identifiers and calls that name a builtin → its id, resolved once by the checker
    /// (`pid`, `arg2`, `count()`, `cpu()` of the value `cpu`); later passes match on the id.
    /// Absent for everything else (variables, macros, user functions, macro parameters).
    pub builtins: HashMap<ExprId, crate::builtins::BuiltinId>,
    /// The script's own C types (`CTypeRef::Script` indexes `script_types.defs`).
    pub script_types: super::ctypes::ScriptTypes,
    pub probes: Vec<CheckedProbe>,
    pub warnings: Vec<Diagnostic>,
    /// Each user function's variables (parameters first), by function name.
    pub fn_vars: HashMap<String, VarTable>,
    /// Named options the script reads with `getopt`.
    pub options: Vec<super::getopt::NamedOption>,
    /// The text printed after a truncated string (the script's or environment's
    /// `str_trunc_trailer`, else `..`).
    pub str_trunc_trailer: String,
    /// The size of `str()`'s buffers (`max_strlen`): only a string that filled one of those
    /// was cut short; a char array that fills its own size without a NUL is whole.
    pub str_trunc_size: usize,
    /// Ring buffer pages and the stack bound of values, from the environment or the script's
    /// config block (see [`super::CheckOptions`]).
    pub perf_rb_pages: Option<u64>,
    pub on_stack_limit: Option<u64>,
    /// The verifier log size programs load with (`log_size`), when set.
    pub log_size: Option<u64>,
    /// The kernel facts the code generator needs, asked by the checker.
    pub env: super::Environment,
    /// Map name → index in `maps` as checked (see [`CheckedProgram::map`]).
    pub(crate) map_index: HashMap<String, u32>,
}

impl CheckedProgram {
    /// The type of expression `id`.
    pub fn type_of(&self, id: ExprId) -> &Type {
        self.types.get(id.index()).unwrap_or(&Type::None)
    }

    /// The builtin expression `id` names, as the checker resolved it.
    pub fn builtin_of(&self, id: ExprId) -> Option<crate::builtins::BuiltinId> {
        self.builtins.get(&id).copied()
    }

    /// The map called `name` (with its `@`).
    pub fn map(&self, name: &str) -> Option<(MapId, &MapInfo)> {
        // The index answers in constant time; a table changed since checking (the fields are
        // public) is searched instead.
        match self.map_index.get(name) {
            Some(&i) if self.maps.get(i as usize).is_some_and(|m| m.name == name) => {
                return Some((MapId(i), &self.maps[i as usize]));
            }
            None if self.map_index.len() == self.maps.len() => return None,
            _ => {}
        }
        self.maps
            .iter()
            .enumerate()
            .find(|(_, m)| m.name == name)
            .map(|(i, m)| (MapId(i as u32), m))
    }

    /// The name → index table [`CheckedProgram::map`] uses.
    pub(crate) fn index_maps(maps: &[MapInfo]) -> HashMap<String, u32> {
        let mut ix = HashMap::with_capacity(maps.len());
        for (i, m) in maps.iter().enumerate() {
            ix.entry(m.name.clone()).or_insert(i as u32);
        }
        ix
    }
}

#[cfg(test)]
mod tests {
    use crate::diag::SourceFile;
    use crate::kernel::info::MockKernel;
    use crate::sema::{check, CheckOptions};

    fn slots(text: &str) -> Vec<super::TargetSlots> {
        let src = SourceFile::new("t.bt", text);
        let program = crate::syntax::parse_ok(&src).expect("parses");
        let out = check(&program, &MockKernel::fixture(), &CheckOptions::default());
        let checked = out.program.expect("no errors");
        let at = &checked.probes[0].attach[0];
        assert_eq!(at.slots.len(), at.targets.len());
        at.slots.clone()
    }

    #[test]
    fn checked_targets_carry_what_the_checker_read_for_the_code_generator() {
        // fentry: the prototype's shapes (argument and return-value slots).
        let s = slots("fentry:vfs_read { @ = args.count; }");
        let proto = s[0].proto.as_ref().expect("fentry prototype");
        assert!(proto.params.iter().any(|(n, _)| n == "count"));
        assert!(s[0].args.iter().any(|(n, _)| n == "count"));
        // rawtracepoint: the argument names from `btf_trace_<name>`, in order.
        let s = slots("rawtracepoint:sched_switch { @ = arg1; }");
        let names: Vec<&str> = s[0].args.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["preempt", "prev", "next"]);
        // tracepoint: the format's fields, for their offsets in the record.
        let s = slots("tracepoint:syscalls:sys_enter_read { @ = args.count; }");
        assert!(s[0].fields.iter().any(|f| f.name == "count"));
        assert_eq!(s[0].unreadable, None);
    }
}
