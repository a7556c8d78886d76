//! A C-like printer for BTF types, for diagnostics and `-lv` listings: `struct file *`,
//! `const char *`, `unsigned long`, `char [16]`, `int (*)(void)`, and whole declarations such
//! as `ssize_t vfs_read(struct file *file, char *buf, size_t count, loff_t *pos)`.
//! Input: a type id (and optional declarator name). Output: a `String`; it never fails: bad ids
//! print as `<bad type N>` and over-deep or cyclic chains as `<...>`, since messages must still render.
//! Type tags (`__user`, `__rcu`) are not printed.

use std::cell::Cell;

use super::types::TypeKind;
use super::Btf;

/// Most type nodes one printout visits. Bounds depth *and* breadth: malformed BTF can make a
/// prototype whose parameters refer back to it, which would otherwise print exponentially.
const BUDGET: usize = 4096;
/// Deepest nesting printed (recursion depth, so the stack stays small).
const MAX_DEPTH: usize = 64;

impl Btf {
    /// `id` as a C type name, e.g. `struct task_struct *`.
    pub fn type_to_string(&self, id: u32) -> String {
        self.decl(id, String::new(), &Cell::new(BUDGET), 0)
    }

    /// A C declaration of `name` with type `id`, e.g. `char comm[16]`. For a FUNC id the
    /// function's own name is used when `name` is empty, and parameter names are printed.
    pub fn decl_to_string(&self, id: u32, name: &str) -> String {
        self.decl(id, name.to_string(), &Cell::new(BUDGET), 0)
    }

    fn decl(&self, id: u32, inner: String, budget: &Cell<usize>, depth: usize) -> String {
        if budget.get() == 0 || depth > MAX_DEPTH {
            return join("<...>", &inner);
        }
        budget.set(budget.get() - 1);
        let Ok(t) = self.type_by_id(id) else {
            return join(&format!("<bad type {id}>"), &inner);
        };
        let named = |prefix: &str| {
            if t.name.is_empty() {
                format!("{prefix} {{...}}")
            } else {
                format!("{prefix} {}", t.name)
            }
        };
        match t.kind {
            TypeKind::Void => join("void", &inner),
            TypeKind::Int(_) | TypeKind::Float { .. } | TypeKind::Typedef(_) => {
                join(t.name, &inner)
            }
            TypeKind::Struct(_) => join(&named("struct"), &inner),
            TypeKind::Union(_) => join(&named("union"), &inner),
            TypeKind::Enum(_) | TypeKind::Enum64(_) => join(&named("enum"), &inner),
            TypeKind::Fwd { union } => join(&named(if union { "union" } else { "struct" }), &inner),
            TypeKind::Datasec(_) => join(&format!("SEC {}", t.name), &inner),
            TypeKind::Ptr(target) => {
                let wrap = matches!(
                    self.skip_qualifiers(target).map(|t| t.kind),
                    Ok(TypeKind::Array(_) | TypeKind::FuncProto(_))
                );
                let inner = if wrap {
                    format!("(*{inner})")
                } else {
                    format!("*{inner}")
                };
                self.decl(target, inner, budget, depth + 1)
            }
            TypeKind::Const(target) | TypeKind::Volatile(target) | TypeKind::Restrict(target) => {
                let q = match t.kind {
                    TypeKind::Const(_) => "const",
                    TypeKind::Volatile(_) => "volatile",
                    _ => "restrict",
                };
                let is_ptr = matches!(
                    self.skip_qualifiers(target).map(|t| t.kind),
                    Ok(TypeKind::Ptr(_))
                );
                if is_ptr {
                    let inner = if inner.is_empty() {
                        q.to_string()
                    } else {
                        format!("{q} {inner}")
                    };
                    self.decl(target, inner, budget, depth + 1)
                } else {
                    format!("{q} {}", self.decl(target, inner, budget, depth + 1))
                }
            }
            TypeKind::TypeTag(target) | TypeKind::DeclTag { target, .. } => {
                self.decl(target, inner, budget, depth + 1)
            }
            TypeKind::Var { type_id, .. } => {
                let inner = if inner.is_empty() {
                    t.name.to_string()
                } else {
                    inner
                };
                self.decl(type_id, inner, budget, depth + 1)
            }
            TypeKind::Array(a) => {
                self.decl(a.elem, format!("{inner}[{}]", a.len), budget, depth + 1)
            }
            TypeKind::Func { proto, .. } => {
                let name = if inner.is_empty() {
                    t.name.to_string()
                } else {
                    inner
                };
                self.proto_decl(proto, name, true, budget, depth + 1)
            }
            TypeKind::FuncProto(_) => self.proto_decl(id, inner, false, budget, depth + 1),
        }
    }

    fn proto_decl(
        &self,
        id: u32,
        inner: String,
        names: bool,
        budget: &Cell<usize>,
        depth: usize,
    ) -> String {
        let Ok(p) = self.func_proto(id) else {
            return join(&format!("<bad type {id}>"), &inner);
        };
        let mut params: Vec<String> = p
            .params()
            .map(|q| {
                let n = if names {
                    q.name.to_string()
                } else {
                    String::new()
                };
                self.decl(q.type_id, n, budget, depth + 1)
            })
            .collect();
        if p.is_variadic() {
            params.push("...".to_string());
        }
        let list = if params.is_empty() {
            "void".to_string()
        } else {
            params.join(", ")
        };
        self.decl(p.ret, format!("{inner}({list})"), budget, depth + 1)
    }
}

/// Joins a base type and a declarator: `char` + `*buf` → `char *buf`, `char` + `[16]` →
/// `char[16]`.
fn join(base: &str, inner: &str) -> String {
    if inner.is_empty() {
        base.to_string()
    } else if inner.starts_with('[') {
        format!("{base}{inner}")
    } else {
        format!("{base} {inner}")
    }
}
