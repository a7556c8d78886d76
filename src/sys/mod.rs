//! The syscall layer: bpf(2) and perf_event_open(2), one function per command, owned fds.
//! The only place that fills `bpf_attr`; it makes no policy (callers decide what to load and
//! when to retry).
//!
//! Every kernel object is an owned fd wrapper closed on drop ([`Map`], [`Prog`], [`Link`],
//! [`PerfEvent`], [`BtfObj`]). Failures are [`SysError`] (call, errno, cause) or, for program
//! loads, [`LoadError`] with the verifier log.

pub mod attr;
pub mod btf_load;
pub mod call;
pub mod cgroup_id;
pub mod diagnose;
pub mod env;
pub mod error;
pub mod info;
pub mod link;
pub mod map;
pub mod perf;
pub mod pin;
pub mod prog;
pub mod rlimit;
pub mod test_run;
pub mod verifier_log;

pub use btf_load::{BtfLoadError, BtfObj};
pub use error::{Capability, Cause, Errno, SysError};
pub use link::{AttachKind, Link, LinkTarget};
pub use map::{Batch, Map, MapCreateOptions, MapFlags, MapType, UpdateFlags};
pub use perf::{PerfEvent, Sampling, SoftwareEvent};
pub use prog::{AttachType, LoadError, LogLevel, Prog, ProgLoadFlags, ProgLoadOptions, ProgType};
pub use rlimit::{raise_memlock_rlimit, raise_nofile_rlimit, RlimitChange, RlimitError};
pub use test_run::{TestRunFlags, TestRunOptions, TestRunResult};
