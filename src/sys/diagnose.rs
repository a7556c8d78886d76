//! Turns a failed call into a [`SysError`] whose [`Cause`] names why the kernel refused. The
//! decision is a pure function of the operation, the errno and a snapshot of [`Facts`], so it
//! is unit-tested without a kernel; [`Facts::read`] gathers the snapshot only on failure.

use super::env::{self, Lockdown};
use super::error::{Capability, Cause, Errno, SysError};
use super::link::AttachKind;
use super::prog::ProgType;

/// What was being attempted, as far as the diagnosis needs to know.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Op {
    MapCreate,
    ProgLoad {
        prog_type: ProgType,
        /// The verifier said nothing: the refusal came before verification (capabilities,
        /// lockdown, LSM), not from the program.
        log_empty: bool,
    },
    /// perf_event_open of a PMU (`kprobe`, `uprobe`, `tracepoint`, `software`, …).
    PerfEventOpen {
        pmu: &'static str,
    },
    LinkCreate {
        kind: AttachKind,
    },
    /// Commands whose refusals need no explanation beyond the errno (lookups, info, …).
    Other,
}

/// The environment snapshot a diagnosis reads.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Facts {
    /// Effective capabilities as a bit mask; `None` if capget failed.
    pub caps: Option<u64>,
    pub lockdown: Option<Lockdown>,
    pub unprivileged_bpf_disabled: Option<u32>,
    /// Soft RLIMIT_MEMLOCK; `None` = unlimited.
    pub memlock: Option<u64>,
    pub kernel_release: String,
    pub has_kprobe_pmu: bool,
    pub has_uprobe_pmu: bool,
}

impl Facts {
    pub fn read() -> Facts {
        Facts {
            caps: env::effective_caps(),
            lockdown: env::lockdown(),
            unprivileged_bpf_disabled: env::unprivileged_bpf_disabled(),
            memlock: env::memlock_limit(),
            kernel_release: env::kernel_release(),
            has_kprobe_pmu: env::has_pmu("kprobe"),
            has_uprobe_pmu: env::has_pmu("uprobe"),
        }
    }

    fn has(&self, cap: Capability) -> bool {
        // Unknown capabilities: assume present so we do not blame them wrongly.
        match self.caps {
            Some(c) => c & (1u64 << cap.bit()) != 0,
            None => true,
        }
    }

    fn missing(&self, caps: &[Capability]) -> Vec<Capability> {
        caps.iter().copied().filter(|&c| !self.has(c)).collect()
    }
}

/// Builds the error for `call` failing with `errno` while doing `op`, reading the environment.
pub fn sys_error(call: &'static str, errno: Errno, op: Op) -> SysError {
    let cause = if op == Op::Other {
        None
    } else {
        cause(&Facts::read(), op, errno)
    };
    SysError { call, errno, cause }
}

/// The cause of `errno` for `op` given `facts`, when one can be established.
pub fn cause(facts: &Facts, op: Op, errno: Errno) -> Option<Cause> {
    use Capability::*;
    let admin = facts.has(SysAdmin);
    let bpf_ok = admin || facts.has(Bpf);
    let perfmon_ok = admin || facts.has(Perfmon);
    match op {
        Op::MapCreate | Op::ProgLoad { .. } if errno == Errno::EPERM && !bpf_ok => {
            match facts.unprivileged_bpf_disabled {
                Some(s) if s != 0 => Some(Cause::UnprivilegedBpfDisabled { setting: s }),
                _ => Some(Cause::MissingCapability {
                    missing: facts.missing(&[Bpf]),
                }),
            }
        }
        Op::ProgLoad { prog_type, .. }
            if errno == Errno::EPERM && prog_type.needs_perfmon() && !perfmon_ok =>
        {
            Some(Cause::MissingCapability {
                missing: facts.missing(&[Perfmon]),
            })
        }
        Op::MapCreate | Op::ProgLoad { .. }
            if errno == Errno::EPERM && memlock_charged(facts) && facts.memlock.is_some() =>
        {
            Some(Cause::MemlockRlimit {
                limit: facts.memlock.unwrap_or(0),
                kernel: facts.kernel_release.clone(),
            })
        }
        Op::ProgLoad {
            prog_type,
            log_empty: true,
        } if errno == Errno::EPERM => match facts.lockdown {
            Some(l @ (Lockdown::Integrity | Lockdown::Confidentiality)) => Some(Cause::Lockdown {
                mode: l.name().to_string(),
                what: prog_type.lockdown_description(),
            }),
            _ => None,
        },
        Op::PerfEventOpen { pmu: "kprobe" } if !facts.has_kprobe_pmu => Some(Cause::KernelLacks {
            config: "CONFIG_KPROBES",
            detail: "no kprobe PMU (/sys/bus/event_source/devices/kprobe is absent)".into(),
        }),
        Op::PerfEventOpen { pmu: "uprobe" } if !facts.has_uprobe_pmu => Some(Cause::KernelLacks {
            config: "CONFIG_UPROBE_EVENTS",
            detail: "no uprobe PMU (/sys/bus/event_source/devices/uprobe is absent)".into(),
        }),
        Op::PerfEventOpen { .. }
            if matches!(errno, Errno::EPERM | Errno::EACCES) && !perfmon_ok =>
        {
            Some(Cause::MissingCapability {
                missing: facts.missing(&[Perfmon]),
            })
        }
        Op::LinkCreate {
            kind: AttachKind::KprobeMulti,
        } if matches!(errno, Errno::EOPNOTSUPP | Errno::ENOTSUPP) || !facts.has_kprobe_pmu => {
            Some(Cause::KernelLacks {
                config: if facts.has_kprobe_pmu {
                    "CONFIG_FPROBE"
                } else {
                    "CONFIG_KPROBES"
                },
                detail: if facts.has_kprobe_pmu {
                    "kprobe_multi links need fprobe (Linux 5.18+ with CONFIG_FPROBE)".into()
                } else {
                    "no kprobe PMU, so no kprobes and no kprobe_multi links".into()
                },
            })
        }
        Op::LinkCreate {
            kind: AttachKind::UprobeMulti,
        } if matches!(errno, Errno::EOPNOTSUPP | Errno::ENOTSUPP | Errno::EINVAL)
            && env::parse_version(&facts.kernel_release) < (6, 6, 0) =>
        {
            Some(Cause::KernelLacks {
                config: "uprobe_multi support",
                detail: format!(
                    "uprobe_multi links need Linux 6.6+, this is {}",
                    facts.kernel_release
                ),
            })
        }
        Op::LinkCreate {
            kind: AttachKind::Tracing,
        } if errno == Errno::EPERM => match facts.lockdown {
            Some(l @ (Lockdown::Integrity | Lockdown::Confidentiality)) => Some(Cause::Lockdown {
                mode: l.name().to_string(),
                what: "attaching BPF tracing programs",
            }),
            _ => None,
        },
        _ => None,
    }
}

/// Kernels before 5.11 charge BPF maps and programs to RLIMIT_MEMLOCK (5.11 moved to memcg).
fn memlock_charged(facts: &Facts) -> bool {
    env::parse_version(&facts.kernel_release) < (5, 11, 0)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn root_with_lockdown() -> Facts {
        Facts {
            caps: Some(u64::MAX >> 23),
            lockdown: Some(Lockdown::Confidentiality),
            unprivileged_bpf_disabled: Some(2),
            memlock: Some(8 << 20),
            kernel_release: "6.18.44".into(),
            has_kprobe_pmu: false,
            has_uprobe_pmu: true,
        }
    }

    #[test]
    fn tracing_eperm_with_empty_log_under_lockdown_names_lockdown() {
        let c = cause(
            &root_with_lockdown(),
            Op::ProgLoad {
                prog_type: ProgType::Tracing,
                log_empty: true,
            },
            Errno::EPERM,
        );
        assert!(matches!(c, Some(Cause::Lockdown { ref mode, .. }) if mode == "confidentiality"));
    }

    #[test]
    fn eperm_without_cap_bpf_names_the_capability_or_the_sysctl() {
        let mut f = root_with_lockdown();
        f.caps = Some(0);
        let op = Op::MapCreate;
        assert_eq!(
            cause(&f, op, Errno::EPERM),
            Some(Cause::UnprivilegedBpfDisabled { setting: 2 })
        );
        f.unprivileged_bpf_disabled = Some(0);
        assert_eq!(
            cause(&f, op, Errno::EPERM),
            Some(Cause::MissingCapability {
                missing: vec![Capability::Bpf]
            })
        );
    }

    #[test]
    fn old_kernel_eperm_names_memlock() {
        let mut f = root_with_lockdown();
        f.kernel_release = "5.10.223".into();
        assert!(matches!(
            cause(&f, Op::MapCreate, Errno::EPERM),
            Some(Cause::MemlockRlimit { limit, .. }) if limit == 8 << 20
        ));
        f.memlock = None;
        assert_eq!(cause(&f, Op::MapCreate, Errno::EPERM), None);
    }

    #[test]
    fn kprobe_perf_event_without_pmu_names_config_kprobes() {
        let c = cause(
            &root_with_lockdown(),
            Op::PerfEventOpen { pmu: "kprobe" },
            Errno::ENOENT,
        );
        assert!(matches!(
            c,
            Some(Cause::KernelLacks {
                config: "CONFIG_KPROBES",
                ..
            })
        ));
    }

    #[test]
    fn unrelated_errors_have_no_invented_cause() {
        let c = cause(
            &root_with_lockdown(),
            Op::ProgLoad {
                prog_type: ProgType::RawTracepoint,
                log_empty: false,
            },
            Errno::EACCES,
        );
        assert_eq!(c, None);
    }
}
