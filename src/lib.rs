//! strobe: a bpftrace-compatible tracer and BPF toolkit that needs no LLVM, no libbpf and no
//! compiler on the host it runs on.
//!
//! Data flows one way: script text → AST → checked AST → templates → loaded programs → links →
//! events → printed output. See README.md's architecture section for where each stage lives.

pub mod api;
pub mod asm;
pub mod btf;
pub mod builtins;
pub mod cli;
pub mod codegen;
pub mod compile;
pub mod diag;
pub mod dwarf;
pub mod elf;
pub mod kernel;
pub mod loader;
pub mod plan;
pub mod runtime;
pub mod sema;
pub mod syntax;
pub mod sys;
pub mod template;
pub mod timings;

pub use api::{Finished, Script, ScriptError, Session};
