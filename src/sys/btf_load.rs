//! BPF_BTF_LOAD: hands a BTF blob to the kernel (for map key/value types, func/line info and
//! program BTF). On failure the load is retried with a log so the error says what the kernel
//! disliked.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};

use super::attr::{str_until_nul, BtfLoadAttr};
use super::call::{bpf_fd, ptr, Cmd};
use super::error::{Errno, SysError};

/// A refused BTF load with the kernel's BTF log.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
#[error("{sys}{}", if .log.trim().is_empty() { String::new() } else { format!(": {}", .log.trim().lines().last().unwrap_or_default()) })]
pub struct BtfLoadError {
    pub sys: SysError,
    pub log: String,
}

/// A BTF object loaded into the kernel, owned; closed on drop.
#[derive(Debug)]
pub struct BtfObj {
    fd: OwnedFd,
}

impl BtfObj {
    /// BPF_BTF_LOAD of `data` (header, types, strings).
    pub fn load(data: &[u8]) -> Result<BtfObj, BtfLoadError> {
        let errno = match load_once(data, &mut []) {
            Ok(fd) => return Ok(BtfObj { fd }),
            Err(e) => e,
        };
        let mut log = vec![0u8; 1 << 20];
        let _ = load_once(data, &mut log);
        Err(BtfLoadError {
            sys: SysError::bare(Cmd::BtfLoad.name(), errno),
            log: str_until_nul(&log),
        })
    }

    /// Wraps a BTF fd obtained elsewhere (e.g. BPF_BTF_GET_FD_BY_ID for a module's BTF).
    pub fn from_fd(fd: OwnedFd) -> BtfObj {
        BtfObj { fd }
    }
}

fn load_once(data: &[u8], log: &mut [u8]) -> Result<OwnedFd, Errno> {
    let mut a = BtfLoadAttr {
        btf: ptr(data.as_ptr()),
        btf_size: data.len() as u32,
        ..Default::default()
    };
    if !log.is_empty() {
        a.btf_log_buf = ptr(log.as_mut_ptr());
        a.btf_log_size = log.len() as u32;
        a.btf_log_level = 1;
    }
    bpf_fd(Cmd::BtfLoad, &mut a)
}

impl AsFd for BtfObj {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl AsRawFd for BtfObj {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}
