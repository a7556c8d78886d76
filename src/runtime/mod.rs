//! The runtime: ring buffer and perf buffer readers, the event loop, output.

pub mod format;
pub mod cpus;
pub mod epoll;
pub mod perfbuf;
pub mod ringbuf;
