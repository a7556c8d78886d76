//! BPF maps: creation and the element commands (lookup, update, delete, next key, batch
//! lookup / lookup-and-delete) on an owned map fd.
//!
//! Keys and values are byte slices of exactly the map's sizes; per-CPU maps take values of
//! `round_up(value_size, 8) × possible CPUs` bytes ([`Map::value_buf_len`]). A missing key is
//! `Ok(None)` / `Ok(false)`, not an error.

use std::os::fd::{AsFd, AsRawFd, BorrowedFd, OwnedFd, RawFd};

use super::attr::{obj_name, MapBatchAttr, MapCreateAttr, MapElemAttr};
use super::call::{bpf, bpf_fd, ptr, Cmd};
use super::diagnose::{sys_error, Op};
use super::error::{Errno, SysError};

/// `enum bpf_map_type`: the generated table of isa/map_types.txt.
pub use crate::asm::isa::MapType;

impl MapType {
    /// The map type of a kernel value (`bpf_map_info.type`), if isa/map_types.txt names it.
    pub fn from_raw(v: u32) -> Option<MapType> {
        MapType::from_value(v)
    }

    /// Per-CPU maps hold one value per possible CPU.
    pub fn is_percpu(self) -> bool {
        matches!(
            self,
            MapType::PercpuHash | MapType::PercpuArray | MapType::LruPercpuHash
        )
    }
}

bitflags::bitflags! {
    /// `map_flags` of BPF_MAP_CREATE.
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct MapFlags: u32 {
        #[doc(alias = "BPF_F_NO_PREALLOC")]
        const NO_PREALLOC = 1 << 0;
        #[doc(alias = "BPF_F_NO_COMMON_LRU")]
        const NO_COMMON_LRU = 1 << 1;
        #[doc(alias = "BPF_F_NUMA_NODE")]
        const NUMA_NODE = 1 << 2;
        #[doc(alias = "BPF_F_RDONLY")]
        const RDONLY = 1 << 3;
        #[doc(alias = "BPF_F_WRONLY")]
        const WRONLY = 1 << 4;
        #[doc(alias = "BPF_F_STACK_BUILD_ID")]
        const STACK_BUILD_ID = 1 << 5;
        #[doc(alias = "BPF_F_ZERO_SEED")]
        const ZERO_SEED = 1 << 6;
        #[doc(alias = "BPF_F_RDONLY_PROG")]
        const RDONLY_PROG = 1 << 7;
        #[doc(alias = "BPF_F_WRONLY_PROG")]
        const WRONLY_PROG = 1 << 8;
        #[doc(alias = "BPF_F_MMAPABLE")]
        const MMAPABLE = 1 << 10;
    }
}

bitflags::bitflags! {
    /// `flags` of BPF_MAP_UPDATE_ELEM (`BPF_ANY` is the empty set).
    #[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
    pub struct UpdateFlags: u64 {
        #[doc(alias = "BPF_NOEXIST")]
        const NOEXIST = 1;
        #[doc(alias = "BPF_EXIST")]
        const EXIST = 2;
        #[doc(alias = "BPF_F_LOCK")]
        const LOCK = 4;
    }
}

/// What BPF_MAP_CREATE needs.
#[derive(Clone, Debug, Default)]
pub struct MapCreateOptions<'a> {
    pub name: &'a str,
    pub key_size: u32,
    pub value_size: u32,
    pub max_entries: u32,
    pub flags: MapFlags,
    pub btf_fd: Option<BorrowedFd<'a>>,
    pub btf_key_type_id: u32,
    pub btf_value_type_id: u32,
    pub inner_map_fd: Option<BorrowedFd<'a>>,
    pub map_extra: u64,
}

/// A map, owned; closed on drop.
#[derive(Debug)]
pub struct Map {
    fd: OwnedFd,
    map_type: u32,
    key_size: u32,
    value_size: u32,
    max_entries: u32,
}

/// How far a batch operation got.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Batch {
    /// Elements written to the key/value buffers.
    pub count: u32,
    /// The map has no more elements after these (the kernel said ENOENT).
    pub done: bool,
}

impl Map {
    /// BPF_MAP_CREATE.
    pub fn create(map_type: MapType, opts: &MapCreateOptions<'_>) -> Result<Map, SysError> {
        let mut a = MapCreateAttr {
            map_type: map_type as u32,
            key_size: opts.key_size,
            value_size: opts.value_size,
            max_entries: opts.max_entries,
            map_flags: opts.flags.bits(),
            inner_map_fd: opts.inner_map_fd.map_or(0, |f| f.as_raw_fd() as u32),
            map_name: obj_name(opts.name),
            btf_fd: opts.btf_fd.map_or(0, |f| f.as_raw_fd() as u32),
            btf_key_type_id: opts.btf_key_type_id,
            btf_value_type_id: opts.btf_value_type_id,
            map_extra: opts.map_extra,
            ..Default::default()
        };
        let fd = bpf_fd(Cmd::MapCreate, &mut a)
            .map_err(|e| sys_error(Cmd::MapCreate.name(), e, Op::MapCreate))?;
        Ok(Map {
            fd,
            map_type: map_type as u32,
            key_size: opts.key_size,
            value_size: opts.value_size,
            max_entries: opts.max_entries,
        })
    }

    /// Wraps an existing map fd (e.g. from [`crate::sys::info::map_fd_by_id`]), reading its
    /// shape from the kernel.
    pub fn from_fd(fd: OwnedFd) -> Result<Map, SysError> {
        let info = super::info::map_info(fd.as_fd())?;
        Ok(Map {
            fd,
            map_type: info.map_type,
            key_size: info.key_size,
            value_size: info.value_size,
            max_entries: info.max_entries,
        })
    }

    pub fn map_type(&self) -> Option<MapType> {
        MapType::from_raw(self.map_type)
    }
    pub fn key_size(&self) -> u32 {
        self.key_size
    }
    pub fn value_size(&self) -> u32 {
        self.value_size
    }
    pub fn max_entries(&self) -> u32 {
        self.max_entries
    }

    /// Bytes of one value as userspace reads and writes it: per-CPU maps pad each CPU's copy
    /// to 8 bytes (kernel/bpf/syscall.c `bpf_map_value_size`).
    pub fn value_buf_len(&self) -> usize {
        if self.map_type().is_some_and(MapType::is_percpu) {
            (self.value_size as usize).div_ceil(8) * 8 * possible_cpus()
        } else {
            self.value_size as usize
        }
    }

    /// Bytes of the opaque batch position token (`in_batch`/`out_batch`): the hash map uses a
    /// u32 bucket index, the generic implementation a key.
    pub fn batch_token_len(&self) -> usize {
        (self.key_size as usize).max(4)
    }

    /// BPF_MAP_LOOKUP_ELEM into `value`; `Ok(false)` when the key is absent.
    pub fn lookup(&self, key: &[u8], value: &mut [u8]) -> Result<bool, SysError> {
        self.check_len("key", key.len(), self.key_size as usize)?;
        self.check_len("value", value.len(), self.value_buf_len())?;
        let mut a = self.elem_attr(key.as_ptr(), value.as_mut_ptr(), 0);
        match bpf(Cmd::MapLookupElem, &mut a) {
            Ok(_) => Ok(true),
            Err(Errno::ENOENT) => Ok(false),
            Err(e) => Err(SysError::bare(Cmd::MapLookupElem.name(), e)),
        }
    }

    /// BPF_MAP_LOOKUP_ELEM into a fresh buffer.
    pub fn lookup_vec(&self, key: &[u8]) -> Result<Option<Vec<u8>>, SysError> {
        let mut v = vec![0u8; self.value_buf_len()];
        Ok(self.lookup(key, &mut v)?.then_some(v))
    }

    /// BPF_MAP_UPDATE_ELEM.
    pub fn update(&self, key: &[u8], value: &[u8], flags: UpdateFlags) -> Result<(), SysError> {
        self.check_len("key", key.len(), self.key_size as usize)?;
        self.check_len("value", value.len(), self.value_buf_len())?;
        let mut a = self.elem_attr(key.as_ptr(), value.as_ptr(), flags.bits());
        bpf(Cmd::MapUpdateElem, &mut a)
            .map(drop)
            .map_err(|e| SysError::bare(Cmd::MapUpdateElem.name(), e))
    }

    /// BPF_MAP_FREEZE (5.2+): from now on only BPF programs may write the map (none may,
    /// when it was created with [`MapFlags::RDONLY_PROG`]); updates from userspace fail.
    pub fn freeze(&self) -> Result<(), SysError> {
        let mut a = self.elem_attr(std::ptr::null::<u8>(), std::ptr::null::<u8>(), 0);
        bpf(Cmd::MapFreeze, &mut a)
            .map(drop)
            .map_err(|e| SysError::bare(Cmd::MapFreeze.name(), e))
    }

    /// BPF_MAP_DELETE_ELEM; `Ok(false)` when the key was absent.
    pub fn delete(&self, key: &[u8]) -> Result<bool, SysError> {
        self.check_len("key", key.len(), self.key_size as usize)?;
        let mut a = self.elem_attr(key.as_ptr(), std::ptr::null::<u8>(), 0);
        match bpf(Cmd::MapDeleteElem, &mut a) {
            Ok(_) => Ok(true),
            Err(Errno::ENOENT) => Ok(false),
            Err(e) => Err(SysError::bare(Cmd::MapDeleteElem.name(), e)),
        }
    }

    /// BPF_MAP_GET_NEXT_KEY: the key after `key` (the first key when `None`) into `next`;
    /// `Ok(false)` at the end.
    pub fn next_key(&self, key: Option<&[u8]>, next: &mut [u8]) -> Result<bool, SysError> {
        if let Some(k) = key {
            self.check_len("key", k.len(), self.key_size as usize)?;
        }
        self.check_len("next key", next.len(), self.key_size as usize)?;
        let kp = key.map_or(std::ptr::null(), |k| k.as_ptr());
        let mut a = self.elem_attr(kp, next.as_mut_ptr(), 0);
        match bpf(Cmd::MapGetNextKey, &mut a) {
            Ok(_) => Ok(true),
            Err(Errno::ENOENT) => Ok(false),
            Err(e) => Err(SysError::bare(Cmd::MapGetNextKey.name(), e)),
        }
    }

    /// All keys, by BPF_MAP_GET_NEXT_KEY iteration.
    pub fn keys(&self) -> Result<Vec<Vec<u8>>, SysError> {
        let mut out: Vec<Vec<u8>> = Vec::new();
        let mut next = vec![0u8; self.key_size as usize];
        while self.next_key(out.last().map(|k| k.as_slice()), &mut next)? {
            out.push(next.clone());
        }
        Ok(out)
    }

    /// BPF_MAP_LOOKUP_BATCH: up to `keys.len() / key_size` elements starting at `in_batch`
    /// (`None` = from the start). `out_batch` receives the position to pass next; both are
    /// [`Map::batch_token_len`] bytes. Values are [`Map::value_buf_len`] bytes each.
    pub fn lookup_batch(
        &self,
        in_batch: Option<&[u8]>,
        out_batch: &mut [u8],
        keys: &mut [u8],
        values: &mut [u8],
    ) -> Result<Batch, SysError> {
        self.batch(Cmd::MapLookupBatch, in_batch, out_batch, keys, values)
    }

    /// BPF_MAP_LOOKUP_AND_DELETE_BATCH: like [`Map::lookup_batch`], deleting what it returns.
    pub fn lookup_and_delete_batch(
        &self,
        in_batch: Option<&[u8]>,
        out_batch: &mut [u8],
        keys: &mut [u8],
        values: &mut [u8],
    ) -> Result<Batch, SysError> {
        self.batch(
            Cmd::MapLookupAndDeleteBatch,
            in_batch,
            out_batch,
            keys,
            values,
        )
    }

    fn batch(
        &self,
        cmd: Cmd,
        in_batch: Option<&[u8]>,
        out_batch: &mut [u8],
        keys: &mut [u8],
        values: &mut [u8],
    ) -> Result<Batch, SysError> {
        let tok = self.batch_token_len();
        if let Some(b) = in_batch {
            self.check_len("in_batch", b.len(), tok)?;
        }
        self.check_len("out_batch", out_batch.len(), tok)?;
        let ks = (self.key_size as usize).max(1);
        let count = (keys.len() / ks).min(values.len() / self.value_buf_len().max(1));
        let mut a = MapBatchAttr {
            in_batch: in_batch.map_or(0, |b| ptr(b.as_ptr())),
            out_batch: ptr(out_batch.as_ptr()),
            keys: ptr(keys.as_ptr()),
            values: ptr(values.as_ptr()),
            count: count as u32,
            map_fd: self.fd.as_raw_fd() as u32,
            ..Default::default()
        };
        match bpf(cmd, &mut a) {
            Ok(_) => Ok(Batch {
                count: a.count,
                done: false,
            }),
            Err(Errno::ENOENT) => Ok(Batch {
                count: a.count,
                done: true,
            }),
            Err(e) => Err(SysError::bare(cmd.name(), e)),
        }
    }

    fn elem_attr<K, V>(&self, key: *const K, value: *const V, flags: u64) -> MapElemAttr {
        MapElemAttr {
            map_fd: self.fd.as_raw_fd() as u32,
            key: ptr(key),
            value: ptr(value),
            flags,
            ..Default::default()
        }
    }

    /// A wrong-sized buffer would let the kernel read or write past it: refuse it here.
    fn check_len(&self, what: &'static str, got: usize, want: usize) -> Result<(), SysError> {
        if got == want {
            return Ok(());
        }
        Err(SysError {
            call: "map access",
            errno: Errno::EINVAL,
            cause: Some(super::error::Cause::Other(format!(
                "{what} buffer is {got} bytes, the map needs {want}"
            ))),
        })
    }
}

impl AsFd for Map {
    fn as_fd(&self) -> BorrowedFd<'_> {
        self.fd.as_fd()
    }
}

impl AsRawFd for Map {
    fn as_raw_fd(&self) -> RawFd {
        self.fd.as_raw_fd()
    }
}

impl From<Map> for OwnedFd {
    fn from(m: Map) -> OwnedFd {
        m.fd
    }
}

/// Number of possible CPUs (`/sys/devices/system/cpu/possible`, e.g. `0-3`), which sizes
/// per-CPU values; falls back to the online count.
pub fn possible_cpus() -> usize {
    static N: std::sync::OnceLock<usize> = std::sync::OnceLock::new();
    *N.get_or_init(|| {
        std::fs::read_to_string("/sys/devices/system/cpu/possible")
            .ok()
            .and_then(|s| parse_cpu_list(&s))
            .unwrap_or_else(|| std::thread::available_parallelism().map_or(1, |n| n.get()))
    })
}

/// Parses a kernel CPU list (`0-3,5,7-8`) into the count of CPUs up to the highest one.
pub fn parse_cpu_list(s: &str) -> Option<usize> {
    let mut max = None;
    for part in s.trim().split(',').filter(|p| !p.is_empty()) {
        let hi = part.rsplit('-').next()?.trim().parse::<usize>().ok()?;
        max = Some(max.map_or(hi, |m: usize| m.max(hi)));
    }
    max.map(|m| m + 1)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn cpu_lists_count_up_to_the_highest_cpu() {
        assert_eq!(parse_cpu_list("0-3\n"), Some(4));
        assert_eq!(parse_cpu_list("0"), Some(1));
        assert_eq!(parse_cpu_list("0-1,4"), Some(5));
        assert_eq!(parse_cpu_list("x"), None);
    }

    #[test]
    fn map_create_fills_the_attr_from_the_options() {
        use crate::sys::call::with_hook;
        let seen = std::rc::Rc::new(std::cell::RefCell::new(Vec::new()));
        let s2 = seen.clone();
        let r = with_hook(
            move |cmd, bytes| {
                s2.borrow_mut().push((cmd, bytes.to_vec()));
                Err(Errno::EINVAL)
            },
            || {
                Map::create(
                    MapType::Hash,
                    &MapCreateOptions {
                        name: "counts",
                        key_size: 8,
                        value_size: 16,
                        max_entries: 1024,
                        flags: MapFlags::NO_PREALLOC,
                        ..Default::default()
                    },
                )
            },
        );
        let err = r.unwrap_err();
        assert_eq!((err.call, err.errno), ("BPF_MAP_CREATE", Errno::EINVAL));
        let (cmd, b) = &seen.borrow()[0];
        assert_eq!(*cmd, Cmd::MapCreate);
        let word = |i: usize| u32::from_le_bytes(b[i * 4..i * 4 + 4].try_into().unwrap());
        assert_eq!(
            (word(0), word(1), word(2), word(3), word(4)),
            (1, 8, 16, 1024, 1)
        );
        assert_eq!(&b[28..34], b"counts");
    }
}
