//! Tier 2, the runtime case files: every `tests/runtime/*.case` (bpftrace's declarative
//! runtime-test format) run against the `strobe` binary on this host, one case at a time. Many
//! cases have timeouts and background workloads, so this crate runs apart from the other
//! end-to-end tests (tests/cli), whose load would make those timings flaky.
//!
//! `cargo test --test cases` runs them all; `strobe-cases --strobe target/release/strobe
//! tests/runtime/FILE.case` runs one file.

mod runtime_cases;
