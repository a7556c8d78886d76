//! The runtime: ring buffer and perf buffer readers, the event loop, output.

pub mod cpus;
pub mod ringbuf;
