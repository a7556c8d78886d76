//! `interval` and `profile`: listed by expanding the pattern as written ([`PLAIN`]).

use super::{Hooks, PLAIN};

pub(super) const PROFILE: Hooks = PLAIN;
pub(super) const INTERVAL: Hooks = PLAIN;
