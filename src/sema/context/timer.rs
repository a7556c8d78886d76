//! `interval` and `profile`: no arguments of their own to read ([`PLAIN`]).

use super::{Hooks, PLAIN};

pub(super) const PROFILE: Hooks = PLAIN;
pub(super) const INTERVAL: Hooks = PLAIN;
