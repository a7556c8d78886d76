//! Tier 1, pure tests that measure how compile time grows (parser, checker, compiler and
//! assembler on huge inputs): they compare timings, so they run in a crate of their own rather
//! than beside the many other pure tests, whose load would skew the ratios.
//!
//! One test crate (one link of the library) for the whole tier; each module is one former
//! `tests/NAME.rs`, so `cargo test --test scale NAME::` runs one of them.

mod compile_scale;
mod parse_fuzz;
mod sema_fuzz;
