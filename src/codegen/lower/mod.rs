//! Lowering: a [`CheckedProgram`] → a [`CompiledScript`] the runtime runs, one probe block at a
//! time through the codegen core ([`Builder`] and [`crate::codegen::emit`]).
//!
//! Input: the checker's output (types per expression, resolved variables and maps, format
//! sites, expanded targets, and the kernel facts it asked for in `CheckedProgram::env`); it
//! never asks the kernel itself.
//! Output: the map table ([`maps`]), one [`ProbeSpec`] per attach point ([`probe`]), and the
//! event table that gives record ids their meaning.
//! One file per concern: [`maps`] (map table), [`probe`] (attach kinds), [`stmt`] (statements),
//! [`expr`] (expressions), [`calls`] (builtin functions), [`builtins`] (builtin values),
//! [`store`] (writing values into records, keys and map values).
//!
//! Builtins are lowered by the id the checker resolved (`CheckedProgram::builtin_of`): one
//! exhaustive `match` over [`crate::builtins::FuncId`] in [`calls`] and one over
//! [`crate::builtins::ValueId`] in [`builtins`]; each builtin is lowered in one place.
//!
//! Invariants: values of integer-like types are [`Val::Int`] (normalized 64-bit registers or
//! constants); strings, tuples and other aggregates are [`Val::Mem`] (a stack place holding the
//! value laid out as its [`Type::field_type`]). An unsupported construct is a [`LowerError`]
//! with the span, never a panic.

pub mod agg_cache;
pub mod asserts;
pub mod builtins;
pub mod callback;
pub mod calls;
pub mod deref;
pub mod elapsed;
pub mod expr;
pub mod funcs;
pub mod helper_error;
pub mod inline;
pub mod key_class;
pub mod listing;
pub mod loops;
pub mod map_uses;
pub mod mapfns;
pub mod maps;
pub mod pid_filter;
pub mod probe;
pub use crate::plan::requires;
pub mod stmt;
pub mod store;
pub mod strfns;
pub mod task;
pub mod tseries;
pub mod usdt;

use std::collections::HashMap;

use crate::codegen::emit::{IntTy, Place, Value};
use crate::codegen::{Builder, CodegenError, Label};
use crate::diag::Span;
use crate::plan::{CompiledScript, EventTable};
use crate::sema::{CheckedProgram, Type, VarSlot};

/// Why a checked script could not be lowered.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum LowerError {
    #[error("{what} is not supported by the code generator yet")]
    Unsupported { what: String, span: Span },
    #[error("probe `{probe}`: {source}")]
    Codegen {
        probe: String,
        span: Span,
        #[source]
        source: CodegenError,
    },
    #[error("{what}")]
    Kernel { what: String, span: Span },
}

impl LowerError {
    pub fn span(&self) -> Span {
        match self {
            LowerError::Unsupported { span, .. }
            | LowerError::Codegen { span, .. }
            | LowerError::Kernel { span, .. } => *span,
        }
    }

    pub(crate) fn unsupported(what: impl Into<String>, span: Span) -> LowerError {
        LowerError::Unsupported {
            what: what.into(),
            span,
        }
    }
}

/// A lowered expression's value.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Val {
    /// No value (statements, `exit()`).
    None,
    /// An integer-like value (integers, bools, pointers, `probe`, symbols).
    Int(Value, IntTy),
    /// A value in memory laid out as its type's `field_type` (strings, tuples, stacks).
    Mem(Place),
}

impl Val {
    /// The integer value, or 0 for a value that is not one (the checker rules that out).
    pub fn value(self) -> Value {
        match self {
            Val::Int(v, _) => v,
            _ => Value::Imm(0),
        }
    }
}

/// The integer type a value of `t` is held as, when it is integer-like.
pub fn int_ty(t: &Type) -> Option<IntTy> {
    Some(match t {
        Type::Int { bytes, signed } | Type::Enum { bytes, signed, .. } => {
            IntTy::new(bytes * 8, *signed)
        }
        Type::Bool => IntTy::U8,
        Type::Pointer { .. }
        | Type::KSym
        | Type::Probe
        | Type::CgroupPath { .. }
        | Type::Strerror
        | Type::SyscallName
        | Type::SignalName
        | Type::Username => IntTy::U64,
        Type::Timestamp { .. } => IntTy::U64,
        _ => return None,
    })
}

/// Indices of the fixed maps in every template's map table (the builder's `map` indices are
/// per template, so these are resolved by name per probe).
pub(crate) const RINGBUF: &str = "ringbuf";
pub(crate) const LOST: &str = crate::template::LOST_MAP_NAME;
pub(crate) const DROPS: &str = "drops";
pub(crate) const SCRATCH: &str = "scratch";
/// Bytes of one region of the per-CPU scratch buffer: room for values too large for the
/// 512-byte stack (long strings and buffers, the records and keys that hold them; a `join()`
/// record of 16 arguments of 1024 bytes). 32 KiB is the largest per-CPU array value the
/// kernel creates (`PCPU_MIN_UNIT_SIZE`, kernel/bpf/arraymap.c `array_map_alloc_check`), so
/// a probe that needs more uses several regions: the scratch map's keys 0, 1, … (its
/// `max_entries` is the most regions any probe uses). One value never spans two regions.
pub(crate) const SCRATCH_SIZE: u32 = 32768;
/// The most scratch regions a script may use (memory: regions × 32 KiB × possible CPUs).
pub(crate) const SCRATCH_REGIONS_MAX: u32 = 16;

/// Per-script state shared by all probes: the event table being filled.
#[derive(Default)]
pub(crate) struct ScriptState {
    pub events: EventTable,
    /// The stack-trace maps the probes use: (user, limit).
    pub stack_maps: std::collections::BTreeSet<(bool, usize)>,
    /// The keyless `count()` maps stored as a per-CPU array slot ([`maps::slot_maps`]).
    pub slot_maps: std::collections::BTreeSet<String>,
    /// The maps keyed by one long string that get a short-key class, with their counter slot
    /// ([`key_class::classed_maps`]).
    pub classed_maps: std::collections::BTreeMap<String, u32>,
    /// The keyed count/sum maps with a per-CPU last-key cache ([`agg_cache::cached_maps`]).
    pub cached_maps: std::collections::BTreeSet<String>,
    /// Ring buffer bytes BEGIN and END programs submit (each record site once).
    pub ring_bytes: u64,
    /// Whether a probe that fires any number of times submits records.
    pub ring_unbounded: bool,
    /// The most scratch regions ([`SCRATCH_SIZE`] bytes each) a probe uses.
    pub scratch_regions: u32,
    /// The `BPF_F_STACK_BUILD_ID` stack-trace maps (`ustack(build_id)`), by limit.
    pub build_id_stack_maps: std::collections::BTreeSet<usize>,
}

/// What `args`, `argN` and `retval` mean in the probe being lowered.
#[derive(Clone, Debug, Default)]
pub(crate) enum ArgsSource {
    #[default]
    None,
    /// Tracepoint: fields of the raw record at their tracefs offsets.
    Tracepoint(Vec<crate::kernel::tracefs::Field>),
    /// Raw tracepoint: argument names in order (u64 slots of the context).
    RawTracepoint(Vec<String>),
    /// kprobe/uprobe: `pt_regs`.
    Regs,
    /// fentry/fexit: 8-byte argument slots at per-target offsets (relocations).
    Fentry,
    /// usdt: one site's argument descriptions (`pt_regs` registers, user memory, constants).
    Usdt(Vec<Result<crate::kernel::usdt::UsdtArg, crate::kernel::usdt::UsdtArgError>>),
}

/// A function's parameters in order, with their types where strobe can hold them.
pub(crate) type ParamList = std::sync::Arc<Vec<(String, Option<Type>)>>;

/// The lowering of one probe block.
pub(crate) struct Lower<'a> {
    pub cp: &'a CheckedProgram,
    pub b: Builder,
    pub script: &'a mut ScriptState,
    pub probe_index: usize,
    pub probe_kind: crate::syntax::ast::ProbeKind,
    pub args: ArgsSource,
    pub vars: HashMap<VarSlot, Place>,
    /// The probe's variable types by slot.
    pub var_types: Vec<Type>,
    /// Declared variables by scope (mirrors the checker's).
    pub scopes: stmt::Scopes,
    /// Where `exit()` and `return` jump: the program's single exit.
    pub exit: Label,
    /// The innermost loop's labels (break, continue).
    pub loops: Vec<crate::codegen::emit::control::LoopLabels>,
    pub max_strlen: usize,
    /// The `tseries()` clock test hook (`CheckOptions::dummy_ts_map`).
    pub dummy_ts_map: Option<String>,
    /// Bytes of the scratch buffer this probe has handed out.
    pub scratch_used: u32,
    /// The probe's subprograms (loop callbacks), by `Arg::Func` index.
    pub subprogs: Vec<Builder>,
    /// Variables missing from `vars` get a place on first use (inside callbacks and inlined
    /// functions, whose variables live in their own frame); see [`stmt::var_place`].
    pub lazy_vars: bool,
    /// The macro expansions being lowered, innermost last.
    pub macros: Vec<inline::MacroFrame>,
    /// Where `return` goes inside an inlined `fn`.
    pub fn_ret: Option<inline::FnReturn>,
    /// The parameters of the first uprobe target's function in order (`args.NAME` reads
    /// them), as the checker read them from the binary's DWARF.
    pub user_params: Option<ParamList>,
    /// The binary of a uprobe/usdt attach point (`uaddr()` resolves symbols in it).
    pub user_binary: Option<std::path::PathBuf>,
    /// Memory read whole from char arrays (`args.comm`, `p->name`): its strings may have
    /// bytes after their NUL, which [`store::store_val`] clears when it writes them as strings.
    pub raw_bytes: Vec<(Place, u32)>,
    /// Scratch regions shared by every call of a kind, by kind ([`Lower::shared_scratch`]).
    pub shared_scratch: Vec<(&'static str, u32)>,
    /// The link-time address each uprobe target is attached at (function + offset, or the
    /// address given), `None` where unknown: `uaddr()` in a PIE or shared library adds the
    /// distance between it and the probe's run-time address.
    pub user_anchors: Vec<Option<u64>>,
    /// Targets of the attach point being lowered.
    pub target_count: usize,
    /// `-k`: helper failures are reported at run time ([`helper_error`]).
    pub helper_warnings: bool,
    /// Values up to this many bytes live on the stack, larger ones in the scratch buffer:
    /// `on_stack_limit`, at most [`STACK_VALUE_MAX`].
    pub stack_value_max: u32,
    /// fentry/fexit lowered for one kprobe_multi program shared by many targets
    /// (`loader::attach_fentry`): `probe` is the BPF cookie, as for kprobes.
    pub shared_fentry: bool,
    /// Their full names (`probe`), by target index.
    pub target_names: Vec<String>,
}

impl Lower<'_> {
    pub fn ringbuf(&mut self) -> usize {
        self.b.map(RINGBUF)
    }

    pub fn lost(&mut self) -> crate::codegen::emit::maps::Counter {
        crate::codegen::emit::maps::Counter::global(self.b.map(LOST), 0)
    }

    pub fn drops(&mut self) -> crate::codegen::emit::maps::Counter {
        crate::codegen::emit::maps::Counter::global(self.b.map(DROPS), 0)
    }

    /// `size` bytes of the per-CPU scratch buffer, for this probe's use only (each call gets
    /// its own region, so values never overlap).
    pub fn scratch(&mut self, size: u32, span: Span) -> Result<Place, LowerError> {
        let off = self.scratch_start(size);
        self.reserve_scratch(off, size, span)?;
        Ok(self.scratch_place(off))
    }

    /// Where a new scratch value of `size` bytes starts: after the last one, 8-byte aligned,
    /// moved to the next region when it would straddle a region's end.
    fn scratch_start(&self, size: u32) -> u32 {
        let off = self.scratch_used.next_multiple_of(8);
        if off % SCRATCH_SIZE + size > SCRATCH_SIZE && size <= SCRATCH_SIZE {
            off.next_multiple_of(SCRATCH_SIZE)
        } else {
            off
        }
    }

    /// The scratch byte at overall offset `off` (region `off / SCRATCH_SIZE`).
    fn scratch_place(&mut self, off: u32) -> Place {
        let map = self.b.map(SCRATCH);
        let region = off / SCRATCH_SIZE;
        crate::codegen::emit::maps::scratch(&mut self.b, map, region)
            .at((off % SCRATCH_SIZE) as i32)
    }

    /// `size` bytes of the scratch buffer that every call with the same `key` shares (records
    /// that are submitted as soon as they are built, like `join()`'s 16 KiB): reserved once
    /// per probe, looked up again at each call (a pointer from another call may come from a
    /// path this one did not take).
    pub fn shared_scratch(
        &mut self,
        key: &'static str,
        size: u32,
        span: Span,
    ) -> Result<Place, LowerError> {
        let off = match self.shared_scratch.iter().find(|(k, _)| *k == key) {
            Some(&(_, off)) => off,
            None => {
                let off = self.scratch_start(size);
                self.reserve_scratch(off, size, span)?;
                self.shared_scratch.push((key, off));
                off
            }
        };
        Ok(self.scratch_place(off))
    }

    fn reserve_scratch(&mut self, off: u32, size: u32, span: Span) -> Result<(), LowerError> {
        let (what, need, limit) = if size > SCRATCH_SIZE {
            ("a value", size, SCRATCH_SIZE)
        } else {
            let limit = SCRATCH_SIZE * SCRATCH_REGIONS_MAX;
            ("the values of this probe", off + size, limit)
        };
        if need > limit {
            return Err(LowerError::Codegen {
                probe: format!("probe {}", self.probe_index),
                span,
                source: CodegenError::TooLarge {
                    what,
                    size: need as usize,
                    limit: limit as usize,
                },
            });
        }
        self.scratch_used = off + size;
        Ok(())
    }

    /// Stack for values up to `stack_value_max` bytes, the scratch buffer beyond.
    pub fn place(&mut self, size: u32, span: Span) -> Result<Place, LowerError> {
        if size <= self.stack_value_max {
            let slot = self.b.slot(size.max(1), 8);
            Ok(Place::new(slot, 0))
        } else {
            self.scratch(size, span)
        }
    }

    /// Records that the `size` bytes at `p` were copied whole from memory (see `raw_bytes`).
    pub fn mark_raw(&mut self, p: Place, size: u32) {
        self.raw_bytes.push((p, size));
    }

    /// Whether `p` lies in memory recorded by [`Lower::mark_raw`].
    pub fn is_raw(&self, p: Place) -> bool {
        self.raw_bytes
            .iter()
            .any(|(r, n)| r.base == p.base && p.off >= r.off && p.off < r.off + *n as i32)
    }

    pub fn type_of(&self, id: crate::syntax::ast::ExprId) -> Type {
        self.cp.type_of(id).clone()
    }
}

/// Values larger than this live in the scratch buffer rather than on the stack (a smaller
/// `on_stack_limit` lowers the bound).
pub(crate) const STACK_VALUE_MAX: u32 = 192;

/// The stack bound of values for a script's `on_stack_limit`.
pub(crate) fn stack_value_max(on_stack_limit: Option<u64>) -> u32 {
    on_stack_limit.map_or(STACK_VALUE_MAX, |n| n.min(STACK_VALUE_MAX as u64) as u32)
}

/// A ring buffer smaller than the default when the script's output is bounded: only BEGIN and
/// END submit records and no loop repeats a submission, so one run of each writes at most
/// [`ScriptState::ring_bytes`] before userspace reads them. The kernel maps the whole ring
/// into the reader twice and every page counts in its resident size, so a `BEGIN { printf(…);
/// exit(); }` script keeps ~2 MiB less memory. At least 64 KiB (a multiple of any page size),
/// a power of two (the kernel's rule); `None` keeps the default.
fn ring_size(cp: &CheckedProgram, state: &ScriptState) -> Option<u32> {
    use crate::syntax::ast::{Stmt, StmtKind};
    use crate::syntax::visit::{walk_stmt, Visitor};
    struct Loops(bool);
    impl Visitor for Loops {
        fn visit_stmt(&mut self, s: &Stmt) {
            if matches!(
                s.kind,
                StmtKind::While { .. } | StmtKind::Unroll { .. } | StmtKind::For { .. }
            ) {
                self.0 = true;
            }
            walk_stmt(self, s)
        }
    }
    if state.ring_unbounded {
        return None;
    }
    let mut loops = Loops(false);
    loops.visit_program(&cp.program);
    if loops.0 {
        return None;
    }
    let size = state.ring_bytes.max(1).next_power_of_two().max(64 << 10);
    (size < maps::RING_SIZE as u64).then_some(size as u32)
}

/// Lowers every probe of `cp` (see the module documentation).
pub fn lower(
    cp: &CheckedProgram,
    opts: &crate::sema::CheckOptions,
) -> Result<CompiledScript, LowerError> {
    let classed_maps = key_class::classed_maps(cp);
    let mut state = ScriptState {
        slot_maps: maps::slot_maps(cp),
        cached_maps: agg_cache::cached_maps(cp, &classed_maps),
        classed_maps,
        ..ScriptState::default()
    };
    state.events.str_trunc_trailer = cp.str_trunc_trailer.clone();
    state.events.str_trunc_size = cp.str_trunc_size;
    let mut maps = maps::map_table(cp);
    maps.extend(key_class::class_map_specs(cp, &state.classed_maps));
    maps.extend(agg_cache::cache_map_specs(cp, &state.cached_maps));
    let mut probes = Vec::new();
    let uses_elapsed = elapsed::uses_elapsed(cp);
    let mut need_start = uses_elapsed;
    if uses_elapsed {
        maps.push(elapsed::start_map());
    }
    for checked in &cp.probes {
        probes.extend(probe::lower_probe(
            cp,
            checked,
            &mut state,
            probes.len(),
            opts,
            &mut need_start,
        )?);
    }
    if need_start {
        probes.push(probe::start_only_begin(probes.len())?);
    }
    let size = match cp.perf_rb_pages.or(opts.perf_rb_pages) {
        // A power of two that fits a u32, at least 64 KiB (a multiple of any page size).
        Some(pages) => Some(
            pages
                .saturating_mul(4096)
                .clamp(64 << 10, 1 << 31)
                .next_power_of_two() as u32,
        ),
        None => ring_size(cp, &state),
    };
    if let Some(size) = size {
        for m in maps
            .iter_mut()
            .filter(|m| m.role == crate::plan::MapRole::RingBuf)
        {
            m.max_entries = size;
        }
    }
    if let Some(m) = maps.iter_mut().find(|m| m.name == SCRATCH) {
        m.max_entries = state.scratch_regions.max(1);
    }
    if probes
        .iter()
        .any(|p| p.template.maps.iter().any(|m| m == pid_filter::PID_MAP))
    {
        maps.push(pid_filter::map());
    }
    maps.extend(
        state
            .stack_maps
            .iter()
            .map(|&(user, limit)| crate::plan::stack_map_spec(user, limit)),
    );
    maps.extend(
        state
            .build_id_stack_maps
            .iter()
            .map(|&limit| crate::plan::build_id_stack_map_spec(limit)),
    );
    Ok(CompiledScript {
        maps,
        probes,
        events: state.events,
    })
}
