//! Introspection: BPF_OBJ_GET_INFO_BY_FD for programs, maps and links, the
//! BPF_*_GET_NEXT_ID iterators and BPF_*_GET_FD_BY_ID (used by leak tests and `strobe info`).
//! An id that no longer exists is `Ok(None)`.

use std::os::fd::{AsRawFd, BorrowedFd, OwnedFd};

use super::attr::{
    as_bytes_mut, str_until_nul, BtfInfoRaw, GetIdAttr, InfoAttr, LinkInfoRaw, MapInfoRaw, Pod,
    ProgInfoRaw,
};
use super::call::{bpf, bpf_fd, ptr, Cmd};
use super::error::{Errno, SysError};

/// `struct bpf_prog_info`, the parts strobe reads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct ProgInfo {
    /// `enum bpf_prog_type` as the kernel reports it.
    pub prog_type: u32,
    pub id: u32,
    pub tag: [u8; 8],
    pub name: String,
    pub jited_len: u32,
    pub xlated_len: u32,
    pub load_time_ns: u64,
    pub created_by_uid: u32,
    pub nr_map_ids: u32,
    pub btf_id: u32,
    /// Non-zero only with `kernel.bpf_stats_enabled`.
    pub run_time_ns: u64,
    pub run_cnt: u64,
    pub recursion_misses: u64,
    pub verified_insns: u32,
    pub attach_btf_obj_id: u32,
    pub attach_btf_id: u32,
}

/// `struct bpf_map_info`.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct MapInfo {
    pub map_type: u32,
    pub id: u32,
    pub key_size: u32,
    pub value_size: u32,
    pub max_entries: u32,
    pub map_flags: u32,
    pub name: String,
    pub btf_id: u32,
    pub map_extra: u64,
}

/// `struct bpf_link_info`: the common head; `data` holds the per-type union's raw words.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct LinkInfo {
    /// `enum bpf_link_type` (1 raw_tracepoint, 2 tracing, 7 perf_event, 8 kprobe_multi, 12
    /// uprobe_multi).
    pub link_type: u32,
    pub id: u32,
    pub prog_id: u32,
    pub data: [u64; 8],
}

fn get_info<T: Pod>(fd: BorrowedFd<'_>) -> Result<T, SysError> {
    let mut info = T::default();
    let mut a = InfoAttr {
        bpf_fd: fd.as_raw_fd() as u32,
        info_len: std::mem::size_of::<T>() as u32,
        info: ptr(as_bytes_mut(&mut info).as_mut_ptr()),
    };
    bpf(Cmd::ObjGetInfoByFd, &mut a).map_err(|e| SysError::bare(Cmd::ObjGetInfoByFd.name(), e))?;
    Ok(info)
}

/// BPF_OBJ_GET_INFO_BY_FD on a program.
pub fn prog_info(fd: BorrowedFd<'_>) -> Result<ProgInfo, SysError> {
    let r: ProgInfoRaw = get_info(fd)?;
    Ok(ProgInfo {
        prog_type: r.prog_type,
        id: r.id,
        tag: r.tag,
        name: str_until_nul(&r.name),
        jited_len: r.jited_prog_len,
        xlated_len: r.xlated_prog_len,
        load_time_ns: r.load_time,
        created_by_uid: r.created_by_uid,
        nr_map_ids: r.nr_map_ids,
        btf_id: r.btf_id,
        run_time_ns: r.run_time_ns,
        run_cnt: r.run_cnt,
        recursion_misses: r.recursion_misses,
        verified_insns: r.verified_insns,
        attach_btf_obj_id: r.attach_btf_obj_id,
        attach_btf_id: r.attach_btf_id,
    })
}

/// A program's BTF object id and its `struct bpf_func_info` records (`[insn_off, type_id]`:
/// each function of the program, the main one first, with its `FUNC` id in that BTF); no
/// records for a program loaded without BTF.
pub fn prog_func_info(fd: BorrowedFd<'_>) -> Result<(u32, Vec<[u32; 2]>), SysError> {
    let first: ProgInfoRaw = get_info(fd)?;
    if first.btf_id == 0 || first.nr_func_info == 0 {
        return Ok((first.btf_id, Vec::new()));
    }
    let mut recs = vec![[0u32; 2]; first.nr_func_info as usize];
    let mut r = ProgInfoRaw {
        nr_func_info: first.nr_func_info,
        func_info_rec_size: 8,
        func_info: ptr(recs.as_mut_ptr()),
        ..Default::default()
    };
    let mut a = InfoAttr {
        bpf_fd: fd.as_raw_fd() as u32,
        info_len: std::mem::size_of::<ProgInfoRaw>() as u32,
        info: ptr(as_bytes_mut(&mut r).as_mut_ptr()),
    };
    bpf(Cmd::ObjGetInfoByFd, &mut a).map_err(|e| SysError::bare(Cmd::ObjGetInfoByFd.name(), e))?;
    recs.truncate(r.nr_func_info.min(first.nr_func_info) as usize);
    Ok((r.btf_id, recs))
}

/// The raw bytes of a BTF object (a program's own BTF, for its functions' names).
pub fn btf_data(fd: BorrowedFd<'_>) -> Result<Vec<u8>, SysError> {
    let call = |r: &mut BtfInfoRaw| {
        let mut a = InfoAttr {
            bpf_fd: fd.as_raw_fd() as u32,
            info_len: std::mem::size_of::<BtfInfoRaw>() as u32,
            info: ptr(as_bytes_mut(r).as_mut_ptr()),
        };
        bpf(Cmd::ObjGetInfoByFd, &mut a).map_err(|e| SysError::bare(Cmd::ObjGetInfoByFd.name(), e))
    };
    let mut r = BtfInfoRaw::default();
    call(&mut r)?;
    let mut data = vec![0u8; r.btf_size as usize];
    let mut r = BtfInfoRaw {
        btf: ptr(data.as_mut_ptr()),
        btf_size: data.len() as u32,
        ..Default::default()
    };
    call(&mut r)?;
    data.truncate(r.btf_size as usize);
    Ok(data)
}

/// BPF_OBJ_GET_INFO_BY_FD on a map.
pub fn map_info(fd: BorrowedFd<'_>) -> Result<MapInfo, SysError> {
    let r: MapInfoRaw = get_info(fd)?;
    Ok(MapInfo {
        map_type: r.map_type,
        id: r.id,
        key_size: r.key_size,
        value_size: r.value_size,
        max_entries: r.max_entries,
        map_flags: r.map_flags,
        name: str_until_nul(&r.name),
        btf_id: r.btf_id,
        map_extra: r.map_extra,
    })
}

/// `BPF_LINK_TYPE_PERF_EVENT` (a perf event's link: kprobe, uprobe, tracepoint, perf event).
#[doc(alias = "BPF_LINK_TYPE_PERF_EVENT")]
pub const LINK_TYPE_PERF_EVENT: u32 = 7;
/// `BPF_LINK_TYPE_KPROBE_MULTI` (kprobe_multi and kprobe.session links).
#[doc(alias = "BPF_LINK_TYPE_KPROBE_MULTI")]
pub const LINK_TYPE_KPROBE_MULTI: u32 = 8;

impl LinkInfo {
    /// The calls the kernel's probe layer skipped for this link, when its type counts them
    /// (`include/uapi/linux/bpf.h`, `struct bpf_link_info`): a kprobe_multi or kprobe.session
    /// link's `kprobe_multi.missed` (the fprobe found no free return slot, or fired inside
    /// another probe; 6.7+), a perf event link's `perf_event.kprobe.missed` for a kprobe or
    /// kretprobe (the kprobe's and kretprobe's misses; 6.7+). Kernels before 6.7 leave the
    /// field zero. `None` for other links, which count nothing of the kind.
    pub fn missed(&self) -> Option<u64> {
        // Byte offsets inside the union (which starts at byte 16 of the struct).
        // kprobe_multi: addrs u64 @0, count u32 @8, flags u32 @12, missed u64 @16.
        const KPROBE_MULTI_MISSED: usize = 16;
        // perf_event: type u32 @0 (pad @4), then kprobe: func_name u64 @8, name_len u32 @16,
        // offset u32 @20, addr u64 @24, missed u64 @32.
        const PERF_EVENT_KPROBE_MISSED: usize = 32;
        /// `enum bpf_perf_event_type`: BPF_PERF_EVENT_KPROBE, BPF_PERF_EVENT_KRETPROBE.
        const PERF_EVENT_KPROBE: u32 = 3;
        const PERF_EVENT_KRETPROBE: u32 = 4;
        let mut bytes = [0u8; 64];
        for (b, w) in bytes.chunks_exact_mut(8).zip(self.data) {
            b.copy_from_slice(&w.to_ne_bytes());
        }
        let u32_at = |o: usize| u32::from_ne_bytes(bytes[o..o + 4].try_into().unwrap());
        let u64_at = |o: usize| u64::from_ne_bytes(bytes[o..o + 8].try_into().unwrap());
        match self.link_type {
            LINK_TYPE_KPROBE_MULTI => Some(u64_at(KPROBE_MULTI_MISSED)),
            LINK_TYPE_PERF_EVENT
                if matches!(u32_at(0), PERF_EVENT_KPROBE | PERF_EVENT_KRETPROBE) =>
            {
                Some(u64_at(PERF_EVENT_KPROBE_MISSED))
            }
            _ => None,
        }
    }
}

/// BPF_OBJ_GET_INFO_BY_FD on a link.
pub fn link_info(fd: BorrowedFd<'_>) -> Result<LinkInfo, SysError> {
    let r: LinkInfoRaw = get_info(fd)?;
    Ok(LinkInfo {
        link_type: r.link_type,
        id: r.id,
        prog_id: r.prog_id,
        data: r.u,
    })
}

/// Which object kind an id iteration or lookup is about.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum ObjKind {
    Prog,
    Map,
    Link,
    Btf,
}

impl ObjKind {
    fn next_cmd(self) -> Cmd {
        match self {
            ObjKind::Prog => Cmd::ProgGetNextId,
            ObjKind::Map => Cmd::MapGetNextId,
            ObjKind::Link => Cmd::LinkGetNextId,
            ObjKind::Btf => Cmd::BtfGetNextId,
        }
    }
    fn fd_cmd(self) -> Cmd {
        match self {
            ObjKind::Prog => Cmd::ProgGetFdById,
            ObjKind::Map => Cmd::MapGetFdById,
            ObjKind::Link => Cmd::LinkGetFdById,
            ObjKind::Btf => Cmd::BtfGetFdById,
        }
    }
}

/// BPF_*_GET_NEXT_ID: the first id after `start` (0 = the first), `None` at the end.
pub fn next_id(kind: ObjKind, start: u32) -> Result<Option<u32>, SysError> {
    let mut a = GetIdAttr {
        id: start,
        ..Default::default()
    };
    let cmd = kind.next_cmd();
    match bpf(cmd, &mut a) {
        Ok(_) => Ok(Some(a.next_id)),
        Err(Errno::ENOENT) => Ok(None),
        Err(e) => Err(SysError::bare(cmd.name(), e)),
    }
}

/// Every id of `kind` currently in the kernel.
pub fn all_ids(kind: ObjKind) -> Result<Vec<u32>, SysError> {
    let mut out = Vec::new();
    let mut cur = 0;
    while let Some(id) = next_id(kind, cur)? {
        out.push(id);
        cur = id;
    }
    Ok(out)
}

/// BPF_*_GET_FD_BY_ID: a new fd for object `id`, `None` when it no longer exists.
pub fn fd_by_id(kind: ObjKind, id: u32) -> Result<Option<OwnedFd>, SysError> {
    let mut a = GetIdAttr {
        id,
        ..Default::default()
    };
    let cmd = kind.fd_cmd();
    match bpf_fd(cmd, &mut a) {
        Ok(fd) => Ok(Some(fd)),
        Err(Errno::ENOENT) => Ok(None),
        Err(e) => Err(SysError::bare(cmd.name(), e)),
    }
}

/// BPF_PROG_GET_FD_BY_ID.
pub fn prog_fd_by_id(id: u32) -> Result<Option<OwnedFd>, SysError> {
    fd_by_id(ObjKind::Prog, id)
}

/// BPF_MAP_GET_FD_BY_ID.
pub fn map_fd_by_id(id: u32) -> Result<Option<OwnedFd>, SysError> {
    fd_by_id(ObjKind::Map, id)
}

/// BPF_LINK_GET_FD_BY_ID.
pub fn link_fd_by_id(id: u32) -> Result<Option<OwnedFd>, SysError> {
    fd_by_id(ObjKind::Link, id)
}

/// `struct bpf_btf_info`, the parts strobe reads.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct BtfInfo {
    pub id: u32,
    /// `vmlinux`, a module's name, or empty (user-loaded BTF; kernels before 5.11 name none).
    pub name: String,
    /// The kernel's own BTF (vmlinux or a module's), not loaded by a program.
    pub kernel_btf: bool,
}

/// BPF_OBJ_GET_INFO_BY_FD on a BTF object, with its name.
pub fn btf_info(fd: BorrowedFd<'_>) -> Result<BtfInfo, SysError> {
    let mut name = [0u8; 64];
    let mut r = BtfInfoRaw {
        name: ptr(name.as_mut_ptr()),
        name_len: name.len() as u32,
        ..Default::default()
    };
    let mut a = InfoAttr {
        bpf_fd: fd.as_raw_fd() as u32,
        info_len: std::mem::size_of::<BtfInfoRaw>() as u32,
        info: ptr(as_bytes_mut(&mut r).as_mut_ptr()),
    };
    bpf(Cmd::ObjGetInfoByFd, &mut a).map_err(|e| SysError::bare(Cmd::ObjGetInfoByFd.name(), e))?;
    Ok(BtfInfo {
        id: r.id,
        name: str_until_nul(&name),
        kernel_btf: r.kernel_btf != 0,
    })
}

/// An fd for the kernel BTF object of module `module` (what `attach_btf_obj_fd` wants for
/// fentry/fexit on a module function), found by walking BPF_BTF_GET_NEXT_ID and naming each
/// object; `None` when no loaded module of that name has BTF.
pub fn module_btf_fd(module: &str) -> Result<Option<OwnedFd>, SysError> {
    let mut cur = 0;
    while let Some(id) = next_id(ObjKind::Btf, cur)? {
        cur = id;
        let Some(fd) = fd_by_id(ObjKind::Btf, id)? else {
            continue;
        };
        let info = btf_info(std::os::fd::AsFd::as_fd(&fd))?;
        if info.kernel_btf && info.name == module {
            return Ok(Some(fd));
        }
    }
    Ok(None)
}

#[cfg(test)]
mod tests {
    use super::*;

    /// The uapi layout (`include/uapi/linux/bpf.h`): `recursion_misses` follows `run_cnt` at
    /// byte 208 of `struct bpf_prog_info`; `struct bpf_link_info`'s union starts at byte 16.
    #[test]
    fn info_structs_have_the_kernel_offsets() {
        assert_eq!(std::mem::offset_of!(ProgInfoRaw, run_time_ns), 192);
        assert_eq!(std::mem::offset_of!(ProgInfoRaw, recursion_misses), 208);
        assert_eq!(std::mem::offset_of!(ProgInfoRaw, verified_insns), 216);
        assert_eq!(std::mem::offset_of!(LinkInfoRaw, u), 16);
    }

    /// A link info as the kernel writes it: `head` (type, id, prog_id) then the union's bytes.
    fn link_from_bytes(link_type: u32, union: &[(usize, &[u8])]) -> LinkInfo {
        let mut raw = LinkInfoRaw {
            link_type,
            ..Default::default()
        };
        let bytes = as_bytes_mut(&mut raw);
        for (off, b) in union {
            bytes[16 + off..16 + off + b.len()].copy_from_slice(b);
        }
        LinkInfo {
            link_type: raw.link_type,
            id: raw.id,
            prog_id: raw.prog_id,
            data: raw.u,
        }
    }

    #[test]
    fn kprobe_multi_missed_is_read_from_its_field() {
        let l = link_from_bytes(
            LINK_TYPE_KPROBE_MULTI,
            &[
                (0, &0xdead_beefu64.to_ne_bytes()),
                (8, &3u32.to_ne_bytes()),
                (12, &1u32.to_ne_bytes()),
                (16, &42u64.to_ne_bytes()),
                (24, &7u64.to_ne_bytes()),
            ],
        );
        assert_eq!(l.missed(), Some(42));
    }

    #[test]
    fn perf_event_links_count_misses_only_for_kprobes() {
        for (ty, want) in [
            (3u32, Some(9)),
            (4, Some(9)),
            (1, None),
            (5, None),
            (6, None),
        ] {
            let l = link_from_bytes(
                LINK_TYPE_PERF_EVENT,
                &[
                    (0, &ty.to_ne_bytes()),
                    (8, &0x1000u64.to_ne_bytes()),
                    (16, &5u32.to_ne_bytes()),
                    (24, &0xffff_ffff_8100_0000u64.to_ne_bytes()),
                    (32, &9u64.to_ne_bytes()),
                    (40, &1u64.to_ne_bytes()),
                ],
            );
            assert_eq!(l.missed(), want, "perf event type {ty}");
        }
    }

    #[test]
    fn other_links_count_no_misses() {
        let l = link_from_bytes(2, &[(16, &5u64.to_ne_bytes())]);
        assert_eq!(l.missed(), None);
    }
}
