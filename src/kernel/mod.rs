//! What the running kernel offers: tracefs tracepoint formats, kallsyms, feature probes.

pub mod bpf_progs;
pub mod features;
pub mod ftrace_filter;
pub mod info;
pub mod kallsyms;
pub mod tracefs;
pub mod usdt;
