//! Errors from parsing and querying BTF. Every malformed input maps to one of these; nothing in
//! `crate::btf` panics on bad bytes.

use std::path::PathBuf;

/// What went wrong while reading, parsing or querying BTF.
#[derive(Debug, thiserror::Error)]
pub enum BtfError {
    #[error("cannot read BTF from {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("BTF blob is {len} bytes, shorter than its {needed}-byte header")]
    TooShort { len: usize, needed: usize },
    #[error("bad BTF magic {magic:#06x} (expected 0xeb9f)")]
    BadMagic { magic: u16 },
    #[error("big-endian BTF is not supported")]
    BigEndian,
    #[error("unsupported BTF version {version} (only version 1 exists)")]
    UnsupportedVersion { version: u8 },
    #[error("BTF {section} section [{start}, {start}+{len}) lies outside the {total}-byte blob")]
    SectionOutOfBounds {
        section: &'static str,
        start: u64,
        len: u64,
        total: usize,
    },
    #[error("BTF type section is not 4-byte aligned (offset {offset})")]
    Misaligned { offset: u32 },
    #[error("BTF type {id} at byte {offset} is truncated")]
    TruncatedType { id: u32, offset: usize },
    #[error("BTF type {id} has unknown kind {kind}")]
    UnknownKind { id: u32, kind: u32 },
    #[error("BTF string section is not valid UTF-8 (at byte {offset})")]
    StringsNotUtf8 { offset: usize },
    #[error("BTF base string section does not start with a NUL byte")]
    StringsNoLeadingNul,
    #[error(
        "BTF type {id} refers to string offset {offset}, outside the string section ({len} bytes)"
    )]
    BadStringOffset { id: u32, offset: u32, len: u32 },
    #[error("BTF type id {id} does not exist (last id is {last})")]
    BadTypeId { id: u32, last: u32 },
    #[error("BTF type {id} is a {found}, expected {expected}")]
    UnexpectedKind {
        id: u32,
        expected: &'static str,
        found: &'static str,
    },
    #[error("BTF type {id} has no size ({kind})")]
    NoSize { id: u32, kind: &'static str },
    #[error("BTF type chain starting at {id} is too deep or cyclic")]
    TooDeep { id: u32 },
    #[error("size of BTF type {id} overflows")]
    SizeOverflow { id: u32 },
    #[error("BTF has too many types ({count})")]
    TooManyTypes { count: u64 },
    #[error("{record} has no member named `{member}`")]
    NoMember { record: String, member: String },
    #[error("no {what} named `{name}` in BTF")]
    NotFound { what: &'static str, name: String },
}
