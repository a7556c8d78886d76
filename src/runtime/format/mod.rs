//! Output formatting: turns values read from BPF maps and ring-buffer records into exactly the
//! text and JSON bpftrace prints.
//!
//! Input: raw record/map bytes plus a layout ([`decode`]), or already-built [`Value`]s; map
//! snapshots merged across CPUs ([`agg`]); resolved symbols and stacks ([`stack`]).
//! Output: bytes for stdout. Nothing here makes a syscall or reads a file except
//! [`time::local_offset`], which asks libc for the local time zone.
//! Invariant: no input makes formatting panic (u64::MAX, i64::MIN, empty maps, huge counts).
//!
//! The reference is bpftrace 0.17 (installed on the project's hosts as the oracle; goldens in
//! tests/format/). Where current bpftrace fixed a 0.17 bug, strobe follows current bpftrace
//! and the module that does it says so.

pub mod agg;
pub mod call;
pub mod decode;
pub mod hist;
pub mod json;
pub mod maps;
pub mod net;
pub mod output;
pub mod printf;
pub mod stack;
pub mod time;
pub mod value;

pub use call::{PrintfCall, PrintfCallError};
pub use decode::{FieldType, NoResolver, Resolver};
pub use maps::{MapSnapshot, MapValue};
pub use output::{OutputFormat, Printer};
pub use printf::{ArgKind, FormatString, PrintfError};
pub use value::{TextStyle, Value};
