//! Tier 2, host-kernel runs of the runtime that must have the process to themselves: they
//! touch process-wide state (the signal mask, and a leak check that counts this process's
//! perf-event fds), so no other test module may run beside them.
//!
//! One test crate (one link of the library) for the whole tier; each module is one former
//! `tests/NAME.rs`, so `cargo test --test host_alone NAME::` runs one of them.

#[path = "../runtime_support/mod.rs"]
mod runtime_support;

mod runtime_run;
