//! Tier 1, pure tests: no kernel, no strobe binary. The parser, checker, lowering to
//! templates, the assembler and disassembler, ELF and BTF readers, output formatting, the module
//! layering; oracles that compare with clang/llvm/objdump when those tools are installed.
//!
//! One test crate (one link of the library) for the whole tier; each module is one former
//! `tests/NAME.rs`, so `cargo test --test pure NAME::` runs one of them.

#[path = "../elf_common/mod.rs"]
mod elf_common;
#[path = "../format_support/mod.rs"]
mod format_support;
#[path = "../llvm_corpus/mod.rs"]
mod llvm_corpus;
#[path = "../oracle/mod.rs"]
mod oracle;
#[path = "../sema_support/mod.rs"]
mod sema_support;

mod architecture;
mod asm_disasm;
mod asm_errors;
mod asm_isa;
mod asm_object;
mod asm_roundtrip;
mod asm_syntax;
mod elf_aya;
mod elf_clang;
mod elf_fuzz;
mod elf_objdump;
mod elf_roundtrip;
mod format_golden;
mod format_props;
mod llvm_oracle;
mod lower_asm;
mod lower_func_ip;
mod lower_golden;
mod lower_plan;
mod lower_sizes;
mod opcode_hygiene;
mod parse_errors;
mod parse_examples;
mod parse_grammar;
mod sema_errors;
mod sema_groups;
mod sema_list;
mod sema_types;
