//! A C-like printer for BTF types, for diagnostics and `-lv` listings: `struct file *`,
//! `const char *`, `unsigned long`, `char [16]`, `int (*)(void)`, and whole declarations such
//! as `ssize_t vfs_read(struct file *file, char *buf, size_t count, loff_t *pos)`.
//! Input: a type id (and optional declarator name). Output: a `String`; it never fails: bad ids
//! print as `<bad type N>` and over-deep chains as `<...>`, since messages must still render.
//! Type tags (`__user`, `__rcu`) are not printed.

use super::types::TypeKind;
use super::Btf;

const MAX_DEPTH: usize = 64;

impl Btf {
    /// `id` as a C type name, e.g. `struct task_struct *`.
    pub fn type_to_string(&self, id: u32) -> String {
        self.decl(id, String::new(), 0)
    }

    /// A C declaration of `name` with type `id`, e.g. `char comm[16]`. For a FUNC id the
    /// function's own name is used when `name` is empty, and parameter names are printed.
    pub fn decl_to_string(&self, id: u32, name: &str) -> String {
        self.decl(id, name.to_string(), 0)
    }

    fn decl(&self, id: u32, inner: String, depth: usize) -> String {
        if depth > MAX_DEPTH {
            return join("<...>", &inner);
        }
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
                self.decl(target, inner, depth + 1)
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
                    self.decl(target, inner, depth + 1)
                } else {
                    format!("{q} {}", self.decl(target, inner, depth + 1))
                }
            }
            TypeKind::TypeTag(target) | TypeKind::DeclTag { target, .. } => {
                self.decl(target, inner, depth + 1)
            }
            TypeKind::Var { type_id, .. } => {
                let inner = if inner.is_empty() {
                    t.name.to_string()
                } else {
                    inner
                };
                self.decl(type_id, inner, depth + 1)
            }
            TypeKind::Array(a) => self.decl(a.elem, format!("{inner}[{}]", a.len), depth + 1),
            TypeKind::Func { proto, .. } => {
                let name = if inner.is_empty() {
                    t.name.to_string()
                } else {
                    inner
                };
                self.proto_decl(proto, name, true, depth + 1)
            }
            TypeKind::FuncProto(_) => self.proto_decl(id, inner, false, depth + 1),
        }
    }

    fn proto_decl(&self, id: u32, inner: String, names: bool, depth: usize) -> String {
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
                self.decl(q.type_id, n, depth + 1)
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
        self.decl(p.ret, format!("{inner}({list})"), depth + 1)
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
