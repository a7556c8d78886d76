//! Tier 2, host-kernel tests run in this process: maps, programs loaded and run through
//! BPF_PROG_TEST_RUN, perf events, ring buffers, tracefs, the loader and the library API. Each
//! checks the capability it needs at run time and reports a skip loudly (`STROBE_SKIP_LOG`).
//!
//! One test crate (one link of the library) for the whole tier; each module is one former
//! `tests/NAME.rs`, so `cargo test --test host NAME::` runs one of them.

#[path = "../codegen_support/mod.rs"]
mod codegen_support;
#[path = "../format_support/mod.rs"]
mod format_support;
#[path = "../loader_common/mod.rs"]
mod loader_common;
#[path = "../oracle/mod.rs"]
mod oracle;
#[path = "../ringbuf_support/mod.rs"]
mod ringbuf_support;
#[path = "../runtime_support/mod.rs"]
mod runtime_support;
#[path = "../sys_common/mod.rs"]
mod sys_common;

mod api;
mod asm_kernel;
mod btf_encode_kernel;
mod btf_vmlinux;
mod codegen_arith;
mod codegen_control;
mod codegen_loops;
mod codegen_maps;
mod codegen_output;
mod codegen_prop;
mod codegen_size;
mod elf_bpftool;
mod elf_kernel;
mod format_oracle;
mod loader_core;
mod loader_host;
mod lower_verifier;
mod ringbuf_kernel;
mod ringbuf_perf;
mod sys_maps;
mod sys_misc;
mod sys_perf;
mod sys_prog;
mod tracefs_host;
