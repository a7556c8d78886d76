//! `self`, `test` and `bench`: no arguments of their own to read ([`PLAIN`]).

use super::{Hooks, PLAIN};

pub(super) const SELF: Hooks = PLAIN;
pub(super) const TEST: Hooks = PLAIN;
pub(super) const BENCH: Hooks = PLAIN;
