//! `watchpoint` and `asyncwatchpoint`: listed by expanding the pattern as written ([`PLAIN`]).

use super::{Hooks, PLAIN};

pub(super) const WATCHPOINT: Hooks = PLAIN;
pub(super) const ASYNCWATCHPOINT: Hooks = PLAIN;
