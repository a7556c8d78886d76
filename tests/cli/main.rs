//! Tier 2, the `strobe` binary end to end (and the `strobe-cases` runner): the command line,
//! scripts run on this host's kernel, output and exit codes (the case files run in
//! tests/cases). Host-kernel tests check the capability they need and report skips loudly.
//!
//! One test crate (one link of the library) for the whole tier; each module is one former
//! `tests/NAME.rs`, so `cargo test --test cli NAME::` runs one of them.

#[path = "../elf_common/mod.rs"]
mod elf_common;
#[path = "../loader_common/mod.rs"]
mod loader_common;
#[path = "../oracle/mod.rs"]
mod oracle;
#[path = "../runtime_support/mod.rs"]
mod runtime_support;
#[path = "../sys_common/mod.rs"]
mod sys_common;
#[path = "../usdt_support/mod.rs"]
mod usdt_support;

mod builtins_oracle;
mod case_runner;
mod cli_fuzz;
mod cli_runtime;
mod cli_trace;
mod elf_asm_cli;
mod elf_disasm_cli;
mod loader_cli;
mod loader_data;
mod lower_drops;
mod prometheus;
mod run_stacks;
mod sema_host;
mod semantics_oracle;
mod sys_features;
mod usdt;
