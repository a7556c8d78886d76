//! The clone loader: many attach targets from one template, loaded and attached fast, armed
//! all at once, detached without making the user wait.
//!
//! Input: a [`Template`](crate::template::Template) (with the arming guard), the fds of the
//! maps it refers to, and the targets: [`CloneTarget`]s for fentry/fexit/raw tracepoints (one
//! program per target), or [`MultiTargets`] for kprobes/uprobes (one program for all).
//! Output: an [`Attached`] set (owned programs and links, refusals with reasons) whose
//! [`summary_line`](Attached::summary_line) is what users see.
//!
//! Order of a run: [`prepare_limits`] (RLIMIT_MEMLOCK, RLIMIT_NOFILE, target-count warning) →
//! [`Arming::create`] → [`load_clones`], [`attach_multi`] or [`attach_fentry`] (fentry/fexit:
//! kprobe_multi groups, kprobe.session ones for fexit reading `args`, and trampoline clones) →
//! [`KernelMisses::of`] → [`Arming::arm`] → … → [`Arming::disarm`] → [`KernelMisses::of`]
//! again (the runs the kernel skipped while armed) → print results → [`detach`] (in the
//! background by default).
//!
//! Invariants: every kernel object is an owned fd, so errors, panics and Ctrl-C (when the
//! caller unwinds or exits) release everything; no target count is capped, only warned about;
//! a refusing target never stops the others unless [`LoadOptions::strict`].

mod arming;
mod clones;
pub mod co_re;
mod data;
mod detach;
mod fentry_multi;
mod limits;
mod misses;
mod multi;
mod pin;
mod progress;
mod report;
mod session;
pub mod subprogs;
/// ELF function symbols and uprobe sites (in `elf`, re-exported for the loader's callers).
pub use crate::elf::symbols;
mod type_match;

pub use arming::Arming;
pub use clones::{load_clones, map_fds_for, module_btf_obj, CloneTarget, LoadOptions};
pub use data::{create_data_maps, data_map_name, link_data, DataMap};
pub use detach::{detach, detach_in_background, BackgroundDetach, DetachMode};
pub use fentry_multi::{
    attach_fentry, template_refusal, FentryAttached, FentryOptions, FentryVia, GroupReport,
    MULTI_ABOVE,
};
pub use limits::{prepare_limits, LimitReport, DEFAULT_WARN_ABOVE};
pub use misses::KernelMisses;
pub use multi::{attach_multi, MultiOptions, MultiTargets, MultiVia};
pub use pin::{pin_objects, PinError};
pub use progress::{progress_wanted, PROGRESS_ABOVE};
pub use report::{Attached, AttachedClone, KernelObject, LoaderError, Refusal, Stage};
pub use session::{session_template, SessionKfuncs, SessionSupport, SESSION_ENTRIES};
