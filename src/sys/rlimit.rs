//! Resource limits BPF users hit: RLIMIT_MEMLOCK (kernels before 5.11 charge maps and programs
//! to it) and RLIMIT_NOFILE (one fd per program, link and perf event; wildcard probes open
//! thousands).

/// What a raise did.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct RlimitChange {
    /// Soft limit before (`None` = unlimited).
    pub before: Option<u64>,
    /// Soft limit after.
    pub after: Option<u64>,
}

/// A limit that could not be raised.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("cannot raise {resource} from {} to {}: {reason}", fmt_limit(.current), fmt_limit(.wanted))]
pub struct RlimitError {
    pub resource: &'static str,
    pub current: Option<u64>,
    pub wanted: Option<u64>,
    pub reason: String,
}

fn fmt_limit(l: &Option<u64>) -> String {
    l.map_or_else(|| "unlimited".to_string(), |v| v.to_string())
}

fn get(res: libc::__rlimit_resource_t) -> libc::rlimit {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: valid out-pointer.
    unsafe { libc::getrlimit(res, &mut r) };
    r
}

fn lim(v: libc::rlim_t) -> Option<u64> {
    (v != libc::RLIM_INFINITY).then_some(v)
}

/// Raises RLIMIT_MEMLOCK (soft and hard) to unlimited. Needs CAP_SYS_RESOURCE unless the hard
/// limit is already unlimited; the error says so.
pub fn raise_memlock_rlimit() -> Result<RlimitChange, RlimitError> {
    let old = get(libc::RLIMIT_MEMLOCK);
    if old.rlim_cur == libc::RLIM_INFINITY && old.rlim_max == libc::RLIM_INFINITY {
        return Ok(RlimitChange {
            before: None,
            after: None,
        });
    }
    let new = libc::rlimit {
        rlim_cur: libc::RLIM_INFINITY,
        rlim_max: libc::RLIM_INFINITY,
    };
    // SAFETY: valid in-pointer.
    if unsafe { libc::setrlimit(libc::RLIMIT_MEMLOCK, &new) } != 0 {
        let e = std::io::Error::last_os_error();
        return Err(RlimitError {
            resource: "RLIMIT_MEMLOCK",
            current: lim(old.rlim_cur),
            wanted: None,
            reason: format!(
                "{e}; without CAP_SYS_RESOURCE, kernels before 5.11 may refuse BPF maps and programs beyond {} bytes",
                fmt_limit(&lim(old.rlim_cur))
            ),
        });
    }
    Ok(RlimitChange {
        before: lim(old.rlim_cur),
        after: None,
    })
}

/// Raises the soft RLIMIT_NOFILE to the hard limit (always permitted).
pub fn raise_nofile_rlimit() -> Result<RlimitChange, RlimitError> {
    let old = get(libc::RLIMIT_NOFILE);
    if old.rlim_cur == old.rlim_max {
        return Ok(RlimitChange {
            before: lim(old.rlim_cur),
            after: lim(old.rlim_cur),
        });
    }
    let new = libc::rlimit {
        rlim_cur: old.rlim_max,
        rlim_max: old.rlim_max,
    };
    // SAFETY: valid in-pointer.
    if unsafe { libc::setrlimit(libc::RLIMIT_NOFILE, &new) } != 0 {
        return Err(RlimitError {
            resource: "RLIMIT_NOFILE",
            current: lim(old.rlim_cur),
            wanted: lim(old.rlim_max),
            reason: std::io::Error::last_os_error().to_string(),
        });
    }
    Ok(RlimitChange {
        before: lim(old.rlim_cur),
        after: lim(old.rlim_max),
    })
}
