//! The runtime: ring buffer and perf buffer readers, the event loop, output.

pub mod format;
