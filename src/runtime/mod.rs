//! The runtime: ring buffer and perf buffer readers, the event loop, output.

#[doc(hidden)]
pub mod cgroup;
pub mod child;
pub mod cpus;
pub mod driver;
pub mod epoll;
pub mod events;
pub mod exit_flag;
pub mod format;
pub mod main_thread;
pub mod modes;
pub mod perfbuf;
// The compiled script moved to `crate::plan` (the compiler–runtime contract); re-exported
// so code written against the old path still builds.
pub use crate::plan;
pub mod probes;
pub mod ringbuf;
pub mod serve;
pub mod signals;
pub mod snapshot;
pub mod stop;
pub mod symbolize;
