//! Assembled programs run in the host kernel (BPF_PROG_TEST_RUN on a socket filter): proves
//! the assembler's encodings mean to the kernel what their text says — v4 signed division,
//! sign extension, byte swaps, atomics, jmp32, gotol, bpf-to-bpf calls, helpers, legacy packet
//! loads and map fds. Skips (loudly) when the kernel refuses BPF.
//!
//! Loading and running go through `strobe::sys`, the one place that fills `bpf_attr`.

use std::os::fd::AsRawFd;

use strobe::asm::{assemble_insns, Insn, Reg};
use strobe::sys::{
    Map, MapCreateOptions, MapType, Prog, ProgLoadOptions, ProgType, TestRunOptions,
};

/// Loads a socket filter; on failure returns the errno and the verifier log.
fn load(insns: &[Insn]) -> Result<Prog, String> {
    Prog::load(&ProgLoadOptions::new(ProgType::SocketFilter, insns))
        .map_err(|e| format!("{e}\n{}", e.log))
}

/// Runs a loaded program once over `data`; returns r0.
fn run(prog: &Prog, data: &[u8]) -> u32 {
    let mut opts = TestRunOptions {
        data_in: data,
        repeat: 1,
        ..Default::default()
    };
    prog.test_run(&mut opts).expect("BPF_PROG_TEST_RUN").retval
}

/// A one-entry u32 → u64 array.
fn array_map() -> Map {
    let opts = MapCreateOptions {
        key_size: 4,
        value_size: 8,
        max_entries: 1,
        ..Default::default()
    };
    Map::create(MapType::Array, &opts).expect("BPF_MAP_CREATE")
}

fn kernel_available(test: &str) -> bool {
    match load(&[Insn::mov64_imm(Reg::R0, 0), Insn::exit()]) {
        Ok(_) => true,
        Err(e) => {
            strobe_testkit::skip(test, &format!("cannot load a socket filter: {e}"));
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
        map.as_raw_fd()
    );
    let insns = assemble_insns(&text).unwrap();
    let prog = load(&insns).unwrap_or_else(|e| panic!("{e}"));
    assert_eq!(run(&prog, &packet()), 5);
    assert_eq!(run(&prog, &packet()), 10);
}
