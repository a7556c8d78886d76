//! BPF_OBJ_PIN and BPF_OBJ_GET: naming maps, programs and links in a bpffs directory so they
//! outlive the process (a pinned link stays attached until its pin is removed).
//!
//! Input: an fd and a path inside a mounted bpffs. Output: `()` or a new fd. Errors are the
//! kernel's (ENOENT for a missing directory, EEXIST for a taken name, EPERM outside bpffs).

use std::ffi::CString;
use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};
use std::path::Path;

use super::attr::ObjPinAttr;
use super::call::{bpf, bpf_fd, ptr, Cmd};
use super::error::{Errno, SysError};

fn c_path(path: &Path) -> Result<CString, SysError> {
    CString::new(path.as_os_str().as_encoded_bytes())
        .map_err(|_| SysError::bare("BPF_OBJ_PIN", Errno(libc::EINVAL)))
}

/// BPF_OBJ_PIN: `fd` becomes reachable at `path` (in bpffs).
pub fn pin(fd: BorrowedFd<'_>, path: &Path) -> Result<(), SysError> {
    let p = c_path(path)?;
    let mut a = ObjPinAttr {
        pathname: ptr(p.as_ptr()),
        bpf_fd: fd.as_raw_fd() as u32,
        file_flags: 0,
    };
    bpf(Cmd::ObjPin, &mut a).map_err(|e| SysError::bare(Cmd::ObjPin.name(), e))?;
    Ok(())
}

/// BPF_OBJ_GET: a new fd for the object pinned at `path`.
pub fn get_pinned(path: &Path) -> Result<OwnedFd, SysError> {
    let p = c_path(path)?;
    let mut a = ObjPinAttr {
        pathname: ptr(p.as_ptr()),
        ..Default::default()
    };
    bpf_fd(Cmd::ObjGet, &mut a).map_err(|e| SysError::bare(Cmd::ObjGet.name(), e))
}
