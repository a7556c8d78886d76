//! fentry/fexit contexts at the cost of their distinct prototypes, not of their targets.
//!
//! `fentry:*` reaches some 50,000 kernel functions, but BTF deduplication leaves far fewer
//! distinct `FUNC_PROTO`s, and fewer distinct parameter types still (`struct sock *` is one
//! type id however many functions take it). [`ProtoCache`] converts each prototype once
//! (each parameter type once: a struct's layout is the expensive part) and hands every target
//! of that prototype the same shared argument list, so building a context and its memory grow
//! with the prototypes, the targets adding a name each.
//!
//! When the probe never reads `args` or `retval` ([`reads_args`]), no type is converted at
//! all: only the prototype's shapes, which grouping and the loader's argument slots need.
//!
//! Input: BTF objects and function ids; output: [`TargetArgs`]. Invariant: a cached entry is
//! what converting again would give (the cache lives for one context build and keeps the BTF
//! objects it keys on alive).

use std::collections::{HashMap, HashSet};
use std::sync::Arc;

use super::context::TargetArgs;
use super::ctypes::btf_to_type;
use super::types::{AddrSpace, Type};
use crate::btf::{Btf, TypeKind};
use crate::syntax::ast::{Expr, ExprKind, Probe, Program};
use crate::template::{TargetProto, TypeClass};

/// One prototype's arguments as the checker and the grouping see them.
struct Shared {
    args: Arc<Vec<(String, Option<Type>)>>,
    retval: Option<Type>,
    params: Arc<[(String, TypeClass)]>,
    ret: TypeClass,
}

/// Conversions of one context build, by BTF object and type id.
#[derive(Default)]
pub struct ProtoCache {
    /// The BTF objects keyed on (by address), kept alive so that an address is never reused.
    btfs: Vec<Arc<Btf>>,
    protos: HashMap<(usize, u32, bool), Arc<Shared>>,
    types: HashMap<(usize, u32), Option<Type>>,
}

impl ProtoCache {
    fn key(&mut self, btf: &Arc<Btf>) -> usize {
        let k = Arc::as_ptr(btf) as usize;
        if !self.btfs.iter().any(|b| Arc::ptr_eq(b, btf)) {
            self.btfs.push(btf.clone());
        }
        k
    }

    fn convert(&mut self, btf: &Btf, key: usize, module: Option<&str>, id: u32) -> Option<Type> {
        self.types
            .entry((key, id))
            .or_insert_with(|| btf_to_type(btf, module, id, AddrSpace::Kernel))
            .clone()
    }

    /// The arguments of function `func_id` (a `FUNC`, or its `FUNC_PROTO`) of `btf`, for the
    /// target called `name`. `convert`: give `args`/`retval` their script types (the probe
    /// reads them); otherwise only the shapes in [`TargetArgs::proto`].
    pub fn func_args(
        &mut self,
        btf: &Arc<Btf>,
        module: Option<&str>,
        func_id: u32,
        name: &str,
        convert: bool,
    ) -> Result<TargetArgs, String> {
        let key = self.key(btf);
        let proto_id = match btf.type_by_id(func_id).map(|t| t.kind) {
            Ok(TypeKind::Func { proto, .. }) => proto,
            _ => func_id,
        };
        let shared = match self.protos.get(&(key, proto_id, convert)) {
            Some(s) => s.clone(),
            None => {
                let proto = btf.func_proto(proto_id).map_err(|e| e.to_string())?;
                let mut args = Vec::new();
                let mut params = Vec::new();
                for p in proto.params() {
                    if convert {
                        let ty = self.convert(btf, key, module, p.type_id);
                        args.push((p.name.to_string(), ty));
                    }
                    params.push((
                        p.name.to_string(),
                        super::context::fact_class(btf, p.type_id),
                    ));
                }
                let retval = if convert {
                    self.convert(btf, key, module, proto.ret)
                } else {
                    None
                };
                let s = Arc::new(Shared {
                    args: Arc::new(args),
                    retval,
                    params: params.into(),
                    ret: super::context::fact_class(btf, proto.ret),
                });
                self.protos.insert((key, proto_id, convert), s.clone());
                s
            }
        };
        Ok(TargetArgs {
            name: name.to_string(),
            args: shared.args.clone(),
            retval: shared.retval.clone(),
            proto: Some(TargetProto {
                name: name.to_string(),
                params: shared.params.clone(),
                ret: shared.ret,
            }),
            ..TargetArgs::default()
        })
    }
}

impl ProtoCache {
    /// The grouping prototype of fentry/fexit target `t`,
    /// its parameter list shared with the other targets of its prototype.
    pub fn target_proto(
        &mut self,
        kernel: &dyn crate::kernel::info::KernelInfo,
        t: &super::expand::Target,
    ) -> Option<TargetProto> {
        let super::expand::TargetKind::KernelFunc {
            module,
            func,
            btf_id,
            ..
        } = &t.kind
        else {
            return None;
        };
        let btf = kernel.btf(module.as_deref()).ok()?;
        let id = btf_id.or_else(|| btf.find_func(func))?;
        self.func_args(&btf, module.as_deref(), id, &t.name, false)
            .ok()?
            .proto
    }
}

/// Whether `probe` reads `args` or `retval`, itself or through the macros it calls (a macro's
/// body is the caller's: `macro f() { args.count }` reads the probe's `args`).
pub fn reads_args(program: &Program, probe: &Probe) -> bool {
    use crate::syntax::visit::{walk_block, walk_expr, walk_probe, Visitor};
    struct Find<'a> {
        program: &'a Program,
        /// The program's macros by name, indexed at the first call (a script may have
        /// thousands of probes and no macro).
        macros: Option<HashMap<&'a str, &'a crate::syntax::ast::MacroDef>>,
        seen: HashSet<&'a str>,
        found: bool,
    }
    impl<'a> Find<'a> {
        fn enter_macro(&mut self, name: &str) {
            let program = self.program;
            let macros = self.macros.get_or_insert_with(|| {
                program
                    .macros()
                    .map(|m| (m.name.name.as_str(), m))
                    .collect()
            });
            if let Some(&m) = macros.get(name) {
                if self.seen.insert(&m.name.name) {
                    walk_block(self, &m.body);
                }
            }
        }
    }
    impl Visitor for Find<'_> {
        fn visit_expr(&mut self, e: &Expr) {
            match &e.kind {
                ExprKind::Ident(n) if n == "args" || n == "retval" => self.found = true,
                ExprKind::Ident(n) => self.enter_macro(n),
                ExprKind::Call { name, .. } => self.enter_macro(&name.name),
                _ => {}
            }
            if !self.found {
                walk_expr(self, e)
            }
        }
    }
    let mut f = Find {
        program,
        macros: None,
        seen: HashSet::new(),
        found: false,
    };
    walk_probe(&mut f, probe);
    f.found
}

#[cfg(test)]
mod tests {
    use super::*;

    fn program(text: &str) -> Program {
        crate::syntax::parse_ok(&crate::diag::SourceFile::new("t.bt", text)).expect("parses")
    }

    #[test]
    fn targets_of_one_prototype_share_their_converted_arguments() {
        let btf = crate::kernel::info::MockKernel::fixture()
            .vmlinux
            .expect("fixture has vmlinux BTF");
        let id = btf.find_func("vfs_read").expect("fixture has vfs_read");
        let mut cache = ProtoCache::default();
        let a = cache
            .func_args(&btf, None, id, "fentry:vmlinux:a", true)
            .unwrap();
        let b = cache
            .func_args(&btf, None, id, "fentry:vmlinux:b", true)
            .unwrap();
        assert!(
            Arc::ptr_eq(&a.args, &b.args),
            "one conversion per prototype"
        );
        assert_eq!(
            (a.name.as_str(), b.name.as_str()),
            ("fentry:vmlinux:a", "fentry:vmlinux:b")
        );
        let names: Vec<&str> = a.args.iter().map(|(n, _)| n.as_str()).collect();
        assert_eq!(names, ["file", "buf", "count", "pos"]);
        assert!(a.args.iter().all(|(_, t)| t.is_some()));
        assert!(a.retval.is_some());
        let pa = a.proto.unwrap();
        assert_eq!(pa.name, "fentry:vmlinux:a");
        assert!(Arc::ptr_eq(&pa.params, &b.proto.unwrap().params));
        // Without `args`/`retval` in the probe: shapes only, no script types.
        let c = cache
            .func_args(&btf, None, id, "fentry:vmlinux:c", false)
            .unwrap();
        assert!(c.args.is_empty() && c.retval.is_none());
        assert_eq!(c.proto.unwrap().params.len(), 4);
    }

    #[test]
    fn args_are_read_directly_or_through_macros() {
        let cases = [
            ("fentry:f { @ = count(); }", false),
            ("fentry:f { @[args.count] = count(); }", true),
            ("fexit:f { @ = sum(retval); }", true),
            ("macro g() { args.count } fentry:f { @ = g(); }", true),
            ("macro g() { retval } fexit:f { @ = g; }", true),
            ("macro g() { 1 } fentry:f { @ = g(); }", false),
            (
                "macro h() { args.x } macro g() { h() } fentry:f { @ = g(); }",
                true,
            ),
        ];
        for (text, want) in cases {
            let p = program(text);
            let probe = p.probes().next().unwrap();
            assert_eq!(reads_args(&p, probe), want, "{text}");
        }
    }
}
