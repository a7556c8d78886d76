//! Shared by the `loader_*` host tests: the capability gate, a counting template (one u64
//! counter per target in an array map, keyed by the target index or the BPF cookie), and a
//! reader for those counters.
#![allow(dead_code)]

use std::os::fd::AsRawFd;

use strobe::asm::assemble_insns;
use strobe::sys::env::has_capability;
use strobe::sys::{Capability, Map, MapCreateOptions, MapType};
use strobe::template::{AttachKind, Field, Reloc, RelocKind, Template};

pub fn can_bpf(test: &str) -> bool {
    let ok = (has_capability(Capability::Bpf) && has_capability(Capability::Perfmon))
        || has_capability(Capability::SysAdmin);
    if !ok {
        strobe_testkit::skip(test, "needs CAP_BPF and CAP_PERFMON (or CAP_SYS_ADMIN)");
    }
    ok
}

/// Where the counting program takes its key from.
pub enum Key {
    /// A `TargetIndex` relocation (clones).
    TargetIndex,
    /// `bpf_get_attach_cookie` (shared programs: the loader sets cookie = target index).
    Cookie,
}

/// `counts[key] += 1`, guarded by the arming flag.
pub fn counting_template(kind: AttachKind, key: Key) -> Template {
    let first = match key {
        Key::TargetIndex => "r6 = 0",
        Key::Cookie => "call bpf_get_attach_cookie\nr6 = r0",
    };
    let text = format!(
        "{first}\n*(u32 *)(r10 - 4) = r6\nr1 = 0 ll\nr2 = r10\nr2 += -4\n\
         call bpf_map_lookup_elem\nif r0 == 0 goto +2\nr1 = 1\n\
         lock *(u64 *)(r0 + 0) += r1\nr0 = 0\nexit\n"
    );
    let mut insns = assemble_insns(&text).expect("counting program assembles");
    let map_at = insns
        .iter()
        .position(|i| i.code == 0x18)
        .expect("an ld_imm64");
    insns[map_at].set_src(1);
    let mut t = Template::new("strobe_count", kind, insns);
    let m = t.map_index("counts");
    t.relocs.push(Reloc::map_fd(map_at, m));
    if let Key::TargetIndex = key {
        t.relocs
            .push(Reloc::new(0, Field::Imm, RelocKind::TargetIndex));
    }
    t.with_arming_guard()
}

pub fn counts_map(n: usize) -> Map {
    Map::create(
        MapType::Array,
        &MapCreateOptions {
            name: "counts",
            key_size: 4,
            value_size: 8,
            max_entries: n.max(1) as u32,
            ..Default::default()
        },
    )
    .expect("array map")
}

pub fn read_counts(m: &Map, n: usize) -> Vec<u64> {
    (0..n as u32)
        .map(|k| {
            let mut v = [0u8; 8];
            m.lookup(&k.to_ne_bytes(), &mut v).expect("lookup");
            u64::from_ne_bytes(v)
        })
        .collect()
}

/// Whether `dir` is on a bpffs mount (statfs magic `BPF_FS_MAGIC`), where objects can be
/// pinned.
pub fn is_bpffs(dir: &std::path::Path) -> bool {
    use std::os::unix::ffi::OsStrExt;
    let Ok(path) = std::ffi::CString::new(dir.as_os_str().as_bytes()) else {
        return false;
    };
    // SAFETY: a valid C string and a zeroed statfs buffer the call fills in.
    let mut st: libc::statfs = unsafe { std::mem::zeroed() };
    let r = unsafe { libc::statfs(path.as_ptr(), &mut st) };
    r == 0 && st.f_type as u64 == 0xcafe_4a11
}

/// A fresh directory name under /sys/fs/bpf for a `--pin` test, when BPF and a bpffs mount are
/// there; `None` after a loud skip.
pub fn pin_dir(test: &str, stem: &str) -> Option<std::path::PathBuf> {
    if !can_bpf(test) {
        return None;
    }
    let bpffs = std::path::Path::new("/sys/fs/bpf");
    if !is_bpffs(bpffs) {
        strobe_testkit::skip(test, "/sys/fs/bpf is not a bpffs mount");
        return None;
    }
    Some(bpffs.join(format!("{stem}_{}", std::process::id())))
}

pub fn fd(m: &Map) -> i32 {
    m.as_raw_fd()
}

/// The `out` array of the clang fixtures: 16 u64 slots their programs store results in.
pub fn out_map() -> Map {
    Map::create(
        MapType::Array,
        &MapCreateOptions {
            name: "out",
            key_size: 4,
            value_size: 8,
            max_entries: 16,
            ..Default::default()
        },
    )
    .unwrap()
}

/// Slots `0..n` of an `out` map.
pub fn read_out(out: &Map, n: u32) -> Vec<u64> {
    (0..n)
        .map(|k| {
            let mut v = [0u8; 8];
            out.lookup(&k.to_ne_bytes(), &mut v).unwrap();
            u64::from_ne_bytes(v)
        })
        .collect()
}

/// A fixture's program section as a raw tracepoint template, instantiated with `fds` (its
/// maps in the template's order).
pub fn instantiate_raw_tp(
    s: &strobe::asm::Section,
    maps: &[String],
    fds: &[std::os::fd::RawFd],
) -> Vec<strobe::asm::Insn> {
    let t = Template::from_section(s, maps, AttachKind::RawTracepoint, "GPL").unwrap();
    let values = strobe::template::TargetValues {
        map_fds: fds,
        ..Default::default()
    };
    strobe::template::instantiate(&t, &values).unwrap()
}

/// Loads `insns` as a raw tracepoint program and runs it once through BPF_PROG_TEST_RUN.
pub fn run_raw_tp_once(insns: &[strobe::asm::Insn]) {
    use strobe::sys::{Prog, ProgLoadOptions, ProgType, TestRunOptions};
    let prog = Prog::load(&ProgLoadOptions::new(ProgType::RawTracepoint, insns)).unwrap();
    prog.test_run(&mut TestRunOptions {
        ctx_in: &[0u8; 16],
        ..Default::default()
    })
    .unwrap();
}
