//! Shared by the `sys_*` host-kernel tests: the run-time capability gate and hand-built
//! instructions (until the assembler lands, programs are spelled as raw `Insn`s).
#![allow(dead_code)]

use std::os::fd::AsRawFd;

use strobe::asm::Insn;
use strobe::sys::env::has_capability;
use strobe::sys::Capability;

/// True when the test may use bpf(2) for tracing programs; otherwise records a loud skip.
pub fn can_bpf(test: &str) -> bool {
    let ok = (has_capability(Capability::Bpf) && has_capability(Capability::Perfmon))
        || has_capability(Capability::SysAdmin);
    if !ok {
        strobe::testkit::skip(test, "needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN)");
    }
    ok
}

pub const R0: u8 = 0;
pub const R1: u8 = 1;
pub const R2: u8 = 2;
pub const R3: u8 = 3;
pub const R4: u8 = 4;
pub const R6: u8 = 6;
pub const R10: u8 = 10;

pub fn mov64_imm(dst: u8, imm: i32) -> Insn {
    Insn::new(0xb7, dst, 0, 0, imm)
}
pub fn mov64_reg(dst: u8, src: u8) -> Insn {
    Insn::new(0xbf, dst, src, 0, 0)
}
pub fn add64_imm(dst: u8, imm: i32) -> Insn {
    Insn::new(0x07, dst, 0, 0, imm)
}
pub fn add64_reg(dst: u8, src: u8) -> Insn {
    Insn::new(0x0f, dst, src, 0, 0)
}
pub fn ldx_dw(dst: u8, src: u8, off: i16) -> Insn {
    Insn::new(0x79, dst, src, off, 0)
}
pub fn stx_dw(dst: u8, src: u8, off: i16) -> Insn {
    Insn::new(0x7b, dst, src, off, 0)
}
pub fn st_w(dst: u8, off: i16, imm: i32) -> Insn {
    Insn::new(0x62, dst, 0, off, imm)
}
pub fn call(helper: i32) -> Insn {
    Insn::new(0x85, 0, 0, 0, helper)
}
pub fn exit() -> Insn {
    Insn::new(0x95, 0, 0, 0, 0)
}
/// `r = map` (ld_imm64 with BPF_PSEUDO_MAP_FD): two instructions.
pub fn ld_map_fd(dst: u8, map: &impl AsRawFd) -> [Insn; 2] {
    [
        Insn::new(0x18, dst, 1, 0, map.as_raw_fd()),
        Insn::new(0, 0, 0, 0, 0),
    ]
}

pub const HELPER_MAP_UPDATE_ELEM: i32 = 2;
pub const HELPER_MAP_LOOKUP_ELEM: i32 = 1;

/// A program that adds `*(u64 *)value` of key 0 in `map` by `args[0] + args[1]`... simpler:
/// stores `ctx[0] + ctx[1]` at key 0 of `map` (u32 → u64) and returns 42.
pub fn store_sum_of_args(map: &impl AsRawFd) -> Vec<Insn> {
    let mut v = vec![
        mov64_reg(R6, R1),
        ldx_dw(R1, R6, 0),
        ldx_dw(R2, R6, 8),
        add64_reg(R1, R2),
        stx_dw(R10, R1, -16),
        st_w(R10, -4, 0),
    ];
    v.extend(ld_map_fd(R1, map));
    v.extend([
        mov64_reg(R2, R10),
        add64_imm(R2, -4),
        mov64_reg(R3, R10),
        add64_imm(R3, -16),
        mov64_imm(R4, 0),
        call(HELPER_MAP_UPDATE_ELEM),
        mov64_imm(R0, 42),
        exit(),
    ]);
    v
}

pub const HELPER_MAP_LOOKUP: i32 = 1;

/// A program that atomically increments the u64 at key 0 of `map` and returns 0.
pub fn count_into(map: &impl AsRawFd) -> Vec<Insn> {
    let mut v = vec![st_w(R10, -4, 0), mov64_reg(R2, R10), add64_imm(R2, -4)];
    v.extend(ld_map_fd(R1, map));
    v.extend([
        call(HELPER_MAP_LOOKUP),
        // if r0 == 0 goto +2
        Insn::new(0x15, R0, 0, 2, 0),
        mov64_imm(R1, 1),
        // lock *(u64 *)(r0 + 0) += r1
        Insn::new(0xdb, R0, R1, 0, 0),
        mov64_imm(R0, 0),
        exit(),
    ]);
    v
}

/// The tracefs id of tracepoint `cat:name`, mounting tracefs at /sys/kernel/tracing when it
/// is not mounted. `None` (after a loud skip) when it cannot be read.
pub fn tracepoint_id(test: &str, cat: &str, name: &str) -> Option<u64> {
    let base = std::path::Path::new("/sys/kernel/tracing");
    let id_path = base.join("events").join(cat).join(name).join("id");
    if !id_path.exists() && base.is_dir() {
        // SAFETY: constant C strings.
        unsafe {
            libc::mount(
                c"tracefs".as_ptr(),
                c"/sys/kernel/tracing".as_ptr(),
                c"tracefs".as_ptr(),
                0,
                std::ptr::null(),
            )
        };
    }
    match std::fs::read_to_string(&id_path) {
        Ok(s) => s.trim().parse().ok(),
        Err(e) => {
            strobe::testkit::skip(test, &format!("cannot read {}: {e}", id_path.display()));
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
