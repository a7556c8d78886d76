//! `begin`/`end`: listed by expanding the pattern as written ([`PLAIN`]).

use super::{Hooks, PLAIN};

pub(super) const BEGIN: Hooks = PLAIN;
pub(super) const END: Hooks = PLAIN;
