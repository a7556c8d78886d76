//! Resource limits checked before a mass attach: RLIMIT_MEMLOCK (kernels before 5.11 charge
//! BPF memory to it: on 5.10 an unraised limit let only 16 of 70 `vfs_*` clones load),
//! RLIMIT_NOFILE (each clone costs two fds, each perf event one more), and a warning — never a
//! cap — above a configurable number of targets.

use crate::sys::{env, raise_memlock_rlimit, raise_nofile_rlimit};

/// Above this many targets strobe warns (bpftrace refuses above 512 by default).
pub const DEFAULT_WARN_ABOVE: usize = 2000;

/// What the checks found; `warnings` are for the user, in order.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LimitReport {
    pub warnings: Vec<String>,
}

/// Raises the limits for `targets` targets needing `fds_per_target` fds each; warns when
/// `targets > warn_above`.
pub fn prepare_limits(targets: usize, fds_per_target: usize, warn_above: usize) -> LimitReport {
    let mut r = LimitReport::default();
    if let Err(e) = raise_memlock_rlimit() {
        let (maj, min, _) = env::kernel_version();
        if (maj, min) < (5, 11) {
            r.warnings.push(format!(
                "{e}; kernel {maj}.{min} charges BPF programs and maps to RLIMIT_MEMLOCK, so \
                 some targets may be refused with EPERM"
            ));
        }
    }
    let needed = (targets * fds_per_target + 64) as u64;
    match raise_nofile_rlimit() {
        Ok(c) => {
            if let Some(lim) = c.after.filter(|&l| l < needed) {
                r.warnings.push(format!(
                    "RLIMIT_NOFILE is {lim} but {targets} targets need about {needed} file \
                     descriptors; raise the hard limit (ulimit -Hn) or narrow the pattern"
                ));
            }
        }
        Err(e) => r.warnings.push(format!(
            "{e}; {targets} targets need about {needed} file descriptors"
        )),
    }
    if targets > warn_above {
        r.warnings.push(format!(
            "attaching {targets} targets (more than {warn_above}): loading and detaching take a \
             while; narrow the pattern if that was not intended"
        ));
    }
    r
}
