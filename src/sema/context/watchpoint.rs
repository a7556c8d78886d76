//! `watchpoint` and `asyncwatchpoint`: no arguments of their own to read ([`PLAIN`]).

use super::{Hooks, PLAIN};

pub(super) const WATCHPOINT: Hooks = PLAIN;
pub(super) const ASYNCWATCHPOINT: Hooks = PLAIN;
