//! Builtin values (`pid`, `comm`, `nsecs`, `probe`, `argN`, `retval`, `args.field`, …):
//! `lower_value` matches on the checker's [`ValueId`] with no catch-all, so a new value is a
//! compile error here until it is lowered (or refused).

use super::task::{parent, Member, Relative::*};
use super::{int_ty, ArgsSource, Lower, LowerError, Val};
use crate::asm::isa::Size;
use crate::builtins::ValueId;
use crate::codegen::emit::builtins as bi;
use crate::codegen::emit::{IntTy, Place, Value};
use crate::sema::Type;
use crate::syntax::ast::Expr;

/// The offset of `role` (`arg0`…`arg5`, `ret`, `ip`) or, for `reg`, of register `name` in
/// x86-64 `struct pt_regs`, from isa/kprobe_regs.txt.
fn pt_regs(role: &str, name: &str) -> i32 {
    let off = if role == "reg" {
        crate::asm::isa::register_offset("x86_64", name)
    } else {
        crate::asm::isa::kprobe_reg("x86_64", role).map(|r| r.offset)
    };
    i32::from(off.expect("internal error: isa/kprobe_regs.txt lacks an x86_64 register"))
}

/// `pid`/`tid`, as bpftrace's `curr_ns` (the default) sees them: from strobe's own PID
/// namespace (the initial one's ids when strobe runs there), or with `init` from the initial
/// namespace (`pid(init)`, `tid(init)`).
pub(crate) fn pid_tid(
    lw: &mut Lower<'_>,
    e: &Expr,
    tid: bool,
    init: bool,
) -> Result<Val, LowerError> {
    let ns = if init { None } else { lw.cp.env.pid_namespace };
    let v = match ns {
        None if tid => bi::tid(&mut lw.b),
        None => bi::pid(&mut lw.b),
        Some(ns) => {
            let helper = crate::asm::isa::Helper::GetNsCurrentPidTgid;
            if let Some(why) = lw.cp.env.helper_unavailable(helper) {
                return Err(LowerError::Kernel {
                    what: format!(
                        "strobe runs in a PID namespace of its own, and the ids seen from it \
                         need BPF_FUNC_get_ns_current_pid_tgid (kernel 5.7+): {why}; use \
                         {}(init) for the initial namespace's",
                        if tid { "tid" } else { "pid" }
                    ),
                    span: e.span,
                });
            }
            bi::ns_pid_tid(&mut lw.b, ns, tid)
        }
    };
    Ok(Val::Int(v, crate::codegen::emit::IntTy::U32))
}

/// The index of the target this run of the probe is for, in the attach point's target table
/// (the `probe` builtin's low half).
pub(crate) fn target_index(lw: &mut Lower<'_>, e: &Expr) -> Result<Value, LowerError> {
    // kprobes and uprobes share one program among their targets (kprobe_multi,
    // uprobe_multi or one perf event each, `loader::multi`), which tells them apart by
    // the BPF cookie it gives each target: its index (5.15+; 0 through the ioctl
    // fallback of older kernels, which have no cookies).
    // fentry/fexit lowered for a kprobe_multi group (`loader::attach_fentry`) likewise.
    let shared = lw.shared_fentry || lw.probe_kind.info().one_program_for_targets();
    let no_cookie = shared
        && lw
            .cp
            .env
            .helper_unavailable(crate::asm::isa::Helper::GetAttachCookie)
            .is_some();
    if no_cookie && lw.target_count > 1 {
        return Err(LowerError::Kernel {
            what: "`probe` in a probe of several targets needs bpf_get_attach_cookie \
                   (kernel 5.15+)"
                .into(),
            span: e.span,
        });
    }
    let b = &mut lw.b;
    let idx = match lw.probe_kind {
        // One target: index 0.
        _ if no_cookie => Value::Imm(0),
        _ if shared => {
            let ctx = b.ctx();
            let c = b.call(
                crate::asm::isa::Helper::GetAttachCookie,
                &[crate::codegen::Arg::Reg(ctx)],
            );
            Value::Reg(c)
        }
        _ => bi::target_index(b),
    };
    Ok(idx)
}

/// `strcontains(probe, "text")`: known per target when compiling, so the answer is the set of
/// targets whose name contains the text, tested on the target index (a range test for each
/// run of consecutive matching targets).
pub(crate) fn probe_contains(
    lw: &mut Lower<'_>,
    e: &Expr,
    needle: &Expr,
) -> Result<Val, LowerError> {
    let Some(text) = lw.cp.str_consts.get(&needle.id).cloned() else {
        return Err(LowerError::unsupported(
            "strcontains(probe, …) with a needle that is not a string literal",
            e.span,
        ));
    };
    let text = String::from_utf8_lossy(&text).into_owned();
    let hits: Vec<bool> = lw
        .target_names
        .iter()
        .map(|n| n.contains(text.as_str()))
        .collect();
    if hits.iter().all(|h| *h) {
        return Ok(Val::Int(Value::Imm(1), IntTy::U8));
    }
    if !hits.iter().any(|h| *h) {
        return Ok(Val::Int(Value::Imm(0), IntTy::U8));
    }
    let idx = target_index(lw, e)?;
    let idx = match idx {
        Value::Reg(r) => r,
        Value::Imm(n) => {
            let r = lw.b.vreg();
            lw.b.mov(r, n as i32);
            r
        }
    };
    let r = lw.b.vreg();
    lw.b.mov(r, 1);
    let yes = lw.b.label();
    let mut i = 0;
    while i < hits.len() {
        if !hits[i] {
            i += 1;
            continue;
        }
        let start = i;
        while i < hits.len() && hits[i] {
            i += 1;
        }
        let next = lw.b.label();
        use crate::asm::isa::JmpOp;
        lw.b.jmp64(JmpOp::Jlt, idx, start as i32, next);
        lw.b.jmp64(JmpOp::Jlt, idx, i as i32, yes);
        lw.b.bind(next);
    }
    lw.b.mov(r, 0);
    lw.b.bind(yes);
    Ok(Val::Int(Value::Reg(r), IntTy::U8))
}

/// The builtin value `v`, spelled `name` in the script (`arg2` for [`ValueId::ArgN`]).
pub(crate) fn lower_value(
    lw: &mut Lower<'_>,
    e: &Expr,
    v: ValueId,
    name: &str,
) -> Result<Val, LowerError> {
    let t = lw.type_of(e.id);
    let it = int_ty(&t).unwrap_or(IntTy::U64);
    let v = match v {
        ValueId::Elapsed => super::elapsed::elapsed(lw),
        ValueId::Args => return args_record(lw, e, &t),
        ValueId::Ppid => return parent(lw, e, (RealParent, Member::Pid), None),
        ValueId::Pcomm => return parent(lw, e, (RealParent, Member::Comm), None),
        ValueId::LeaderTid => return parent(lw, e, (GroupLeader, Member::Pid), None),
        ValueId::LeaderComm => return parent(lw, e, (GroupLeader, Member::Comm), None),
        ValueId::Pid | ValueId::Tid => return pid_tid(lw, e, v == ValueId::Tid, false),
        ValueId::Uid => bi::uid(&mut lw.b),
        ValueId::Gid => bi::gid(&mut lw.b),
        ValueId::Cpu => bi::cpu(&mut lw.b),
        ValueId::Numaid => bi::numaid(&mut lw.b),
        ValueId::Nsecs => bi::nsecs(&mut lw.b),
        ValueId::Jiffies => bi::jiffies(&mut lw.b),
        ValueId::Rand => bi::rand(&mut lw.b),
        ValueId::Curtask => bi::curtask(&mut lw.b),
        ValueId::Cgroup => bi::cgroup(&mut lw.b),
        ValueId::Username => bi::uid(&mut lw.b),
        // With `-c` (without it the checker made `cpid` the constant 0).
        ValueId::Cpid => Value::Reg(super::pid_filter::load_pid(&mut lw.b)),
        ValueId::Kstack | ValueId::Ustack => return stack(lw, e, &t),
        ValueId::Func => return func(lw, e, &t),
        ValueId::Comm => {
            let b = &mut lw.b;
            let slot = b.slot(16, 8);
            let p = Place::new(slot, 0);
            bi::comm_from_task(b, p, lw.cp.env.task_fields.map(|f| f.comm));
            return Ok(Val::Mem(p));
        }
        ValueId::Probe => {
            let idx = target_index(lw, e)?;
            let b = &mut lw.b;
            let hi = (lw.probe_index as i64) << 32;
            crate::codegen::emit::arith::binop(
                b,
                crate::codegen::emit::arith::BinOp::Or,
                idx,
                Value::Imm(hi),
                IntTy::U64,
            )
        }
        ValueId::Retval => match lw.args {
            ArgsSource::Regs => ctx_load(lw, pt_regs("ret", ""), it),
            ArgsSource::Fentry => bi::ret_slot(&mut lw.b, it),
            _ => return Err(LowerError::unsupported("`retval` in this probe", e.span)),
        },
        // x86-64: the code segment selector's low two bits are the privilege level; 3 is
        // user mode. Profile/perf contexts start with the interrupted `pt_regs`.
        // BEGIN/END run from user space in bpftrace (a uprobe on its own trigger function);
        // strobe runs them with BPF_PROG_TEST_RUN, which has no registers to read.
        ValueId::Usermode if lw.probe_kind.info().special() => Value::Imm(1),
        ValueId::Usermode => {
            let cs = ctx_load(lw, pt_regs("reg", "cs"), IntTy::U64);
            let low = crate::codegen::emit::arith::binop(
                &mut lw.b,
                crate::codegen::emit::arith::BinOp::And,
                cs,
                Value::Imm(3),
                IntTy::U64,
            );
            crate::codegen::emit::arith::compare(
                &mut lw.b,
                crate::codegen::emit::arith::CmpOp::Eq,
                low,
                Value::Imm(3),
                false,
            )
        }
        ValueId::Ctx => {
            let c = lw.b.ctx();
            Value::Reg(lw.b.copy(c))
        }
        ValueId::ArgN if name.starts_with("arg") && name[3..].parse::<usize>().is_ok() => {
            let n = name;
            let i: usize = n[3..].parse().unwrap_or(0);
            match &lw.args {
                ArgsSource::Regs if i < 6 => ctx_load(lw, pt_regs(&format!("arg{i}"), ""), it),
                ArgsSource::RawTracepoint(_) => bi::ctx_u64(&mut lw.b, i as u32, it),
                ArgsSource::Usdt(args) => {
                    let args = args.clone();
                    super::usdt::lower_arg(lw, &args, i, it, e.span)?
                }
                _ => return Err(LowerError::unsupported(format!("`{n}` here"), e.span)),
            }
        }
        // Folded to constants by the checker (`sema::config_read`); `argN` spelled as such;
        // `sarg0`… not lowered yet.
        ValueId::Probetype
        | ValueId::Config
        | ValueId::Ncpus
        | ValueId::ElfIsExe
        | ValueId::ElfIno
        | ValueId::ArgN
        | ValueId::SargN => {
            return Err(LowerError::unsupported(
                format!("the builtin `{name}`"),
                e.span,
            ))
        }
    };
    Ok(Val::Int(v, it))
}

fn ctx_load(lw: &mut Lower<'_>, off: i32, it: IntTy) -> Value {
    let r = lw.b.vreg();
    let ctx = lw.b.ctx();
    lw.b.load(Size::Dw, r, ctx, off);
    crate::codegen::emit::arith::cast(&mut lw.b, Value::Reg(r), IntTy::U64, it)
}

/// `args.name` (`args->name`): a tracepoint field at its tracefs offset, or a raw tracepoint
/// argument by position.
pub(crate) fn lower_arg(
    lw: &mut Lower<'_>,
    e: &Expr,
    name: &str,
    t: &Type,
) -> Result<Val, LowerError> {
    match &lw.args {
        ArgsSource::Tracepoint(fields) => {
            let Some(f) = fields.iter().find(|f| f.name == name).cloned() else {
                return Err(LowerError::unsupported(
                    format!("tracepoint field `{name}`"),
                    e.span,
                ));
            };
            use crate::kernel::tracefs::FieldLayout;
            match (t, f.layout) {
                (Type::Str { size }, FieldLayout::Array { .. }) => {
                    // A char array inside the record, read whole as a struct member is
                    // (`deref::read_at`): ntop() and indexing see the bytes after a NUL,
                    // stores as a string clear them.
                    let size = (*size as u32).min(f.size.max(1));
                    let p = lw.place(size.next_multiple_of(8), e.span)?;
                    crate::codegen::emit::mem::zero(&mut lw.b, p, size.next_multiple_of(8));
                    let ctx = lw.b.ctx();
                    let src = lw.b.copy(ctx);
                    lw.b.alu(true, crate::asm::isa::AluOp::Add, src, f.offset as i32);
                    crate::codegen::emit::builtins::read_mem(
                        &mut lw.b,
                        false,
                        p,
                        size,
                        Value::Reg(src),
                    );
                    lw.mark_raw(p, size);
                    Ok(Val::Mem(p))
                }
                (Type::Str { size }, _) => {
                    // __data_loc: u32 with (len << 16 | offset) from the record start.
                    let size = *size as u32;
                    let loc = lw.b.vreg();
                    let ctx = lw.b.ctx();
                    lw.b.load(Size::W, loc, ctx, f.offset as i32);
                    lw.b.alu(true, crate::asm::isa::AluOp::And, loc, 0xffff);
                    let ctx = lw.b.ctx();
                    lw.b.alu(true, crate::asm::isa::AluOp::Add, loc, ctx);
                    let p = lw.place(size, e.span)?;
                    // The read stops at the NUL: the rest must be zero, not old stack.
                    crate::codegen::emit::mem::zero(&mut lw.b, p, size);
                    crate::codegen::emit::strings::read_str(
                        &mut lw.b,
                        false,
                        p,
                        size,
                        Value::Reg(loc),
                    );
                    Ok(Val::Mem(p))
                }
                _ => {
                    let it = int_ty(t).unwrap_or(IntTy::U64);
                    let bytes = f.size.clamp(1, 8);
                    let sz = crate::codegen::emit::mem::size_of_bytes(bytes);
                    let r = lw.b.vreg();
                    let ctx = lw.b.ctx();
                    lw.b.load(sz, r, ctx, f.offset as i32);
                    let from = IntTy::new((bytes * 8) as u8, f.signed);
                    let v = crate::codegen::emit::arith::cast(
                        &mut lw.b,
                        Value::Reg(r),
                        IntTy::new(from.bits, false),
                        from,
                    );
                    Ok(Val::Int(
                        crate::codegen::emit::arith::cast(&mut lw.b, v, from, it),
                        it,
                    ))
                }
            }
        }
        ArgsSource::Fentry => {
            let it = int_ty(t).unwrap_or(IntTy::U64);
            Ok(Val::Int(bi::arg_slot(&mut lw.b, name, it), it))
        }
        ArgsSource::RawTracepoint(names) => {
            let Some(i) = names.iter().position(|n| n == name) else {
                return Err(LowerError::unsupported(
                    format!("raw tracepoint argument `{name}`"),
                    e.span,
                ));
            };
            let it = int_ty(t).unwrap_or(IntTy::U64);
            Ok(Val::Int(bi::ctx_u64(&mut lw.b, i as u32, it), it))
        }
        ArgsSource::Regs
            if lw.probe_kind.info().user_space() && !lw.probe_kind.info().facts.retprobe =>
        {
            let i = user_param_index(lw, name).ok_or_else(|| {
                LowerError::unsupported(format!("uprobe argument `{name}`"), e.span)
            })?;
            if i >= 6 {
                return Err(LowerError::unsupported(
                    format!("uprobe argument `{name}` (parameter {i}, past the registers)"),
                    e.span,
                ));
            }
            let it = int_ty(t).unwrap_or(IntTy::U64);
            Ok(Val::Int(
                ctx_load(lw, pt_regs(&format!("arg{i}"), ""), it),
                it,
            ))
        }
        _ => Err(LowerError::unsupported("`args` in this probe", e.span)),
    }
}

/// `args` as one value: a record of every argument, each read as `args.NAME` is.
fn args_record(lw: &mut Lower<'_>, e: &Expr, t: &Type) -> Result<Val, LowerError> {
    use crate::plan::layout::FieldType;
    let (Type::Record(fs), Some(FieldType::Record(fts))) = (t, t.field_type()) else {
        return Err(LowerError::unsupported(
            "`args` of this probe as a value",
            e.span,
        ));
    };
    let fts: Vec<FieldType> = fts.into_iter().map(|(_, f)| f).collect();
    let offs = crate::plan::layout::tuple_offsets(&fts);
    let size = FieldType::Tuple(fts.clone()).size() as u32;
    let p = lw.place(size, e.span)?;
    crate::codegen::emit::mem::zero(&mut lw.b, p, size);
    for (i, (n, ft)) in fs.iter().enumerate() {
        let v = lower_arg(lw, e, n, ft)?;
        super::store::store_val(lw, p.at(offs[i] as i32), &fts[i], v, ft);
    }
    Ok(Val::Mem(p))
}

/// The position of parameter `name` of the uprobe's function (its DWARF prototype, as the
/// checker read it).
fn user_param_index(lw: &Lower<'_>, name: &str) -> Option<usize> {
    lw.user_params.as_ref()?.iter().position(|(n, _)| n == name)
}

/// `BPF_F_USER_STACK` (include/uapi/linux/bpf.h).
const BPF_F_USER_STACK: i64 = 1 << 8;

/// `kstack`/`ustack` (and their call forms) in the layout `runtime::format::decode` reads:
/// kernel: `i64 stack id`; user: `i32 pid, i32 probe, i64 stack id`. The id comes from
/// `bpf_get_stackid` into the stack-trace map for this kind and depth (as bpftrace), so keys
/// stay small however deep the stack; userspace reads the frames by id when printing.
pub(crate) fn stack(lw: &mut Lower<'_>, e: &Expr, t: &Type) -> Result<Val, LowerError> {
    let (user, limit, mode) = match t {
        Type::KStack { limit, mode } => (false, *limit, *mode),
        Type::UStack { limit, mode } => (true, *limit, *mode),
        _ => return Err(LowerError::unsupported("this stack", e.span)),
    };
    // Build-id stacks live in their own map (its entries are `struct bpf_stack_build_id`);
    // bpf_get_stackid takes the same flags for it.
    let map = if mode == crate::plan::layout::StackMode::BuildId {
        lw.script.build_id_stack_maps.insert(limit);
        lw.b.map(&crate::plan::build_id_stack_map_name(limit))
    } else {
        lw.script.stack_maps.insert((user, limit));
        lw.b.map(&crate::plan::stack_map_name(user, limit))
    };
    let p = lw.place(if user { 16 } else { 8 }, e.span)?;
    let ctx = lw.b.ctx();
    let id = lw.b.call(
        crate::asm::isa::Helper::GetStackid,
        &[
            crate::codegen::Arg::Reg(ctx),
            crate::codegen::Arg::Map(map),
            crate::codegen::Arg::Imm(if user { BPF_F_USER_STACK } else { 0 }),
        ],
    );
    if user {
        let pid = bi::pid(&mut lw.b);
        crate::codegen::emit::mem::store_int(&mut lw.b, p, pid, 4);
        lw.b.store(Size::W, p.mem(), p.off + 4, lw.probe_index as i32);
        lw.b.store(Size::Dw, p.mem(), p.off + 8, id);
    } else {
        lw.b.store(Size::Dw, p.mem(), p.off, id);
    }
    Ok(Val::Mem(p))
}

/// `len(stack)`: the frames of a capture of the stack (`bpf_get_stack` into scratch memory of
/// `limit` frames: bytes written / 8; 0 when it fails). The checker allows it only for stacks
/// taken in the same run of the probe, which this capture repeats.
pub(crate) fn stack_len(lw: &mut Lower<'_>, e: &Expr, t: &Type) -> Result<Val, LowerError> {
    let (user, limit) = match t {
        Type::KStack { limit, .. } => (false, *limit),
        Type::UStack { limit, .. } => (true, *limit),
        _ => return Err(LowerError::unsupported("len() of this stack", e.span)),
    };
    if limit == 0 {
        return Ok(Val::Int(Value::Imm(0), IntTy::I64));
    }
    let bytes = (limit * 8) as u32;
    let p = lw.scratch(bytes, e.span)?;
    let buf = p.arg(&mut lw.b);
    let ctx = lw.b.ctx();
    let n = lw.b.call(
        crate::asm::isa::Helper::GetStack,
        &[
            crate::codegen::Arg::Reg(ctx),
            buf,
            crate::codegen::Arg::Imm(bytes as i64),
            crate::codegen::Arg::Imm(if user { BPF_F_USER_STACK } else { 0 }),
        ],
    );
    let done = lw.b.label();
    lw.b.jmp64(crate::asm::isa::JmpOp::Jsge, n, 0, done);
    lw.b.mov(n, 0);
    lw.b.bind(done);
    lw.b.alu(true, crate::asm::isa::AluOp::Rsh, n, 3);
    Ok(Val::Int(Value::Reg(n), IntTy::I64))
}

/// `usym` layout: `u64 addr, i32 pid, i32 probe` (`runtime::format::decode`).
pub(crate) fn usym(lw: &mut Lower<'_>, e: &Expr, addr: Value) -> Result<Val, LowerError> {
    let p = lw.place(16, e.span)?;
    crate::codegen::emit::mem::store_int(&mut lw.b, p, addr, 8);
    let pid = bi::pid(&mut lw.b);
    crate::codegen::emit::mem::store_int(&mut lw.b, p.at(8), pid, 4);
    lw.b.store(Size::W, p.mem(), p.off + 12, lw.probe_index as i32);
    Ok(Val::Mem(p))
}

/// Whether kprobe programs may call bpf_get_func_ip (5.15+), as the checker read it
/// ([`crate::sema::Environment::kprobe_get_func_ip`]).
fn kprobe_has_get_func_ip(lw: &Lower<'_>) -> bool {
    lw.cp.env.kprobe_get_func_ip
}

/// `func`: the probed function — its address, printed as a symbol (kprobe: `bpf_get_func_ip`;
/// uprobe: the instruction pointer at entry).
fn func(lw: &mut Lower<'_>, e: &Expr, t: &Type) -> Result<Val, LowerError> {
    let i = lw.probe_kind.info();
    let symbol = i.facts.func_symbol;
    match t {
        Type::USym if symbol && i.user_space() && !i.facts.retprobe => {
            let ip = ctx_load(lw, pt_regs("ip", ""), IntTy::U64);
            usym(lw, e, ip)
        }
        // A uretprobe fires after the `ret`: its saved ip is the caller's. bpf_get_func_ip
        // gives the probed function's address (uprobes: 6.6+; bpftrace uses it there too).
        Type::USym if symbol && i.user_space() => {
            let ctx = lw.b.ctx();
            let ip = lw.b.call(
                crate::asm::isa::Helper::GetFuncIp,
                &[crate::codegen::Arg::Reg(ctx)],
            );
            usym(lw, e, Value::Reg(ip))
        }
        // Before 5.15 kprobe programs have no bpf_get_func_ip; the kprobe's own address is
        // the saved ip minus the int3 length: the int3 handler, the optimized (jump) kprobe
        // and the ftrace-based kprobe all set `regs->ip = addr + 1` before calling the BPF
        // program (arch/x86/kernel/kprobes/{core,opt,ftrace}.c). The kretprobe's saved ip is
        // its trampoline, so kretprobes keep the helper (and are refused there).
        _ if i.kernel_entry_regs() && !kprobe_has_get_func_ip(lw) => {
            let r = lw.b.vreg();
            let ctx = lw.b.ctx();
            lw.b.load(Size::Dw, r, ctx, pt_regs("ip", ""));
            lw.b.alu(true, crate::asm::isa::AluOp::Sub, r, 1);
            Ok(Val::Int(Value::Reg(r), IntTy::U64))
        }
        // bpf_get_func_ip: the probed function's address for kprobes (5.15+) and, from the
        // trampoline's saved ip, for fentry/fexit (5.15+); older kernels refuse the load.
        _ if symbol && !i.user_space() => {
            let ctx = lw.b.ctx();
            let ip = lw.b.call(
                crate::asm::isa::Helper::GetFuncIp,
                &[crate::codegen::Arg::Reg(ctx)],
            );
            Ok(Val::Int(Value::Reg(ip), IntTy::U64))
        }
        _ => Err(LowerError::unsupported("`func` in this probe", e.span)),
    }
}

/// `uaddr(sym)` in a PIE or shared library (`ET_DYN`), where `sym_addr` is only an offset from
/// the object's load address in each process: the symbol's run-time address, as bpftrace
/// computes it (link-time address + where the process mapped the object). The load address is
/// the probe's run-time address (the saved ip of a uprobe; bpf_get_func_ip, the function's
/// entry, in a uretprobe) minus its link-time one, so it needs one target per program.
pub(crate) fn uaddr_relocated(
    lw: &mut Lower<'_>,
    sym_addr: u64,
    span: crate::diag::Span,
) -> Result<Val, LowerError> {
    let anchor = match lw.user_anchors.as_slice() {
        [Some(a)] => *a,
        _ => {
            return Err(LowerError::Kernel {
                what: "uaddr() in a position-independent binary or library needs a probe with \
                       one target: its address gives the load address"
                    .into(),
                span,
            })
        }
    };
    let ip = if lw.probe_kind.info().facts.retprobe {
        let ctx = lw.b.ctx();
        let r = lw.b.call(
            crate::asm::isa::Helper::GetFuncIp,
            &[crate::codegen::Arg::Reg(ctx)],
        );
        Value::Reg(r)
    } else {
        ctx_load(lw, pt_regs("ip", ""), IntTy::U64)
    };
    let delta = sym_addr.wrapping_sub(anchor) as i64;
    let r = match ip {
        Value::Reg(r) => r,
        Value::Imm(_) => return Ok(Val::Int(ip, IntTy::U64)),
    };
    let out = lw.b.copy(r);
    if i32::try_from(delta).is_ok() {
        lw.b.alu(true, crate::asm::isa::AluOp::Add, out, delta as i32);
    } else {
        let d = lw.b.constant(delta);
        lw.b.alu(true, crate::asm::isa::AluOp::Add, out, d);
    }
    Ok(Val::Int(Value::Reg(out), IntTy::U64))
}
