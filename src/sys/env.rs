//! Facts about the running kernel and this process that explain refusals: effective
//! capabilities (capget), lockdown mode, `kernel.unprivileged_bpf_disabled`, RLIMIT_MEMLOCK,
//! kernel release, which PMUs exist. Reading them never fails: an unreadable fact is `None`.

use std::path::Path;

use super::error::Capability;

/// `/sys/kernel/security/lockdown` (security/lockdown/lockdown.c).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Lockdown {
    None,
    Integrity,
    Confidentiality,
}

impl Lockdown {
    pub fn name(self) -> &'static str {
        match self {
            Lockdown::None => "none",
            Lockdown::Integrity => "integrity",
            Lockdown::Confidentiality => "confidentiality",
        }
    }

    /// Parses the file's contents, e.g. `none integrity [confidentiality]`.
    pub fn parse(text: &str) -> Option<Lockdown> {
        let start = text.find('[')?;
        let end = start + text[start..].find(']')?;
        match &text[start + 1..end] {
            "none" => Some(Lockdown::None),
            "integrity" => Some(Lockdown::Integrity),
            "confidentiality" => Some(Lockdown::Confidentiality),
            _ => None,
        }
    }
}

const SECURITYFS: &str = "/sys/kernel/security";

/// mount(2) of the pseudo filesystem `fstype` (tracefs, securityfs, …, mounted from a source of
/// the same name) at `target`; needs CAP_SYS_ADMIN.
pub fn mount_pseudo_fs(fstype: &std::ffi::CStr, target: &Path) -> std::io::Result<()> {
    use std::os::unix::ffi::OsStrExt;
    let target = std::ffi::CString::new(target.as_os_str().as_bytes())
        .map_err(|_| std::io::Error::from(std::io::ErrorKind::InvalidInput))?;
    // SAFETY: all pointers are NUL-terminated strings that outlive the call; data is null.
    let rc = unsafe {
        libc::mount(
            fstype.as_ptr(),
            target.as_ptr(),
            fstype.as_ptr(),
            0,
            std::ptr::null(),
        )
    };
    if rc == 0 {
        Ok(())
    } else {
        Err(std::io::Error::last_os_error())
    }
}

/// Reads the lockdown mode, mounting securityfs at /sys/kernel/security first when it is not
/// mounted (needs CAP_SYS_ADMIN; without it the mode is unknown). `None` when the kernel has
/// no lockdown LSM or the file cannot be read.
pub fn lockdown() -> Option<Lockdown> {
    let file = Path::new(SECURITYFS).join("lockdown");
    if let Ok(t) = std::fs::read_to_string(&file) {
        return Lockdown::parse(&t);
    }
    if !Path::new(SECURITYFS).is_dir() {
        return None;
    }
    mount_pseudo_fs(c"securityfs", Path::new(SECURITYFS)).ok()?;
    std::fs::read_to_string(&file)
        .ok()
        .and_then(|t| Lockdown::parse(&t))
}

/// The effective capability set as a bit mask (bit N = capability N), via capget(2).
pub fn effective_caps() -> Option<u64> {
    #[repr(C)]
    struct Header {
        version: u32,
        pid: i32,
    }
    #[repr(C)]
    #[derive(Default, Clone, Copy)]
    struct Data {
        effective: u32,
        permitted: u32,
        inheritable: u32,
    }
    // _LINUX_CAPABILITY_VERSION_3: two 32-bit words per set.
    let mut h = Header {
        version: 0x2008_0522,
        pid: 0,
    };
    let mut d = [Data::default(); 2];
    // SAFETY: header and a two-element data array, as version 3 requires.
    let r = unsafe { libc::syscall(libc::SYS_capget, &mut h as *mut Header, d.as_mut_ptr()) };
    (r == 0).then(|| u64::from(d[0].effective) | (u64::from(d[1].effective) << 32))
}

/// Whether this process has `cap` in its effective set (false when capget fails).
pub fn has_capability(cap: Capability) -> bool {
    effective_caps().is_some_and(|c| c & (1u64 << cap.bit()) != 0)
}

/// `/proc/sys/kernel/unprivileged_bpf_disabled`: 0 allowed, 1 disabled until reboot, 2
/// disabled but an admin may re-enable.
pub fn unprivileged_bpf_disabled() -> Option<u32> {
    read_u64("/proc/sys/kernel/unprivileged_bpf_disabled").map(|v| v as u32)
}

/// `/proc/sys/net/core/bpf_jit_enable`: 0 off, 1 on, 2 on with debug output.
pub fn bpf_jit_enable() -> Option<u32> {
    read_u64("/proc/sys/net/core/bpf_jit_enable").map(|v| v as u32)
}

/// The soft RLIMIT_MEMLOCK in bytes; `None` means unlimited.
pub fn memlock_limit() -> Option<u64> {
    let mut r = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: `r` is a valid out-pointer.
    if unsafe { libc::getrlimit(libc::RLIMIT_MEMLOCK, &mut r) } != 0 {
        return None;
    }
    (r.rlim_cur != libc::RLIM_INFINITY).then_some(r.rlim_cur)
}

/// Kernel release from uname(2), e.g. `6.18.44-fc-v669`.
pub fn kernel_release() -> String {
    // SAFETY: utsname is plain data; uname fills it.
    let mut u: libc::utsname = unsafe { std::mem::zeroed() };
    if unsafe { libc::uname(&mut u) } != 0 {
        return String::from("unknown");
    }
    let bytes: Vec<u8> = u
        .release
        .iter()
        .take_while(|&&c| c != 0)
        .map(|&c| c as u8)
        .collect();
    String::from_utf8_lossy(&bytes).into_owned()
}

/// `(major, minor, patch)` parsed from a release string; missing parts are 0.
pub fn parse_version(release: &str) -> (u32, u32, u32) {
    let mut it = release
        .split(|c: char| !c.is_ascii_digit())
        .map(|p| p.parse::<u32>().unwrap_or(0));
    (
        it.next().unwrap_or(0),
        it.next().unwrap_or(0),
        it.next().unwrap_or(0),
    )
}

/// The running kernel's version.
pub fn kernel_version() -> (u32, u32, u32) {
    parse_version(&kernel_release())
}

/// Whether a PMU named `name` exists (`/sys/bus/event_source/devices/<name>`).
pub fn has_pmu(name: &str) -> bool {
    Path::new("/sys/bus/event_source/devices")
        .join(name)
        .exists()
}

fn read_u64(path: &str) -> Option<u64> {
    std::fs::read_to_string(path).ok()?.trim().parse().ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn lockdown_parses_the_bracketed_mode() {
        assert_eq!(
            Lockdown::parse("none integrity [confidentiality]\n"),
            Some(Lockdown::Confidentiality)
        );
        assert_eq!(
            Lockdown::parse("[none] integrity confidentiality"),
            Some(Lockdown::None)
        );
        assert_eq!(Lockdown::parse("garbage"), None);
    }

    #[test]
    fn version_parses_release_strings() {
        assert_eq!(parse_version("6.18.44-fc-v669"), (6, 18, 44));
        assert_eq!(parse_version("5.10.0"), (5, 10, 0));
        assert_eq!(parse_version("6.1"), (6, 1, 0));
    }
}
