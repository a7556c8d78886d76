//! Errors of the syscall layer. A failed call is a [`SysError`]: which call, the errno with its
//! name and meaning, and — when one can be established — the [`Cause`] (missing capability,
//! lockdown, a kernel built without the feature, …). Never a bare errno.

use std::fmt;

/// An errno value from a failed syscall.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Errno(pub i32);

impl Errno {
    pub const EPERM: Errno = Errno(libc::EPERM);
    pub const ENOENT: Errno = Errno(libc::ENOENT);
    pub const E2BIG: Errno = Errno(libc::E2BIG);
    pub const EINVAL: Errno = Errno(libc::EINVAL);
    pub const EACCES: Errno = Errno(libc::EACCES);
    pub const ENOSPC: Errno = Errno(libc::ENOSPC);
    pub const EAGAIN: Errno = Errno(libc::EAGAIN);
    pub const EINTR: Errno = Errno(libc::EINTR);
    pub const EFAULT: Errno = Errno(libc::EFAULT);
    pub const EBADF: Errno = Errno(libc::EBADF);
    pub const ENOMEM: Errno = Errno(libc::ENOMEM);
    pub const EEXIST: Errno = Errno(libc::EEXIST);
    pub const ENODEV: Errno = Errno(libc::ENODEV);
    pub const ESRCH: Errno = Errno(libc::ESRCH);
    pub const EOPNOTSUPP: Errno = Errno(libc::EOPNOTSUPP);
    /// The kernel-internal ENOTSUPP (524) that some BPF paths leak to userspace.
    pub const ENOTSUPP: Errno = Errno(524);

    /// The errno of the last failed libc call on this thread.
    pub fn last() -> Errno {
        Errno(std::io::Error::last_os_error().raw_os_error().unwrap_or(0))
    }

    /// The symbolic name (`EPERM`), or `errno N` for ones strobe does not name.
    pub fn name(self) -> String {
        let n = match self.0 {
            libc::EPERM => "EPERM",
            libc::ENOENT => "ENOENT",
            libc::ESRCH => "ESRCH",
            libc::EINTR => "EINTR",
            libc::E2BIG => "E2BIG",
            libc::EBADF => "EBADF",
            libc::EAGAIN => "EAGAIN",
            libc::ENOMEM => "ENOMEM",
            libc::EACCES => "EACCES",
            libc::EFAULT => "EFAULT",
            libc::EBUSY => "EBUSY",
            libc::EEXIST => "EEXIST",
            libc::ENODEV => "ENODEV",
            libc::EINVAL => "EINVAL",
            libc::EMFILE => "EMFILE",
            libc::ENOSPC => "ENOSPC",
            libc::ERANGE => "ERANGE",
            libc::ENOSYS => "ENOSYS",
            libc::ELOOP => "ELOOP",
            libc::EOPNOTSUPP => "EOPNOTSUPP",
            524 => "ENOTSUPP",
            n => return format!("errno {n}"),
        };
        n.to_string()
    }

    /// What the errno means, as strerror(3) says it (ENOTSUPP is kernel-internal and has no
    /// libc text).
    pub fn meaning(self) -> String {
        if self.0 == 524 {
            return "operation not supported by this kernel or target".to_string();
        }
        let s = std::io::Error::from_raw_os_error(self.0).to_string();
        // std appends " (os error N)"; the name already identifies it.
        match s.rfind(" (os error") {
            Some(i) => s[..i].to_string(),
            None => s,
        }
    }
}

impl fmt::Display for Errno {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{} ({})", self.name(), self.meaning())
    }
}

/// A Linux capability strobe's kernel calls depend on.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Capability {
    #[doc(alias = "CAP_SYS_ADMIN")]
    SysAdmin,
    #[doc(alias = "CAP_PERFMON")]
    Perfmon,
    #[doc(alias = "CAP_BPF")]
    Bpf,
}

impl Capability {
    /// The bit number in the capability sets (`include/uapi/linux/capability.h`).
    pub fn bit(self) -> u32 {
        match self {
            Capability::SysAdmin => 21,
            Capability::Perfmon => 38,
            Capability::Bpf => 39,
        }
    }

    pub fn name(self) -> &'static str {
        match self {
            Capability::SysAdmin => "CAP_SYS_ADMIN",
            Capability::Perfmon => "CAP_PERFMON",
            Capability::Bpf => "CAP_BPF",
        }
    }
}

/// Why the kernel refused, when it can be established from the environment.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum Cause {
    #[error("missing capabilit{}: {} (run as root or grant them)", if .missing.len() == 1 { "y" } else { "ies" }, .missing.iter().map(|c| c.name()).collect::<Vec<_>>().join(", "))]
    MissingCapability { missing: Vec<Capability> },
    #[error("the kernel is in lockdown mode `{mode}`, which refuses {what}")]
    Lockdown { mode: String, what: &'static str },
    #[error("the kernel was built without {config}: {detail}")]
    KernelLacks {
        config: &'static str,
        detail: String,
    },
    #[error("unprivileged BPF is disabled (kernel.unprivileged_bpf_disabled = {setting}) and this process lacks CAP_BPF/CAP_SYS_ADMIN")]
    UnprivilegedBpfDisabled { setting: u32 },
    #[error("RLIMIT_MEMLOCK is {limit} bytes and this kernel ({kernel}) charges BPF memory to it; raise it (strobe does when permitted) or run as root")]
    MemlockRlimit { limit: u64, kernel: String },
    #[error("{0}")]
    Other(String),
}

/// A failed bpf(2), perf_event_open(2) or ioctl(2) call.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{call} failed: {errno}{}", match .cause { Some(c) => format!(": {c}"), None => String::new() })]
pub struct SysError {
    /// The call, as the kernel names it (`BPF_PROG_LOAD`, `perf_event_open`, …).
    pub call: &'static str,
    pub errno: Errno,
    pub cause: Option<Cause>,
}

impl SysError {
    /// An error with no established cause (the errno's meaning is still printed).
    pub fn bare(call: &'static str, errno: Errno) -> SysError {
        SysError {
            call,
            errno,
            cause: None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn errno_display_names_the_errno_and_its_meaning() {
        assert_eq!(Errno::EPERM.to_string(), "EPERM (Operation not permitted)");
        assert_eq!(Errno(9999).name(), "errno 9999");
    }

    #[test]
    fn sys_error_display_includes_the_cause() {
        let e = SysError {
            call: "BPF_PROG_LOAD",
            errno: Errno::EPERM,
            cause: Some(Cause::Lockdown {
                mode: "confidentiality".into(),
                what: "BPF tracing programs",
            }),
        };
        assert_eq!(
            e.to_string(),
            "BPF_PROG_LOAD failed: EPERM (Operation not permitted): the kernel is in lockdown \
             mode `confidentiality`, which refuses BPF tracing programs"
        );
        let m = Cause::MissingCapability {
            missing: vec![Capability::Bpf, Capability::Perfmon],
        };
        assert_eq!(
            m.to_string(),
            "missing capabilities: CAP_BPF, CAP_PERFMON (run as root or grant them)"
        );
    }
}
