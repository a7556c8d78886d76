//! strobe: a bpftrace-compatible tracer and BPF toolkit that needs no LLVM, no libbpf and no
//! compiler on the host it runs on.
//!
//! Data flows one way: script text → AST → checked AST → templates → loaded programs → links →
//! events → printed output. See README.md's architecture section for where each stage lives.
//!
//! # Public API
//! - Run a bpftrace script from Rust: [`Script`] (compile, then [`Script::run`] or
//!   [`Script::attach`]) and [`Session`] ([`api`] has an example).
//! - Load and attach a BPF object on every target of a wildcard, as `strobe load` does:
//!   [`api::expand`] (attach points → targets, with an example) and [`loader`] (clones,
//!   multi-attach, arming, detach).
//! - BPF assembly and objects without LLVM: [`asm`] (assemble, disassemble, the
//!   instruction type and builders) and [`elf`] (read and write BPF ELF objects); kernel BTF
//!   in [`btf`].
//!
//!
//! # Stability
//! The API is what this page documents: [`Script`], [`Session`], [`Finished`],
//! [`ScriptError`] and the option and result types [`api`] re-exports; [`api::expand`];
//! [`loader`]; [`asm`]; [`elf`]; [`btf`]. Changes to them are named in the CHANGELOG.
//!
//! The other modules (`syntax`, `sema`, `builtins`, `codegen`, `template`, `plan`, `kernel`,
//! `runtime`, `sys`, `diag`, `compile`, `cli`) are the stages behind the API. They are public
//! only so that strobe's own binary, integration tests and benchmarks can drive each stage on
//! its own; they are hidden from these docs, are not part of the API and change without
//! notice.

pub mod api;
pub mod asm;
pub mod btf;
pub mod elf;
pub mod loader;

// The stages behind the API: reachable by strobe's binary, tests and benchmarks, hidden from
// the docs and not part of the API (see "Stability" above).
#[doc(hidden)]
pub mod builtins;
#[doc(hidden)]
pub mod cli;
#[doc(hidden)]
pub mod codegen;
#[doc(hidden)]
pub mod compile;
#[doc(hidden)]
pub mod diag;
pub(crate) mod dwarf;
#[doc(hidden)]
pub(crate) mod fnv;
#[doc(hidden)]
pub mod kernel;
#[doc(hidden)]
pub mod kinds;
#[doc(hidden)]
pub mod plan;
#[doc(hidden)]
pub mod runtime;
#[doc(hidden)]
pub mod sema;
#[doc(hidden)]
pub mod syntax;
#[doc(hidden)]
pub mod sys;
#[doc(hidden)]
pub mod template;
pub(crate) mod timings;

pub use api::{Finished, Script, ScriptError, Session};
