//! A program's map references sorted in two: the updates `@m[keys] = f(…)` a caller accepts
//! (with the probe each is in), and every other reference. The last-key caches
//! ([`super::agg_cache`]) and the short-key classes ([`super::key_class`]) each change how one
//! kind of update is written, so a map gets one only when every reference is such an update.

use crate::sema::{CheckedProgram, MapInfo};
use crate::syntax::ast::{Expr, ExprKind, ForIter, Item, LValue, Stmt, StmtKind};
use crate::syntax::visit::{walk_expr, walk_item, walk_stmt, Visitor};
use std::collections::BTreeSet;

/// The references of [`map_uses`].
pub struct MapUses {
    /// Accepted updates: the map and the probe they are in (its index among the probes;
    /// `None` in a function or macro body).
    pub updates: BTreeSet<(String, Option<usize>)>,
    /// Maps with any other reference.
    pub others: BTreeSet<String>,
}

impl MapUses {
    /// Whether every reference to `name` is an accepted update, and there is one.
    pub fn only_updates(&self, name: &str) -> bool {
        !self.others.contains(name) && self.updates.iter().any(|(n, _)| n == name)
    }
}

/// Sorts `cp`'s map references. `accepts(map, keys, value)` decides each plain assignment
/// `@m[keys] = value` whose value is a call (an aggregation); `whole_map_calls`: `print`,
/// `clear` and `zero` of a whole map are not references (userspace does them).
pub fn map_uses(
    cp: &CheckedProgram,
    whole_map_calls: bool,
    accepts: impl Fn(&MapInfo, &[Expr], &Expr) -> bool,
) -> MapUses {
    let mut w = Walk {
        cp,
        accepts,
        whole_map_calls,
        probe: None,
        next_probe: 0,
        uses: MapUses {
            updates: BTreeSet::new(),
            others: BTreeSet::new(),
        },
    };
    w.visit_program(&cp.program);
    w.uses
}

struct Walk<'a, F> {
    cp: &'a CheckedProgram,
    accepts: F,
    whole_map_calls: bool,
    probe: Option<usize>,
    next_probe: usize,
    uses: MapUses,
}

impl<F: Fn(&MapInfo, &[Expr], &Expr) -> bool> Visitor for Walk<'_, F> {
    fn visit_item(&mut self, i: &Item) {
        self.probe = match i {
            Item::Probe(_) => {
                self.next_probe += 1;
                Some(self.next_probe - 1)
            }
            _ => None,
        };
        walk_item(self, i);
        self.probe = None;
    }

    fn visit_stmt(&mut self, s: &Stmt) {
        match &s.kind {
            StmtKind::Assign {
                target: LValue::Map { map, keys, .. },
                op,
                value,
            } => {
                let info = self.cp.maps.iter().find(|m| m.name == map.name);
                let accepted = op.is_none()
                    && matches!(value.kind, ExprKind::Call { .. })
                    && info.is_some_and(|m| (self.accepts)(m, keys, value));
                if accepted {
                    self.uses.updates.insert((map.name.clone(), self.probe));
                } else {
                    self.uses.others.insert(map.name.clone());
                }
                keys.iter().for_each(|k| self.visit_expr(k));
                self.visit_expr(value);
            }
            StmtKind::For {
                iter: ForIter::Map(m),
                ..
            } => {
                self.uses.others.insert(m.name.clone());
                walk_stmt(self, s)
            }
            _ => walk_stmt(self, s),
        }
    }

    fn visit_expr(&mut self, e: &Expr) {
        match &e.kind {
            ExprKind::Call { name, args }
                if self.whole_map_calls
                    && matches!(name.name.as_str(), "print" | "clear" | "zero") =>
            {
                for a in args {
                    match &a.kind {
                        ExprKind::Map { keys, .. } if keys.is_empty() => {}
                        _ => self.visit_expr(a),
                    }
                }
            }
            ExprKind::Map { name, .. } => {
                self.uses.others.insert(name.name.clone());
                walk_expr(self, e)
            }
            _ => walk_expr(self, e),
        }
    }
}
