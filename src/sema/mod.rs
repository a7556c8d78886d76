//! Semantic checking: a parsed [`Program`] → a [`CheckedProgram`] (types, names, maps, formats,
//! expanded targets) or diagnostics, with bpftrace's rules.
//!
//! Stages (one file each):
//! - [`expand`]: attach points → targets through [`KernelInfo`] (BTF, tracefs, ELF);
//! - [`context`]: per probe, what `args`/`argN`/`retval`/`func` are for its targets;
//! - `resolve`: scopes of `$variables` (block-scoped, bpftrace's current rules), macros
//!   expanded at their call sites, `#define` constants, positional parameters;
//! - `typeck`: a [`Type`] for every expression, checked against builtins
//!   ([`crate::builtins`]), BTF and tracepoint formats;
//! - `resources`: the map table (key/value types consistent across uses, aggregations) and
//!   the printf-like format sites (checked with [`crate::runtime::format::PrintfCall`]);
//! - [`environment`]: the kernel facts the code generator will need (helpers, `task_struct`
//!   and struct member offsets, symbol addresses, cgroup ids, kfuncs), asked once here and
//!   carried in [`CheckedProgram::env`], so that lowering never asks the kernel.
//!
//! Maps may be read in one probe and assigned in a later one, so typing runs twice: the first
//! round only learns each map's key and value types (its diagnostics are dropped), the second
//! checks every use against them and reports.
//!
//! Input: a program, its [`SourceFile`] (for nothing but names), a [`KernelInfo`] and
//! [`CheckOptions`]. Output: [`CheckOutput`] — the checked program when there was no error,
//! and every diagnostic (errors and warnings) in source order.
//!
//! ```
//! use strobe::diag::SourceFile;
//! use strobe::kernel::info::MockKernel;
//! use strobe::sema::{check, CheckOptions, types::Type};
//!
//! let src = SourceFile::new("t.bt", "fentry:vfs_read { @bytes[comm] = sum(args.count); }");
//! let program = strobe::syntax::parse_ok(&src).unwrap();
//! let out = check(&program, &MockKernel::fixture(), &CheckOptions::default());
//! let checked = out.program.expect("no errors");
//! let (_, map) = checked.map("@bytes").unwrap();
//! assert_eq!(map.keys, [Type::Str { size: 16 }]);
//! assert_eq!(checked.probes[0].attach[0].targets[0].name, "fentry:vmlinux:vfs_read");
//! ```

mod calls;
mod config_read;
pub mod context;
pub mod ctypes;
mod driver;
mod dummy_clock;
pub mod environment;
pub mod expand;
mod fields;
pub mod getopt;
pub mod imports;
mod incomplete;
pub mod list;
pub mod macros;
mod meta;
pub mod program;
pub mod proto_cache;
mod resolve;
mod resources;
mod typeck;
pub mod types;
mod uaddr;

pub use environment::{session_kfuncs, Environment, TaskFields};
pub use meta::strcap_const;
pub use program::{
    AttachTargets, CheckedProbe, CheckedProgram, FormatId, FormatSite, MapId, MapInfo, TargetSlots,
    VarSlot, VarTable,
};
pub use types::Type;

use crate::diag::Diagnostic;
use crate::kernel::info::KernelInfo;
use crate::syntax::ast::Program;

/// bpftrace's default string size (`BPFTRACE_MAX_STRLEN`).
pub const DEFAULT_MAX_STRLEN: usize = 1024;
/// bpftrace's default map size (`BPFTRACE_MAX_MAP_KEYS`).
pub const DEFAULT_MAX_MAP_KEYS: u64 = 4096;

/// What the command line and environment decide for checking.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct CheckOptions {
    /// `$1`… as given after the script.
    pub params: Vec<String>,
    /// `--name[=value]` given after `--` (read by `getopt`), in command-line order.
    pub named_params: Vec<(String, Option<String>)>,
    /// `--unsafe`.
    pub unsafe_mode: bool,
    /// String size; a script's `config = { max_strlen = N }` overrides it.
    pub max_strlen: usize,
    /// Default map size; `config = { max_map_keys = N }` overrides it.
    pub max_map_keys: u64,
    /// Ring buffer pages (`STROBE_PERF_RB_PAGES`, alias `BPFTRACE_PERF_RB_PAGES`): the ring
    /// holds this many 4 KiB pages (rounded up to a power of two, at least 64 KiB); `None`
    /// sizes it by what the script writes (`codegen::lower`).
    pub perf_rb_pages: Option<u64>,
    /// `on_stack_limit` (config or `STROBE_`/`BPFTRACE_ON_STACK_LIMIT`): values larger than
    /// this many bytes live in the per-CPU scratch buffer, not on the BPF stack; `None` keeps
    /// strobe's own bound (`codegen::lower::STACK_VALUE_MAX`, also the most it honours).
    pub on_stack_limit: Option<u64>,
    /// `log_size` (config or `STROBE_`/`BPFTRACE_LOG_SIZE`): with `-v`, programs load with a
    /// verifier log of this many bytes, as bpftrace's (`sys::ProgLoadOptions::log_size`).
    pub log_size: Option<u64>,
    /// Default `kstack`/`ustack` layout; `config = { stack_mode = perf }` overrides it.
    pub stack_mode: crate::plan::layout::StackMode,
    /// `-p PID` or `-c CMD`: kernel probes get a process filter (`codegen::lower::pid_filter`).
    pub pid_filter: bool,
    /// `-c CMD`: `cpid` is the command's pid (kept in the process filter's map).
    pub child_command: bool,
    /// `config = { missing_probes = … }`: what an attach point that matches nothing is.
    pub missing_probes: MissingProbes,
    /// A test hook, as bpftrace's `BPFTRACE_DUMMY_TS_MAP`: `tseries()` reads its clock from
    /// this scalar map of an unsigned integer (`@ts`) instead of the kernel's, so tests can
    /// place values in chosen intervals.
    pub dummy_ts_map: Option<String>,
    /// Text printed after a string that filled its buffer (`str_trunc_trailer`, default `..`).
    pub str_trunc_trailer: String,
    /// `-k`: the generated code reports failed probe reads and map lookups of absent keys at
    /// run time (`codegen::lower::helper_error`).
    pub helper_warnings: bool,
}

/// bpftrace's `missing_probes` config: an attach point matching nothing is an error (the
/// default), a warning and left out, or silently left out.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum MissingProbes {
    #[default]
    Error,
    Warn,
    Ignore,
}

impl Default for CheckOptions {
    fn default() -> Self {
        CheckOptions {
            params: Vec::new(),
            named_params: Vec::new(),
            unsafe_mode: false,
            max_strlen: DEFAULT_MAX_STRLEN,
            max_map_keys: DEFAULT_MAX_MAP_KEYS,
            perf_rb_pages: None,
            on_stack_limit: None,
            log_size: None,
            stack_mode: Default::default(),
            pid_filter: false,
            child_command: false,
            missing_probes: MissingProbes::Error,
            dummy_ts_map: None,
            str_trunc_trailer: "..".into(),
            helper_warnings: false,
        }
    }
}

impl CheckOptions {
    /// Defaults overridden by the environment: `STROBE_MAX_STRLEN` (alias
    /// `BPFTRACE_MAX_STRLEN`) and `STROBE_MAX_MAP_KEYS` (alias `BPFTRACE_MAX_MAP_KEYS`); the
    /// STROBE_ name wins when both are set. Unparsable values are ignored. Also the
    /// `STROBE_DUMMY_TS_MAP` (alias `BPFTRACE_DUMMY_TS_MAP`) test hook.
    pub fn from_env() -> CheckOptions {
        let get = |names: [&str; 2]| {
            names
                .iter()
                .find_map(|n| std::env::var(n).ok()?.trim().parse::<u64>().ok())
        };
        let mut o = CheckOptions::default();
        if let Some(n) = get(["STROBE_MAX_STRLEN", "BPFTRACE_MAX_STRLEN"]) {
            o.max_strlen = n.clamp(1, 1 << 20) as usize;
        }
        if let Some(n) = get(["STROBE_MAX_MAP_KEYS", "BPFTRACE_MAX_MAP_KEYS"]) {
            o.max_map_keys = n.max(1);
        }
        o.dummy_ts_map = ["STROBE_DUMMY_TS_MAP", "BPFTRACE_DUMMY_TS_MAP"]
            .iter()
            .find_map(|n| std::env::var(n).ok())
            .map(|m| m.trim().to_string())
            .filter(|m| !m.is_empty());
        if let Some(t) = ["STROBE_STR_TRUNC_TRAILER", "BPFTRACE_STR_TRUNC_TRAILER"]
            .iter()
            .find_map(|n| std::env::var(n).ok())
        {
            o.str_trunc_trailer = t;
        }
        if let Some(n) = get(["STROBE_PERF_RB_PAGES", "BPFTRACE_PERF_RB_PAGES"]) {
            o.perf_rb_pages = Some(n.max(1));
        }
        o.on_stack_limit = get(["STROBE_ON_STACK_LIMIT", "BPFTRACE_ON_STACK_LIMIT"]);
        o.log_size = get(["STROBE_LOG_SIZE", "BPFTRACE_LOG_SIZE"]);
        let mode = ["STROBE_STACK_MODE", "BPFTRACE_STACK_MODE"]
            .iter()
            .find_map(|n| std::env::var(n).ok());
        if let Some(m) = mode {
            use crate::plan::layout::StackMode;
            match m.trim() {
                "perf" => o.stack_mode = StackMode::Perf,
                "raw" => o.stack_mode = StackMode::Raw,
                "bpftrace" => o.stack_mode = StackMode::Bpftrace,
                _ => {}
            }
        }
        o
    }
}

/// The checker's result.
#[derive(Debug)]
pub struct CheckOutput {
    /// `Some` when no error was found.
    pub program: Option<CheckedProgram>,
    /// Errors and warnings, in source order.
    pub diagnostics: Vec<Diagnostic>,
}

impl CheckOutput {
    pub fn has_errors(&self) -> bool {
        self.diagnostics.iter().any(Diagnostic::is_error)
    }
}

/// Checks `program` (see the module documentation).
pub fn check(program: &Program, kernel: &dyn KernelInfo, opts: &CheckOptions) -> CheckOutput {
    driver::run(program, kernel, opts)
}
