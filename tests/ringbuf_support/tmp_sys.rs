//! TEMPORARY minimal bpf(2) calls for these tests until branch `sys` is merged; then deleted.
#![allow(dead_code)]

use std::io;
use std::os::fd::{FromRawFd, OwnedFd, RawFd};

use strobe::asm::Insn;

fn bpf(cmd: i64, attr: &mut [u64; 16]) -> io::Result<i64> {
    // SAFETY: attr is a zeroed 128-byte bpf_attr the kernel reads and writes within.
    let r = unsafe { libc::syscall(libc::SYS_bpf, cmd, attr.as_mut_ptr(), 128usize) };
    if r < 0 {
        Err(io::Error::last_os_error())
    } else {
        Ok(r)
    }
}

fn set32(a: &mut [u64; 16], off: usize, v: u32) {
    let b = a.as_mut_ptr().cast::<u8>();
    // SAFETY: off + 4 <= 128
    unsafe { b.add(off).cast::<u32>().write_unaligned(v) }
}
fn get32(a: &[u64; 16], off: usize) -> u32 {
    let b = a.as_ptr().cast::<u8>();
    // SAFETY: off + 4 <= 128
    unsafe { b.add(off).cast::<u32>().read_unaligned() }
}
fn set64(a: &mut [u64; 16], off: usize, v: u64) {
    a[off / 8] = v;
}

pub fn map_create(map_type: u32, key: u32, value: u32, max: u32) -> io::Result<OwnedFd> {
    let mut a = [0u64; 16];
    set32(&mut a, 0, map_type);
    set32(&mut a, 4, key);
    set32(&mut a, 8, value);
    set32(&mut a, 12, max);
    let fd = bpf(0, &mut a)?;
    // SAFETY: fresh fd
    Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) })
}

pub fn map_update(fd: RawFd, key: &[u8], value: &[u8]) -> io::Result<()> {
    let mut a = [0u64; 16];
    set32(&mut a, 0, fd as u32);
    set64(&mut a, 8, key.as_ptr() as u64);
    set64(&mut a, 16, value.as_ptr() as u64);
    bpf(2, &mut a).map(|_| ())
}

pub fn map_lookup(fd: RawFd, key: &[u8], value: &mut [u8]) -> io::Result<()> {
    let mut a = [0u64; 16];
    set32(&mut a, 0, fd as u32);
    set64(&mut a, 8, key.as_ptr() as u64);
    set64(&mut a, 16, value.as_mut_ptr() as u64);
    bpf(1, &mut a).map(|_| ())
}

pub fn prog_load(prog_type: u32, insns: &[Insn]) -> Result<OwnedFd, String> {
    let mut log = vec![0u8; 1 << 20];
    let lic = b"GPL\0";
    let mut a = [0u64; 16];
    set32(&mut a, 0, prog_type);
    set32(&mut a, 4, insns.len() as u32);
    set64(&mut a, 8, insns.as_ptr() as u64);
    set64(&mut a, 16, lic.as_ptr() as u64);
    let mut b = a;
    if let Ok(fd) = bpf(5, &mut b) {
        // SAFETY: fresh fd
        return Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) });
    }
    set32(&mut a, 24, 1);
    set32(&mut a, 28, log.len() as u32);
    set64(&mut a, 32, log.as_mut_ptr() as u64);
    match bpf(5, &mut a) {
        // SAFETY: fresh fd
        Ok(fd) => Ok(unsafe { OwnedFd::from_raw_fd(fd as RawFd) }),
        Err(e) => {
            let end = log.iter().position(|&b| b == 0).unwrap_or(0);
            {
                let s = String::from_utf8_lossy(&log[..end]);
                Err(format!("{e}: {}", &s[s.len().saturating_sub(3000)..]))
            }
        }
    }
}

pub fn test_run_raw_tp(fd: RawFd, args: &[u64]) -> io::Result<u32> {
    let mut a = [0u64; 16];
    set32(&mut a, 0, fd as u32);
    set32(&mut a, 40, (args.len() * 8) as u32);
    set64(&mut a, 48, args.as_ptr() as u64);
    bpf(10, &mut a)?;
    Ok(get32(&a, 4))
}

pub fn perf_event_open_bpf_output(cpu: i32) -> io::Result<OwnedFd> {
    let mut a = [0u64; 17]; // 136 bytes
    let b = a.as_mut_ptr().cast::<u8>();
    // SAFETY: writes within the 136-byte attr
    unsafe {
        b.cast::<u32>().write(1); // PERF_TYPE_SOFTWARE
        b.add(4).cast::<u32>().write(136);
        b.add(8).cast::<u64>().write(10); // PERF_COUNT_SW_BPF_OUTPUT
        b.add(16).cast::<u64>().write(1); // sample_period
        b.add(24).cast::<u64>().write(1 << 10); // PERF_SAMPLE_RAW
        b.add(48).cast::<u32>().write(1); // wakeup_events
    }
    // SAFETY: attr is valid
    let r = unsafe {
        libc::syscall(
            libc::SYS_perf_event_open,
            a.as_ptr(),
            -1,
            cpu,
            -1,
            8, /* CLOEXEC */
        )
    };
    if r < 0 {
        return Err(io::Error::last_os_error());
    }
    // SAFETY: fresh fd
    Ok(unsafe { OwnedFd::from_raw_fd(r as RawFd) })
}
