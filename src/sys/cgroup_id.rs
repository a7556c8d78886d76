//! The id of a cgroup v2 directory, as `cgroupid("/sys/fs/cgroup/...")` resolves it at compile
//! time: the 8-byte file handle `name_to_handle_at(2)` returns for it (the kernel's cgroup id,
//! the directory's inode number), as bpftrace does. Other file systems' handles are longer and
//! fail with EOVERFLOW ("Value too large for defined data type"), as they do in bpftrace.

use std::ffi::CString;

/// `struct file_handle` with room for the 8 bytes a cgroup's handle holds.
#[repr(C)]
struct Handle {
    handle_bytes: u32,
    handle_type: i32,
    f_handle: [u8; 8],
}

/// The cgroup id of `path`, or the OS error that refused it.
pub fn cgroup_id(path: &str) -> std::io::Result<u64> {
    let c = CString::new(path).map_err(|_| std::io::Error::from_raw_os_error(libc::EINVAL))?;
    let mut h = Handle {
        handle_bytes: 8,
        handle_type: 0,
        f_handle: [0; 8],
    };
    let mut mount_id: libc::c_int = 0;
    // SAFETY: `c` is NUL-terminated; `h` has `handle_bytes` bytes of room after its header.
    let r = unsafe {
        libc::syscall(
            libc::SYS_name_to_handle_at,
            libc::AT_FDCWD,
            c.as_ptr(),
            &mut h as *mut Handle,
            &mut mount_id as *mut libc::c_int,
            0,
        )
    };
    if r != 0 {
        return Err(std::io::Error::last_os_error());
    }
    Ok(u64::from_ne_bytes(h.f_handle))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn missing_path_is_enoent() {
        let e = cgroup_id("/sys/fs/cgroup/no_such_strobe_cgroup").unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::ENOENT));
    }

    #[test]
    fn path_with_nul_is_einval() {
        let e = cgroup_id("a\0b").unwrap_err();
        assert_eq!(e.raw_os_error(), Some(libc::EINVAL));
    }
}
