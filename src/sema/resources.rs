//! Resources the program needs at run time: its maps (key and value types kept consistent
//! across every use, aggregation kinds, sizes) and its printf-like format sites.
//!
//! Input: each map use as the checker meets it (keys' types, an assigned value's type) and each
//! printf-like call. Output: [`MapInfo`]s and [`FormatSite`]s for the [`super::CheckedProgram`];
//! inconsistent uses are errors worded like bpftrace's.

use std::collections::HashMap;

use super::program::{FormatSite, MapInfo};
use super::types::Type;
use crate::diag::Span;
use crate::plan::agg::AggKind;
use crate::plan::layout::FieldType;
use crate::plan::printf::{ArgKind, PrintfCall, PrintfCallError};
use crate::syntax::ast::ExprId;

/// What is known of one map so far.
#[derive(Clone, Debug)]
pub(super) struct MapEntry {
    pub name: String,
    pub keys: Option<Vec<Type>>,
    pub value: Option<Type>,
    pub declared: Option<(String, u64)>,
    pub span: Span,
    /// Assigned (or declared) somewhere: a map only ever read is an error.
    pub assigned: bool,
}

/// The map table being built.
#[derive(Clone, Debug, Default)]
pub(super) struct Maps {
    pub entries: Vec<MapEntry>,
    index: HashMap<String, usize>,
}

fn list(ts: &[Type]) -> String {
    ts.iter()
        .map(|t| t.to_string())
        .collect::<Vec<_>>()
        .join(", ")
}

/// A map key's type as bpftrace writes it: one type, or several as a tuple `(int8,string[3])`.
fn key_text(ts: &[Type]) -> String {
    match ts {
        [t] => t.to_string(),
        ts => format!(
            "({})",
            ts.iter()
                .map(|t| t.to_string())
                .collect::<Vec<_>>()
                .join(",")
        ),
    }
}

impl Maps {
    pub fn id(&mut self, name: &str, span: Span) -> usize {
        if let Some(&i) = self.index.get(name) {
            return i;
        }
        self.entries.push(MapEntry {
            name: name.to_string(),
            keys: None,
            value: None,
            declared: None,
            span,
            assigned: false,
        });
        self.index.insert(name.to_string(), self.entries.len() - 1);
        self.entries.len() - 1
    }

    pub fn get(&self, name: &str) -> Option<&MapEntry> {
        self.index.get(name).map(|&i| &self.entries[i])
    }

    /// Checks (or, on first use, establishes) the key types of map `i`.
    ///
    /// A multi-value key is a tuple in bpftrace: `@m[a, b]`, `@m[(a, b)]` and `@m[$t]` with
    /// `$t = (a, b)` are one map key. Keys are kept in the flat form, so a single key of a
    /// tuple type (two or more elements) stands for its elements; code generation lays a
    /// tuple key out field by field like the flat form ([`flat_keys`]).
    pub fn use_keys(&mut self, i: usize, keys: &[Type]) -> Result<(), String> {
        let keys = flat_keys(keys);
        let keys = keys.as_slice();
        let e = &mut self.entries[i];
        match &e.keys {
            None => {
                e.keys = Some(keys.to_vec());
                Ok(())
            }
            Some(have) => {
                let merged: Option<Vec<Type>> = (have.len() == keys.len())
                    .then(|| have.iter().zip(keys).map(|(a, b)| a.unify(b)).collect())
                    .flatten();
                match merged {
                    Some(m) => {
                        e.keys = Some(m);
                        Ok(())
                    }
                    None if have.is_empty() => Err(format!(
                        "{} used as a map with keys [{}], but it is a map without keys",
                        e.name,
                        list(keys)
                    )),
                    None if keys.is_empty() => Err(format!(
                        "{} used without keys, but its keys are [{}]",
                        e.name,
                        list(have)
                    )),
                    None => Err(format!(
                        "Argument mismatch for {}: trying to access with arguments: '{}' when map expects arguments: '{}'",
                        e.name,
                        key_text(keys),
                        key_text(have)
                    )),
                }
            }
        }
    }

    /// Checks (or establishes) the value type of map `i` for an assignment of `ty`.
    pub fn assign(&mut self, i: usize, ty: &Type) -> Result<(), String> {
        let e = &mut self.entries[i];
        e.assigned = true;
        match &e.value {
            None => {
                e.value = Some(ty.clone());
                Ok(())
            }
            Some(have) => match have.unify(ty) {
                Some(m) => {
                    e.value = Some(m);
                    Ok(())
                }
                None if matches!(
                    (have, ty),
                    (
                        Type::Agg(AggKind::TSeries(_)),
                        Type::Agg(AggKind::TSeries(_))
                    )
                ) =>
                {
                    Err("Different tseries bounds in a single map unsupported".into())
                }
                None => Err(format!(
                    "Type mismatch for {}: trying to assign value of type '{ty}' when map already contains a value of type '{have}'",
                    e.name
                )),
            },
        }
    }

    /// The finished table; maps without a known value type get `int64`.
    pub fn finish(&self, default_max: u64) -> Vec<MapInfo> {
        self.entries
            .iter()
            .map(|e| {
                let value = e.value.clone().unwrap_or(Type::I64);
                MapInfo {
                    name: e.name.clone(),
                    keys: e.keys.clone().unwrap_or_default(),
                    agg: match &value {
                        Type::Agg(a) => Some(*a),
                        _ => None,
                    },
                    value,
                    max_entries: e.declared.as_ref().map_or(default_max, |d| d.1),
                    declared_kind: e.declared.as_ref().map(|d| d.0.clone()),
                    span: e.span,
                }
            })
            .collect()
    }
}

/// The flat form of a map key's types: one tuple of two or more elements is its elements.
pub(crate) fn flat_keys(keys: &[Type]) -> Vec<Type> {
    match keys {
        [Type::Tuple(ts)] if ts.len() >= 2 => ts.clone(),
        ks => ks.to_vec(),
    }
}

/// Map kinds a `let @m = kind(N);` declaration may name.
pub(super) const MAP_KINDS: &[&str] = &[
    "hash",
    "lruhash",
    "percpuhash",
    "percpulruhash",
    "percpuarray",
    "array",
];

/// Builds a format site: `fmt` checked against `args` (the arguments after the format).
pub(super) fn format_site(
    call: ExprId,
    function: &'static str,
    fmt: &str,
    args: &[Type],
) -> Result<FormatSite, (Option<usize>, String)> {
    let mut fields: Vec<FieldType> = Vec::with_capacity(args.len());
    for (i, t) in args.iter().enumerate() {
        match t.field_type() {
            Some(f) => fields.push(f),
            None => {
                return Err((
                    Some(i),
                    format!(
                        "{function}: argument {} of type '{t}' cannot be printed",
                        i + 1
                    ),
                ))
            }
        }
    }
    let printf = PrintfCall::new(fmt, fields).map_err(|e| match e {
        PrintfCallError::ArgType { index, expected } => {
            let want = match expected {
                ArgKind::Integer => "an integer",
                ArgKind::Buffer => "a buffer",
                ArgKind::Any => "a value",
            };
            (
                Some(index),
                format!(
                    "{function}: format specifier {} expects {want}, but argument {} has type '{}'",
                    index + 1,
                    index + 1,
                    args[index]
                ),
            )
        }
        e => (None, format!("{function}: {e}")),
    })?;
    Ok(FormatSite {
        call,
        function,
        printf,
    })
}
