//! `self`, `test` and `bench`: listed by expanding the pattern as written ([`PLAIN`]).

use super::{Hooks, PLAIN};

pub(super) const SELF: Hooks = PLAIN;
pub(super) const TEST: Hooks = PLAIN;
pub(super) const BENCH: Hooks = PLAIN;
