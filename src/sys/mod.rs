//! The syscall layer: bpf(2) and perf_event_open(2), one function per command, owned fds. The only place that fills `bpf_attr`; it makes no policy.
