//! Value layouts: how the code generator lays out a value in a record or map, and how the
//! runtime reads it back ([`FieldType::size`], [`FieldType::align`], [`tuple_offsets`]: C
//! struct rules). The byte layout of each type is described in `runtime::format::decode`.
//! No syscalls, no formatting.

use std::sync::Arc;

/// The layout of one value in a record or map.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum FieldType {
    /// 1, 2, 4 or 8 bytes.
    Int {
        bytes: u8,
        signed: bool,
    },
    Bool,
    /// An integer of an enum type: printed as its enumerator's name when it has one.
    Enum {
        bytes: u8,
        signed: bool,
        /// `(value, name)` of each enumerator.
        variants: std::sync::Arc<Vec<(i64, String)>>,
    },
    Pointer,
    /// A NUL-terminated string in a buffer of `size` bytes.
    Str {
        size: usize,
    },
    Buf {
        capacity: usize,
    },
    Tuple(Vec<FieldType>),
    Array {
        elem: Box<FieldType>,
        len: usize,
    },
    Record(Vec<(String, FieldType)>),
    MacAddr,
    Inet,
    KSym,
    USym,
    KStack {
        limit: usize,
        mode: StackMode,
    },
    UStack {
        limit: usize,
        mode: StackMode,
    },
    Username,
    Probe,
    /// `strftime(format, ns)`.
    Timestamp {
        format: String,
    },
    /// `cgroup_path(id, filter)`: `u64` cgroup id, printed as its paths.
    CgroupPath {
        filter: String,
    },
    /// `strerror(errno)`: `u64` errno, printed as the C library's message.
    Strerror,
    /// `syscall_name(nr)`: `u64` system call number, printed as its name.
    SyscallName,
    /// `signal_name(sig)`: `u64` signal number, printed as its description.
    SignalName,
    /// A C struct or union value, copied whole.
    Struct(Arc<StructLayout>),
    /// Bytes strobe does not decode (a `float` member): printed as none.
    Opaque {
        size: usize,
        align: usize,
    },
}

/// The layout of a C struct/union value: its size and members, as the C compiler placed them.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructLayout {
    pub size: usize,
    pub align: usize,
    /// In declaration order; members of anonymous inner structs/unions appear in their place.
    pub fields: Vec<StructField>,
}

/// One member of a [`StructLayout`].
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct StructField {
    pub name: String,
    /// Byte offset from the start of the struct.
    pub offset: usize,
    pub ty: FieldType,
    /// A bitfield: `(shift, width)` — the value is `width` bits starting `shift` bits into the
    /// little-endian bytes at `offset` (`shift + width` ≤ 64; `ty` is the declared integer).
    pub bits: Option<(u8, u8)>,
}

impl FieldType {
    /// Size in bytes.
    pub fn size(&self) -> usize {
        match self {
            FieldType::Int { bytes, .. } | FieldType::Enum { bytes, .. } => *bytes as usize,
            FieldType::Bool => 1,
            FieldType::Pointer
            | FieldType::KSym
            | FieldType::Username
            | FieldType::Probe
            | FieldType::Timestamp { .. }
            | FieldType::CgroupPath { .. }
            | FieldType::Strerror
            | FieldType::SyscallName
            | FieldType::SignalName => 8,
            FieldType::Str { size } => *size,
            FieldType::Buf { capacity } => align_up(4 + capacity, 4),
            FieldType::Tuple(fs) => struct_size(fs.iter()),
            FieldType::Record(fs) => struct_size(fs.iter().map(|f| &f.1)),
            FieldType::Array { elem, len } => elem.size().saturating_mul(*len),
            FieldType::MacAddr => 6,
            FieldType::Inet => 24,
            FieldType::USym => 16,
            FieldType::KStack { .. } => 8,
            FieldType::UStack { .. } => 16,
            FieldType::Struct(l) => l.size,
            FieldType::Opaque { size, .. } => *size,
        }
    }

    /// Alignment in bytes.
    pub fn align(&self) -> usize {
        match self {
            FieldType::Int { bytes, .. } | FieldType::Enum { bytes, .. } => {
                (*bytes as usize).clamp(1, 8)
            }
            FieldType::Bool | FieldType::Str { .. } | FieldType::MacAddr => 1,
            FieldType::Buf { .. } => 4,
            FieldType::Tuple(fs) => fs.iter().map(FieldType::align).max().unwrap_or(1),
            FieldType::Record(fs) => fs.iter().map(|f| f.1.align()).max().unwrap_or(1),
            FieldType::Array { elem, .. } => elem.align(),
            FieldType::Struct(l) => l.align.clamp(1, 8),
            FieldType::Opaque { align, .. } => (*align).clamp(1, 8),
            _ => 8,
        }
    }
}

pub(crate) fn align_up(n: usize, a: usize) -> usize {
    n.div_ceil(a.max(1)).saturating_mul(a.max(1))
}

fn struct_size<'a>(fields: impl Iterator<Item = &'a FieldType>) -> usize {
    let mut off = 0;
    let mut max_align = 1;
    for f in fields {
        off = align_up(off, f.align()) + f.size();
        max_align = max_align.max(f.align());
    }
    align_up(off, max_align)
}

/// Byte offsets of each field of a tuple (also a printf record's arguments) laid out by C rules.
pub fn tuple_offsets(fields: &[FieldType]) -> Vec<usize> {
    let mut off = 0;
    fields
        .iter()
        .map(|f| {
            off = align_up(off, f.align());
            let at = off;
            off += f.size();
            at
        })
        .collect()
}

/// How a stack is laid out (`kstack(perf)`, `-B` style `ustack(raw)` …).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default, Hash)]
pub enum StackMode {
    /// bpftrace's default: 8-space indent, `name+offset`.
    #[default]
    Bpftrace,
    /// `\t<hex addr> name+offset[ (module)]`, the layout perf script and flame graph tools read.
    Perf,
    /// Hex addresses only.
    Raw,
    /// `ustack(build_id)`: each frame as `<build id in hex> 0x<offset in that object>`, or the
    /// hex address when the kernel could not read the object's build id. The frames come from
    /// a stack-trace map created with `BPF_F_STACK_BUILD_ID`
    /// ([`crate::plan::build_id_stack_map_spec`]).
    BuildId,
}

/// A signal's description as `strsignal(3)` gives it for 1–31 on Linux, "Real-time signal N"
/// from SIGRTMIN+N (34), "Unknown signal N" for 0, 32 and 33 (the C library's own real-time
/// signals) and "N/A" past SIGRTMAX (64), as bpftrace's `signal_name` prints them.
pub fn signal_text(n: i64) -> String {
    match n {
        1..=31 => {
            // SAFETY: strsignal returns a NUL-terminated string (a static table entry for
            // these numbers), copied at once.
            let p = unsafe { libc::strsignal(n as i32) };
            if p.is_null() {
                return format!("Unknown signal {n}");
            }
            unsafe { std::ffi::CStr::from_ptr(p) }
                .to_string_lossy()
                .into_owned()
        }
        0 | 32 | 33 => format!("Unknown signal {n}"),
        34..=64 => format!("Real-time signal {}", n - 34),
        _ => "N/A".into(),
    }
}

/// The C library's message for errno `n` (`strerror(3)`, as bpftrace prints `strerror()`):
/// "Unknown error N" for numbers it does not know.
pub fn strerror_text(n: i32) -> String {
    let s = std::io::Error::from_raw_os_error(n).to_string();
    // std appends " (os error N)" to the C library's text.
    match s.rfind(" (os error") {
        Some(i) => s[..i].to_string(),
        None => s,
    }
}
