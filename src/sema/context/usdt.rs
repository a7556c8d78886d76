//! `usdt`: no arguments of their own to read ([`PLAIN`]).

use super::{Hooks, PLAIN};

pub(super) const USDT: Hooks = PLAIN;
