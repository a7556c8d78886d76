//! `software` and `hardware`: no arguments of their own to read ([`PLAIN`]).

use super::{Hooks, PLAIN};

pub(super) const SOFTWARE: Hooks = PLAIN;
pub(super) const HARDWARE: Hooks = PLAIN;
