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
//!
//! ```
//! use strobe::runtime::format::agg::{Agg, AggKind};
//! use strobe::runtime::format::{
//!     FieldType, MapSnapshot, MapValue, NoResolver, OutputFormat, PrintfCall, Printer,
//!     TextStyle, Value,
//! };
//!
//! // Compile time: check the call; the code generator writes arguments at `offsets()`.
//! let call = PrintfCall::new(
//!     "%s %d\n",
//!     vec![FieldType::Str { size: 16 }, FieldType::Int { bytes: 8, signed: true }],
//! )
//! .unwrap();
//! assert_eq!(call.offsets(), [0, 16]);
//!
//! // Run time: render a ring-buffer record, then print it in the chosen format.
//! let mut rec = vec![0u8; call.args_size()];
//! rec[..2].copy_from_slice(b"hi");
//! rec[16..24].copy_from_slice(&7i64.to_le_bytes());
//! let text = call.render(&rec, &NoResolver, TextStyle::default()).unwrap();
//! let mut out = Vec::new();
//! Printer::new(OutputFormat::Json).printf(&mut out, &text);
//! assert_eq!(out, b"{\"type\": \"printf\", \"data\": \"hi 7\\n\"}\n");
//!
//! // At exit: merge per-CPU slots and print the maps.
//! let per_cpu: Vec<u8> = [2u64, 3].iter().flat_map(|w| w.to_le_bytes()).collect();
//! let map = MapSnapshot {
//!     name: "@c".into(),
//!     entries: vec![(vec![Value::str("bash")], MapValue::Agg(AggKind::Count.merge(&per_cpu)))],
//! };
//! let mut out = Vec::new();
//! Printer::new(OutputFormat::Text).exit_maps(&mut out, &[map]);
//! assert_eq!(out, b"\n\n@c[bash]: 5\n");
//! # let _ = Agg::Count(0);
//! ```

pub mod agg;
pub mod call;
pub mod decode;
pub mod gfp;
pub mod hist;
pub mod json;
pub mod maps;
pub mod net;
pub mod output;
pub mod printf;
pub mod results;
pub mod stack;
pub mod syscalls;
pub mod time;
pub mod tseries;
pub mod value;

pub use call::{PrintfCall, PrintfCallError};
pub use decode::{FieldType, NoResolver, Resolver};
pub use maps::{MapSnapshot, MapValue};
pub use output::{OutputFormat, Printer};
pub use printf::{ArgKind, FormatString, PrintfError};
pub use value::{TextStyle, Value};
