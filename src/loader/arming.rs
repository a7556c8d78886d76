//! The arming flag (see `template::guard`): a one-entry array map the guard reads. Created
//! disarmed; one map write arms or disarms every program that refers to it.

use std::os::fd::{AsRawFd, RawFd};

use crate::sys::{Map, MapCreateOptions, MapType, SysError, UpdateFlags};
use crate::template::ARM_MAP_NAME;

#[derive(Debug)]
pub struct Arming {
    map: Map,
}

impl Arming {
    /// A new, disarmed flag (array maps start zeroed).
    pub fn create() -> Result<Arming, SysError> {
        let map = Map::create(
            MapType::Array,
            &MapCreateOptions {
                name: ARM_MAP_NAME,
                key_size: 4,
                // Two flags: every program but uprobes, then uprobes
                // (`template::USER_FLAG_OFF`).
                value_size: 8,
                max_entries: 1,
                ..Default::default()
            },
        )?;
        Ok(Arming { map })
    }

    /// Events flow from every attached program from now on.
    pub fn arm(&self) -> Result<(), SysError> {
        self.set(1, 1)
    }

    /// Only uprobe programs go on running (`exit()`: until their attachments are closed).
    pub fn user_only(&self) -> Result<(), SysError> {
        self.set(0, 1)
    }

    /// Events stop at once, before any link is closed.
    pub fn disarm(&self) -> Result<(), SysError> {
        self.set(0, 0)
    }

    pub fn is_armed(&self) -> Result<bool, SysError> {
        let mut v = [0u8; 8];
        self.map.lookup(&0u32.to_ne_bytes(), &mut v)?;
        Ok(v != [0u8; 8])
    }

    /// The flag's map (`--pin` pins it so the attachment can be disarmed later).
    pub fn map(&self) -> &Map {
        &self.map
    }

    /// `(ARM_MAP_NAME, fd)`, to pass with the other maps to [`super::map_fds_for`].
    pub fn map_entry(&self) -> (&'static str, RawFd) {
        (ARM_MAP_NAME, self.map.as_raw_fd())
    }

    /// Sets the flag of every program but uprobes, and that of uprobes.
    fn set(&self, kernel: u32, user: u32) -> Result<(), SysError> {
        let mut v = [0u8; 8];
        v[..4].copy_from_slice(&kernel.to_ne_bytes());
        v[4..].copy_from_slice(&user.to_ne_bytes());
        self.map
            .update(&0u32.to_ne_bytes(), &v, UpdateFlags::empty())
    }
}
