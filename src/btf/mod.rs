//! Kernel BTF: vmlinux and module (split) BTF parsed and indexed behind strobe's own types.
//!
//! Input: a BTF blob (`/sys/kernel/btf/vmlinux`, `/sys/kernel/btf/<module>`, or bytes built by
//! [`encode::BtfBuilder`]). Output: a [`Btf`] that answers lookups by id, by name and by glob,
//! plus resolution helpers (sizes, members, prototypes, C-like printing) for the checker.
//!
//! Invariants once [`Btf::parse`] returns `Ok`: every type record lies inside the type section;
//! every name offset (of types, members, parameters, enumerators) points at a valid UTF-8 string,
//! so names are returned infallibly; type ids *referenced* by records are checked only when
//! followed, and a bad one is a [`BtfError`], never a panic.
//!
//! Why an own parser rather than `aya_obj::btf::Btf` (measured by `benches/btf.rs`, which runs
//! both on the host's 5.5 MB vmlinux blob, release build): aya-obj decodes every record into an
//! owned enum (a `Vec` per struct, enum and prototype) and keeps no name index, so its parse
//! alone took ~8 ms against ~4-5 ms for this parser *including* the sorted function index, and
//! finding one function by name is a linear scan (~3 ms per lookup against ~0.2 µs here). To
//! meet the lookup targets on top of aya-obj we would have to build the same index over its
//! types anyway. strobe only reads kernel BTF, so a zero-copy reader over the bytes with one
//! offset table (4 bytes per type) is both simpler and faster; writing BTF for BPF_BTF_LOAD is
//! [`encode::BtfBuilder`]'s job.

mod class;
pub mod encode;
mod error;
pub mod glob;
mod index;
mod kernel;
mod print;
mod raw;
mod resolve;
mod types;

#[cfg(test)]
mod tests;

use std::ffi::CStr;
use std::sync::{Arc, OnceLock};

pub use class::{MemberAccess, TypeClass};
pub use error::BtfError;
pub use glob::{Glob, GlobError};
pub use kernel::{kernel_btf_modules, FuncTarget, KernelBtf, VMLINUX_PATH};
pub use raw::Kind;
pub use resolve::MemberRef;
pub use types::{
    ArrayInfo, DatasecEntry, Enumerator, Enumerators, FuncProto, IntInfo, Linkage, Member, Members,
    Param, Type, TypeKind,
};

use index::FuncEntry;
use raw::{info_kind, info_vlen, u32_at, Header, TYPE_LEN};

/// How much of a blob [`Btf::build_as`] checks. The running kernel's own BTF (sysfs) was
/// checked by the kernel when it loaded it (`btf_parse` in `kernel/bpf/btf.c` rejects bad name
/// offsets), so its member names are not checked again: in a TCG guest that loop cost about as
/// much as reading the file. Names stay infallible either way (a bad offset reads as "").
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
enum Trust {
    Untrusted,
    Kernel,
}

/// The blob's storage: read into memory, or mapped from a file.
enum Bytes {
    Owned(Vec<u8>),
    Mapped(memmap2::Mmap),
}

impl std::ops::Deref for Bytes {
    type Target = [u8];
    fn deref(&self) -> &[u8] {
        match self {
            Bytes::Owned(v) => v,
            Bytes::Mapped(m) => m,
        }
    }
}

/// A parsed BTF object: vmlinux's, or a module's split BTF stacked on its base.
///
/// Type ids of a split object continue after its base's last id, and its string offsets
/// continue after the base's string section; lookups of single items (by id, by exact name)
/// fall through to the base, while enumerations (`types`, `funcs`, globs) cover this object's
/// own entries only.
pub struct Btf {
    bytes: Bytes,
    /// Absolute byte range of this object's own string section.
    strs: (usize, usize),
    /// Absolute offset of each own type record; index `i` is type id `first_id + i`.
    offsets: Vec<u32>,
    first_id: u32,
    /// Length of the base's logical string space: offsets below it are the base's strings.
    str_base: u32,
    base: Option<Arc<Btf>>,
    /// Own FUNC entries sorted by name, built on first exact-name lookup (a wildcard alone
    /// scans instead: in a TCG guest sorting 56k names cost more than the rest of the parse).
    funcs: OnceLock<Vec<FuncEntry>>,
    /// Own named non-FUNC types sorted by (name, kind), built on first use.
    names: OnceLock<Vec<FuncEntry>>,
}

impl std::fmt::Debug for Btf {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Btf")
            .field("first_id", &self.first_id)
            .field("types", &self.offsets.len())
            .field("funcs", &self.funcs.get().map(Vec::len))
            .field("split", &self.base.is_some())
            .finish()
    }
}

impl Btf {
    /// Parses a standalone (base) BTF blob, e.g. vmlinux's.
    pub fn parse(bytes: impl Into<Vec<u8>>) -> Result<Btf, BtfError> {
        Btf::build(Bytes::Owned(bytes.into()), None)
    }

    /// Parses split BTF (a kernel module's) whose ids and strings continue `base`'s.
    pub fn parse_split(bytes: impl Into<Vec<u8>>, base: &Arc<Btf>) -> Result<Btf, BtfError> {
        Btf::build(Bytes::Owned(bytes.into()), Some(base.clone()))
    }

    fn build(bytes: Bytes, base: Option<Arc<Btf>>) -> Result<Btf, BtfError> {
        Btf::build_as(bytes, base, Trust::Untrusted)
    }

    fn build_as(bytes: Bytes, base: Option<Arc<Btf>>, trust: Trust) -> Result<Btf, BtfError> {
        if bytes.len() > u32::MAX as usize {
            return Err(BtfError::SectionOutOfBounds {
                section: "blob",
                start: 0,
                len: bytes.len() as u64,
                total: bytes.len(),
            });
        }
        let hdr = Header::parse(&bytes)?;
        let strs = &bytes[hdr.strs.0..hdr.strs.1];
        if let Err(e) = crate::timings::time("btf_utf8", || std::str::from_utf8(strs)) {
            return Err(BtfError::StringsNotUtf8 {
                offset: e.valid_up_to(),
            });
        }
        if base.is_none() && strs.first().is_some_and(|&b| b != 0) {
            return Err(BtfError::StringsNoLeadingNul);
        }
        let (first_id, str_base) = match &base {
            Some(b) => (b.last_id() + 1, b.str_len()),
            None => (1, 0),
        };
        let mut btf = Btf {
            strs: hdr.strs,
            offsets: Vec::new(),
            first_id,
            str_base,
            base,
            funcs: OnceLock::new(),
            names: OnceLock::new(),
            bytes: Bytes::Owned(Vec::new()),
        };
        btf.bytes = bytes;
        crate::timings::time("btf_walk", || btf.index_types(hdr.types, trust))?;
        Ok(btf)
    }

    /// Walks the type section once: records each type's offset and validates its extent and
    /// every name offset it carries.
    fn index_types(&mut self, (start, end): (usize, usize), trust: Trust) -> Result<(), BtfError> {
        let b: &[u8] = &self.bytes;
        // A record is at least 12 bytes; reserve for the common case without trusting vlen.
        let mut offsets = Vec::with_capacity((end - start) / 24);
        let mut off = start;
        let mut id = self.first_id as u64;
        while off < end {
            if id > u32::MAX as u64 - 1 {
                return Err(BtfError::TooManyTypes { count: id });
            }
            let idu = id as u32;
            if end - off < TYPE_LEN {
                return Err(BtfError::TruncatedType {
                    id: idu,
                    offset: off,
                });
            }
            let info = u32_at(b, off + 4);
            let kind = raw::Kind::from_u32(info_kind(info)).ok_or(BtfError::UnknownKind {
                id: idu,
                kind: info_kind(info),
            })?;
            let vlen = info_vlen(info);
            let rec_end = off + TYPE_LEN + kind.trailing_len(vlen);
            if rec_end > end {
                return Err(BtfError::TruncatedType {
                    id: idu,
                    offset: off,
                });
            }
            self.check_name(idu, u32_at(b, off))?;
            let stride = match kind {
                Kind::Struct | Kind::Union | Kind::Enum64 => 12,
                Kind::Enum | Kind::FuncProto => 8,
                _ => 0,
            };
            if stride != 0 && trust == Trust::Untrusted {
                let mut m = off + TYPE_LEN;
                while m < rec_end {
                    self.check_name(idu, u32_at(b, m))?;
                    m += stride;
                }
            }
            offsets.push(off as u32);
            off = rec_end;
            id += 1;
        }
        self.offsets = offsets;
        Ok(())
    }

    /// A name offset is valid when it starts a character inside the string space; the string
    /// then ends at the next NUL or the section's end, so no scan is needed here.
    fn check_name(&self, id: u32, name_off: u32) -> Result<(), BtfError> {
        let ok = if name_off < self.str_base {
            self.base.as_ref().is_some_and(|b| b.str_start_ok(name_off))
        } else {
            self.str_start_ok(name_off)
        };
        match ok {
            true => Ok(()),
            false => Err(BtfError::BadStringOffset {
                id,
                offset: name_off,
                len: self.str_len(),
            }),
        }
    }

    fn str_start_ok(&self, off: u32) -> bool {
        if off < self.str_base {
            return self.base.as_ref().is_some_and(|b| b.str_start_ok(off));
        }
        let own = self.own_strs();
        let local = (off - self.str_base) as usize;
        (local < own.len() && own.is_char_boundary(local)) || (off == 0 && own.is_empty())
    }

    /// This object's own string section as text (validated as UTF-8 when parsed).
    fn own_strs(&self) -> &str {
        let s = self.bytes.get(self.strs.0..self.strs.1).unwrap_or_default();
        // SAFETY: `build` checked with `str::from_utf8` that exactly this range is UTF-8, and
        // neither `bytes` nor `strs` change afterwards. Re-validating here would make every
        // name access O(string section).
        unsafe { std::str::from_utf8_unchecked(s) }
    }

    /// The string at logical offset `off` (own or base), or `None` when it is invalid.
    fn str_checked(&self, off: u32) -> Option<&str> {
        if off < self.str_base {
            return self.base.as_ref()?.str_checked(off);
        }
        let own = self.own_strs();
        let rest = own.get((off - self.str_base) as usize..)?;
        if rest.is_empty() {
            return (off == self.str_base).then_some("");
        }
        let end = match CStr::from_bytes_until_nul(rest.as_bytes()) {
            Ok(c) => c.to_bytes().len(),
            Err(_) => rest.len(),
        };
        rest.get(..end)
    }

    /// The string at any offset of the string space (e.g. `.BTF.ext`'s section names and CO-RE
    /// access strings), `None` when the offset does not start a string.
    pub fn string_at(&self, off: u32) -> Option<&str> {
        self.str_start_ok(off).then(|| self.str_at(off))
    }

    /// The string at a validated name offset; "" if (impossibly) invalid.
    #[inline]
    fn str_at(&self, off: u32) -> &str {
        self.str_checked(off).unwrap_or_default()
    }

    /// Length of the logical string space (base's plus own).
    pub fn str_len(&self) -> u32 {
        self.str_base
            .saturating_add((self.strs.1 - self.strs.0) as u32)
    }

    /// The first type id this object defines (1 for base BTF).
    pub fn first_id(&self) -> u32 {
        self.first_id
    }

    /// The last valid type id (own or, if none, the base's).
    pub fn last_id(&self) -> u32 {
        self.first_id + self.offsets.len() as u32 - 1
    }

    /// Number of types this object itself defines (not counting void or its base).
    pub fn own_type_count(&self) -> usize {
        self.offsets.len()
    }

    /// The base this split BTF stacks on, if any.
    pub fn base(&self) -> Option<&Arc<Btf>> {
        self.base.as_ref()
    }

    /// Whether this is split BTF (a module's).
    pub fn is_split(&self) -> bool {
        self.base.is_some()
    }
}
