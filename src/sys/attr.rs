//! The uapi structures of `include/uapi/linux/bpf.h` and `perf_event.h`, written once as
//! `repr(C)` structs, one per bpf(2) command (the kernel's `union bpf_attr` is a union of these).
//!
//! Why hand-written rather than aya-obj's generated bindings: strobe needs ~15 structs, and
//! bindings pinned to one header would lag the kernels we target (the host header is 6.1, the
//! host kernel 6.18: `log_true_size`, uprobe_multi and tracing cookies are newer than the
//! header). The kernel accepts a shorter attr than its own (missing tail = zero) and refuses
//! non-zero bytes it does not know, so each struct ends exactly at the last field we fill.
//!
//! Invariant: every struct here is plain old data (no padding the kernel could read as
//! garbage: explicit `_pad` fields, all zero-initialised via `Default`).

/// `BPF_OBJ_NAME_LEN`.
pub const OBJ_NAME_LEN: usize = 16;

/// Marker for structs that may be handed to the kernel as bytes.
///
/// # Safety
/// Implementors are `repr(C)`, contain only integers/arrays of integers, and have no implicit
/// padding.
pub unsafe trait Pod: Sized + Default {}

/// BPF_MAP_CREATE.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct MapCreateAttr {
    pub map_type: u32,
    pub key_size: u32,
    pub value_size: u32,
    pub max_entries: u32,
    pub map_flags: u32,
    pub inner_map_fd: u32,
    pub numa_node: u32,
    pub map_name: [u8; OBJ_NAME_LEN],
    pub map_ifindex: u32,
    pub btf_fd: u32,
    pub btf_key_type_id: u32,
    pub btf_value_type_id: u32,
    pub btf_vmlinux_value_type_id: u32,
    pub map_extra: u64,
}
unsafe impl Pod for MapCreateAttr {}

/// BPF_MAP_{LOOKUP,UPDATE,DELETE}_ELEM and BPF_MAP_GET_NEXT_KEY (`value` doubles as
/// `next_key`).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct MapElemAttr {
    pub map_fd: u32,
    pub _pad: u32,
    pub key: u64,
    pub value: u64,
    pub flags: u64,
}
unsafe impl Pod for MapElemAttr {}

/// BPF_MAP_*_BATCH.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct MapBatchAttr {
    pub in_batch: u64,
    pub out_batch: u64,
    pub keys: u64,
    pub values: u64,
    pub count: u32,
    pub map_fd: u32,
    pub elem_flags: u64,
    pub flags: u64,
}
unsafe impl Pod for MapBatchAttr {}

/// BPF_PROG_LOAD, up to `log_true_size` (6.4+; older kernels ignore a zero tail).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct ProgLoadAttr {
    pub prog_type: u32,
    pub insn_cnt: u32,
    pub insns: u64,
    pub license: u64,
    pub log_level: u32,
    pub log_size: u32,
    pub log_buf: u64,
    pub kern_version: u32,
    pub prog_flags: u32,
    pub prog_name: [u8; OBJ_NAME_LEN],
    pub prog_ifindex: u32,
    pub expected_attach_type: u32,
    pub prog_btf_fd: u32,
    pub func_info_rec_size: u32,
    pub func_info: u64,
    pub func_info_cnt: u32,
    pub line_info_rec_size: u32,
    pub line_info: u64,
    pub line_info_cnt: u32,
    pub attach_btf_id: u32,
    /// `attach_prog_fd` or `attach_btf_obj_fd` (a union in the uapi).
    pub attach_btf_obj_fd: u32,
    pub core_relo_cnt: u32,
    pub fd_array: u64,
    pub core_relos: u64,
    pub core_relo_rec_size: u32,
    /// Output (6.4+): the log size the verifier needed.
    pub log_true_size: u32,
}
unsafe impl Pod for ProgLoadAttr {}

/// BPF_BTF_LOAD, up to `btf_log_true_size` (6.4+).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct BtfLoadAttr {
    pub btf: u64,
    pub btf_log_buf: u64,
    pub btf_size: u32,
    pub btf_log_size: u32,
    pub btf_log_level: u32,
    pub btf_log_true_size: u32,
}
unsafe impl Pod for BtfLoadAttr {}

/// BPF_PROG_TEST_RUN.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct TestRunAttr {
    pub prog_fd: u32,
    pub retval: u32,
    pub data_size_in: u32,
    pub data_size_out: u32,
    pub data_in: u64,
    pub data_out: u64,
    pub repeat: u32,
    pub duration: u32,
    pub ctx_size_in: u32,
    pub ctx_size_out: u32,
    pub ctx_in: u64,
    pub ctx_out: u64,
    pub flags: u32,
    pub cpu: u32,
    pub batch_size: u32,
    pub _pad: u32,
}
unsafe impl Pod for TestRunAttr {}

/// BPF_*_GET_NEXT_ID and BPF_*_GET_FD_BY_ID.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct GetIdAttr {
    /// `start_id` / `prog_id` / `map_id` / `btf_id` / `link_id`.
    pub id: u32,
    pub next_id: u32,
    pub open_flags: u32,
}
unsafe impl Pod for GetIdAttr {}

/// BPF_OBJ_PIN / BPF_OBJ_GET.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct ObjPinAttr {
    pub pathname: u64,
    pub bpf_fd: u32,
    pub file_flags: u32,
}
unsafe impl Pod for ObjPinAttr {}

/// BPF_ITER_CREATE: `{ u32 link_fd; u32 flags; }`.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct IterCreateAttr {
    pub link_fd: u32,
    pub flags: u32,
}
unsafe impl Pod for IterCreateAttr {}

/// BPF_OBJ_GET_INFO_BY_FD.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct InfoAttr {
    pub bpf_fd: u32,
    pub info_len: u32,
    pub info: u64,
}
unsafe impl Pod for InfoAttr {}

/// BPF_RAW_TRACEPOINT_OPEN (the `cookie` tail is 6.10+ and left zero).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct RawTracepointAttr {
    pub name: u64,
    pub prog_fd: u32,
    pub _pad: u32,
}
unsafe impl Pod for RawTracepointAttr {}

/// BPF_LINK_CREATE. The union after `flags` is spelled out as 48 bytes that the constructors
/// below fill per attach kind (tracing, perf_event, kprobe_multi, uprobe_multi).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct LinkCreateAttr {
    pub prog_fd: u32,
    pub target_fd: u32,
    pub attach_type: u32,
    pub flags: u32,
    pub u: [u64; 6],
}
unsafe impl Pod for LinkCreateAttr {}

impl LinkCreateAttr {
    /// `tracing { u32 target_btf_id; u64 cookie; }` (cookie 6.5+).
    pub fn set_tracing(&mut self, target_btf_id: u32, cookie: u64) {
        self.u[0] = u64::from(target_btf_id);
        self.u[1] = cookie;
    }

    /// `iter_info` / `iter_info_len`: a `union bpf_iter_link_info` (5.9+).
    pub fn set_iter(&mut self, info: u64, len: u32) {
        self.u[0] = info;
        self.u[1] = u64::from(len);
    }

    /// `perf_event { u64 bpf_cookie; }`.
    pub fn set_perf_event(&mut self, cookie: u64) {
        self.u[0] = cookie;
    }

    /// `kprobe_multi { u32 flags; u32 cnt; u64 syms; u64 addrs; u64 cookies; }`.
    pub fn set_kprobe_multi(&mut self, flags: u32, cnt: u32, syms: u64, addrs: u64, cookies: u64) {
        self.u[0] = u64::from(flags) | (u64::from(cnt) << 32);
        self.u[1] = syms;
        self.u[2] = addrs;
        self.u[3] = cookies;
    }

    /// `uprobe_multi { u64 path; u64 offsets; u64 ref_ctr_offsets; u64 cookies; u32 cnt;
    /// u32 flags; u32 pid; }` (6.6+).
    #[allow(clippy::too_many_arguments)]
    pub fn set_uprobe_multi(
        &mut self,
        path: u64,
        offsets: u64,
        ref_ctr_offsets: u64,
        cookies: u64,
        cnt: u32,
        flags: u32,
        pid: u32,
    ) {
        self.u[0] = path;
        self.u[1] = offsets;
        self.u[2] = ref_ctr_offsets;
        self.u[3] = cookies;
        self.u[4] = u64::from(cnt) | (u64::from(flags) << 32);
        self.u[5] = u64::from(pid);
    }
}

/// `struct bpf_prog_info` up to `attach_btf_id` (5.17+ fields; older kernels fill less and
/// report the length they wrote).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct ProgInfoRaw {
    pub prog_type: u32,
    pub id: u32,
    pub tag: [u8; 8],
    pub jited_prog_len: u32,
    pub xlated_prog_len: u32,
    pub jited_prog_insns: u64,
    pub xlated_prog_insns: u64,
    pub load_time: u64,
    pub created_by_uid: u32,
    pub nr_map_ids: u32,
    pub map_ids: u64,
    pub name: [u8; OBJ_NAME_LEN],
    pub ifindex: u32,
    pub gpl_compatible: u32,
    pub netns_dev: u64,
    pub netns_ino: u64,
    pub nr_jited_ksyms: u32,
    pub nr_jited_func_lens: u32,
    pub jited_ksyms: u64,
    pub jited_func_lens: u64,
    pub btf_id: u32,
    pub func_info_rec_size: u32,
    pub func_info: u64,
    pub nr_func_info: u32,
    pub nr_line_info: u32,
    pub line_info: u64,
    pub jited_line_info: u64,
    pub nr_jited_line_info: u32,
    pub line_info_rec_size: u32,
    pub jited_line_info_rec_size: u32,
    pub nr_prog_tags: u32,
    pub prog_tags: u64,
    pub run_time_ns: u64,
    pub run_cnt: u64,
    pub recursion_misses: u64,
    pub verified_insns: u32,
    pub attach_btf_obj_id: u32,
    pub attach_btf_id: u32,
    pub _pad: u32,
}
unsafe impl Pod for ProgInfoRaw {}

/// `struct bpf_map_info`.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct MapInfoRaw {
    pub map_type: u32,
    pub id: u32,
    pub key_size: u32,
    pub value_size: u32,
    pub max_entries: u32,
    pub map_flags: u32,
    pub name: [u8; OBJ_NAME_LEN],
    pub ifindex: u32,
    pub btf_vmlinux_value_type_id: u32,
    pub netns_dev: u64,
    pub netns_ino: u64,
    pub btf_id: u32,
    pub btf_key_type_id: u32,
    pub btf_value_type_id: u32,
    pub _pad: u32,
    pub map_extra: u64,
}
unsafe impl Pod for MapInfoRaw {}

/// `struct bpf_link_info`: the common head and the per-type union as raw words.
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct LinkInfoRaw {
    pub link_type: u32,
    pub id: u32,
    pub prog_id: u32,
    pub _pad: u32,
    pub u: [u64; 8],
}
unsafe impl Pod for LinkInfoRaw {}

/// `struct bpf_btf_info` (`name`, `name_len` and `kernel_btf` since 5.11).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct BtfInfoRaw {
    pub btf: u64,
    pub btf_size: u32,
    pub id: u32,
    pub name: u64,
    pub name_len: u32,
    pub kernel_btf: u32,
}
unsafe impl Pod for BtfInfoRaw {}

/// `struct perf_event_attr` as of PERF_ATTR_SIZE_VER8 (136 bytes). Bitfield flags are one
/// `u64` (see [`crate::sys::perf::PerfFlags`]).
#[repr(C)]
#[derive(Debug, Default, Clone, Copy)]
pub struct PerfEventAttr {
    pub type_: u32,
    pub size: u32,
    pub config: u64,
    /// `sample_period` or, with the `freq` flag, `sample_freq`.
    pub sample_period: u64,
    pub sample_type: u64,
    pub read_format: u64,
    pub flags: u64,
    /// `wakeup_events` or, with the `watermark` flag, `wakeup_watermark`.
    pub wakeup_events: u32,
    pub bp_type: u32,
    /// `bp_addr` / `kprobe_func` / `uprobe_path` / `config1`.
    pub config1: u64,
    /// `bp_len` / `kprobe_addr` / `probe_offset` / `config2`.
    pub config2: u64,
    pub branch_sample_type: u64,
    pub sample_regs_user: u64,
    pub sample_stack_user: u32,
    pub clockid: i32,
    pub sample_regs_intr: u64,
    pub aux_watermark: u32,
    pub sample_max_stack: u16,
    pub _reserved2: u16,
    pub aux_sample_size: u32,
    pub _reserved3: u32,
    pub sig_data: u64,
    pub config3: u64,
}
unsafe impl Pod for PerfEventAttr {}

/// Views a POD struct as bytes (for the test syscall hook and for copying out).
pub fn as_bytes<T: Pod>(v: &T) -> &[u8] {
    // SAFETY: `Pod` guarantees a padding-free repr(C) integer layout.
    unsafe { std::slice::from_raw_parts((v as *const T).cast::<u8>(), std::mem::size_of::<T>()) }
}

/// Mutable byte view of a POD struct.
pub fn as_bytes_mut<T: Pod>(v: &mut T) -> &mut [u8] {
    // SAFETY: as above; any byte pattern is a valid value of an integer-only struct.
    unsafe { std::slice::from_raw_parts_mut((v as *mut T).cast::<u8>(), std::mem::size_of::<T>()) }
}

/// Copies `name` into a kernel object name field, truncated to 15 bytes plus NUL and limited
/// to the characters the kernel accepts (`[A-Za-z0-9_.]`); others become `_`.
pub fn obj_name(name: &str) -> [u8; OBJ_NAME_LEN] {
    let mut out = [0u8; OBJ_NAME_LEN];
    for (dst, b) in out.iter_mut().zip(name.bytes().take(OBJ_NAME_LEN - 1)) {
        *dst = if b.is_ascii_alphanumeric() || b == b'_' || b == b'.' {
            b
        } else {
            b'_'
        };
    }
    out
}

/// Reads a NUL-terminated buffer (a name field, a verifier or BTF log) into a `String`, lossily.
pub fn str_until_nul(field: &[u8]) -> String {
    let end = field.iter().position(|&b| b == 0).unwrap_or(field.len());
    String::from_utf8_lossy(&field[..end]).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::mem::{offset_of, size_of};

    #[test]
    fn layouts_match_the_uapi_offsets() {
        assert_eq!(size_of::<MapCreateAttr>(), 72);
        assert_eq!(offset_of!(MapCreateAttr, map_extra), 64);
        assert_eq!(offset_of!(MapElemAttr, key), 8);
        assert_eq!(size_of::<MapBatchAttr>(), 56);
        assert_eq!(offset_of!(ProgLoadAttr, prog_name), 48);
        assert_eq!(offset_of!(ProgLoadAttr, attach_btf_id), 108);
        assert_eq!(offset_of!(ProgLoadAttr, fd_array), 120);
        assert_eq!(offset_of!(ProgLoadAttr, log_true_size), 140);
        assert_eq!(size_of::<ProgLoadAttr>(), 144);
        assert_eq!(size_of::<TestRunAttr>(), 80);
        assert_eq!(offset_of!(LinkCreateAttr, u), 16);
        assert_eq!(offset_of!(ProgInfoRaw, name), 64);
        assert_eq!(offset_of!(ProgInfoRaw, run_time_ns), 192);
        assert_eq!(offset_of!(ProgInfoRaw, attach_btf_id), 224);
        assert_eq!(size_of::<ProgInfoRaw>(), 232);
        assert_eq!(size_of::<MapInfoRaw>(), 88);
        assert_eq!(size_of::<PerfEventAttr>(), 136);
        assert_eq!(offset_of!(PerfEventAttr, config1), 56);
    }

    #[test]
    fn obj_name_truncates_and_sanitises() {
        assert_eq!(str_until_nul(&obj_name("a-b.c_d")), "a_b.c_d");
        assert_eq!(
            str_until_nul(&obj_name("0123456789abcdefXYZ")),
            "0123456789abcde"
        );
    }
}
