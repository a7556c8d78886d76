//! Field access: `args.NAME` through the probe's context (per-target presence, facts for
//! grouping), record fields, and struct/union members through BTF or the script's own C types
//! (`.` and `->` both dereference pointers, as current bpftrace allows). Errors list the
//! available names.
//!
//! Input/output: as `typeck`, whose expression walk calls into here.

use super::context::ArgLookup;
use super::ctypes::{btf_member, btf_member_names};
use super::resolve::Checker;
use super::types::{AddrSpace, CTypeRef, Pointee, StructType, Type};
use crate::builtins::{self, Form};
use crate::diag::Span;
use crate::syntax::ast::*;
use crate::template::{Fact, ParamRequirement};

impl Checker<'_> {
    pub(super) fn field(&mut self, e: &Expr, base: &Expr, field: &Ident, arrow: bool) -> Type {
        if !arrow && self.is_config_ref(base) {
            return self.config_field(e, field);
        }
        if matches!(&base.kind, ExprKind::Ident(n) if n == "args")
            && self.frames.iter().all(|f| !f.idents.contains_key("args"))
        {
            let Some(b) = builtins::lookup("args", Form::Value) else {
                return Type::None;
            };
            self.builtin_ids.insert(base.id, b.id);
            if !self.builtin_allowed(b, base.span) {
                return Type::None;
            }
            self.set(base, self.cx.args_record());
            return self.arg_field(e, field);
        }
        let t = self.expr(base);
        if let Type::Record(fs) = &t {
            return match fs.iter().find(|(n, _)| *n == field.name) {
                Some((_, t)) => t.clone(),
                None => {
                    let names: Vec<&str> = fs.iter().map(|f| f.0.as_str()).collect();
                    self.error_help(
                        field.span,
                        format!("Record has no field named '{}'", field.name),
                        format!("available fields: {}", names.join(", ")),
                    );
                    Type::None
                }
            };
        }
        let _ = arrow;
        match self.member(&t, &field.name, field.span) {
            Some((t, _, _)) => t,
            None => Type::None,
        }
    }

    /// `&x` (`x` typed `t`): a scratch variable's stack slot, a map value (`&@m[k]`, `&@m`;
    /// null when the key is absent), a struct member (`&p->f`: the pointer plus the member's
    /// offset, nothing read) or `&*p` (`p`). The result points to `t` in the space the
    /// value lives in. Anything else has no address and is an error.
    pub(super) fn address_of(&mut self, e: &Expr, x: &Expr, t: Type) -> Type {
        if t.is_none() {
            // Already reported where the operand failed.
            return Type::None;
        }
        let space = match &x.kind {
            ExprKind::Var(_) => AddrSpace::Kernel,
            ExprKind::Map { name, keys } => {
                let Some(&i) = self.map_refs.get(&x.id) else {
                    return Type::None;
                };
                let keyed = self.maps.entries[i]
                    .keys
                    .as_ref()
                    .is_some_and(|k| !k.is_empty());
                if keys.is_empty() && keyed {
                    self.error(
                        e.span,
                        format!(
                            "Can not take the address of map {}: it has keys, take the address of one value with &{}[key]",
                            name.name, name.name
                        ),
                    );
                    return Type::None;
                }
                if matches!(self.maps.entries[i].value, Some(Type::Agg(_))) {
                    self.error(
                        e.span,
                        format!(
                            "Can not take the address of {}: an aggregation's value is per-CPU",
                            name.name
                        ),
                    );
                    return Type::None;
                }
                AddrSpace::Kernel
            }
            ExprKind::Field {
                expr: base, field, ..
            } => {
                let bt = self.types.get(base.id.index()).cloned().unwrap_or_default();
                let is_args = matches!(&base.kind, ExprKind::Ident(n) if n == "args")
                    && matches!(bt, Type::Record(_));
                if is_args || matches!(bt, Type::Record(_)) {
                    let what = if is_args { "args" } else { "a record" };
                    self.error(
                        e.span,
                        format!(
                            "Can not take the address of field '{}' of {what}: only struct members have an address",
                            field.name
                        ),
                    );
                    return Type::None;
                }
                let space = match &bt {
                    Type::Pointer { space, .. } => *space,
                    _ => AddrSpace::Kernel,
                };
                match self.member(&bt, &field.name, field.span) {
                    Some((_, _, bits)) if bits != 0 => {
                        self.error(
                            e.span,
                            format!("Can not take the address of bitfield '{}'", field.name),
                        );
                        return Type::None;
                    }
                    Some(_) => space,
                    None => return Type::None,
                }
            }
            ExprKind::Unary {
                op: UnaryOp::Deref,
                expr: p,
            } => return self.types.get(p.id.index()).cloned().unwrap_or_default(),
            _ => {
                let what = match &x.kind {
                    ExprKind::Int(_) | ExprKind::Str(_) | ExprKind::Bool(_) => {
                        "a literal".to_string()
                    }
                    ExprKind::Ident(n) => format!("builtin '{n}'"),
                    ExprKind::Call { name, .. } => format!("the result of {}()", name.name),
                    ExprKind::Positional(_) | ExprKind::PositionalCount => {
                        "a positional parameter".to_string()
                    }
                    _ => "this expression".to_string(),
                };
                self.error_help(
                    e.span,
                    format!("Can not take the address of {what}: it has no address"),
                    "& applies to a $variable, a map value (@m[key]), a struct member (p->field) or *p".into(),
                );
                return Type::None;
            }
        };
        Type::ptr_to(t, space)
    }

    /// `args.NAME`: looked up in every target; a name missing in some targets is a warning that
    /// names them (those targets are skipped), missing in all an error listing the fields.
    pub(super) fn arg_field(&mut self, e: &Expr, field: &Ident) -> Type {
        let kinds = self.cx.kinds.clone();
        let probe = kinds
            .iter()
            .map(|k| k.name())
            .collect::<Vec<_>>()
            .join(", ");
        match self.cx.arg(&field.name) {
            ArgLookup::Found { ty, missing_in } => {
                if !missing_in.is_empty() && self.warned.insert(field.name.clone()) {
                    let n = missing_in.len();
                    let shown: Vec<&str> = missing_in.iter().take(5).map(String::as_str).collect();
                    let more = if n > 5 {
                        format!(" and {} more", n - 5)
                    } else {
                        String::new()
                    };
                    self.warn(
                        field.span,
                        format!(
                            "args.{} is missing in {n} target{}: {}{more}; {} skipped",
                            field.name,
                            if n == 1 { "" } else { "s" },
                            shown.join(", "),
                            if n == 1 { "it is" } else { "they are" }
                        ),
                    );
                }
                let f = Fact::Param {
                    name: field.name.clone(),
                    requirement: ParamRequirement::Any,
                };
                if !self.facts.contains(&f) {
                    self.facts.push(f);
                }
                let _ = e;
                ty
            }
            ArgLookup::Unsupported => {
                self.error(
                    field.span,
                    format!("{probe}: args.{} has a type strobe cannot read", field.name),
                );
                Type::None
            }
            ArgLookup::Missing { available } => {
                let target = self
                    .cx
                    .targets
                    .first()
                    .map(|t| t.name.clone())
                    .unwrap_or(probe);
                let help = crate::diag::nearest(&field.name, available.iter().map(String::as_str))
                    .map(|n| format!("did you mean '{n}'? "))
                    .unwrap_or_default();
                let help = if available.is_empty() {
                    format!("{help}it has no arguments")
                } else {
                    format!("{help}available: {}", available.join(", "))
                };
                self.error_help(
                    field.span,
                    format!("{target} has no argument named '{}'", field.name),
                    help,
                );
                Type::None
            }
        }
    }

    /// Member `name` of a struct value or of what a pointer points to: its type, offset and
    /// bitfield width (0 for a plain member).
    pub fn member(&mut self, t: &Type, name: &str, span: Span) -> Option<(Type, u32, u32)> {
        let (st, space) = match t {
            Type::CStruct(s) => (s.clone(), AddrSpace::Kernel),
            Type::Pointer {
                pointee: Pointee::Type(p),
                space,
            } => match p.as_ref() {
                Type::CStruct(s) => (s.clone(), *space),
                other => {
                    self.error(
                        span,
                        format!("Can not access field '{name}' on type '{other} *'"),
                    );
                    return None;
                }
            },
            Type::None => return None,
            other => {
                self.error(
                    span,
                    format!("Can not access field '{name}' on expression of type '{other}'"),
                );
                return None;
            }
        };
        let StructType {
            ty, name: sname, ..
        } = st;
        match ty {
            CTypeRef::Btf { module, id } => {
                let btf = self.kernel.btf(module.as_deref()).ok()?;
                if let Some(m) = btf_member(&btf, module.as_deref(), id, name, space) {
                    self.note_member(module.as_deref(), id, name);
                    return Some((m.ty, m.offset, m.bits));
                }
                let names = btf_member_names(&btf, id);
                let help = crate::diag::nearest(name, names.iter().map(String::as_str))
                    .map(|n| format!("did you mean '{n}'? "))
                    .unwrap_or_default();
                self.error_help(
                    span,
                    format!(
                        "Struct/union of type '{sname}' does not contain a field named '{name}'"
                    ),
                    format!("{help}fields: {}", names.join(", ")),
                );
                None
            }
            CTypeRef::Script { index } => {
                let def = self.script_types.defs.get(index)?;
                if let Some(m) = def.members.iter().find(|m| m.name == name) {
                    // A pointer inside a struct in user memory points to user memory (and so
                    // do the pointers of an array member: `int *z[4]`).
                    let ty = if space == AddrSpace::User {
                        pointers_in(&m.ty, space)
                    } else {
                        m.ty.clone()
                    };
                    return Some((ty, m.offset, m.bits));
                }
                let names: Vec<String> = def.members.iter().map(|m| m.name.clone()).collect();
                self.error_help(
                    span,
                    format!(
                        "Struct/union of type '{sname}' does not contain a field named '{name}'"
                    ),
                    format!("fields: {}", names.join(", ")),
                );
                None
            }
        }
    }
}

/// `t` with its pointer (or its array's element pointers) pointing into `space`.
fn pointers_in(t: &Type, space: AddrSpace) -> Type {
    match t {
        Type::Pointer { pointee, .. } => Type::Pointer {
            pointee: pointee.clone(),
            space,
        },
        Type::Array { elem, len } => Type::Array {
            elem: Box::new(pointers_in(elem, space)),
            len: *len,
        },
        t => t.clone(),
    }
}
