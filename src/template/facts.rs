//! Per-target facts a template depends on, and the grouping of targets by them (the rule is in
//! the module documentation of `template`).
//!
//! Input: the facts of a probe and one [`TargetProto`] per target (from BTF for fentry/fexit).
//! Output: a [`Grouping`]: groups of targets whose facts resolved to the same shapes, and the
//! skipped targets with the reason.

use std::collections::HashMap;

/// The shape of a type, as far as generated code cares.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TypeClass {
    Void,
    /// Integers, enums and bools, by size in bytes.
    Int {
        size: u32,
        signed: bool,
    },
    Pointer,
    Float {
        size: u32,
    },
    Struct {
        size: u32,
    },
    Union {
        size: u32,
    },
    /// Anything else (arrays, function types, unresolvable).
    Other,
}

impl TypeClass {
    fn describe(self) -> String {
        match self {
            TypeClass::Void => "void".into(),
            TypeClass::Int { size, signed } => {
                format!(
                    "a {}-byte {} integer",
                    size,
                    if signed { "signed" } else { "unsigned" }
                )
            }
            TypeClass::Pointer => "a pointer".into(),
            TypeClass::Float { size } => format!("a {size}-byte float"),
            TypeClass::Struct { size } => format!("a {size}-byte struct"),
            TypeClass::Union { size } => format!("a {size}-byte union"),
            TypeClass::Other => "an unsupported type".into(),
        }
    }
}

/// What a target (a kernel function, for fentry/fexit) looks like.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetProto {
    pub name: String,
    /// Parameters in order: name (may be empty when BTF has none) and shape; shared by the
    /// targets of one prototype.
    pub params: std::sync::Arc<[(String, TypeClass)]>,
    pub ret: TypeClass,
}

/// What a parameter must be for the template to work.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ParamRequirement {
    /// Any type the trampoline passes in one 8-byte slot.
    Any,
    /// An integer (or enum/bool) of at most this many bytes.
    Integer {
        max_size: u32,
    },
    Pointer,
    /// An integer or a pointer (something a register holds).
    Scalar,
}

/// One assumption of a template about every target.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum Fact {
    /// Parameter `name` exists and meets `requirement`.
    Param {
        name: String,
        requirement: ParamRequirement,
    },
    /// Parameter number `index` (0-based, bpftrace's `argN`) exists.
    ParamIndex { index: usize },
    /// The function returns a value a register holds (an integer ≤ 8 bytes or a pointer): fexit
    /// `retval`. Struct/union returns are refused by the kernel's trampoline anyway.
    ReturnsScalar,
}

/// What a fact resolved to for one target; targets agreeing on every outcome share a template.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum FactOutcome {
    Param(TypeClass),
    Return(TypeClass),
}

/// Why a target was left out.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum SkipReason {
    #[error("{target} has no parameter `{param}`")]
    NoSuchParam { target: String, param: String },
    #[error("{target} has {count} parameters, not {}", .index + 1)]
    TooFewParams {
        target: String,
        index: usize,
        count: usize,
    },
    #[error("parameter `{param}` of {target} is {found}, not {wanted}")]
    ParamType {
        target: String,
        param: String,
        found: String,
        wanted: String,
    },
    #[error("{target} returns {found}, which fexit cannot read as `retval`")]
    ReturnType { target: String, found: String },
}

/// Targets grouped by the outcome of every fact.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Grouping {
    /// In order of each group's first target.
    pub groups: Vec<TargetGroup>,
    /// (target index, reason), in target order.
    pub skipped: Vec<(usize, SkipReason)>,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TargetGroup {
    /// One outcome per fact, in the order of the facts.
    pub outcomes: Vec<FactOutcome>,
    /// Indices into the target list, ascending.
    pub targets: Vec<usize>,
}

/// Evaluates `facts` for every target and groups them (see the module documentation).
pub fn group_targets(facts: &[Fact], targets: &[TargetProto]) -> Grouping {
    let mut out = Grouping::default();
    let mut by_key: HashMap<Vec<FactOutcome>, usize> = HashMap::new();
    for (i, t) in targets.iter().enumerate() {
        match facts.iter().map(|f| evaluate(f, t)).collect() {
            Ok(outcomes) => {
                let outcomes: Vec<FactOutcome> = outcomes;
                match by_key.get(&outcomes) {
                    Some(&g) => out.groups[g].targets.push(i),
                    None => {
                        by_key.insert(outcomes.clone(), out.groups.len());
                        out.groups.push(TargetGroup {
                            outcomes,
                            targets: vec![i],
                        });
                    }
                }
            }
            Err(reason) => out.skipped.push((i, reason)),
        }
    }
    out
}

/// One fact against one target.
pub fn evaluate(fact: &Fact, t: &TargetProto) -> Result<FactOutcome, SkipReason> {
    match fact {
        Fact::Param { name, requirement } => {
            let Some((_, class)) = t.params.iter().find(|(n, _)| n == name) else {
                return Err(SkipReason::NoSuchParam {
                    target: t.name.clone(),
                    param: name.clone(),
                });
            };
            check_param(t, name, *class, *requirement).map(FactOutcome::Param)
        }
        Fact::ParamIndex { index } => match t.params.get(*index) {
            Some((_, class)) => Ok(FactOutcome::Param(*class)),
            None => Err(SkipReason::TooFewParams {
                target: t.name.clone(),
                index: *index,
                count: t.params.len(),
            }),
        },
        Fact::ReturnsScalar => match t.ret {
            c @ (TypeClass::Int { size: 1..=8, .. } | TypeClass::Pointer) => {
                Ok(FactOutcome::Return(c))
            }
            c => Err(SkipReason::ReturnType {
                target: t.name.clone(),
                found: c.describe(),
            }),
        },
    }
}

fn check_param(
    t: &TargetProto,
    name: &str,
    class: TypeClass,
    req: ParamRequirement,
) -> Result<TypeClass, SkipReason> {
    let ok = match (req, class) {
        (ParamRequirement::Any, TypeClass::Struct { size } | TypeClass::Union { size }) => {
            size <= 8
        }
        (ParamRequirement::Any, _) => true,
        (ParamRequirement::Integer { max_size }, TypeClass::Int { size, .. }) => size <= max_size,
        (ParamRequirement::Pointer, TypeClass::Pointer) => true,
        (ParamRequirement::Scalar, TypeClass::Pointer) => true,
        (ParamRequirement::Scalar, TypeClass::Int { size, .. }) => size <= 8,
        _ => false,
    };
    if ok {
        return Ok(class);
    }
    let wanted = match req {
        ParamRequirement::Any => "a value of at most 8 bytes".to_string(),
        ParamRequirement::Integer { max_size } => format!("an integer of at most {max_size} bytes"),
        ParamRequirement::Pointer => "a pointer".to_string(),
        ParamRequirement::Scalar => "an integer or a pointer".to_string(),
    };
    Err(SkipReason::ParamType {
        target: t.name.clone(),
        param: name.to_string(),
        found: class.describe(),
        wanted,
    })
}

/// The ctx offset of each of `params` in `t` for fentry/fexit (8 × position; the trampoline
/// stores every argument in one u64 slot), or the first missing one's name.
pub fn arg_slots(params: &[String], t: &TargetProto) -> Result<Vec<i64>, String> {
    params
        .iter()
        .map(|p| {
            t.params
                .iter()
                .position(|(n, _)| n == p)
                .map(|i| 8 * i as i64)
                .ok_or_else(|| p.clone())
        })
        .collect()
}

/// The fexit return-value slot of `t`: 8 × the number of parameters.
pub fn ret_slot(t: &TargetProto) -> i64 {
    8 * t.params.len() as i64
}
