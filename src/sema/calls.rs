//! Names and calls: bare identifiers (builtin values, `#define` constants, enum values,
//! argument-less macros), builtin function calls checked through the registry
//! ([`crate::builtins`]: arity, probe kinds, `--unsafe`, aggregations only as map values, type
//! rules), printf-like format sites, macro expansion at call sites and user `fn` calls.
//!
//! Input/output: as `typeck`, whose expression walk calls into here.

use super::resolve::{Checker, Define, MacroFrame};
use super::types::{AddrSpace, Type};
use crate::builtins::{self, BuiltinId, CallCtx, Form, FuncId, ValueId};
use crate::diag::Span;
use crate::syntax::ast::*;
use crate::template::Fact;

/// Deepest macro expansion (a macro calling itself).
pub(super) const MAX_MACRO_DEPTH: usize = 16;

impl Checker<'_> {
    pub(super) fn ident(&mut self, e: &Expr, name: &str) -> Type {
        for f in self.frames.iter().rev() {
            if let Some((t, c, s)) = f.idents.get(name).cloned() {
                if let Some(c) = c {
                    self.consts.insert(e.id, c);
                }
                if let Some(s) = s {
                    self.str_consts.insert(e.id, s);
                }
                return t;
            }
        }
        if let Some(b) = builtins::lookup(name, Form::Value) {
            self.builtin_ids.insert(e.id, b.id);
            if !self.builtin_allowed(b, e.span) {
                return Type::None;
            }
            let BuiltinId::Value(v) = b.id else {
                unreachable!("internal error: sema::calls: a value entry with a function id")
            };
            // What the checker does besides the type rule, per value.
            match v {
                ValueId::Probetype => return self.probetype(e),
                ValueId::ElfIsExe | ValueId::ElfIno => return self.elf_fact(e, v),
                ValueId::Config => return self.config_whole(e.span),
                ValueId::Curtask => {
                    if let Some(t) = self.struct_ptr("task_struct") {
                        return t;
                    }
                }
                ValueId::ArgN => {
                    if let Some((_, n)) = builtins::numbered(name) {
                        self.facts.push(Fact::ParamIndex { index: n as usize });
                    }
                }
                ValueId::Retval => self.facts.push(Fact::ReturnsScalar),
                // Known when checking: the CPUs online now (what bpftrace stores at load
                // time), and, without `-c`, a `cpid` of zero (bpftrace warns the same).
                ValueId::Ncpus => {
                    self.consts.insert(e.id, self.kernel.online_cpus() as i64);
                }
                ValueId::Cpid => {
                    if !self.opts.child_command {
                        self.consts.insert(e.id, 0);
                        // The stdlib's `has_cpid` asks without warning.
                        if !self.program.in_stdlib(e.span) {
                            self.warn(e.span, "No child command (`-c`); cpid is zero");
                        }
                    }
                }
                ValueId::Pid
                | ValueId::Tid
                | ValueId::Uid
                | ValueId::Gid
                | ValueId::Cpu
                | ValueId::Numaid
                | ValueId::Nsecs
                | ValueId::Elapsed
                | ValueId::Jiffies
                | ValueId::Rand
                | ValueId::Cgroup
                | ValueId::Comm
                | ValueId::Kstack
                | ValueId::Ustack
                | ValueId::Ppid
                | ValueId::Pcomm
                | ValueId::LeaderTid
                | ValueId::LeaderComm
                | ValueId::Username
                | ValueId::Probe
                | ValueId::Usermode
                | ValueId::Ctx
                | ValueId::Args
                | ValueId::SargN
                | ValueId::Func => {}
            }
            let cx = std::mem::take(&mut self.cx);
            let t = {
                let ci = |_: ExprId| None;
                let cs = |_: ExprId| None;
                let ctx = CallCtx {
                    id: b.id,
                    name,
                    args: &[],
                    arg_types: &[],
                    probe: cx
                        .kinds
                        .first()
                        .copied()
                        .unwrap_or(crate::kinds::OUTSIDE_PROBES),
                    context: &cx,
                    const_int: &ci,
                    const_str: &cs,
                    max_strlen: self.opts.max_strlen,
                    stack_mode: self.opts.stack_mode,
                };
                (b.ty)(&ctx)
            };
            self.cx = cx;
            return t.unwrap_or(Type::None);
        }
        if let Some(d) = self.c_define(e, name) {
            return self.define_type(e, d);
        }
        if let Some(m) = self
            .program
            .macro_for_call(name, 0, e.span)
            .filter(|m| m.params.is_empty())
        {
            return self.expand_macro(e, m, &[]);
        }
        // Enumerators of the C headers the script includes.
        if let Some(v) = self.program.c_defs.enumerators.get(name) {
            self.consts.insert(e.id, *v);
            return Type::I64;
        }
        if let Some(v) = self.enum_value(name) {
            self.consts.insert(e.id, v);
            // Typed as its enum, so it prints by name (`@[ONE]`, `%s`) until arithmetic.
            return self.enum_of_enumerator(name).unwrap_or(Type::I64);
        }
        // The kernel's enum constants, as bpftrace takes them from BTF.
        let kernel_enum = self
            .vmlinux()
            .as_deref()
            .and_then(|b| b.find_enumerator(name));
        if let Some((v, _)) = kernel_enum {
            self.consts.insert(e.id, v as i64);
            return Type::I64;
        }
        let mut help = builtins::nearest(name, Form::Value).map(|n| format!("did you mean '{n}'?"));
        if let Some(h) = self
            .program
            .c_defs
            .missing
            .first()
            .filter(|_| help.is_none())
        {
            help = Some(format!(
                "<{h}> is not on this host: strobe takes its types from BTF, its macros are unknown"
            ));
        }
        if let Some(d) = self.error(e.span, format!("Unknown identifier: '{name}'")) {
            d.help = help;
        }
        Type::None
    }

    /// Whether `name` is a constant rather than a type: a `#define`, or an enumerator of the
    /// script's or the kernel's enums, and no type of that name exists.
    pub(super) fn is_constant_name(&mut self, name: &str) -> bool {
        if crate::sema::ctypes::named_type(name, self.opts.max_strlen).is_some()
            || self
                .vmlinux()
                .as_deref()
                .is_some_and(|b| b.find_typedef(name).is_some())
        {
            return false;
        }
        self.program.c_defs.is_object_macro(name)
            || self.program.c_defs.enumerators.contains_key(name)
            || self.enum_value(name).is_some()
            || self
                .vmlinux()
                .as_deref()
                .is_some_and(|b| b.find_enumerator(name).is_some())
    }

    /// The type of a C macro's value used as expression `e`, its constant recorded.
    fn define_type(&mut self, e: &Expr, d: Define) -> Type {
        match d {
            Define::Int(v) => {
                self.consts.insert(e.id, v);
                Type::I64
            }
            Define::Str(s) => {
                let size = s.len() + 1;
                self.str_consts.insert(e.id, s);
                Type::Str { size }
            }
            Define::Error => Type::None,
        }
    }

    /// The value of C macro `name` (a `#define` of the script or an included header) used as
    /// an expression, reported at `e` when its expansion has no value. Cached per name.
    fn c_define(&mut self, e: &Expr, name: &str) -> Option<Define> {
        if let Some(d) = self.defines.get(name) {
            return Some(d.clone());
        }
        let resolve = self.enumerator_resolver();
        let d = match self.program.c_defs.value(name, &resolve)? {
            Ok(v) => c_value(v),
            Err(msg) => {
                self.error(
                    e.span,
                    format!("unable to expand macro '{name}' as an expression: {msg}"),
                );
                self.defines.insert(name.to_string(), Define::Error);
                return Some(Define::Error);
            }
        };
        self.defines.insert(name.to_string(), d.clone());
        Some(d)
    }

    /// `NAME(args…)` of a function-like C macro: its arguments must be integer constants,
    /// substituted into the macro's expansion, which must have a value.
    fn call_c_macro(&mut self, e: &Expr, name: &str, args: &[Expr]) -> Type {
        let mut values = Vec::new();
        for a in args {
            self.expr(a);
            match self.consts.get(&a.id) {
                Some(v) => values.push(*v),
                None => {
                    self.error(
                        a.span,
                        format!("C macro '{name}' takes integer constants as arguments"),
                    );
                    return Type::None;
                }
            }
        }
        let resolve = self.enumerator_resolver();
        match self.program.c_defs.call(name, &values, &resolve) {
            Some(Ok(v)) => self.define_type(e, c_value(v)),
            Some(Err(msg)) => {
                self.error(
                    e.span,
                    format!("unable to expand macro '{name}' as an expression: {msg}"),
                );
                Type::None
            }
            None => Type::None,
        }
    }

    /// The script's enumerators by name, for names a C macro's expansion leaves.
    /// What a C macro's expansion may name besides other macros: the script's and included
    /// headers' enumerators, then the kernel's (BTF).
    fn enumerator_resolver(&mut self) -> impl Fn(&str) -> Option<i64> {
        let known = self.known_enumerators();
        let vmlinux = self.vmlinux();
        move |n: &str| {
            known.get(n).copied().or_else(|| {
                vmlinux
                    .as_deref()
                    .and_then(|b| b.find_enumerator(n))
                    .map(|(v, _)| v as i64)
            })
        }
    }

    fn known_enumerators(&mut self) -> std::collections::HashMap<String, i64> {
        let names: Vec<String> = self
            .program
            .type_defs()
            .filter_map(|d| match &d.body {
                CTypeBody::Enumerators(es) => Some(es.iter().map(|en| en.name.name.clone())),
                _ => None,
            })
            .flatten()
            .collect();
        names
            .into_iter()
            .filter_map(|n| self.enum_value(&n).map(|v| (n, v)))
            .collect()
    }

    /// The script enum type that defines enumerator `name` (the last definition wins).
    fn enum_of_enumerator(&self, name: &str) -> Option<Type> {
        let i = self.script_types.defs.iter().rposition(|d| {
            d.kind == CTypeKind::Enum && d.enumerators.iter().any(|(_, n)| n == name)
        })?;
        Some(self.script_types.struct_type(i))
    }

    /// An enumerator of a script-defined enum.
    pub(super) fn enum_value(&mut self, name: &str) -> Option<i64> {
        for d in self.program.type_defs() {
            if let CTypeBody::Enumerators(es) = &d.body {
                let mut next = 0i64;
                for en in es {
                    if let Some(v) = &en.value {
                        self.expr(v);
                        next = self.consts.get(&v.id).copied().unwrap_or(next);
                    }
                    if en.name.name == name {
                        return Some(next);
                    }
                    next += 1;
                }
            }
        }
        None
    }

    /// Whether builtin `b` may be used in every attach point's kind of this probe (and with
    /// the `--unsafe` it needs); reports otherwise.
    pub(super) fn builtin_allowed(&mut self, b: &builtins::Builtin, span: Span) -> bool {
        if b.needs_unsafe && !self.opts.unsafe_mode {
            // Current bpftrace's words for its stdlib's unsafe macros; its older ones for the
            // others.
            let msg = if matches!(
                b.id,
                BuiltinId::Func(FuncId::WriteUser | FuncId::SignalThread)
            ) {
                format!("{}() is unsafe. To use you need the --unsafe flag", b.name)
            } else {
                format!("{}() is an unsafe function being used in safe mode", b.name)
            };
            self.error_help(span, msg, "run with --unsafe to allow it".into());
            return false;
        }
        if b.id == FuncId::Debugf {
            // bpftrace 0.17's warning: the trace pipe is global and printk is slow.
            self.warn(
                span,
                "The debugf() builtin is not recommended for production use. For more \
                 information see bpf_trace_printk in bpf-helpers(7).",
            );
        }
        let shown = if b.form() == Form::Function {
            format!("{}()", b.name)
        } else if matches!(b.id, BuiltinId::Value(ValueId::ArgN | ValueId::SargN)) {
            "argN".to_string()
        } else {
            b.name.to_string()
        };
        if self.fn_ret.is_some() && !matches!(b.probes, builtins::Probes::Any) {
            self.error(span, format!("{shown} cannot be used in a function"));
            return false;
        }
        let bad: Vec<&'static str> = self
            .cx
            .kinds
            .iter()
            .filter(|k| !b.probes.allows(**k))
            .map(|k| k.name())
            .collect();
        if bad.is_empty() {
            return true;
        }
        let which = if b.id == ValueId::Args {
            format!(
                "probe types with args: {}",
                builtins::Probes::Only(crate::kinds::KindSet::Args).describe()
            )
        } else {
            format!("{shown} is available in {} probes", b.probes.describe())
        };
        self.error_help(
            span,
            format!("{shown} is not available in {} probes", bad.join(", ")),
            which,
        );
        false
    }

    /// Whether the script defines a macro or `fn` called `name` (it wins over a builtin value
    /// called as a function).
    /// Whether a script macro or function answers a call of `name` with `nargs` arguments
    /// (a macro of another arity leaves a builtin of the same name callable, as in bpftrace).
    fn is_user_callable(&self, name: &str, nargs: usize) -> bool {
        self.program
            .macros()
            .any(|m| m.name.name == name && m.params.len() == nargs)
            || self.program.fns().any(|f| f.name.name == name)
    }

    /// `struct NAME *` from BTF or the script, if known.
    /// A pointer to `struct name`: the script's own definition when it has one (it
    /// overrides BTF's, as in bpftrace), else the kernel's.
    pub(super) fn struct_ptr(&self, name: &str) -> Option<Type> {
        if let Some(i) = self.script_types.find(CTypeKind::Struct, name) {
            return Some(Type::ptr_to(
                self.script_types.struct_type(i),
                AddrSpace::Kernel,
            ));
        }
        let btf = &self.vmlinux()?;
        let id = btf.find_struct(name)?;
        let t = super::ctypes::btf_to_type(btf, None, id, AddrSpace::Kernel)?;
        Some(Type::ptr_to(t, AddrSpace::Kernel))
    }

    pub(super) fn call(
        &mut self,
        e: &Expr,
        name: &Ident,
        args: &[Expr],
        as_map_value: bool,
    ) -> Type {
        if let ([a], "str") = (args, name.name.as_str()) {
            if let ExprKind::Positional(n) = a.kind {
                // `str($1)` is the parameter's text, even when it reads as a number.
                self.expr(a);
                let text = (n as usize)
                    .checked_sub(1)
                    .and_then(|i| self.opts.params.get(i))
                    .cloned()
                    .unwrap_or_default();
                let size = text.len() + 1;
                self.str_consts.insert(e.id, text.into_bytes());
                return Type::Str { size };
            }
        }
        // A script's macro with the call's number of arguments wins over a builtin of that
        // name (bpftrace's stdlib is macros a script may override); one with another arity
        // leaves the builtin alone.
        if let Some(m) = self
            .program
            .overriding_macro(&name.name, args.len(), e.span)
        {
            if builtins::lookup(&name.name, Form::Function).is_some() {
                return self.expand_macro(e, m, args);
            }
        }
        let Some(b) = builtins::lookup(&name.name, Form::Function) else {
            // `cpu()`: the value `cpu` (recorded by `ident`).
            if builtins::value_call(&name.name, args.len())
                && !self.is_user_callable(&name.name, args.len())
            {
                return self.ident(e, &name.name);
            }
            if let Some(m) = self.program.macro_for_call(&name.name, args.len(), e.span) {
                if m.params.len() != args.len() {
                    self.error(
                        e.span,
                        format!(
                            "Macro '{}' takes {} arguments, {} given",
                            name.name,
                            m.params.len(),
                            args.len()
                        ),
                    );
                    return Type::None;
                }
                return self.expand_macro(e, m, args);
            }
            if let Some(f) = self
                .program
                .fns()
                .find(|f| f.name.name == name.name && !self.program.in_stdlib(e.span))
            {
                return self.call_fn(e, f, args);
            }
            if self.program.c_defs.is_function_macro(&name.name) {
                return self.call_c_macro(e, &name.name, args);
            }
            let candidates: Vec<&str> = builtins::all()
                .filter(|b| b.form() == Form::Function)
                .map(|b| b.name)
                .chain(self.program.macros().map(|m| m.name.name.as_str()))
                .chain(self.program.fns().map(|f| f.name.name.as_str()))
                .chain(builtins::stdlib::macro_names().iter().copied())
                .collect();
            let help = crate::diag::nearest(&name.name, candidates)
                .map(|n| format!("did you mean '{n}'?"));
            if let Some(d) = self.error(name.span, format!("Unknown function: '{}'", name.name)) {
                d.help = help;
            }
            for a in args {
                self.expr(a);
            }
            return Type::None;
        };
        self.builtin_ids.insert(e.id, b.id);
        let BuiltinId::Func(f) = b.id else {
            unreachable!("internal error: sema::calls: a function entry with a value id")
        };
        if b.aggregation && !as_map_value {
            self.error_help(
                e.span,
                format!("{}() should be directly assigned to a map", b.name),
                format!("e.g. @x = {}(…)", b.name),
            );
        }
        if args.len() < b.min_args || args.len() > b.max_args {
            let want = if b.min_args == b.max_args {
                format!("{}", b.min_args)
            } else if b.max_args >= 64 {
                format!("at least {}", b.min_args)
            } else {
                format!("{} to {}", b.min_args, b.max_args)
            };
            self.error(
                e.span,
                format!(
                    "{}() takes {want} argument{}, {} given",
                    b.name,
                    if want == "1" { "" } else { "s" },
                    args.len()
                ),
            );
            for (i, a) in args.iter().enumerate() {
                // A map passed by name is not a read of it (whose keys would be checked).
                if !(b.takes_map && i == 0 && matches!(a.kind, ExprKind::Map { .. })) {
                    self.expr(a);
                }
            }
            return Type::None;
        }
        if !self.builtin_allowed(b, name.span) {
            return Type::None;
        }
        if f == FuncId::Getopt {
            return self.getopt(e, args);
        }
        let mut ts = Vec::with_capacity(args.len());
        for (i, a) in args.iter().enumerate() {
            let t = match (&a.kind, b.takes_map && i == 0) {
                (ExprKind::Map { name: m, keys }, true)
                    if keys.is_empty() || f == FuncId::Delete =>
                {
                    let mname = self.map_name(&m.name);
                    let idx = self.maps.id(&mname, m.span);
                    self.map_refs.insert(a.id, idx);
                    if f == FuncId::Delete && !keys.is_empty() {
                        let kts: Vec<Type> = keys.iter().map(|k| self.key_expr(k)).collect();
                        if let Err(msg) = self.maps.use_keys(idx, &kts) {
                            self.error(a.span, msg);
                        }
                    } else if f == FuncId::Delete && args.len() == 1 {
                        // `delete(@m)` deletes a map without keys (bpftrace: an error for
                        // a map with keys, whose key must be given).
                        if let Err(msg) = self.maps.use_keys(idx, &[]) {
                            self.error(a.span, msg);
                        }
                    }
                    let t = self.maps.entries[idx].value.clone().unwrap_or(Type::I64);
                    self.set(a, t)
                }
                (ExprKind::Ident(_), _)
                    if matches!(
                        f,
                        FuncId::Kstack | FuncId::Ustack | FuncId::Nsecs | FuncId::Pid | FuncId::Tid
                    ) =>
                {
                    Type::None
                }
                (ExprKind::Str(_), _) if b.format && i == 0 => {
                    self.format_literal = true;
                    let t = self.expr(a);
                    self.format_literal = false;
                    t
                }
                _ => self.expr(a),
            };
            ts.push(t);
        }
        if let (true, Some(ExprKind::Map { name: m, keys })) =
            (f == FuncId::Len, args.first().map(|a| &a.kind))
        {
            let mname = self.map_name(&m.name);
            let keyless = self
                .maps
                .get(&mname)
                .and_then(|e| e.keys.as_ref())
                .is_some_and(|k| k.is_empty());
            if keyless && keys.is_empty() {
                // bpftrace's words.
                self.error(
                    args[0].span,
                    "call to len() expects a map with explicit keys (non-scalar map)",
                );
                return Type::None;
            }
        }
        if b.takes_map && !matches!(f, FuncId::Print | FuncId::Len) {
            if !matches!(args.first().map(|a| &a.kind), Some(ExprKind::Map { .. })) {
                self.error(args[0].span, format!("{}() expects a map argument", b.name));
                return Type::None;
            }
            if matches!(f, FuncId::HasKey | FuncId::CheckKey)
                || (f == FuncId::Delete && args.len() == 2)
            {
                if let (Some(ExprKind::Map { name: m, .. }), Some(k)) =
                    (args.first().map(|a| &a.kind), ts.get(1))
                {
                    let mname = self.map_name(&m.name);
                    let keyless = self
                        .maps
                        .get(&mname)
                        .and_then(|e| e.keys.as_ref())
                        .is_some_and(|k| k.is_empty());
                    let idx = self.maps.id(&mname, m.span);
                    // `(a, b)` is the key `[a, b]` (`use_keys` flattens it).
                    if keyless && f == FuncId::HasKey {
                        // bpftrace's words.
                        self.error(
                            args[0].span,
                            format!("call to has_key() expects a map with explicit keys ({mname} has none)"),
                        );
                    } else if keyless && f == FuncId::CheckKey {
                        // bpftrace's stdlib's words, for the macro that asked.
                        let caller = self
                            .str_consts
                            .get(&args[2].id)
                            .map(|s| String::from_utf8_lossy(s).into_owned())
                            .unwrap_or_else(|| "check_key".into());
                        self.error(
                            args[0].span,
                            format!("call to {caller} expects a map with explicit keys (non-scalar map)"),
                        );
                    } else if let Err(msg) = {
                        let k = self.literal_storage_type(&args[1]).unwrap_or(k.clone());
                        self.maps.use_keys(idx, &[k])
                    } {
                        self.error(args[1].span, msg);
                    }
                }
            }
        }
        if ts.iter().any(Type::is_none) && self.report && self.had_error_in(e.span) {
            // An argument already failed; its error is the one to read.
            return Type::None;
        }
        if b.format {
            self.format_call(e, b.name, args, &ts);
        } else if f == FuncId::Print && args.len() == 1 && ts[0].is_none() {
            self.error(args[0].span, "print() of a value of type 'none'");
        } else if f == FuncId::Print && matches!(&ts[0], Type::CStruct(_)) && !ts[0].is_storable() {
            self.error(
                args[0].span,
                format!(
                    "print() of a value of type '{}': it has members strobe cannot lay out (an incomplete type, a bitfield of a non-integer type)",
                    ts[0]
                ),
            );
        }
        let cx = std::mem::take(&mut self.cx);
        let consts = &self.consts;
        let strs = &self.str_consts;
        let ci = |id: ExprId| consts.get(&id).copied();
        let cs = |id: ExprId| strs.get(&id).cloned();
        let ctx = CallCtx {
            id: b.id,
            name: b.name,
            args,
            arg_types: &ts,
            probe: cx
                .kinds
                .first()
                .copied()
                .unwrap_or(crate::kinds::OUTSIDE_PROBES),
            context: &cx,
            const_int: &ci,
            const_str: &cs,
            max_strlen: self.opts.max_strlen,
            stack_mode: self.opts.stack_mode,
        };
        let r = (b.ty)(&ctx);
        self.cx = cx;
        let r = match r {
            Ok(_) if f == FuncId::Uaddr => self.uaddr_type(args),
            r => r,
        };
        match r {
            Ok(t) => {
                self.fold_meta(e, f, args, &ts);
                self.note_call(f, args);
                t
            }
            Err(err) => {
                let span = err.arg.and_then(|i| args.get(i)).map_or(e.span, |a| a.span);
                self.error(span, err.message);
                Type::None
            }
        }
    }

    pub(super) fn format_call(
        &mut self,
        e: &Expr,
        function: &'static str,
        args: &[Expr],
        ts: &[Type],
    ) {
        let Some(fmt) = self.str_consts.get(&args[0].id).cloned() else {
            self.error(
                args[0].span,
                format!("{function}() expects a string literal as its first argument"),
            );
            return;
        };
        let fmt = String::from_utf8_lossy(&fmt).into_owned();
        match super::resources::format_site(e.id, function, &fmt, &ts[1..]) {
            Ok(site) => {
                if self.report {
                    self.formats.push(site);
                }
            }
            Err((arg, msg)) => {
                // An argument of no type comes from an error already reported (an incomplete
                // member type, an unknown field): one error per cause.
                let untyped = arg.is_some_and(|i| ts.get(i + 1) == Some(&Type::None));
                if untyped && self.diags.iter().any(crate::diag::Diagnostic::is_error) {
                    return;
                }
                let span = arg.and_then(|i| args.get(i + 1)).map_or(e.span, |a| a.span);
                self.error(span, msg);
            }
        }
    }

    pub(super) fn expand_macro(&mut self, e: &Expr, m: &MacroDef, args: &[Expr]) -> Type {
        if self.frames.len() >= MAX_MACRO_DEPTH {
            self.error(
                e.span,
                format!("Macro '{}' expands too deeply (recursive?)", m.name.name),
            );
            return Type::None;
        }
        let mut frame = MacroFrame {
            call: e.span,
            ..MacroFrame::default()
        };
        let mut aliases = Vec::new();
        let errors_before = self.diags.len();
        for (p, a) in m.params.iter().zip(args) {
            match p.kind {
                MacroParamKind::Expr => {
                    let t = self.expr(a);
                    let c = self.consts.get(&a.id).copied();
                    let s = self.str_consts.get(&a.id).cloned();
                    frame.idents.insert(p.name.name.clone(), (t, c, s));
                }
                MacroParamKind::Map => match &a.kind {
                    ExprKind::Map { name, keys } if keys.is_empty() => {
                        let n = self.map_name(&name.name);
                        frame.maps.insert(p.name.name.clone(), n);
                    }
                    _ => {
                        self.error(
                            a.span,
                            format!("Macro '{}' expects a map for {}", m.name.name, p.name.name),
                        );
                    }
                },
                MacroParamKind::Var => match &a.kind {
                    ExprKind::Var(v) => match self.lookup_var(v) {
                        Some(slot) => aliases.push((p.name.name.clone(), slot)),
                        None => {
                            self.error(a.span, format!("Undefined or undeclared variable: {v}"));
                        }
                    },
                    _ => {
                        self.error(
                            a.span,
                            format!(
                                "Macro '{}' expects a variable for {}",
                                m.name.name, p.name.name
                            ),
                        );
                    }
                },
            }
        }
        if self.report && self.diags.len() > errors_before {
            return Type::None;
        }
        self.frames.push(frame);
        let outer = std::mem::replace(&mut self.scopes, vec![aliases.into_iter().collect()]);
        let floor = std::mem::replace(&mut self.hoist_floor, 0);
        let t = self.block(self.program.macro_body(e.id, m), false);
        self.hoist_floor = floor;
        self.scopes = outer;
        self.frames.pop();
        // A constant result is the call's constant (`printf(fmt())` of a macro giving a
        // string literal).
        if let Some(tail) = &self.program.macro_body(e.id, m).tail {
            if let Some(c) = self.consts.get(&tail.id).copied() {
                self.consts.insert(e.id, c);
            }
            if let Some(s) = self.str_consts.get(&tail.id).cloned() {
                self.str_consts.insert(e.id, s);
            }
        }
        t
    }

    pub(super) fn call_fn(&mut self, e: &Expr, f: &FnDef, args: &[Expr]) -> Type {
        if f.params.len() != args.len() {
            self.error(
                e.span,
                format!(
                    "Function '{}' takes {} arguments, {} given",
                    f.name.name,
                    f.params.len(),
                    args.len()
                ),
            );
        }
        for (a, (pn, pt)) in args.iter().zip(&f.params) {
            let t = self.expr(a);
            let want = self.type_ref(pt);
            if want.unify(&t).is_none() {
                self.error(
                    a.span,
                    format!(
                        "Function '{}': argument {} expects '{want}', got '{t}'",
                        f.name.name, pn.name
                    ),
                );
            }
        }
        self.type_ref(&f.ret)
    }
}

fn c_value(v: crate::syntax::cpp::MacroValue) -> Define {
    match v {
        crate::syntax::cpp::MacroValue::Int(i) => Define::Int(i),
        crate::syntax::cpp::MacroValue::Str(s) => Define::Str(s),
    }
}

#[cfg(test)]
mod tests {
    use crate::builtins::{BuiltinId, FuncId, ValueId};
    use crate::diag::SourceFile;
    use crate::kernel::info::MockKernel;
    use crate::sema::{check, CheckOptions, CheckedProgram};

    fn checked(text: &str) -> CheckedProgram {
        let src = SourceFile::new("t.bt", text);
        let program = crate::syntax::parse_ok(&src).expect("parses");
        let out = check(&program, &MockKernel::fixture(), &CheckOptions::default());
        let diags: Vec<String> = out.diagnostics.iter().map(|d| d.message.clone()).collect();
        out.program.unwrap_or_else(|| panic!("{diags:?}"))
    }

    fn ids(cp: &CheckedProgram) -> std::collections::BTreeSet<BuiltinId> {
        cp.builtins.values().copied().collect()
    }

    #[test]
    fn checker_records_each_builtin_once_resolved() {
        let cp = checked(
            "kprobe:vfs_read { @c[comm] = count(); $p = pid; $q = pid(); $r = cpu(); \
             $t = __builtin_tid; printf(\"%d\\n\", arg0); } fentry:vfs_read { printf(\"%d\\n\", args.count); }",
        );
        let got = ids(&cp);
        for want in [
            BuiltinId::Value(ValueId::Comm),
            BuiltinId::Func(FuncId::Count),
            BuiltinId::Value(ValueId::Pid),
            BuiltinId::Func(FuncId::Pid),
            // `cpu()`: the value called with no arguments.
            BuiltinId::Value(ValueId::Cpu),
            BuiltinId::Value(ValueId::Tid),
            BuiltinId::Func(FuncId::Printf),
            BuiltinId::Value(ValueId::Args),
            BuiltinId::Value(ValueId::ArgN),
        ] {
            assert!(got.contains(&want), "{want:?} not recorded in {got:?}");
        }
    }

    #[test]
    fn a_macro_of_the_calls_arity_is_no_builtin() {
        let cp = checked("macro cpu() { 42 } macro strlen(s) { 5 } BEGIN { $a = cpu(); $b = strlen(\"x\"); $c = nsecs; }");
        let got = ids(&cp);
        assert!(!got.contains(&BuiltinId::Value(ValueId::Cpu)), "{got:?}");
        assert!(!got.contains(&BuiltinId::Func(FuncId::Strlen)), "{got:?}");
        assert!(got.contains(&BuiltinId::Value(ValueId::Nsecs)), "{got:?}");
    }
}
