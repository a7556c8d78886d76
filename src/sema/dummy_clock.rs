//! The `STROBE_DUMMY_TS_MAP` / `BPFTRACE_DUMMY_TS_MAP` test hook: `tseries()` reads its clock
//! from a scalar map of an integer instead of the kernel's (bpftrace's runtime tests
//! step `@ts` by hand to put values in chosen intervals). The checker makes sure the named map
//! can serve as a clock; the code generator reads it (`codegen::emit::tseries`).

use super::resolve::Checker;
use super::Type;
use crate::plan::agg::AggKind;

impl Checker<'_> {
    /// When the hook names a map and the script has a time series: that map must exist, have
    /// no key and hold an integer.
    pub(super) fn check_dummy_ts_map(&mut self) {
        let Some(name) = self.opts.dummy_ts_map.clone() else {
            return;
        };
        let Some(span) = self
            .maps
            .entries
            .iter()
            .find(|e| matches!(e.value, Some(Type::Agg(AggKind::TSeries(_)))))
            .map(|e| e.span)
        else {
            return;
        };
        let problem = match self.maps.entries.iter().find(|e| e.name == name) {
            None => "is not a map of this script",
            Some(e) if e.keys.as_ref().is_some_and(|k| !k.is_empty()) => "must be scalar",
            Some(e) => match &e.value {
                // Read as a u64 whatever its signedness (bpftrace wants an unsigned integer,
                // but types `@ts = (uint64)0; @ts += 100ms` as one where strobe may not).
                Some(t) if t.is_integer() => return,
                _ => "value must be an integer",
            },
        };
        self.error(span, format!("dummy_ts_map: \"{name}\" {problem}"));
    }
}
