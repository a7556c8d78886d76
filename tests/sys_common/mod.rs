//! Shared by the `sys_*` host-kernel tests: the run-time capability gate, small programs built
//! with the typed `Insn` builders, tracepoint ids and a one-entry counter map.
#![allow(dead_code)]

use std::os::fd::AsRawFd;

use strobe::asm::isa::{AluOp, AtomicOp, JmpOp, Size};
use strobe::asm::{Helper, Insn, Reg};
use strobe::kernel::tracefs::Tracefs;
use strobe::sys::env::has_capability;
use strobe::sys::Capability;

/// True when the test may use bpf(2) for tracing programs; otherwise records a loud skip.
pub fn can_bpf(test: &str) -> bool {
    let ok = (has_capability(Capability::Bpf) && has_capability(Capability::Perfmon))
        || has_capability(Capability::SysAdmin);
    if !ok {
        strobe_testkit::skip(test, "needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN)");
    }
    ok
}

/// `r = map` (ld_imm64 with BPF_PSEUDO_MAP_FD): two instructions.
pub fn ld_map_fd(dst: Reg, map: &impl AsRawFd) -> [Insn; 2] {
    Insn::ld_map_fd(dst, map.as_raw_fd())
}

/// Stores `ctx[0] + ctx[1]` at key 0 of `map` (u32 → u64) and returns 42.
pub fn store_sum_of_args(map: &impl AsRawFd) -> Vec<Insn> {
    let mut v = vec![
        Insn::mov64_reg(Reg::R6, Reg::R1),
        Insn::load(Size::Dw, Reg::R1, Reg::R6, 0),
        Insn::load(Size::Dw, Reg::R2, Reg::R6, 8),
        Insn::alu64_reg(AluOp::Add, Reg::R1, Reg::R2),
        Insn::store_reg(Size::Dw, Reg::R10, -16, Reg::R1),
        Insn::store_imm(Size::W, Reg::R10, -4, 0),
    ];
    v.extend(ld_map_fd(Reg::R1, map));
    v.extend([
        Insn::mov64_reg(Reg::R2, Reg::R10),
        Insn::alu64_imm(AluOp::Add, Reg::R2, -4),
        Insn::mov64_reg(Reg::R3, Reg::R10),
        Insn::alu64_imm(AluOp::Add, Reg::R3, -16),
        Insn::mov64_imm(Reg::R4, 0),
        Insn::call_helper(Helper::MapUpdateElem),
        Insn::mov64_imm(Reg::R0, 42),
        Insn::exit(),
    ]);
    v
}

/// A program that atomically increments the u64 at key 0 of `map` and returns 0.
pub fn count_into(map: &impl AsRawFd) -> Vec<Insn> {
    let mut v = vec![
        Insn::store_imm(Size::W, Reg::R10, -4, 0),
        Insn::mov64_reg(Reg::R2, Reg::R10),
        Insn::alu64_imm(AluOp::Add, Reg::R2, -4),
    ];
    v.extend(ld_map_fd(Reg::R1, map));
    v.extend([
        Insn::call_helper(Helper::MapLookupElem),
        Insn::jmp_imm(JmpOp::Jeq, Reg::R0, 0, 2),
        Insn::mov64_imm(Reg::R1, 1),
        Insn::atomic(Size::Dw, AtomicOp::Add, Reg::R0, 0, Reg::R1),
        Insn::mov64_imm(Reg::R0, 0),
        Insn::exit(),
    ]);
    v
}

/// [`count_into`], counting only events of thread `tid`: a tracepoint's program runs for every
/// task that hits the tracepoint, whatever task its perf event was opened for.
pub fn count_into_for_thread(map: &impl AsRawFd, tid: i32) -> Vec<Insn> {
    let mut v = vec![
        Insn::call_helper(Helper::GetCurrentPidTgid),
        // The low 32 bits are the thread id.
        Insn::jmp32_imm(JmpOp::Jeq, Reg::R0, tid, 2),
        Insn::mov64_imm(Reg::R0, 0),
        Insn::exit(),
    ];
    v.extend(count_into(map));
    v
}

/// The calling thread's id.
pub fn gettid() -> i32 {
    // SAFETY: gettid has no arguments or effects.
    unsafe { libc::syscall(libc::SYS_gettid) as i32 }
}

/// Polls `cond` every 5 ms for up to a second: the kernel releases BPF objects (and their
/// ids) from an RCU callback, after the last fd is closed.
pub fn eventually(mut cond: impl FnMut() -> bool) -> bool {
    for _ in 0..200 {
        if cond() {
            return true;
        }
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
    false
}

/// The tracefs id of tracepoint `cat:name`, mounting tracefs at /sys/kernel/tracing when it
/// is not mounted. `None` (after a loud skip) when it cannot be read.
pub fn tracepoint_id(test: &str, cat: &str, name: &str) -> Option<u64> {
    match Tracefs::open().and_then(|t| t.id(cat, name)) {
        Ok(id) => Some(u64::from(id)),
        Err(e) => {
            strobe_testkit::skip(test, &format!("cannot read the id of {cat}:{name}: {e}"));
            None
        }
    }
}

/// Reads the u64 counter at key 0.
pub fn counter(map: &strobe::sys::Map) -> u64 {
    let v = map.lookup_vec(&0u32.to_ne_bytes()).unwrap().unwrap();
    u64::from_ne_bytes(v[..8].try_into().unwrap())
}

/// A one-entry u32 → u64 array for counters.
pub fn counter_map() -> strobe::sys::Map {
    strobe::sys::Map::create(
        strobe::sys::MapType::Array,
        &strobe::sys::MapCreateOptions {
            name: "count",
            key_size: 4,
            value_size: 8,
            max_entries: 1,
            ..Default::default()
        },
    )
    .unwrap()
}
