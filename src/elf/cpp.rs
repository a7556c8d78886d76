//! C++ symbol names of user binaries: Itanium-ABI demangling (through the `cpp_demangle`
//! crate) and bpftrace's `cpp:` matching of uprobe function patterns.
//!
//! Input: a symbol as the ELF symbol table spells it (`_ZN6strobe3addEi`) and a pattern as a
//! script spells it (`strobe::add`, `strobe::*`, `"strobe::add(int)"`).
//! Output: the demangled name (`strobe::add(int)`), and whether a pattern matches a symbol.
//! Invariants: a symbol that does not demangle matches only by its own (mangled) name; the
//! parameter list takes part in matching only when the pattern has a `(`, as in bpftrace, so
//! `ns::f` names every overload of `f`.

use cpp_demangle::{DemangleOptions, Symbol};

use crate::btf::{Glob, GlobError};

/// Whether `sym` is an Itanium-mangled C++ name (bpftrace also takes the `____Z` prefix some
/// toolchains give block-scope symbols).
pub fn is_mangled(sym: &str) -> bool {
    sym.starts_with("_Z") || sym.starts_with("____Z")
}

fn demangle_with(sym: &str, options: DemangleOptions) -> Option<String> {
    if !is_mangled(sym) {
        return None;
    }
    let s = Symbol::new(sym.trim_start_matches("___")).ok()?;
    s.demangle_with_options(&options).ok()
}

/// The demangled name with its parameter list (`ns::Cls::add(int, long)`), as `-l` shows it;
/// `None` when `sym` is not a C++ name.
pub fn demangle(sym: &str) -> Option<String> {
    demangle_with(sym, DemangleOptions::default())
}

/// The demangled name without parameters or return type (`ns::Cls::add`, `ns::max<int>`).
pub fn demangle_name(sym: &str) -> Option<String> {
    demangle_with(sym, DemangleOptions::default().no_params().no_return_type())
}

/// A uprobe function pattern under the `cpp` language qualifier.
#[derive(Debug)]
pub struct CppPattern {
    glob: Glob,
    /// The pattern names parameters (`f(int)`), so demangled names keep theirs.
    with_params: bool,
}

impl CppPattern {
    pub fn new(pattern: &str) -> Result<CppPattern, GlobError> {
        Ok(CppPattern {
            glob: Glob::new(pattern)?,
            with_params: pattern.contains('('),
        })
    }

    /// Whether the symbol `sym` matches: by its own name, else by its demangled name.
    pub fn matches(&self, sym: &str) -> bool {
        if self.glob.matches(sym) {
            return true;
        }
        let demangled = if self.with_params {
            demangle(sym)
        } else {
            demangle_name(sym)
        };
        demangled.is_some_and(|d| self.glob.matches(&d))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn demangles_namespaced_member_function() {
        // strobe_cpp::Counter::add(int)
        let sym = "_ZN10strobe_cpp7Counter3addEi";
        assert!(is_mangled(sym));
        assert_eq!(
            demangle(sym).as_deref(),
            Some("strobe_cpp::Counter::add(int)")
        );
        assert_eq!(
            demangle_name(sym).as_deref(),
            Some("strobe_cpp::Counter::add")
        );
    }

    #[test]
    fn plain_c_names_do_not_demangle() {
        assert!(!is_mangled("main"));
        assert_eq!(demangle("main"), None);
        assert_eq!(demangle("_Zgarbage"), None);
    }

    #[test]
    fn pattern_without_parens_matches_every_overload() {
        let p = CppPattern::new("strobe_cpp::Counter::add").unwrap();
        assert!(p.matches("_ZN10strobe_cpp7Counter3addEi"));
        assert!(p.matches("_ZN10strobe_cpp7Counter3addEii"));
        assert!(!p.matches("_ZN10strobe_cpp6squareEl"));
    }

    #[test]
    fn pattern_with_parens_matches_one_overload() {
        let p = CppPattern::new("strobe_cpp::Counter::add(int, int)").unwrap();
        assert!(!p.matches("_ZN10strobe_cpp7Counter3addEi"));
        assert!(p.matches("_ZN10strobe_cpp7Counter3addEii"));
    }

    #[test]
    fn wildcard_and_mangled_patterns_match() {
        let p = CppPattern::new("strobe_cpp::*").unwrap();
        assert!(p.matches("_ZN10strobe_cpp6squareEl"));
        assert!(!p.matches("main"));
        let m = CppPattern::new("_ZN10strobe_cpp6squareEl").unwrap();
        assert!(m.matches("_ZN10strobe_cpp6squareEl"));
    }
}
