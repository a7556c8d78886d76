//! Assembled programs run in the host kernel (BPF_PROG_TEST_RUN on a socket filter): proves
//! the assembler's encodings mean to the kernel what their text says — v4 signed division,
//! sign extension, byte swaps, atomics, jmp32, gotol, bpf-to-bpf calls, helpers, legacy packet
//! loads and map fds. Skips (loudly) when the kernel refuses BPF.
//!
//! The raw bpf(2) calls live here rather than in src/sys so this test checks only the
//! assembler; the attr layouts are `union bpf_attr` from include/uapi/linux/bpf.h.

use strobe::asm::insn::insns_to_bytes;
use strobe::asm::{assemble_insns, Insn};

const BPF_MAP_CREATE: i64 = 0;
const BPF_PROG_LOAD: i64 = 5;
const BPF_PROG_TEST_RUN: i64 = 10;
const BPF_PROG_TYPE_SOCKET_FILTER: u32 = 1;
const BPF_MAP_TYPE_ARRAY: u32 = 2;

fn bpf(cmd: i64, attr: &mut [u8; 128]) -> Result<i32, std::io::Error> {
    // SAFETY: attr is a valid, writable 128-byte buffer, larger than every attr used here.
    let r = unsafe { libc::syscall(libc::SYS_bpf, cmd, attr.as_mut_ptr(), attr.len()) };
    if r < 0 {
        Err(std::io::Error::last_os_error())
    } else {
        Ok(r as i32)
    }
}

fn put32(a: &mut [u8; 128], off: usize, v: u32) {
    a[off..off + 4].copy_from_slice(&v.to_ne_bytes());
}

fn put64(a: &mut [u8; 128], off: usize, v: u64) {
    a[off..off + 8].copy_from_slice(&v.to_ne_bytes());
}

struct Fd(i32);

impl Drop for Fd {
    fn drop(&mut self) {
        // SAFETY: closing an fd this test owns.
        unsafe { libc::close(self.0) };
    }
}

/// Loads a socket filter; on failure returns the errno and the verifier log.
fn load(insns: &[Insn]) -> Result<Fd, String> {
    let bytes = insns_to_bytes(insns);
    let license = b"GPL\0";
    let mut log = vec![0u8; 1 << 16];
    let mut a = [0u8; 128];
    put32(&mut a, 0, BPF_PROG_TYPE_SOCKET_FILTER);
    put32(&mut a, 4, insns.len() as u32);
    put64(&mut a, 8, bytes.as_ptr() as u64);
    put64(&mut a, 16, license.as_ptr() as u64);
    put32(&mut a, 24, 1);
    put32(&mut a, 28, log.len() as u32);
    put64(&mut a, 32, log.as_mut_ptr() as u64);
    bpf(BPF_PROG_LOAD, &mut a).map(Fd).map_err(|e| {
        let end = log.iter().position(|&b| b == 0).unwrap_or(0);
        format!("{e}\n{}", String::from_utf8_lossy(&log[..end]))
    })
}

/// Runs a loaded program once over `data`; returns r0.
fn run(prog: &Fd, data: &[u8]) -> u32 {
    let mut a = [0u8; 128];
    put32(&mut a, 0, prog.0 as u32);
    put32(&mut a, 8, data.len() as u32);
    put64(&mut a, 16, data.as_ptr() as u64);
    put32(&mut a, 32, 1);
    bpf(BPF_PROG_TEST_RUN, &mut a).expect("BPF_PROG_TEST_RUN");
    u32::from_ne_bytes(a[4..8].try_into().unwrap())
}

fn array_map() -> Fd {
    let mut a = [0u8; 128];
    put32(&mut a, 0, BPF_MAP_TYPE_ARRAY);
    put32(&mut a, 4, 4);
    put32(&mut a, 8, 8);
    put32(&mut a, 12, 1);
    Fd(bpf(BPF_MAP_CREATE, &mut a).expect("BPF_MAP_CREATE"))
}

fn kernel_available(test: &str) -> bool {
    match load(&[Insn::mov64_imm(strobe::asm::Reg::R0, 0), Insn::exit()]) {
        Ok(_) => true,
        Err(e) => {
            strobe::testkit::skip(test, &format!("cannot load a socket filter: {e}"));
            false
        }
    }
}

fn packet() -> Vec<u8> {
    (0u8..64).collect()
}

fn check(cases: &[(&str, u32)]) {
    for (text, want) in cases {
        let insns = assemble_insns(text).unwrap_or_else(|e| panic!("{e}"));
        let prog = load(&insns).unwrap_or_else(|e| panic!("kernel rejected:\n{text}\n{e}"));
        assert_eq!(run(&prog, &packet()), *want, "{text}");
    }
}

#[test]
fn alu_and_v4_forms_compute_what_they_say() {
    if !kernel_available("alu_and_v4_forms_compute_what_they_say") {
        return;
    }
    check(&[
        ("r0 = 7\nr0 *= 6\nexit", 42),
        ("r0 = -7\nr0 s/= 2\nr0 += 10\nexit", 7),
        ("r0 = -7\nr1 = 3\nr0 s%= r1\nr0 += 10\nexit", 9),
        ("r0 = -7\nr0 /= 2\nr0 >>= 60\nexit", 7),
        ("r1 = 0xff\nr0 = (s8)r1\nr0 += 2\nexit", 1),
        ("w1 = 0x8000\nw0 = (s16)w1\nw0 >>= 16\nexit", 0xffff),
        ("r0 = 0x1234\nr0 = bswap16 r0\nexit", 0x3412),
        ("r0 = 0x1234\nr0 = be16 r0\nexit", 0x3412),
        ("r0 = 0x11223344\nr0 = le16 r0\nexit", 0x3344),
        ("r0 = -1\nw0 += 0\nr0 >>= 32\nexit", 0),
        ("r0 = 5\nr0 = -r0\nr0 += 6\nexit", 1),
        ("r0 = -16\nr0 s>>= 2\nr0 += 5\nexit", 1),
        ("r0 = 0x100000002 ll\nr0 >>= 31\nexit", 2),
    ]);
}

#[test]
fn jumps_calls_and_helpers_go_where_they_say() {
    if !kernel_available("jumps_calls_and_helpers_go_where_they_say") {
        return;
    }
    check(&[
        (
            "r0 = 0\nr1 = 10\nloop:\nr0 += r1\nr1 -= 1\nif r1 > 0 goto loop\nexit",
            55,
        ),
        (
            "r0 = 1\nif r0 != 1 goto +1\ngotol skip\nr0 = 5\nexit\nskip:\nr0 = 2\nexit",
            2,
        ),
        (
            "r1 = 0x100000001 ll\nr0 = 0\nif w1 == 1 goto +1\nexit\nr0 = 1\nexit",
            1,
        ),
        (
            "r1 = -5\nr0 = 0\nif r1 s< -4 goto yes\nexit\nyes:\nr0 = 3\nexit",
            3,
        ),
        (
            "r1 = 20\ncall add1\nexit\nadd1:\nr0 = r1\nr0 += 1\nexit",
            21,
        ),
        (
            "call bpf_ktime_get_ns\nif r0 != 0 goto +2\nr0 = 0\nexit\nr0 = 1\nexit",
            1,
        ),
    ]);
}

#[test]
fn memory_atomics_and_packet_loads_touch_what_they_say() {
    if !kernel_available("memory_atomics_and_packet_loads_touch_what_they_say") {
        return;
    }
    check(&[
        (
            "r1 = -2\n*(u8 *)(r10 - 1) = w1\nr0 = *(s8 *)(r10 - 1)\nr0 += 5\nexit",
            3,
        ),
        (
            "*(u32 *)(r10 - 4) = 0x01020304\nr0 = *(u8 *)(r10 - 4)\nexit",
            4,
        ),
        (
            "*(u64 *)(r10 - 8) = 5\nr2 = 3\nlock *(u64 *)(r10 - 8) += r2\nr2 = 10\n\
             r2 = atomic_fetch_add((u64 *)(r10 - 8), r2)\nr0 = *(u64 *)(r10 - 8)\nr0 += r2\nexit",
            26,
        ),
        (
            "*(u64 *)(r10 - 8) = 8\nr0 = 8\nr2 = 40\nr0 = cmpxchg_64(r10 - 8, r0, r2)\n\
             r1 = *(u64 *)(r10 - 8)\nr0 += r1\nexit",
            48,
        ),
        (
            "*(u32 *)(r10 - 4) = 6\nw2 = 1\nw2 = xchg32_32(r10 - 4, w2)\nr0 = *(u32 *)(r10 - 4)\n\
             r0 += r2\nexit",
            7,
        ),
        // The kernel pulls the 14-byte Ethernet header before the program runs.
        ("r6 = r1\nr0 = *(u8 *)skb[12]\nexit", 26),
        ("r6 = r1\nr2 = 2\nr0 = *(u16 *)skb[r2 + 10]\nexit", 0x1a1b),
    ]);
}

#[test]
fn map_fd_loads_reach_the_map() {
    if !kernel_available("map_fd_loads_reach_the_map") {
        return;
    }
    let map = array_map();
    let text = format!(
        "*(u32 *)(r10 - 4) = 0\nr1 = map_fd({}) ll\nr2 = r10\nr2 += -4\ncall bpf_map_lookup_elem\n\
         if r0 == 0 goto miss\nr1 = 5\nlock *(u64 *)(r0 + 0) += r1\nr0 = *(u64 *)(r0 + 0)\nexit\n\
         miss:\nr0 = 99\nexit",
        map.0
    );
    let insns = assemble_insns(&text).unwrap();
    let prog = load(&insns).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(run(&prog, &packet()), 5);
    assert_eq!(run(&prog, &packet()), 10);
}
