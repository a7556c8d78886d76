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
//! The other modules are the stages behind these (public so the tests and benchmarks can
//! reach each stage); their items may change between releases.

pub mod api;
pub mod asm;
pub mod btf;
pub mod builtins;
pub mod cli;
pub mod codegen;
pub mod compile;
pub mod diag;
pub(crate) mod dwarf;
pub mod elf;
pub mod kernel;
pub mod kinds;
pub mod loader;
pub mod plan;
pub mod runtime;
pub mod sema;
pub mod syntax;
pub mod sys;
pub mod template;
pub(crate) mod timings;

pub use api::{Finished, Script, ScriptError, Session};
