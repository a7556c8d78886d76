//! `begin`/`end`: no arguments of their own to read ([`PLAIN`]).

use super::{Hooks, PLAIN};

pub(super) const BEGIN: Hooks = PLAIN;
pub(super) const END: Hooks = PLAIN;
