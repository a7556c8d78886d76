//! The one registry of builtins: every builtin value (`pid`, `comm`, `retval`, `args`) and
//! function (`count()`, `printf()`, `str()`) is a [`Builtin`] entry, defined once, with its
//! arity, the probe kinds it is valid in, whether it needs `--unsafe`, whether it is an
//! aggregation (map values only), and its type rule.
//!
//! Input: a name (and, for the type rule, a [`CallCtx`] with the argument types). Output: the
//! entry, or the nearest known name for a did-you-mean hint.
//!
//! Each entry carries its typed id ([`ValueId`] or [`FuncId`], in `id.rs`). The checker looks a
//! name up here once per identifier or call and records the id in the checked program
//! (`CheckedProgram::builtins`, by expression); the checker's extra rules and the code
//! generator then `match` on the id with no catch-all arm, never on the name.
//! Invariants: names are unique per form across [`REGISTRY`]; every id has exactly one entry
//! and every entry its own id (tests check both).
//!
//! Adding a builtin function `foo()`:
//! 1. a variant `FuncId::Foo` in `id.rs`;
//! 2. its entry `func(FuncId::Foo, "foo", min, max, type_rule, "about")` and type rule in a
//!    topic file (`values.rs`, `agg.rs`, `output.rs`, `funcs.rs`, `maps.rs`, `meta.rs`; a new
//!    topic is one more line in [`REGISTRY`]);
//! 3. the compiler then names the two matches that must decide for it:
//!    `sema::meta` `fold_meta` (a fold or check past the type rule, or none) and
//!    `codegen::lower::calls` `lower_call` (its lowering; the code goes in a topic file of
//!    `codegen::lower`, such as `funcs.rs`).
//!
//! A builtin value `bar` is the same with `ValueId::Bar`, `value(ValueId::Bar, "bar", …)` in
//! `values.rs`, and the matches in `sema::calls` `ident` and `codegen::lower::builtins`
//! `lower_value`; if `(bar) * 2` must multiply rather than cast, the parser's `VALUE_WORDS`
//! too (the parser sits below this module, so it keeps its own list; a test here checks it).

mod agg;
mod funcs;
mod id;
mod maps;
mod meta;
mod output;
pub mod stdlib;
mod values;

pub use funcs::{pton_bytes, STR_CONCAT_SIZE};
pub use id::{BuiltinId, FuncId, ValueId};

/// strobe's own `stdlib/base.bt` (name, text): the macro `assert` behaves as; a failed
/// assert's run-time error points at its `errorf` call there, as bpftrace's points into its
/// stdlib.
pub const STDLIB_BASE: (&str, &str) = ("stdlib/base.bt", include_str!("stdlib/base.bt"));
pub use output::{signal_number, SIGNALS};

use crate::sema::context::ProbeContext;
use crate::sema::types::Type;
use crate::syntax::ast::{Expr, ExprId, ProbeKind};

/// Where a builtin may be used.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Probes {
    Any,
    /// Only in the kinds of a set the kind table decides.
    Only(crate::kinds::KindSet),
}

impl Probes {
    pub fn allows(self, k: ProbeKind) -> bool {
        match self {
            Probes::Any => true,
            Probes::Only(set) => set.contains(k),
        }
    }

    /// The probe kinds' names joined for messages: `kretprobe, fexit, uretprobe`.
    pub fn describe(self) -> String {
        match self {
            Probes::Any => "any".into(),
            Probes::Only(set) => set
                .kinds()
                .iter()
                .map(|k| k.name())
                .collect::<Vec<_>>()
                .join(", "),
        }
    }
}

/// A builtin value (`pid`) or a function (`count()`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Form {
    Value,
    Function,
}

/// Why a type rule refused a call: the message, and the argument it is about (`None`: the
/// call itself).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct RuleError {
    pub arg: Option<usize>,
    pub message: String,
}

impl RuleError {
    pub fn call(message: impl Into<String>) -> RuleError {
        RuleError {
            arg: None,
            message: message.into(),
        }
    }
    pub fn arg(i: usize, message: impl Into<String>) -> RuleError {
        RuleError {
            arg: Some(i),
            message: message.into(),
        }
    }
}

/// What a type rule sees of a call site.
pub struct CallCtx<'a> {
    /// The builtin called (type rules shared by several entries tell them apart by it).
    pub id: BuiltinId,
    /// Its name as written (`arg3` for [`ValueId::ArgN`]), for messages.
    pub name: &'a str,
    pub args: &'a [Expr],
    /// The arguments' types, already checked.
    pub arg_types: &'a [Type],
    pub probe: ProbeKind,
    /// The probe's argument context (`args`, `retval`, `argN`, `func`).
    pub context: &'a ProbeContext,
    /// Constant value of an argument expression, when the checker could fold it.
    pub const_int: &'a dyn Fn(ExprId) -> Option<i64>,
    /// Literal string value of an argument expression.
    pub const_str: &'a dyn Fn(ExprId) -> Option<Vec<u8>>,
    /// `max_strlen` in force.
    pub max_strlen: usize,
    /// Default stack layout (`config = { stack_mode = perf }`).
    pub stack_mode: crate::plan::layout::StackMode,
}

impl CallCtx<'_> {
    /// The folded integer constant of argument `i`, or an error saying it must be one.
    pub fn int_arg(&self, i: usize, what: &str) -> Result<i64, RuleError> {
        self.args
            .get(i)
            .and_then(|a| (self.const_int)(a.id))
            .ok_or_else(|| {
                RuleError::arg(
                    i,
                    format!("{}: {what} must be an integer literal", self.name),
                )
            })
    }

    /// The literal string of argument `i`, or an error saying it must be one.
    pub fn str_arg(&self, i: usize, what: &str) -> Result<String, RuleError> {
        self.args
            .get(i)
            .and_then(|a| (self.const_str)(a.id))
            .map(|b| String::from_utf8_lossy(&b).into_owned())
            .ok_or_else(|| {
                RuleError::arg(i, format!("{}: {what} must be a string literal", self.name))
            })
    }

    /// Requires argument `i` to be an integer (or, with `ptr_ok`, a pointer).
    pub fn want_int(&self, i: usize, ptr_ok: bool) -> Result<&Type, RuleError> {
        let t = &self.arg_types[i];
        if t.is_integer() || (ptr_ok && t.is_pointer()) {
            Ok(t)
        } else {
            Err(RuleError::arg(
                i,
                format!("{}() expects an integer argument, got {t}", self.name),
            ))
        }
    }
}

/// A type rule: the call's (or value's) result type.
pub type TypeRule = fn(&CallCtx<'_>) -> Result<Type, RuleError>;

/// One builtin.
#[derive(Clone, Copy)]
pub struct Builtin {
    /// Its identity for later passes (value or function).
    pub id: BuiltinId,
    pub name: &'static str,
    /// Argument count range for functions (`0, 0` for values).
    pub min_args: usize,
    pub max_args: usize,
    pub probes: Probes,
    /// Needs `--unsafe` (`system`, `signal`, `override`).
    pub needs_unsafe: bool,
    /// An aggregation: valid only as a map's assigned value (`@x = count()`).
    pub aggregation: bool,
    /// Whether a map argument is passed by name (`delete(@m, k)`, `clear(@m)`), so the
    /// argument is not read as a value.
    pub takes_map: bool,
    /// The first argument is a printf format string checked against the others
    /// (`printf`, `system`, `cat`, `errorf`…): the checker records a format site.
    pub format: bool,
    pub ty: TypeRule,
    /// One line for listings and hints.
    pub about: &'static str,
}

impl Builtin {
    /// A value or a function (from its id).
    pub fn form(&self) -> Form {
        self.id.form()
    }
}

impl std::fmt::Debug for Builtin {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Builtin").field("name", &self.name).finish()
    }
}

/// Shorthands for entries: a value valid everywhere.
pub(crate) const fn value(
    id: ValueId,
    name: &'static str,
    ty: TypeRule,
    about: &'static str,
) -> Builtin {
    Builtin {
        id: BuiltinId::Value(id),
        name,
        min_args: 0,
        max_args: 0,
        probes: Probes::Any,
        needs_unsafe: false,
        aggregation: false,
        takes_map: false,
        format: false,
        ty,
        about,
    }
}

/// A function valid everywhere with `min..=max` arguments.
pub(crate) const fn func(
    id: FuncId,
    name: &'static str,
    min_args: usize,
    max_args: usize,
    ty: TypeRule,
    about: &'static str,
) -> Builtin {
    Builtin {
        id: BuiltinId::Func(id),
        name,
        min_args,
        max_args,
        probes: Probes::Any,
        needs_unsafe: false,
        aggregation: false,
        takes_map: false,
        format: false,
        ty,
        about,
    }
}

/// Every topic's table; one line per topic file.
pub const REGISTRY: &[&[Builtin]] = &[
    values::BUILTINS,
    agg::BUILTINS,
    output::BUILTINS,
    funcs::BUILTINS,
    maps::BUILTINS,
    meta::BUILTINS,
];

/// Every builtin.
pub fn all() -> impl Iterator<Item = &'static Builtin> {
    REGISTRY.iter().flat_map(|t| t.iter())
}

/// The builtin called `name` in the given form; `arg3`/`sarg2` find the `argN`/`sargN` entry.
pub fn lookup(name: &str, form: Form) -> Option<&'static Builtin> {
    let key = match numbered(name) {
        Some((prefix, _)) if form == Form::Value => match prefix {
            "arg" => "argN",
            _ => "sargN",
        },
        _ => name,
    };
    all().find(|b| b.name == key && b.form() == form)
}

/// Whether a call `name()` with `nargs` arguments means the builtin value `name`, as current
/// bpftrace's stdlib makes every value callable (`pid()`, `comm()`, `cpu()`): no function of
/// that name exists and a value does.
pub fn value_call(name: &str, nargs: usize) -> bool {
    nargs == 0
        && numbered(name).is_none()
        && lookup(name, Form::Function).is_none()
        && lookup(name, Form::Value).is_some()
}

/// `arg3` → `("arg", 3)`, `sarg0` → `("sarg", 0)`.
pub fn numbered(name: &str) -> Option<(&'static str, u32)> {
    for prefix in ["sarg", "arg"] {
        if let Some(n) = name.strip_prefix(prefix) {
            if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) && n.len() <= 3 {
                return Some((
                    if prefix == "arg" { "arg" } else { "sarg" },
                    n.parse().ok()?,
                ));
            }
        }
    }
    None
}

/// The nearest known builtin name of a form, for "did you mean" hints.
pub fn nearest(name: &str, form: Form) -> Option<&'static str> {
    crate::diag::nearest(
        name,
        all()
            .filter(|b| b.form() == form && !b.name.ends_with('N'))
            .map(|b| b.name),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn names_are_unique_per_form() {
        let mut seen = std::collections::HashSet::new();
        for b in all() {
            assert!(
                seen.insert((b.name, b.form())),
                "duplicate builtin {}",
                b.name
            );
        }
    }

    #[test]
    fn every_id_has_exactly_one_entry_and_every_entry_its_own_id() {
        for id in BuiltinId::all() {
            let n = all().filter(|b| b.id == id).count();
            assert_eq!(n, 1, "{id:?} has {n} registry entries");
        }
        let mut ids = std::collections::HashSet::new();
        for b in all() {
            assert!(ids.insert(b.id), "{} shares id {:?}", b.name, b.id);
            assert!(BuiltinId::all().any(|i| i == b.id));
        }
        assert_eq!(ids.len(), BuiltinId::all().count());
    }

    #[test]
    fn ids_resolve_to_their_spelling() {
        assert_eq!(lookup("pid", Form::Value).unwrap().id, ValueId::Pid);
        assert_eq!(lookup("pid", Form::Function).unwrap().id, FuncId::Pid);
        assert_eq!(lookup("arg3", Form::Value).unwrap().id, ValueId::ArgN);
        assert_eq!(FuncId::SignalThread.name(), "signal_thread");
        assert_eq!(BuiltinId::from(ValueId::LeaderComm).name(), "leader_comm");
    }

    /// The parser keeps its own lists of value words and of bpftrace's core builtins (it sits
    /// below the registry in the module graph): every one must still be a registry value (`sarg` and `$` are the
    /// parser's own spellings of `sargN` and positional parameters).
    #[test]
    fn parser_value_words_are_registry_values() {
        use crate::syntax::parser::expr::{CORE_BUILTINS, VALUE_WORDS};
        for w in VALUE_WORDS.iter().chain(CORE_BUILTINS) {
            if matches!(*w, "sarg" | "$") {
                continue;
            }
            assert!(
                lookup(w, Form::Value).is_some(),
                "parser word {w} not in registry"
            );
        }
    }

    #[test]
    fn numbered_args_find_their_entry() {
        assert_eq!(lookup("arg3", Form::Value).unwrap().name, "argN");
        assert_eq!(lookup("sarg0", Form::Value).unwrap().name, "sargN");
        assert!(lookup("argx", Form::Value).is_none());
        assert_eq!(nearest("cout", Form::Function), Some("count"));
    }
}
