//! `config.NAME` / `config().NAME` / `__builtin_config.NAME`: the run's configuration as the
//! script reads it, and `probetype`. Both are known when checking, so each read folds to a
//! constant: the environment's value (`BPFTRACE_NAME` / `STROBE_NAME`) first, then the
//! script's `config = { … }` block, then the default; the settings the checker itself applies
//! (`max_strlen`, `max_map_keys`, `stack_mode`, `missing_probes`) are read from its options.
//! `config` as a whole value is refused: strobe has no record of every setting to copy.

use super::resolve::Checker;
use super::Type;
use crate::diag::Span;
use crate::syntax::ast::{ConfigValue, Expr, ExprKind, Ident, ProbeKind};

/// A setting's value.
#[derive(Clone, Debug, PartialEq, Eq)]
enum Setting {
    Int(u64),
    Str(String),
    Bool(bool),
}

/// The settings' defaults where strobe does not keep them in its checking options, as
/// bpftrace documents them (`docs/language.md`, "Config Variables").
const DEFAULTS: &[(&str, DefaultKind)] = &[
    ("cache_user_symbols", DefaultKind::Str("PER_PID")),
    ("cpp_demangle", DefaultKind::Bool(true)),
    ("lazy_symbolication", DefaultKind::Bool(false)),
    ("license", DefaultKind::Str("GPL")),
    ("log_size", DefaultKind::Int(1_000_000)),
    ("max_bpf_progs", DefaultKind::Int(1024)),
    ("max_cat_bytes", DefaultKind::Int(10240)),
    ("max_probes", DefaultKind::Int(1024)),
    ("max_type_res_iterations", DefaultKind::Int(0)),
    ("on_stack_limit", DefaultKind::Int(32)),
    ("perf_rb_pages", DefaultKind::Int(64)),
    ("print_maps_on_exit", DefaultKind::Bool(true)),
    ("show_debug_info", DefaultKind::Bool(false)),
    ("str_trunc_trailer", DefaultKind::Str("..")),
    ("symbol_source", DefaultKind::Str("dwarf")),
    ("use_blazesym", DefaultKind::Bool(false)),
];

#[derive(Clone, Copy)]
enum DefaultKind {
    Int(u64),
    Str(&'static str),
    Bool(bool),
}

fn truthy(v: &str) -> Option<bool> {
    match v.trim().to_ascii_lowercase().as_str() {
        "1" | "true" | "on" | "yes" => Some(true),
        "0" | "false" | "off" | "no" => Some(false),
        _ => None,
    }
}

/// bpftrace's probe type name of a probe kind (`begin`/`end`/`self` are `special`).
pub fn probe_type_name(kind: ProbeKind) -> &'static str {
    kind.info().type_name()
}

impl Checker<'_> {
    /// Whether `base` names the configuration: `config`, `config()` or `__builtin_config`
    /// (the parser reads the last as `config`), unless a macro parameter or a script macro
    /// takes the name.
    pub(super) fn is_config_ref(&self, base: &Expr) -> bool {
        let shadowed = |n: &str| self.frames.iter().any(|f| f.idents.contains_key(n));
        match &base.kind {
            ExprKind::Ident(n) => n == "config" && !shadowed(n),
            ExprKind::Call { name, args } => {
                name.name == "config"
                    && args.is_empty()
                    && !self
                        .program
                        .macros()
                        .any(|m| m.name.name == "config" && m.params.is_empty())
            }
            _ => false,
        }
    }

    /// `config.NAME`: the setting's value as a constant of the field expression `e`.
    pub(super) fn config_field(&mut self, e: &Expr, field: &Ident) -> Type {
        let key = field.name.to_ascii_lowercase();
        let Some(v) = self.setting(&key) else {
            let names: Vec<&str> = ["max_map_keys", "max_strlen", "missing_probes", "stack_mode"]
                .into_iter()
                .chain(DEFAULTS.iter().map(|(n, _)| *n))
                .collect();
            let help = crate::diag::nearest(&key, names.iter().copied())
                .map(|n| format!("did you mean '{n}'?"));
            if let Some(d) = self.error(
                field.span,
                format!("'{}' is not a config variable", field.name),
            ) {
                d.help = help;
            }
            return Type::None;
        };
        match v {
            Setting::Int(n) => {
                self.consts.insert(e.id, n as i64);
                Type::U64
            }
            Setting::Bool(b) => {
                self.consts.insert(e.id, b as i64);
                Type::Bool
            }
            Setting::Str(s) => {
                let size = s.len() + 1;
                self.str_consts.insert(e.id, s.into_bytes());
                Type::Str { size }
            }
        }
    }

    /// `config` read as a whole value.
    pub(super) fn config_whole(&mut self, span: Span) -> Type {
        self.error_help(
            span,
            "config can only be read one setting at a time in strobe",
            "read a field, e.g. config.max_strlen".to_string(),
        );
        Type::None
    }

    /// `probetype`: the probe's type name, the same for all its attach points.
    pub(super) fn probetype(&mut self, e: &Expr) -> Type {
        let mut names: Vec<&'static str> =
            self.cx.kinds.iter().map(|k| probe_type_name(*k)).collect();
        names.dedup();
        match names.as_slice() {
            [one] => {
                self.str_consts.insert(e.id, one.as_bytes().to_vec());
                Type::Str {
                    size: one.len() + 1,
                }
            }
            [] => Type::Str { size: 1 },
            _ => {
                self.error(
                    e.span,
                    format!(
                        "probetype in a probe whose attach points are of several types ({}): \
                         strobe folds it to one constant",
                        names.join(", ")
                    ),
                );
                Type::None
            }
        }
    }

    fn setting(&self, key: &str) -> Option<Setting> {
        use crate::plan::layout::StackMode;
        use crate::sema::MissingProbes;
        // What the checker applies, from its options (environment and config block merged).
        match key {
            "max_strlen" => return Some(Setting::Int(self.opts.max_strlen as u64)),
            "max_map_keys" => return Some(Setting::Int(self.opts.max_map_keys)),
            "stack_mode" => {
                return Some(Setting::Str(
                    match self.opts.stack_mode {
                        StackMode::Bpftrace => "bpftrace",
                        StackMode::Perf => "perf",
                        StackMode::Raw => "raw",
                        StackMode::BuildId => "build_id",
                    }
                    .into(),
                ))
            }
            "missing_probes" => {
                return Some(Setting::Str(
                    match self.opts.missing_probes {
                        MissingProbes::Error => "error",
                        MissingProbes::Warn => "warn",
                        MissingProbes::Ignore => "ignore",
                    }
                    .into(),
                ))
            }
            _ => {}
        }
        let (_, default) = DEFAULTS.iter().find(|(n, _)| *n == key)?;
        let upper = key.to_ascii_uppercase();
        let env = [format!("STROBE_{upper}"), format!("BPFTRACE_{upper}")]
            .iter()
            .find_map(|n| std::env::var(n).ok());
        let script = self
            .program
            .config
            .iter()
            .flat_map(|c| &c.entries)
            .rfind(|en| {
                en.key
                    .name
                    .trim_start_matches("BPFTRACE_")
                    .eq_ignore_ascii_case(key)
            })
            .map(|en| en.value.clone());
        Some(match *default {
            DefaultKind::Int(d) => Setting::Int(match (&env, &script) {
                (Some(v), _) => v.trim().parse().unwrap_or(d),
                (None, Some(ConfigValue::Int(n))) => *n,
                _ => d,
            }),
            DefaultKind::Bool(d) => Setting::Bool(match (&env, &script) {
                (Some(v), _) => truthy(v).unwrap_or(d),
                (None, Some(ConfigValue::Bool(b))) => *b,
                (None, Some(ConfigValue::Int(n))) => *n != 0,
                (None, Some(ConfigValue::Str(s) | ConfigValue::Ident(s))) => truthy(s).unwrap_or(d),
                _ => d,
            }),
            DefaultKind::Str(d) => Setting::Str(match (&env, &script) {
                (Some(v), _) => v.clone(),
                (None, Some(ConfigValue::Str(s) | ConfigValue::Ident(s))) => s.clone(),
                _ => d.to_string(),
            }),
        })
    }
}
