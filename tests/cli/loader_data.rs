//! Global data of a clang-built object (tests/fixtures/clang_data.c) as `strobe load` links
//! it: `.rodata`, `.data`, `.bss` and `.rodata.str1.1` become array maps, the program's
//! `ld_imm64`s point into them, and running the program in the kernel (BPF_PROG_TEST_RUN)
//! must read the constants, bump the counters and write the results where userspace reads
//! them back. Then the same object through the `strobe load` CLI, printing and pinning them.

use crate::loader_common;

use std::os::fd::{AsFd, AsRawFd};
use std::process::Command;

use strobe::elf::{read_data_sections, read_object};
use strobe::loader::{create_data_maps, link_data, DataMap};
use strobe::sys::UpdateFlags;

const STROBE: &str = env!("CARGO_BIN_EXE_strobe");
const FIXTURE: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/fixtures/clang_data.o");
const MAGIC: u64 = 0x5354524f4245;

fn u64s(b: &[u8]) -> Vec<u64> {
    b.chunks_exact(8)
        .map(|c| u64::from_le_bytes(c.try_into().unwrap()))
        .collect()
}

fn value(m: &DataMap) -> Vec<u8> {
    m.map.lookup_vec(&0u32.to_ne_bytes()).unwrap().unwrap()
}

#[test]
fn fixture_has_the_four_data_sections_with_their_variables() {
    let data = read_data_sections(&std::fs::read(FIXTURE).unwrap()).unwrap();
    let names: Vec<(&str, usize, bool)> = data
        .iter()
        .map(|d| (d.name.as_str(), d.bytes.len(), d.readonly))
        .collect();
    assert_eq!(
        names,
        [
            (".rodata", 16, true),
            (".data", 24, false),
            (".bss", 17, false),
            (".rodata.str1.1", 8, true)
        ]
    );
    assert_eq!(u64s(&data[0].bytes), [1, MAGIC]);
    assert_eq!(u64s(&data[1].bytes), [7, 40, 5]);
    assert_eq!(data[3].bytes, b"ab\0wxyz\0");
    let bss: Vec<(&str, u64)> = data[2]
        .symbols
        .iter()
        .map(|(n, o)| (n.as_str(), *o))
        .collect();
    assert_eq!(bss, [("bss_first", 0), ("seen", 8), ("last", 16)]);
}

#[test]
fn globals_program_reads_rodata_bumps_data_and_writes_bss_in_the_kernel() {
    let test = "globals_program_reads_rodata_bumps_data_and_writes_bss_in_the_kernel";
    if !loader_common::can_bpf(test) {
        return;
    }
    let bytes = std::fs::read(FIXTURE).unwrap();
    let obj = read_object(&bytes).unwrap();
    let data = read_data_sections(&bytes).unwrap();
    let mut s = obj.sections[0].clone();
    link_data(&mut s, &data).unwrap();
    let maps = create_data_maps("clang_data", &data).unwrap();
    let names: Vec<String> = maps.iter().map(|m| m.section.clone()).collect();
    let fds: Vec<i32> = names
        .iter()
        .map(|n| {
            let m = maps.iter().find(|m| &m.section == n).unwrap();
            m.map.as_raw_fd()
        })
        .collect();
    let insns = loader_common::instantiate_raw_tp(&s, &names, &fds);
    loader_common::run_raw_tp_once(&insns);

    let by = |name: &str| maps.iter().find(|m| m.section == name).unwrap();
    // The counters at offsets 8 (a global by name) and 16 (a static: section symbol + 16).
    assert_eq!(u64s(&value(by(".data"))), [7, 41, 6]);
    let bss = value(by(".bss"));
    assert_eq!(&u64s(&bss)[..2], [1 + 7, MAGIC + 41]);
    // "ab"[41 & 1] + "wxyz"[41 & 3]: the second literal is `.rodata.str1.1 + 3`.
    assert_eq!(bss[16], b'b'.wrapping_add(b'x'));

    // Constants stay put: frozen, so not even userspace may write them any more.
    let ro = by(".rodata");
    assert_eq!(u64s(&value(ro)), [1, MAGIC]);
    assert!(ro
        .map
        .update(&0u32.to_ne_bytes(), &[0u8; 16], UpdateFlags::empty())
        .is_err());
    // Named like libbpf's maps.
    let info = strobe::sys::info::map_info(ro.map.as_fd()).unwrap();
    assert_eq!(info.name, "clang_da.rodata");
    assert_eq!(info.map_flags & (1 << 7), 1 << 7, "BPF_F_RDONLY_PROG");
}

/// The first u64 at byte `off` of the hex value printed under `@name:`.
fn printed_u64(stdout: &str, name: &str, off: usize) -> Option<u64> {
    let after = stdout.split(&format!("@{name}:\n")).nth(1)?;
    let hex = after.lines().next()?.trim().strip_prefix("0: ")?;
    let bytes: Vec<u8> = (0..hex.len() / 2)
        .map(|i| u8::from_str_radix(&hex[2 * i..2 * i + 2], 16).unwrap())
        .collect();
    Some(u64::from_le_bytes(
        bytes.get(off..off + 8)?.try_into().ok()?,
    ))
}

/// `strobe load` of the fixture on the sys_enter raw tracepoint, with `extra` arguments.
fn load_fixture(extra: &[&std::ffi::OsStr]) -> std::process::Output {
    Command::new(STROBE)
        .args(["load", FIXTURE, "--attach", "rawtracepoint:sys_enter"])
        .args(extra)
        .output()
        .unwrap()
}

#[test]
fn load_cli_runs_a_globals_object_and_prints_its_data() {
    let test = "load_cli_runs_a_globals_object_and_prints_its_data";
    if !loader_common::can_bpf(test) {
        return;
    }
    let out = load_fixture(&["--duration".as_ref(), "0.3".as_ref()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(out.status.success(), "{stdout}\n{stderr}");
    assert!(
        stdout.starts_with("Attached 1/1 rawtracepoint probe\n"),
        "{stdout}"
    );
    // Every syscall bumped `hits` (from 40) and wrote `seen = magic + hits`.
    let hits = printed_u64(&stdout, "clang_da.data", 8).expect(&stdout);
    assert!(hits > 40, "{stdout}");
    let seen = printed_u64(&stdout, "clang_da.bss", 8).expect(&stdout);
    assert!(seen > MAGIC + 40 && seen <= MAGIC + hits, "{stdout}");
    assert!(
        !stdout.contains("rodata"),
        "constants are not printed: {stdout}"
    );
}

#[test]
fn load_cli_pins_data_maps_by_their_kernel_names_without_dots() {
    let test = "load_cli_pins_data_maps_by_their_kernel_names_without_dots";
    let Some(dir) = loader_common::pin_dir(test, "strobe_data_pin") else {
        return;
    };
    let out = load_fixture(&["--pin".as_ref(), dir.as_os_str()]);
    let stdout = String::from_utf8_lossy(&out.stdout);
    let ok = out.status.success();
    let pinned = |n: &str| dir.join("maps").join(n).exists();
    let all = [
        "clang_da_rodata",
        "clang_da_data",
        "clang_da_bss",
        "_rodata_str1_1",
    ]
    .map(pinned);
    // The pinned `.data` keeps counting through the pinned link after strobe exited.
    let data = strobe::sys::pin::get_pinned(&dir.join("maps/clang_da_data"))
        .ok()
        .and_then(|fd| strobe::sys::Map::from_fd(fd).ok());
    let read = || {
        let mut v = [0u8; 24];
        data.as_ref()?.lookup(&0u32.to_ne_bytes(), &mut v).ok()?;
        Some(u64s(&v)[1])
    };
    let before = read();
    for _ in 0..20 {
        let _ = std::fs::metadata("/");
    }
    let after = read();
    let _ = std::fs::remove_dir_all(&dir);
    assert!(ok, "{stdout}\n{}", String::from_utf8_lossy(&out.stderr));
    assert_eq!(all, [true; 4], "{stdout}");
    assert!(after > before, "{before:?} → {after:?}");
}

#[test]
fn vm_case_objects_are_the_current_fixtures() {
    // tests/vm ships only its own directory to the guests, so it carries copies.
    let dir = concat!(env!("CARGO_MANIFEST_DIR"), "/tests");
    for name in ["clang_data.o", "clang_bitfields.o"] {
        let fixture = std::fs::read(format!("{dir}/fixtures/{name}")).unwrap();
        let copy = std::fs::read(format!("{dir}/vm/loader/{name}")).unwrap();
        assert!(
            fixture == copy,
            "copy tests/fixtures/{name} to tests/vm/loader/"
        );
    }
}
