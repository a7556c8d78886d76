//! The exit map ([`EXIT_MAP_NAME`]): how `exit()` reaches the runtime without depending on
//! the ring buffer. The generated code for `exit(code)` stores the code (`u32` at offset 0)
//! and then 1 (`u32` at offset 4) in this one-entry array unless an earlier `exit()` did (the
//! first code wins), then emits its ring-buffer record (which wakes the event loop and keeps
//! the order of output). The record can be lost when a flood has filled the buffer; the map
//! write cannot, and the event loop reads it after every drain.
//!
//! As in current bpftrace, `exit()` stops nothing in the kernel: every probe, the caller
//! included, keeps running (and updating maps) until the runtime has read the exit and
//! disarmed; the records written behind the exit record are dropped unread.

use std::os::fd::{AsRawFd, RawFd};

use crate::sys::{Map, MapCreateOptions, MapType, SysError};
use crate::template::EXIT_MAP_NAME;

#[derive(Debug)]
pub struct ExitFlag {
    map: Map,
}

impl ExitFlag {
    /// A new, clear flag (array maps start zeroed).
    pub fn create() -> Result<ExitFlag, SysError> {
        let map = Map::create(
            MapType::Array,
            &MapCreateOptions {
                name: EXIT_MAP_NAME,
                key_size: 4,
                value_size: 8,
                max_entries: 1,
                ..Default::default()
            },
        )?;
        Ok(ExitFlag { map })
    }

    /// The exit code (0–255, as the process status carries it) once a probe ran `exit()`.
    pub fn code(&self) -> Option<i32> {
        let mut v = [0u8; 8];
        self.map.lookup(&0u32.to_ne_bytes(), &mut v).ok()?;
        let code = u32::from_ne_bytes([v[0], v[1], v[2], v[3]]);
        let set = u32::from_ne_bytes([v[4], v[5], v[6], v[7]]);
        (set != 0).then_some((code & 0xff) as i32)
    }

    /// Clears the flag (between `test:`/`bench:` probes, which each start without an
    /// `exit()`).
    pub fn clear(&self) -> Result<(), SysError> {
        self.map.update(
            &0u32.to_ne_bytes(),
            &[0u8; 8],
            crate::sys::UpdateFlags::empty(),
        )
    }

    /// `(EXIT_MAP_NAME, fd)`, passed with the other maps to the probes.
    pub fn map_entry(&self) -> (&'static str, RawFd) {
        (EXIT_MAP_NAME, self.map.as_raw_fd())
    }
}
