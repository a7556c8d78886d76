//! The one entry into bpf(2). Every command goes through [`bpf`], which unit tests can replace
//! per thread (`with_hook`) to check what the layer puts in `bpf_attr` without a kernel.

use super::attr::{as_bytes_mut, Pod};
use super::error::Errno;
use std::os::fd::{FromRawFd, OwnedFd};

/// The bpf(2) commands strobe issues (`enum bpf_cmd`).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
#[repr(u32)]
pub enum Cmd {
    #[doc(alias = "BPF_MAP_CREATE")]
    MapCreate = 0,
    #[doc(alias = "BPF_MAP_LOOKUP_ELEM")]
    MapLookupElem = 1,
    #[doc(alias = "BPF_MAP_UPDATE_ELEM")]
    MapUpdateElem = 2,
    #[doc(alias = "BPF_MAP_DELETE_ELEM")]
    MapDeleteElem = 3,
    #[doc(alias = "BPF_MAP_GET_NEXT_KEY")]
    MapGetNextKey = 4,
    #[doc(alias = "BPF_PROG_LOAD")]
    ProgLoad = 5,
    #[doc(alias = "BPF_OBJ_PIN")]
    ObjPin = 6,
    #[doc(alias = "BPF_OBJ_GET")]
    ObjGet = 7,
    #[doc(alias = "BPF_PROG_TEST_RUN")]
    ProgTestRun = 10,
    #[doc(alias = "BPF_PROG_GET_NEXT_ID")]
    ProgGetNextId = 11,
    #[doc(alias = "BPF_MAP_GET_NEXT_ID")]
    MapGetNextId = 12,
    #[doc(alias = "BPF_PROG_GET_FD_BY_ID")]
    ProgGetFdById = 13,
    #[doc(alias = "BPF_MAP_GET_FD_BY_ID")]
    MapGetFdById = 14,
    #[doc(alias = "BPF_OBJ_GET_INFO_BY_FD")]
    ObjGetInfoByFd = 15,
    #[doc(alias = "BPF_RAW_TRACEPOINT_OPEN")]
    RawTracepointOpen = 17,
    #[doc(alias = "BPF_BTF_LOAD")]
    BtfLoad = 18,
    #[doc(alias = "BPF_BTF_GET_FD_BY_ID")]
    BtfGetFdById = 19,
    #[doc(alias = "BPF_MAP_FREEZE")]
    MapFreeze = 22,
    #[doc(alias = "BPF_BTF_GET_NEXT_ID")]
    BtfGetNextId = 23,
    #[doc(alias = "BPF_MAP_LOOKUP_BATCH")]
    MapLookupBatch = 24,
    #[doc(alias = "BPF_MAP_LOOKUP_AND_DELETE_BATCH")]
    MapLookupAndDeleteBatch = 25,
    #[doc(alias = "BPF_LINK_CREATE")]
    LinkCreate = 28,
    #[doc(alias = "BPF_LINK_GET_FD_BY_ID")]
    LinkGetFdById = 30,
    #[doc(alias = "BPF_LINK_GET_NEXT_ID")]
    LinkGetNextId = 31,
    #[doc(alias = "BPF_ITER_CREATE")]
    IterCreate = 33,
}

impl Cmd {
    /// The kernel's name for the command, used in error messages.
    pub fn name(self) -> &'static str {
        match self {
            Cmd::MapCreate => "BPF_MAP_CREATE",
            Cmd::MapLookupElem => "BPF_MAP_LOOKUP_ELEM",
            Cmd::MapUpdateElem => "BPF_MAP_UPDATE_ELEM",
            Cmd::MapDeleteElem => "BPF_MAP_DELETE_ELEM",
            Cmd::MapGetNextKey => "BPF_MAP_GET_NEXT_KEY",
            Cmd::ProgLoad => "BPF_PROG_LOAD",
            Cmd::ObjPin => "BPF_OBJ_PIN",
            Cmd::ObjGet => "BPF_OBJ_GET",
            Cmd::ProgTestRun => "BPF_PROG_TEST_RUN",
            Cmd::ProgGetNextId => "BPF_PROG_GET_NEXT_ID",
            Cmd::MapGetNextId => "BPF_MAP_GET_NEXT_ID",
            Cmd::ProgGetFdById => "BPF_PROG_GET_FD_BY_ID",
            Cmd::MapGetFdById => "BPF_MAP_GET_FD_BY_ID",
            Cmd::ObjGetInfoByFd => "BPF_OBJ_GET_INFO_BY_FD",
            Cmd::RawTracepointOpen => "BPF_RAW_TRACEPOINT_OPEN",
            Cmd::BtfLoad => "BPF_BTF_LOAD",
            Cmd::BtfGetFdById => "BPF_BTF_GET_FD_BY_ID",
            Cmd::MapFreeze => "BPF_MAP_FREEZE",
            Cmd::BtfGetNextId => "BPF_BTF_GET_NEXT_ID",
            Cmd::MapLookupBatch => "BPF_MAP_LOOKUP_BATCH",
            Cmd::MapLookupAndDeleteBatch => "BPF_MAP_LOOKUP_AND_DELETE_BATCH",
            Cmd::LinkCreate => "BPF_LINK_CREATE",
            Cmd::LinkGetFdById => "BPF_LINK_GET_FD_BY_ID",
            Cmd::LinkGetNextId => "BPF_LINK_GET_NEXT_ID",
            Cmd::IterCreate => "BPF_ITER_CREATE",
        }
    }
}

#[cfg(test)]
type Hook = Box<dyn FnMut(Cmd, &mut [u8]) -> Result<i64, Errno>>;

#[cfg(test)]
thread_local! {
    static HOOK: std::cell::RefCell<Option<Hook>> = const { std::cell::RefCell::new(None) };
}

/// Runs `f` with bpf(2) replaced by `hook` on this thread (unit tests only).
#[cfg(test)]
pub(crate) fn with_hook<R>(
    hook: impl FnMut(Cmd, &mut [u8]) -> Result<i64, Errno> + 'static,
    f: impl FnOnce() -> R,
) -> R {
    HOOK.with(|h| *h.borrow_mut() = Some(Box::new(hook)));
    let r = f();
    HOOK.with(|h| *h.borrow_mut() = None);
    r
}

/// Issues bpf(`cmd`, `attr`, sizeof(attr)). Retries on EINTR; the caller owns any other retry
/// policy.
pub fn bpf<A: Pod>(cmd: Cmd, attr: &mut A) -> Result<i64, Errno> {
    #[cfg(test)]
    {
        let hooked = HOOK.with(|h| {
            h.borrow_mut()
                .as_mut()
                .map(|hook| hook(cmd, as_bytes_mut(attr)))
        });
        if let Some(r) = hooked {
            return r;
        }
    }
    let bytes = as_bytes_mut(attr);
    loop {
        // SAFETY: `bytes` is a live, correctly sized POD attr; pointers inside it were set by
        // the caller from buffers that outlive this call.
        let r = unsafe {
            libc::syscall(
                libc::SYS_bpf,
                cmd as u32 as libc::c_long,
                bytes.as_mut_ptr(),
                bytes.len() as libc::c_uint,
            )
        };
        if r >= 0 {
            return Ok(r as i64);
        }
        let e = Errno::last();
        if e != Errno::EINTR {
            return Err(e);
        }
    }
}

/// A bpf(2) command that returns a new file descriptor.
pub fn bpf_fd<A: Pod>(cmd: Cmd, attr: &mut A) -> Result<OwnedFd, Errno> {
    let fd = bpf(cmd, attr)?;
    // SAFETY: the kernel returned a fresh descriptor that nothing else owns.
    Ok(unsafe { OwnedFd::from_raw_fd(fd as i32) })
}

/// A user pointer as the kernel's `__aligned_u64`.
pub fn ptr<T>(p: *const T) -> u64 {
    p as usize as u64
}
