//! Value functions and unsafe actions: `buf`, `strftime`, `macaddr`, `cgroup_path`, `kaddr`,
//! `uaddr`, `reg`, `signal`, `override`. Each is lowered by one function here, which
//! `calls::lower_call`'s match on the builtin's id calls.
//!
//! Layouts are the runtime's (`runtime::format::decode`): `buf` is `u32 length` then the bytes;
//! `macaddr` 6 bytes; `strftime` and `cgroup_path` one `u64` (boot nanoseconds / cgroup id)
//! that userspace turns into text. `kaddr`/`uaddr`/`cgroupid` are constants the checker
//! resolved (kallsyms, the uprobe binary's ELF symbols, the cgroup's id: `CheckedProgram::env`),
//! as bpftrace resolves them at compile time; a failed lookup is reported here.

use super::calls::reads_user_expr;
use super::expr::lower_expr;
use super::{Lower, LowerError, Val};
use crate::asm::isa::{Helper, JmpOp, Size};
use crate::codegen::emit::mem::{store_int, zero};
use crate::codegen::emit::{IntTy, Value};
use crate::codegen::Arg;
use crate::plan::layout::FieldType;
use crate::sema::Type;
use crate::syntax::ast::{Expr, ExprKind};

/// `pton("addr")`.
///
/// The checker parsed the address; its bytes go on the stack as a uint8 array.
pub(crate) fn pton(lw: &mut Lower<'_>, e: &Expr, args: &[Expr]) -> Result<Val, LowerError> {
    let s = match lw.cp.str_consts.get(&args[0].id) {
        Some(s) => String::from_utf8_lossy(s).into_owned(),
        None => str_lit(lw, &args[0]),
    };
    let bytes = crate::builtins::pton_bytes(&s)
        .ok_or_else(|| LowerError::unsupported("pton of an unchecked address", e.span))?;
    let p = lw.place(bytes.len() as u32, e.span)?;
    crate::codegen::emit::mem::write_bytes(&mut lw.b, p, &bytes);
    Ok(Val::Mem(p))
}

/// `cgroupid("path")`.
///
/// Resolved by the checker, as bpftrace resolves it at compile time.
pub(crate) fn cgroupid(lw: &mut Lower<'_>, e: &Expr, args: &[Expr]) -> Result<Val, LowerError> {
    let path = str_lit(lw, &args[0]);
    let Some(&id) = lw.cp.env.cgroup_ids.get(&path) else {
        return Err(unresolved("cgroupid", e));
    };
    match id {
        Ok(id) => Ok(Val::Int(Value::Imm(id as i64), IntTy::U64)),
        Err(errno) => Err(LowerError::Kernel {
            what: format!(
                "Failed to get `cgroupid` for path: \"{path}\": {}",
                crate::plan::layout::strerror_text(errno)
            ),
            span: e.span,
        }),
    }
}

/// A fact the checker did not ask for (an internal inconsistency between the checker's
/// [`crate::sema::environment`] and this lowering), refused rather than guessed.
fn unresolved(f: &str, e: &Expr) -> LowerError {
    LowerError::unsupported(
        format!("{f}() with an argument the checker did not resolve"),
        e.span,
    )
}

/// `kaddr("sym")`.
pub(crate) fn kaddr(lw: &mut Lower<'_>, e: &Expr, args: &[Expr]) -> Result<Val, LowerError> {
    let sym = str_lit(lw, &args[0]);
    let Some(&address) = lw.cp.env.kernel_symbols.get(&sym) else {
        return Err(unresolved("kaddr", e));
    };
    match address {
        Some(a) => Ok(Val::Int(Value::Imm(a as i64), IntTy::U64)),
        None => Err(LowerError::Kernel {
            what: format!("Failed to resolve kernel symbol: {sym}"),
            span: e.span,
        }),
    }
}

/// `uaddr("sym")`.
///
/// The checker resolved the symbol in every target's binary (`sema::uaddr`); this
/// probe's attach point has one binary.
pub(crate) fn uaddr(lw: &mut Lower<'_>, e: &Expr, args: &[Expr]) -> Result<Val, LowerError> {
    let sym = str_lit(lw, &args[0]);
    let binary = lw.user_binary.clone().unwrap_or_default();
    let found = lw.cp.env.user_symbols.get(&(binary.clone(), sym.clone()));
    let Some(&Some(s)) = found else {
        return Err(LowerError::Kernel {
            what: format!("Could not resolve symbol: {}:{sym}", binary.display()),
            span: e.span,
        });
    };
    let i = lw.probe_kind.info();
    let uprobe = i.user_space() && i.facts.func_symbol;
    if !uprobe || !s.relocatable {
        return Ok(Val::Int(Value::Imm(s.address as i64), IntTy::U64));
    }
    super::builtins::uaddr_relocated(lw, s.address, e.span)
}

/// `reg("name")`.
pub(crate) fn reg(lw: &mut Lower<'_>, e: &Expr, args: &[Expr]) -> Result<Val, LowerError> {
    let r = str_lit(lw, &args[0]);
    let off = crate::asm::isa::register_offset(std::env::consts::ARCH, &r)
        .ok_or_else(|| LowerError::unsupported(format!("register '{r}'"), e.span))?;
    let v = lw.b.vreg();
    let ctx = lw.b.ctx();
    lw.b.load(Size::Dw, v, ctx, off as i32);
    Ok(Val::Int(Value::Reg(v), IntTy::U64))
}

/// `socket_cookie(sk)`.
///
/// The checker allowed it only in tracing programs, where `sk` is a BTF pointer.
pub(crate) fn socket_cookie(lw: &mut Lower<'_>, args: &[Expr]) -> Result<Val, LowerError> {
    let sk = match lower_expr(lw, &args[0])?.value() {
        Value::Imm(n) => Arg::Imm(n),
        Value::Reg(r) => Arg::Reg(r),
    };
    let r = lw.b.call(Helper::GetSocketCookie, &[sk]);
    Ok(Val::Int(Value::Reg(r), IntTy::U64))
}

/// `signal(sig)` and (`thread`) `signal_thread(sig)`.
pub(crate) fn signal(
    lw: &mut Lower<'_>,
    e: &Expr,
    args: &[Expr],
    thread: bool,
) -> Result<Val, LowerError> {
    let (h, hname) = if !thread {
        (Helper::SendSignal, "send_signal")
    } else {
        (Helper::SendSignalThread, "send_signal_thread")
    };
    if let Some(why) = lw.cp.env.helper_unavailable(h) {
        return Err(LowerError::Kernel {
            what: format!("BPF_FUNC_{hname} not available for your kernel version ({why})"),
            span: e.span,
        });
    }
    let sig = match &args[0].kind {
        ExprKind::Str(s) => {
            let n = String::from_utf8_lossy(s);
            Value::Imm(crate::builtins::signal_number(&n).unwrap_or(0))
        }
        _ => match lw.cp.str_consts.get(&args[0].id) {
            Some(s) => {
                Value::Imm(crate::builtins::signal_number(&String::from_utf8_lossy(s)).unwrap_or(0))
            }
            None => lower_expr(lw, &args[0])?.value(),
        },
    };
    let a = match sig {
        Value::Imm(n) => Arg::Imm(n),
        Value::Reg(r) => Arg::Reg(r),
    };
    lw.b.call(h, &[a]);
    Ok(Val::None)
}

/// `override(rc)`.
pub(crate) fn override_(lw: &mut Lower<'_>, e: &Expr, args: &[Expr]) -> Result<Val, LowerError> {
    // bpf_override_return exists only in kernels built with CONFIG_BPF_KPROBE_OVERRIDE
    // (which needs CONFIG_FUNCTION_ERROR_INJECTION; Debian's kernels have neither).
    if let Some(why) = lw.cp.env.helper_unavailable(Helper::OverrideReturn) {
        let mut why = why.to_string();
        if !why.contains("CONFIG_BPF_KPROBE_OVERRIDE") {
            why.push_str("; the kernel needs CONFIG_BPF_KPROBE_OVERRIDE");
        }
        return Err(LowerError::Kernel {
            what: format!(
                "override(): BPF_FUNC_override_return not available for your kernel \
                 version: {why}"
            ),
            span: e.span,
        });
    }
    let rc = lower_expr(lw, &args[0])?.value();
    let rc = match rc {
        Value::Imm(n) => Arg::Imm(n),
        Value::Reg(r) => Arg::Reg(r),
    };
    let ctx = lw.b.ctx();
    lw.b.call(Helper::OverrideReturn, &[Arg::Reg(ctx), rc]);
    Ok(Val::None)
}

/// `write_user(dst, src, len)`: bpf_probe_write_user of `len` bytes of the value `src` (a
/// string or an array in the program's memory) to user address `dst`; true when the helper
/// returned 0. The length must be a constant within the value, which the verifier checks.
pub(crate) fn write_user(lw: &mut Lower<'_>, e: &Expr, args: &[Expr]) -> Result<Val, LowerError> {
    let size = lw.type_of(args[1].id).size() as i64;
    let len = match lw
        .cp
        .consts
        .get(&args[2].id)
        .copied()
        .or(match &args[2].kind {
            ExprKind::Int(l) => Some(l.value as i64),
            _ => None,
        }) {
        Some(n) if (1..=size).contains(&n) => n,
        _ => {
            return Err(LowerError::Kernel {
                what: format!(
                    "write_user(): the length must be a constant from 1 to the source's size \
                     ({size} bytes)"
                ),
                span: args[2].span,
            })
        }
    };
    if let Some(why) = lw.cp.env.helper_unavailable(Helper::ProbeWriteUser) {
        return Err(LowerError::Kernel {
            what: format!("write_user(): BPF_FUNC_probe_write_user is not available: {why}"),
            span: e.span,
        });
    }
    let dst = match lower_expr(lw, &args[0])?.value() {
        Value::Imm(n) => Arg::Imm(n),
        Value::Reg(r) => Arg::Reg(r),
    };
    let src = match lower_expr(lw, &args[1])? {
        Val::Mem(p) => p.arg(&mut lw.b),
        _ => {
            return Err(LowerError::unsupported(
                "write_user() of this source",
                e.span,
            ))
        }
    };
    let r =
        lw.b.call(Helper::ProbeWriteUser, &[dst, src, Arg::Imm(len)]);
    let ok = crate::codegen::emit::arith::compare(
        &mut lw.b,
        crate::codegen::emit::arith::CmpOp::Eq,
        Value::Reg(r),
        Value::Imm(0),
        false,
    );
    Ok(Val::Int(ok, IntTy::U8))
}

/// `memcmp(left, right, n)`: both values in memory, compared byte by byte (unsigned) up to
/// the first difference, whose difference is the result (0 when the `n` bytes are equal).
pub(crate) fn memcmp(lw: &mut Lower<'_>, e: &Expr, args: &[Expr]) -> Result<Val, LowerError> {
    let n = lw
        .cp
        .consts
        .get(&args[2].id)
        .copied()
        .or(match &args[2].kind {
            ExprKind::Int(l) => Some(l.value as i64),
            _ => None,
        })
        .ok_or_else(|| LowerError::unsupported("memcmp() with a count not known now", e.span))?;
    let (lt, rt) = (lw.type_of(args[0].id), lw.type_of(args[1].id));
    let l = lower_expr(lw, &args[0])?;
    let l = super::store::spill(lw, l, &lt);
    let r = lower_expr(lw, &args[1])?;
    let r = super::store::spill(lw, r, &rt);
    let out = lw.b.vreg();
    lw.b.mov(out, 0);
    let done = lw.b.label();
    for i in 0..n as i32 {
        let byte = |lw: &mut Lower<'_>, p: crate::codegen::emit::Place| {
            let v = lw.b.vreg();
            lw.b.load(Size::B, v, p.mem(), p.off);
            v
        };
        let a = byte(lw, l.at(i));
        let b = byte(lw, r.at(i));
        let same = lw.b.label();
        lw.b.jmp64(JmpOp::Jeq, a, b, same);
        lw.b.mov(out, a);
        lw.b.alu(true, crate::asm::isa::AluOp::Sub, out, b);
        lw.b.ja(done);
        lw.b.bind(same);
    }
    lw.b.bind(done);
    Ok(Val::Int(Value::Reg(out), IntTy::I64))
}

/// `path(p)`: bpf_d_path into a zeroed buffer of the result's size (the helper's buffer must be
/// initialised on 5.10, and a failed call — a path longer than the buffer — leaves it empty).
/// The verifier wants `p` as the BTF pointer it derived from the context, so the argument is
/// lowered as an address computation only: `args.file->f_path` is the file pointer plus the
/// member's offset, never a value read through a helper.
pub(crate) fn path(lw: &mut Lower<'_>, e: &Expr, arg: &Expr, t: &Type) -> Result<Val, LowerError> {
    if let Some(why) = lw.cp.env.helper_unavailable(Helper::DPath) {
        return Err(LowerError::Kernel {
            what: format!("BPF_FUNC_d_path not available for your kernel version ({why})"),
            span: e.span,
        });
    }
    let size = match t {
        Type::Str { size } => *size as u32,
        _ => return Err(LowerError::unsupported("path() of this type", e.span)),
    };
    let ptr = match lower_expr(lw, arg)?.value() {
        Value::Imm(n) => Arg::Imm(n),
        Value::Reg(r) => Arg::Reg(r),
    };
    let p = lw.place(size.next_multiple_of(8), e.span)?;
    zero(&mut lw.b, p, size.next_multiple_of(8));
    let buf = p.arg(&mut lw.b);
    lw.b.call_void(Helper::DPath, &[ptr, buf, Arg::Imm(size as i64)]);
    Ok(Val::Mem(p))
}

/// A string literal argument's text (the checker requires one).
/// `percpu_kaddr("name"[, cpu])`: the vmlinux variable's address (`ld_imm64` of its BTF id,
/// which the verifier resolves through kallsyms) turned into CPU `cpu`'s copy by
/// `bpf_per_cpu_ptr` (NULL past the last CPU), or this CPU's by `bpf_this_cpu_ptr`.
pub(crate) fn percpu_kaddr(lw: &mut Lower<'_>, e: &Expr, args: &[Expr]) -> Result<Val, LowerError> {
    let sym = str_lit(lw, &args[0]);
    let Some(&id) = lw.cp.env.percpu_vars.get(&sym) else {
        return Err(unresolved("percpu_kaddr", e));
    };
    let Some(id) = id else {
        return Err(LowerError::Kernel {
            what: format!("Could not resolve variable \"{sym}\" from BTF"),
            span: e.span,
        });
    };
    let var = lw.b.vreg();
    lw.b.ld_ksym(var, id);
    let p = match args.get(1) {
        Some(cpu) => {
            let cpu = match lower_expr(lw, cpu)?.value() {
                Value::Imm(n) => Arg::Imm(n),
                Value::Reg(r) => Arg::Reg(r),
            };
            lw.b.call(Helper::PerCpuPtr, &[Arg::Reg(var), cpu])
        }
        None => lw.b.call(Helper::ThisCpuPtr, &[Arg::Reg(var)]),
    };
    Ok(Val::Int(Value::Reg(p), IntTy::U64))
}

/// A string argument the checker knows: a literal, or a constant such as `str($1)`.
fn str_lit(lw: &Lower<'_>, a: &Expr) -> String {
    match &a.kind {
        ExprKind::Str(s) => String::from_utf8_lossy(s).into_owned(),
        _ => lw
            .cp
            .str_consts
            .get(&a.id)
            .map(|s| String::from_utf8_lossy(s).into_owned())
            .unwrap_or_default(),
    }
}

/// `buf(src[, len])`: `u32 length` then up to `capacity` bytes, read from a pointer (kernel or
/// user memory, as `str()` decides) or copied from a value in memory (arrays, strings). A
/// length that is not a constant is clamped to the capacity at run time.
pub(crate) fn buf(
    lw: &mut Lower<'_>,
    e: &Expr,
    args: &[Expr],
    t: &Type,
) -> Result<Val, LowerError> {
    let capacity = match t {
        Type::Buf { capacity } => *capacity as u32,
        _ => return Err(LowerError::unsupported("buf() of this type", e.span)),
    };
    let size = FieldType::Buf {
        capacity: capacity as usize,
    }
    .size() as u32;
    let p = lw.place(size.next_multiple_of(8), e.span)?;
    zero(&mut lw.b, p, size.next_multiple_of(8));
    let src = &args[0];
    let st = lw.type_of(src.id);
    let user = reads_user_expr(lw, src);
    // The length: a folded constant, the array's size, or a run-time value.
    let len = match args.get(1) {
        Some(l) => match lw.cp.consts.get(&l.id) {
            Some(&n) => Value::Imm(n.clamp(0, capacity as i64)),
            None => lower_expr(lw, l)?.value(),
        },
        None => Value::Imm(capacity as i64),
    };
    let v = lower_expr(lw, src)?;
    let len = match (v, len) {
        (Val::Mem(from), Value::Imm(n)) => {
            let n = (n as u32).min(st.size() as u32);
            super::store::copy(lw, p.at(4), from, n);
            Value::Imm(n as i64)
        }
        (Val::Mem(from), Value::Reg(_)) => {
            let n = capacity.min(st.size() as u32);
            super::store::copy(lw, p.at(4), from, n);
            clamp(lw, len, n)
        }
        // Through a pointer: the emit primitive stores the clamped length and reads.
        (Val::Int(ptr, _), len) => {
            let ret =
                crate::codegen::emit::strings::read_buf(&mut lw.b, user, p, capacity, ptr, len);
            lw.check_helper(ret, super::deref::read_helper(user), e.span)?;
            return Ok(Val::Mem(p));
        }
        (Val::None, _) => Value::Imm(0),
    };
    store_int(&mut lw.b, p, len, 4);
    Ok(Val::Mem(p))
}

/// `min(len, max)` as an unsigned value in a fresh register, so the verifier sees the bound.
fn clamp(lw: &mut Lower<'_>, len: Value, max: u32) -> Value {
    let r = len.fresh(&mut lw.b);
    let ok = lw.b.label();
    lw.b.jmp64(JmpOp::Jle, r, max as i32, ok);
    lw.b.mov(r, max as i32);
    lw.b.bind(ok);
    Value::Reg(r)
}

/// `macaddr(src)`: 6 bytes from an array value or read through a pointer.
pub(crate) fn macaddr(lw: &mut Lower<'_>, e: &Expr, a: &Expr) -> Result<Val, LowerError> {
    let user = reads_user_expr(lw, a);
    let p = lw.place(8, e.span)?;
    match lower_expr(lw, a)? {
        Val::Mem(from) => super::store::copy(lw, p, from, 6),
        Val::Int(ptr, _) => {
            let ret = crate::codegen::emit::builtins::read_mem(&mut lw.b, user, p, 6, ptr);
            lw.check_helper(ret, super::deref::read_helper(user), e.span)?;
        }
        Val::None => zero(&mut lw.b, p, 8),
    }
    Ok(Val::Mem(p))
}

/// `&$var`: the address of a scratch variable's stack slot (bpftrace: "the pointer to a
/// bpftrace scratch variable"), usable with `*` and printable; its slot is pinned so the
/// allocator never reuses it while the address may be held in memory. `&@m[k]` is the map
/// value's address from a lookup (0 when absent), `&p->f` the struct's address plus the
/// member's offset (nothing read), `&*p` is `p`; the checker refused every other operand.
pub(crate) fn address_of(lw: &mut Lower<'_>, e: &Expr, inner: &Expr) -> Result<Val, LowerError> {
    let name = match &inner.kind {
        ExprKind::Var(name) => name,
        ExprKind::Map { name, keys } => {
            let p = super::calls::map_value_addr(lw, inner, &name.name, keys)?;
            return Ok(Val::Int(p, IntTy::U64));
        }
        ExprKind::Field { expr, field, .. } => {
            let p = super::deref::member_addr(lw, inner, expr, &field.name)?;
            return Ok(Val::Int(p, IntTy::U64));
        }
        // `&*p` is `p`, as in C.
        ExprKind::Unary {
            op: crate::syntax::ast::UnaryOp::Deref,
            expr,
        } => return Ok(Val::Int(lower_expr(lw, expr)?.value(), IntTy::U64)),
        _ => {
            return Err(LowerError::unsupported(
                "the address of this expression",
                e.span,
            ))
        }
    };
    let slot = lw
        .cp
        .var_slots
        .get(&inner.id)
        .copied()
        .or_else(|| lw.scopes.lookup(name));
    let place = slot.and_then(|s| lw.vars.get(&s).copied());
    let Some(place) = place else {
        return Err(LowerError::unsupported(
            "address-of an unassigned variable",
            e.span,
        ));
    };
    let r = lw.b.vreg();
    match place.base {
        crate::codegen::emit::Base::Slot(s) => {
            lw.b.pin(s);
            lw.b.slot_addr(r, s, place.off);
        }
        crate::codegen::emit::Base::Ptr(p) => {
            lw.b.mov(r, p);
            lw.b.alu(true, crate::asm::isa::AluOp::Add, r, place.off);
        }
    }
    Ok(Val::Int(Value::Reg(r), IntTy::U64))
}

/// `debugf(fmt, a, b, c)`: one `bpf_trace_printk` with the format on the stack; integers are
/// passed as they are, strings as the address of their bytes (for `%s`), as bpftrace does.
/// The checker allowed at most three arguments.
pub(crate) fn debugf(lw: &mut Lower<'_>, e: &Expr, args: &[Expr]) -> Result<Val, LowerError> {
    let fmt = match &args[0].kind {
        ExprKind::Str(s) => s.clone(),
        _ => {
            return Err(LowerError::unsupported(
                "debugf with a non-literal format",
                e.span,
            ))
        }
    };
    let size = (fmt.len() as u32 + 1).next_multiple_of(8);
    let p = lw.place(size, e.span)?;
    crate::codegen::emit::mem::write_str(&mut lw.b, p, &fmt, size);
    let mut call = vec![p.arg(&mut lw.b), Arg::Imm(fmt.len() as i64 + 1)];
    for a in &args[1..] {
        let v = lower_expr(lw, a)?;
        call.push(match v {
            Val::Mem(m) => m.arg(&mut lw.b),
            v => match v.value() {
                Value::Imm(n) => Arg::Imm(n),
                Value::Reg(r) => Arg::Reg(r),
            },
        });
    }
    lw.b.call(Helper::TracePrintk, &call);
    Ok(Val::None)
}
