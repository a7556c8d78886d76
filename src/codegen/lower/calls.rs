//! Builtin functions and map access: output calls (`printf`, `print`, `time`, `exit`,
//! `clear`, `zero`) as ring-buffer records whose ids index the script's event table;
//! aggregations (`count`, `sum`, `min`, `max`, `avg`, `stats`, `hist`, `lhist`) as per-CPU
//! map updates; map reads, assignments (plain and compound), `delete`, `++`/`--`; `str()`.
//! `lower_call` matches on the checker's [`FuncId`] with no catch-all, so a new builtin
//! function is a compile error here until it is lowered (or refused).

use super::expr::lower_expr;
use super::maps::{slot_field, stored_key_fields, FIRST_SCRIPT_MAP};
use super::store::store_val;
use super::task::{Member, Relative::*};
use super::{int_ty, Lower, LowerError, Val};
use crate::asm::isa::{JmpOp, Size};
use crate::builtins::{BuiltinId, FuncId, ValueId};
use crate::codegen::emit::agg::update_agg;
use crate::codegen::emit::maps::{self as emaps, Key, BPF_ANY};
use crate::codegen::emit::output::{submit, EventKind, Record};
use crate::codegen::emit::{IntTy, Place, Value};
use crate::diag::Span;
use crate::plan::layout::FieldType;
use crate::plan::PrintSpec;
use crate::sema::{MapId, MapInfo, Type};
use crate::syntax::ast::{BinaryOp, Expr, ExprKind, UnaryOp};

fn codegen_err(lw: &Lower<'_>, span: Span, source: crate::codegen::CodegenError) -> LowerError {
    LowerError::Codegen {
        probe: format!("probe {}", lw.probe_index),
        span,
        source,
    }
}

fn map_by_name<'c>(
    lw: &Lower<'c>,
    name: &str,
    span: Span,
) -> Result<(MapId, &'c MapInfo), LowerError> {
    let name = &super::inline::map_alias(lw, name);
    lw.cp
        .map(name)
        .ok_or_else(|| LowerError::unsupported(format!("the map {name} (not checked)"), span))
}

/// An empty record of `kind`/`id` for arguments of `fields`: on the stack, or in the
/// scratch buffer when large.
pub(crate) fn new_record(
    lw: &mut Lower<'_>,
    span: Span,
    kind: EventKind,
    id: u32,
    fields: &[FieldType],
) -> Result<Record, LowerError> {
    let size = crate::codegen::emit::output::record_size(fields) as u32;
    Ok(if size <= lw.stack_value_max {
        Record::new(&mut lw.b, kind, id, fields).map_err(|s| codegen_err(lw, span, s))?
    } else {
        let p = lw.scratch(size, span)?;
        Record::new_at(&mut lw.b, p, kind, id, fields)
    })
}

pub(crate) fn submit_record(lw: &mut Lower<'_>, rec: &Record) {
    let ring = lw.ringbuf();
    let lost = lw.lost();
    submit(&mut lw.b, ring, rec, Some(lost));
}

/// A record of `kind` with arguments `args` (their values and types) and event id `id`.
fn emit_record(
    lw: &mut Lower<'_>,
    span: Span,
    kind: EventKind,
    id: u32,
    fields: &[FieldType],
    args: &[(Val, Type)],
) -> Result<(), LowerError> {
    let rec = new_record(lw, span, kind, id, fields)?;
    for (i, (v, t)) in args.iter().enumerate() {
        if let Some(f) = fields.get(i) {
            store_val(lw, rec.arg(i), f, *v, t);
        }
    }
    submit_record(lw, &rec);
    Ok(())
}

/// `exit(code)`: the code and the flag in the exit map first (a record can be lost in a full
/// buffer, this write cannot; the first `exit()` keeps its code, as bpftrace takes the code of
/// the first exit record it reads), then the record (it wakes the runtime and keeps the
/// output's order), then leave this probe. As in current bpftrace, the other probes (and this
/// one) keep running until the runtime reads the exit and detaches; it drops what they print
/// after the exit record (`runtime::exit_flag`).
pub(crate) fn lower_exit(lw: &mut Lower<'_>, span: Span, code: Value) -> Result<Val, LowerError> {
    let code = code.src(&mut lw.b);
    let map = lw.b.map(crate::template::EXIT_MAP_NAME);
    let p = lw.b.vreg();
    lw.b.ld_map_value(p, map, 0);
    let set = lw.b.vreg();
    lw.b.load(Size::W, set, p, 4);
    let written = lw.b.label();
    lw.b.jmp64(JmpOp::Jne, set, 0, written);
    lw.b.store(Size::W, p, 0, code);
    lw.b.store(Size::W, p, 4, 1);
    lw.b.bind(written);
    emit_record(lw, span, EventKind::Exit, 0, &[], &[])?;
    let exit = lw.exit;
    lw.b.ja(exit);
    // Code after exit() is unreachable; give it a fresh block so later binds work.
    Ok(Val::None)
}

/// A warning bpftrace's generated code reports at run time (`FILE:L:C-E: WARNING: text` on
/// stderr, like `warnf`), emitted where the code reaching it runs.
pub(crate) fn runtime_warning(
    lw: &mut Lower<'_>,
    span: Span,
    text: &str,
) -> Result<(), LowerError> {
    runtime_warning_args(lw, span, &text.replace('%', "%%"), &[])
}

/// A run-time warning with printf arguments (`fmt` with `%d`…), like [`runtime_warning`].
pub(crate) fn runtime_warning_args(
    lw: &mut Lower<'_>,
    span: Span,
    fmt: &str,
    args: &[(Val, Type, FieldType)],
) -> Result<(), LowerError> {
    let fields: Vec<FieldType> = args.iter().map(|(_, _, f)| f.clone()).collect();
    let call = crate::plan::printf::PrintfCall::new(fmt, fields.clone())
        .map_err(|e| LowerError::unsupported(format!("internal error: warning text: {e}"), span))?;
    let id = lw.script.events.printf.len() as u32;
    lw.script.events.printf.push(call);
    lw.script.events.printf_diag.push(crate::plan::PrintfDiag {
        id,
        error: false,
        span,
        expanded_from: lw.macros.iter().rev().map(|f| f.call_span()).collect(),
        ..Default::default()
    });
    let vals: Vec<(Val, Type)> = args.iter().map(|(v, t, _)| (*v, t.clone())).collect();
    emit_record(lw, span, EventKind::Printf, id, &fields, &vals)
}

/// A call `name(args)`.
pub(crate) fn lower_call(
    lw: &mut Lower<'_>,
    e: &Expr,
    name: &str,
    args: &[Expr],
) -> Result<Val, LowerError> {
    if let Some(v) = super::inline::lower_call(lw, e, name, args) {
        return v;
    }
    let not_lowered = || {
        Err(LowerError::unsupported(
            format!("the function `{name}()`"),
            e.span,
        ))
    };
    // As the checker resolved it: a function, or a value called with `()` (`cpu()`).
    let f = match lw.cp.builtin_of(e.id) {
        Some(BuiltinId::Func(f)) => f,
        Some(BuiltinId::Value(v)) => return super::builtins::lower_value(lw, e, v, name),
        None => return not_lowered(),
    };
    let t = lw.type_of(e.id);
    match f {
        FuncId::Len | FuncId::HasKey => {
            super::mapfns::lower_call(lw, e, f, args).unwrap_or_else(not_lowered)
        }
        FuncId::Pid | FuncId::Tid => {
            let init =
                matches!(args.first().map(|a| &a.kind), Some(ExprKind::Ident(m)) if m == "init");
            super::builtins::pid_tid(lw, e, f == FuncId::Tid, init)
        }
        FuncId::Comm if args.is_empty() => super::builtins::lower_value(lw, e, ValueId::Comm, name),
        FuncId::Comm => super::task::comm_of_pid(lw, e, &args[0]),
        FuncId::Buf => super::funcs::buf(lw, e, args, &t),
        // The argument is kept as recorded (nanoseconds since boot); userspace adds the boot
        // time when printing (bpftrace 0.17 does the same).
        FuncId::Strftime => Ok(Val::Int(lower_expr(lw, &args[1])?.value(), IntTy::U64)),
        // The cgroup id; userspace finds its paths.
        FuncId::CgroupPath => Ok(Val::Int(lower_expr(lw, &args[0])?.value(), IntTy::U64)),
        FuncId::Macaddr => super::funcs::macaddr(lw, e, &args[0]),
        FuncId::Path => super::funcs::path(lw, e, &args[0], &t),
        // Address-space annotations: the value is unchanged; reads through it use the
        // kernel/user helpers (the type's space, or `reads_user_expr`).
        FuncId::Kptr | FuncId::Uptr => lower_expr(lw, &args[0]),
        FuncId::Debugf => super::funcs::debugf(lw, e, args),
        FuncId::Pton => super::funcs::pton(lw, e, args),
        FuncId::Cgroupid => super::funcs::cgroupid(lw, e, args),
        // The errno (or number) as is; userspace prints its text.
        FuncId::Strerror | FuncId::SyscallName | FuncId::SignalName => {
            Ok(Val::Int(lower_expr(lw, &args[0])?.value(), IntTy::U64))
        }
        FuncId::Kaddr => super::funcs::kaddr(lw, e, args),
        FuncId::PercpuKaddr => super::funcs::percpu_kaddr(lw, e, args),
        FuncId::Uaddr => super::funcs::uaddr(lw, e, args),
        FuncId::Reg => super::funcs::reg(lw, e, args),
        FuncId::WriteUser => super::funcs::write_user(lw, e, args),
        FuncId::Memcmp => super::funcs::memcmp(lw, e, args),
        FuncId::SocketCookie => super::funcs::socket_cookie(lw, args),
        FuncId::Signal => super::funcs::signal(lw, e, args, false),
        FuncId::SignalThread => super::funcs::signal(lw, e, args, true),
        FuncId::Override => super::funcs::override_(lw, e, args),
        FuncId::Printf | FuncId::Errorf | FuncId::Warnf => {
            let Some(fid) = lw.cp.format_of.get(&e.id).copied() else {
                return Err(LowerError::unsupported(
                    "printf without a checked format",
                    e.span,
                ));
            };
            let call = lw.cp.formats[fid.0 as usize].printf.clone();
            let id = lw.script.events.printf.len() as u32;
            lw.script.events.printf.push(call.clone());
            if f != FuncId::Printf {
                let diag = crate::plan::PrintfDiag {
                    id,
                    error: f == FuncId::Errorf,
                    span: e.span,
                    expanded_from: lw.macros.iter().rev().map(|f| f.call_span()).collect(),
                    ..Default::default()
                };
                lw.script.events.printf_diag.push(diag);
            }
            let rec = new_record(lw, e.span, EventKind::Printf, id, &call.args)?;
            for (i, a) in args.iter().skip(1).enumerate() {
                let Some(f) = call.args.get(i) else { break };
                if super::store::write_direct(lw, a, rec.arg(i), f)? {
                    continue;
                }
                super::store::store_expr(lw, rec.arg(i), f, a)?;
            }
            submit_record(lw, &rec);
            Ok(Val::None)
        }
        FuncId::Cat | FuncId::System => {
            let Some(fid) = lw.cp.format_of.get(&e.id).copied() else {
                return Err(LowerError::unsupported(
                    format!("{name} without a checked format"),
                    e.span,
                ));
            };
            let call = lw.cp.formats[fid.0 as usize].printf.clone();
            let (kind, table) = if f == FuncId::Cat {
                (EventKind::Cat, &mut lw.script.events.cat)
            } else {
                (EventKind::System, &mut lw.script.events.system)
            };
            let id = table.len() as u32;
            table.push(call.clone());
            let mut vals = Vec::new();
            for a in args.iter().skip(1) {
                let at = lw.type_of(a.id);
                vals.push((lower_expr(lw, a)?, at));
            }
            emit_record(lw, e.span, kind, id, &call.args, &vals)?;
            Ok(Val::None)
        }
        FuncId::Join => {
            // bpftrace: up to 16 elements of 1024 bytes each (its join_argnum and
            // join_argsize, whatever max_strlen is), stopping at the first NULL.
            const JOIN_MAX: usize = 16;
            const JOIN_ARG_SIZE: usize = 1024;
            let sep = match args.get(1).map(|a| &a.kind) {
                Some(ExprKind::Str(s)) => String::from_utf8_lossy(s).into_owned(),
                _ => " ".into(),
            };
            let elem = JOIN_ARG_SIZE;
            let user = reads_user_expr(lw, &args[0]);
            let arr = lower_expr(lw, &args[0])?.value();
            let arr = arr.reg(&mut lw.b);
            let id = lw.script.events.join.len() as u32;
            lw.script.events.join.push(crate::plan::JoinSpec {
                elem_size: elem,
                count: JOIN_MAX,
                sep,
            });
            let size = (crate::codegen::emit::output::RECORD_HEADER_SIZE + elem * JOIN_MAX) as u32;
            let rec = lw.shared_scratch("join", size, e.span)?;
            let fields = vec![FieldType::Str { size: elem }; JOIN_MAX];
            let record = Record::new_at(&mut lw.b, rec, EventKind::Join, id, &fields);
            // The reader stops each element at its NUL and skips empty ones: a zero first
            // byte marks the elements after the last one (a failed read zeroes its own).
            for i in 0..JOIN_MAX {
                let at = rec.at((8 + i * elem) as i32);
                lw.b.store(crate::asm::isa::Size::B, at.mem(), at.off, 0);
            }
            let ptr_slot = lw.b.slot(8, 8);
            let ptr_place = Place::new(ptr_slot, 0);
            let done = lw.b.label();
            for i in 0..JOIN_MAX {
                let src = lw.b.copy(arr);
                lw.b.alu(true, crate::asm::isa::AluOp::Add, src, (8 * i) as i32);
                let ret = crate::codegen::emit::builtins::read_mem(
                    &mut lw.b,
                    user,
                    ptr_place,
                    8,
                    Value::Reg(src),
                );
                lw.check_helper(ret, super::deref::read_helper(user), e.span)?;
                let p = lw.b.vreg();
                lw.b.load(crate::asm::isa::Size::Dw, p, ptr_slot, 0);
                lw.b.jmp64(crate::asm::isa::JmpOp::Jeq, p, 0, done);
                let ret = crate::codegen::emit::strings::read_str(
                    &mut lw.b,
                    user,
                    rec.at((8 + i * elem) as i32),
                    elem as u32,
                    Value::Reg(p),
                );
                lw.check_helper(ret, str_helper(user), e.span)?;
            }
            lw.b.bind(done);
            submit_record(lw, &record);
            Ok(Val::None)
        }
        FuncId::Ntop => {
            // `u64 af` then 16 address bytes (runtime::format::decode's Inet).
            const AF_INET: i64 = 2;
            const AF_INET6: i64 = 10;
            let p = lw.place(24, e.span)?;
            crate::codegen::emit::mem::zero(&mut lw.b, p, 24);
            let a = &args[args.len() - 1];
            let at = lw.type_of(a.id);
            let len = match &at {
                Type::Array { len, .. } => *len as u32,
                Type::Str { size } => *size as u32,
                _ => 4,
            };
            let af = if args.len() == 2 {
                lower_expr(lw, &args[0])?.value()
            } else {
                Value::Imm(if len == 16 { AF_INET6 } else { AF_INET })
            };
            crate::codegen::emit::mem::store_int(&mut lw.b, p, af, 8);
            match lower_expr(lw, a)? {
                Val::Int(v, _) => crate::codegen::emit::mem::store_int(&mut lw.b, p.at(8), v, 4),
                Val::Mem(src) => super::store::copy(lw, p.at(8), src, len.min(16)),
                Val::None => {}
            }
            Ok(Val::Mem(p))
        }
        FuncId::Bswap => {
            // Byte by byte with shifts: the builder has no endianness operation.
            use crate::codegen::emit::arith::{binop, BinOp};
            let it = int_ty(&t).unwrap_or(IntTy::U64);
            let n = it.bytes() as i64;
            let x = lower_expr(lw, &args[0])?.value();
            let mut out = Value::Imm(0);
            for i in 0..n {
                let byte = binop(&mut lw.b, BinOp::Shr, x, Value::Imm(8 * i), IntTy::U64);
                let byte = binop(&mut lw.b, BinOp::And, byte, Value::Imm(0xff), IntTy::U64);
                let moved = binop(
                    &mut lw.b,
                    BinOp::Shl,
                    byte,
                    Value::Imm(8 * (n - 1 - i)),
                    IntTy::U64,
                );
                out = binop(&mut lw.b, BinOp::Or, out, moved, IntTy::U64);
            }
            Ok(Val::Int(
                crate::codegen::emit::arith::cast(&mut lw.b, out, IntTy::U64, it),
                it,
            ))
        }
        FuncId::Strncmp => {
            let n = args
                .get(2)
                .and_then(|a| lw.cp.consts.get(&a.id).copied())
                .unwrap_or(0)
                .max(0) as u32;
            let (at, bt) = (lw.type_of(args[0].id), lw.type_of(args[1].id));
            let a = lower_expr(lw, &args[0])?;
            let b = lower_expr(lw, &args[1])?;
            let a = super::store::spill(lw, a, &at);
            let b = super::store::spill(lw, b, &bt);
            let n = n.min(at.size() as u32).min(bt.size() as u32);
            let v = crate::codegen::emit::strings::strncmp(&mut lw.b, a, b, n);
            Ok(Val::Int(v, IntTy::U64))
        }
        FuncId::Strlen => {
            let at = lw.type_of(args[0].id);
            let a = lower_expr(lw, &args[0])?;
            let a = super::store::spill(lw, a, &at);
            let v = crate::codegen::emit::strings::strlen(&mut lw.b, a, at.size() as u32);
            Ok(Val::Int(v, IntTy::U64))
        }
        FuncId::Strcontains if lw.type_of(args[0].id) == Type::Probe => {
            super::builtins::probe_contains(lw, e, &args[1])
        }
        FuncId::Strcontains => {
            let (at, bt) = (lw.type_of(args[0].id), lw.type_of(args[1].id));
            let a = lower_expr(lw, &args[0])?;
            let a = super::store::spill(lw, a, &at);
            let b = lower_expr(lw, &args[1])?;
            let b = super::store::spill(lw, b, &bt);
            let (hs, ns) = (at.size() as u32, bt.size() as u32);
            let ws = crate::codegen::emit::strings::contains_work_size(hs, ns);
            let work = lw.scratch(ws, e.span)?;
            let v = crate::codegen::emit::strings::contains(&mut lw.b, a, hs, b, ns, work);
            Ok(Val::Int(v, IntTy::U64))
        }
        FuncId::Strstr => super::strfns::strstr(lw, e, args),
        FuncId::StrConcat => super::strfns::str_concat(lw, e, args),
        FuncId::Strcap => super::strfns::strcap(lw, e, args),
        FuncId::Nsecs => {
            let v = match args.first().map(|a| &a.kind) {
                Some(ExprKind::Ident(m)) if m == "boot" => {
                    crate::codegen::emit::builtins::boot_ns(&mut lw.b)
                }
                Some(ExprKind::Ident(m)) if m == "tai" => {
                    crate::codegen::emit::builtins::tai_ns(&mut lw.b)
                }
                // Software TAI, as bpftrace computes it: the boot clock plus the offset of
                // CLOCK_TAI from CLOCK_BOOTTIME, read here (the script is compiled at start).
                Some(ExprKind::Ident(m)) if m == "sw_tai" => {
                    let boot = crate::codegen::emit::builtins::boot_ns(&mut lw.b);
                    crate::codegen::emit::arith::binop(
                        &mut lw.b,
                        crate::codegen::emit::arith::BinOp::Add,
                        boot,
                        Value::Imm(tai_minus_boot_ns()),
                        IntTy::U64,
                    )
                }
                Some(ExprKind::Ident(m)) if m != "monotonic" => {
                    return Err(LowerError::unsupported(format!("nsecs({m})"), e.span))
                }
                _ => crate::codegen::emit::builtins::nsecs(&mut lw.b),
            };
            Ok(Val::Int(v, IntTy::U64))
        }
        FuncId::Exit => {
            let code = match args.first() {
                Some(a) => lower_expr(lw, a)?.value(),
                None => Value::Imm(0),
            };
            lower_exit(lw, e.span, code)
        }
        FuncId::Assert => super::asserts::assert(lw, e, args),
        // Checked when compiling (`sema::meta`); nothing runs.
        FuncId::StaticAssert | FuncId::AssertStr | FuncId::Fail | FuncId::CheckKey => Ok(Val::None),
        FuncId::Unwatch => {
            let t = lw.type_of(args[0].id);
            let v = lower_expr(lw, &args[0])?;
            let field = crate::plan::layout::FieldType::Int {
                bytes: 8,
                signed: false,
            };
            emit_record(lw, e.span, EventKind::Unwatch, 0, &[field], &[(v, t)])?;
            Ok(Val::None)
        }
        // The checker refuses it (`builtins::output`).
        FuncId::Skboutput => not_lowered(),
        FuncId::Time => {
            let fmt = match args.first() {
                Some(a) => match &a.kind {
                    ExprKind::Str(s) => String::from_utf8_lossy(s).into_owned(),
                    _ => "%H:%M:%S\n".into(),
                },
                None => "%H:%M:%S\n".into(),
            };
            let id = lw.script.events.time.len() as u32;
            lw.script.events.time.push(fmt);
            emit_record(lw, e.span, EventKind::Time, id, &[], &[])?;
            Ok(Val::None)
        }
        FuncId::Clear | FuncId::Zero => {
            let Some(ExprKind::Map { name: m, .. }) = args.first().map(|a| &a.kind) else {
                return Err(LowerError::unsupported(
                    format!("{name} of a non-map"),
                    e.span,
                ));
            };
            let (id, _) = map_by_name(lw, &m.name, e.span)?;
            let index = FIRST_SCRIPT_MAP + id.0 as usize;
            let (kind, id) = if f == FuncId::Clear {
                lw.script.events.clear.push(index);
                (EventKind::Clear, lw.script.events.clear.len() - 1)
            } else {
                lw.script.events.zero.push(index);
                (EventKind::Zero, lw.script.events.zero.len() - 1)
            };
            emit_record(lw, e.span, kind, id as u32, &[], &[])?;
            Ok(Val::None)
        }
        FuncId::Print => {
            let int_arg = |lw: &Lower<'_>, i: usize| {
                args.get(i)
                    .and_then(|a| lw.cp.consts.get(&a.id).copied())
                    .unwrap_or(0)
                    .max(0) as u64
            };
            match args.first().map(|a| &a.kind) {
                Some(ExprKind::Map { name: m, keys }) if keys.is_empty() => {
                    let (id, _) = map_by_name(lw, &m.name, e.span)?;
                    let spec = PrintSpec::Map {
                        map: FIRST_SCRIPT_MAP + id.0 as usize,
                        top: int_arg(lw, 1) as usize,
                        div: int_arg(lw, 2),
                    };
                    lw.script.events.print.push(spec);
                    let id = lw.script.events.print.len() as u32 - 1;
                    emit_record(lw, e.span, EventKind::Print, id, &[], &[])?;
                }
                Some(_) => {
                    let a = &args[0];
                    let at = lw.type_of(a.id);
                    let f = at.field_type().ok_or_else(|| {
                        LowerError::unsupported(format!("print of a {at}"), a.span)
                    })?;
                    let v = super::store::lower_stored(lw, a)?;
                    lw.script.events.print.push(PrintSpec::Value(f.clone()));
                    let id = lw.script.events.print.len() as u32 - 1;
                    emit_record(lw, e.span, EventKind::Print, id, &[f], &[(v, at)])?;
                }
                None => {}
            }
            Ok(Val::None)
        }
        FuncId::Kstack | FuncId::Ustack => super::builtins::stack(lw, e, &t),
        FuncId::Ppid => super::task::parent(lw, e, (RealParent, Member::Pid), args.first()),
        FuncId::Pcomm => super::task::parent(lw, e, (RealParent, Member::Comm), args.first()),
        FuncId::LeaderTid => super::task::parent(lw, e, (GroupLeader, Member::Pid), args.first()),
        FuncId::LeaderComm => super::task::parent(lw, e, (GroupLeader, Member::Comm), args.first()),
        FuncId::Ksym => {
            let v = lower_expr(lw, &args[0])?.value();
            Ok(Val::Int(v, IntTy::U64))
        }
        FuncId::Usym => {
            let v = lower_expr(lw, &args[0])?.value();
            super::builtins::usym(lw, e, v)
        }
        FuncId::Delete => {
            let Some(first) = args.first() else {
                return Ok(Val::None);
            };
            let (m, keys): (&str, Vec<&Expr>) = match &first.kind {
                ExprKind::Map { name: m, keys } => {
                    let mut k: Vec<&Expr> = keys.iter().collect();
                    k.extend(args.iter().skip(1));
                    (&m.name, k)
                }
                _ => return Err(LowerError::unsupported("delete of a non-map", e.span)),
            };
            let (id, info) = map_by_name(lw, m, e.span)?;
            let key = build_key(lw, info, &keys)?;
            let map = map_index(lw, id);
            if let Some(n) = super::mapfns::bucket_count(info, "delete()", e.span)? {
                let v = super::mapfns::delete_buckets(lw, info, map, key.place, n);
                return Ok(Val::Int(v, IntTy::U8));
            }
            Ok(Val::Int(
                emaps::delete(&mut lw.b, map, key.place),
                IntTy::U8,
            ))
        }
        FuncId::Str => {
            let size = match t {
                Type::Str { size } => size as u32,
                _ => lw.max_strlen as u32,
            };
            let a = &args[0];
            let v = lower_expr(lw, a)?;
            if let Val::Mem(p) = v {
                return Ok(Val::Mem(p));
            }
            let user = reads_user_expr(lw, a);
            let p = lw.place(size, e.span)?;
            crate::codegen::emit::mem::zero(&mut lw.b, p, size);
            if args.len() == 1 {
                read_str_typed(lw, user, p, size, v.value(), e.span)?;
                return Ok(Val::Mem(p));
            }
            // `str(p, n)` keeps n - 1 bytes and the NUL, as bpftrace does.
            let mut n = size;
            let mut cut = None;
            if let Some(l) = args.get(1) {
                match lw.cp.consts.get(&l.id) {
                    Some(len) => n = (*len).clamp(1, size as i64) as u32,
                    None => cut = Some(lower_expr(lw, l)?.value()),
                }
            }
            let ret = crate::codegen::emit::strings::read_str(&mut lw.b, user, p, n, v.value());
            lw.check_helper(ret, str_helper(user), e.span)?;
            if let Some(len) = cut {
                crate::codegen::emit::strings::cut_at(&mut lw.b, p, size, len);
            }
            Ok(Val::Mem(p))
        }
        // Aggregations are lowered as a map's assigned value (`maps`), folds and checks have
        // a constant (`sema::meta`, `sema::getopt`), and the checker refuses `dw_ustack()`.
        FuncId::Count
        | FuncId::Sum
        | FuncId::Min
        | FuncId::Max
        | FuncId::Avg
        | FuncId::Stats
        | FuncId::Hist
        | FuncId::Lhist
        | FuncId::Tseries
        | FuncId::DwUstack
        | FuncId::Getopt
        | FuncId::IsStr
        | FuncId::IsPtr
        | FuncId::IsArray
        | FuncId::IsInteger
        | FuncId::IsUnsignedInteger
        | FuncId::IsLiteral
        | FuncId::KfuncExist
        | FuncId::KfuncAllowed => not_lowered(),
    }
}

/// `str(p)` into the `size` bytes at `dst`: below 1024 bytes a string may fill them all
/// without a NUL (bpftrace reads one byte more than the string type holds, so a longer string
/// prints with the truncation trailer); from 1024 bytes on it keeps `size - 1` and the NUL,
/// as bpftrace's does.
/// With `-k` a failed read is reported at `span` (the `str()` call).
pub(crate) fn read_str_typed(
    lw: &mut Lower<'_>,
    user: bool,
    dst: Place,
    size: u32,
    src: Value,
    span: Span,
) -> Result<(), LowerError> {
    let ret = if size < 1024 {
        crate::codegen::emit::strings::read_str_full(&mut lw.b, user, dst, size, src)
    } else {
        crate::codegen::emit::strings::read_str(&mut lw.b, user, dst, size, src)
    };
    lw.check_helper(ret, str_helper(user), span)
}

/// The helper a string read through a pointer calls.
pub(crate) fn str_helper(user: bool) -> crate::asm::isa::Helper {
    if user {
        crate::asm::isa::Helper::ProbeReadUserStr
    } else {
        crate::asm::isa::Helper::ProbeReadKernelStr
    }
}

/// Whether reads through the value of `a` go to user memory: an integer marked by
/// `kptr()`/`uptr()` (directly, through a variable or arithmetic: the checker's
/// `addr_spaces`) says so; otherwise its type decides ([`reads_user`]).
pub(crate) fn reads_user_expr(lw: &Lower<'_>, a: &Expr) -> bool {
    match lw.cp.addr_spaces.get(&a.id) {
        Some(s) => *s == crate::sema::types::AddrSpace::User,
        None => reads_user(lw, &lw.type_of(a.id)),
    }
}

/// Whether `str()`/reads of a value of type `t` go to user memory: a pointer says so; a plain
/// integer does in uprobes.
pub(crate) fn reads_user(lw: &Lower<'_>, t: &Type) -> bool {
    match t {
        Type::Pointer { space, .. } => *space == crate::sema::types::AddrSpace::User,
        _ => lw.probe_kind.user_space(),
    }
}

fn map_index(lw: &mut Lower<'_>, id: MapId) -> usize {
    let name = super::maps::map_name(lw.cp, id);
    lw.b.map(&name)
}

/// A key for map `info` from `keys` on the stack (a scalar map's key is one zero `u64`).
/// Fields whose producer writes memory itself (`comm`) are written in place.
pub(crate) fn build_key(
    lw: &mut Lower<'_>,
    info: &MapInfo,
    keys: &[&Expr],
) -> Result<Key, LowerError> {
    build_key_for(lw, info, keys, false)
}

/// [`build_key`]; `bucket_later` says the caller writes a histogram's bucket index itself
/// (`update_agg` does), so a key of the bucket alone needs no zero store first.
fn build_key_for(
    lw: &mut Lower<'_>,
    info: &MapInfo,
    keys: &[&Expr],
    bucket_later: bool,
) -> Result<Key, LowerError> {
    // One tuple for a key of several parts (`@m[(a, b)]`, `@m[$t]`, `delete(@m, (a, b))`):
    // the checker made it the key `[a, b]`, so it gets the flat form's layout. A literal's
    // elements are the keys themselves (the same code as `@m[a, b]`).
    if let [k] = keys {
        if info.keys.len() >= 2 {
            if let ExprKind::Tuple(elems) = &k.kind {
                if elems.len() == info.keys.len() {
                    let elems: Vec<&Expr> = elems.iter().collect();
                    return build_key_for(lw, info, &elems, bucket_later);
                }
            }
            let fields = stored_key_fields(info);
            let key = new_key(lw, &fields, &[], k.span)?;
            super::mapfns::store_tuple_key(lw, &key, info.keys.len(), k)?;
            return Ok(key);
        }
    }
    let fields = stored_key_fields(info);
    let direct: Vec<usize> = keys
        .iter()
        .enumerate()
        .filter(|(i, k)| {
            fields
                .get(*i)
                .is_some_and(|f| super::store::writes_direct(lw, k, f))
        })
        .map(|(i, _)| i)
        .collect();
    let key = new_key(
        lw,
        &fields,
        &direct,
        keys.first().map_or(info.span, |k| k.span),
    )?;
    let hist = matches!(
        info.agg,
        Some(crate::plan::agg::AggKind::Hist(_) | crate::plan::agg::AggKind::TSeries(_))
    );
    if (fields.is_empty() || (fields.len() == 1 && info.keys.is_empty())) && !(hist && bucket_later)
    {
        key.set_int(&mut lw.b, 0, Value::Imm(0));
    }
    for (i, k) in keys.iter().enumerate() {
        if i >= key.fields.len() {
            break;
        }
        let f = key.fields[i].clone();
        if direct.contains(&i) && super::store::write_direct(lw, k, key.field(i), &f)? {
            continue;
        }
        super::store::store_expr(lw, key.field(i), &f, k)?;
    }
    Ok(key)
}

/// A key of `fields` on the stack, or in the scratch buffer when it is large (long strings).
pub(crate) fn new_key(
    lw: &mut Lower<'_>,
    fields: &[FieldType],
    filled: &[usize],
    span: Span,
) -> Result<Key, LowerError> {
    let size = FieldType::Tuple(fields.to_vec()).size() as u32;
    if size <= lw.stack_value_max {
        return Ok(Key::new_filled(&mut lw.b, fields, filled));
    }
    let place = lw.scratch(size, span)?;
    Ok(Key::at_filled(&mut lw.b, place, fields, filled))
}

/// `@m[keys]` read in an expression: a plain value (0 or empty when absent), or this CPU's
/// aggregation value (count/sum/min/max; avg's quotient).
pub(crate) fn read_map(
    lw: &mut Lower<'_>,
    e: &Expr,
    name: &str,
    keys: &[Expr],
) -> Result<Val, LowerError> {
    let (id, info) = map_by_name(lw, name, e.span)?;
    let info = info.clone();
    let t = lw.type_of(e.id);
    let keys: Vec<&Expr> = keys.iter().collect();
    let key = build_key(lw, &info, &keys)?;
    let slot_f = slot_field(&info.value);
    if let Some(agg) = info.agg {
        // Every CPU's slot, merged as bpftrace merges them (its checker refuses reading
        // stats() and histograms as values).
        let it = int_ty(&t).unwrap_or(IntTy::I64);
        let keyp = lw.b.vreg();
        match key.place.base {
            crate::codegen::emit::Base::Slot(s) => lw.b.slot_addr(keyp, s, key.place.off),
            crate::codegen::emit::Base::Ptr(r) => {
                lw.b.mov(keyp, r);
                lw.b.alu(true, crate::asm::isa::AluOp::Add, keyp, key.place.off);
            }
        }
        let map_name = super::maps::map_name(lw.cp, id);
        let v = super::loops::reduce_cpus(lw, &map_name, keyp, agg);
        // The callback reads the key through its address: its slot lives until here.
        if let crate::codegen::emit::Base::Slot(s) = key.place.base {
            lw.b.keep_alive(s);
        }
        let v = crate::codegen::emit::arith::cast(&mut lw.b, v, IntTy::new(64, it.signed), it);
        return Ok(Val::Int(v, it));
    }
    let map = map_index(lw, id);
    match int_ty(&t) {
        Some(it) => {
            let p = emaps::lookup(&mut lw.b, map, key.place);
            lw.check_lookup(p, e.span)?;
            let v = emaps::load_or_zero(&mut lw.b, p, IntTy::new(64, it.signed));
            let v = crate::codegen::emit::arith::cast(&mut lw.b, v, IntTy::new(64, it.signed), it);
            Ok(Val::Int(v, it))
        }
        None => {
            let size = (slot_f.size() as u32).max(1);
            let out = lw.place(size.next_multiple_of(8), e.span)?;
            crate::codegen::emit::mem::zero(&mut lw.b, out, size.next_multiple_of(8));
            let p = emaps::lookup(&mut lw.b, map, key.place);
            lw.check_lookup(p, e.span)?;
            let absent = lw.b.label();
            lw.b.jmp64(crate::asm::isa::JmpOp::Jeq, p, 0, absent);
            super::store::copy(lw, out, Place::ptr(p, 0), size);
            lw.b.bind(absent);
            Ok(Val::Mem(out))
        }
    }
}

/// `&@m[keys]` / `&@m`: the map value's address from a lookup, 0 when the key is absent
/// (nothing is created: reading through the null pointer gives 0, as reading `@m[keys]`
/// does).
pub(crate) fn map_value_addr(
    lw: &mut Lower<'_>,
    e: &Expr,
    name: &str,
    keys: &[Expr],
) -> Result<Value, LowerError> {
    let (id, info) = map_by_name(lw, name, e.span)?;
    let info = info.clone();
    let keys: Vec<&Expr> = keys.iter().collect();
    let key = build_key(lw, &info, &keys)?;
    let map = map_index(lw, id);
    Ok(Value::Reg(emaps::lookup(&mut lw.b, map, key.place)))
}

/// `@m[keys] = value` / `@m[keys] op= value`, aggregations included.
pub(crate) fn assign_map(
    lw: &mut Lower<'_>,
    name: &str,
    keys: &[Expr],
    span: Span,
    op: Option<BinaryOp>,
    value: &Expr,
) -> Result<(), LowerError> {
    let (id, info) = map_by_name(lw, name, span)?;
    let info = info.clone();
    if info.agg.is_some() {
        // `@x = { stmts; avg(v) }`: the statements in their scope, then the aggregation.
        if let ExprKind::Block(b) = &value.kind {
            if let Some(tail) = b.tail.as_deref() {
                lw.scopes.push();
                let r = b
                    .stmts
                    .iter()
                    .try_for_each(|s| super::stmt::lower_stmt(lw, s))
                    .and_then(|()| assign_map(lw, name, keys, span, op, tail));
                lw.scopes.pop();
                return r;
            }
        }
    }
    let keys: Vec<&Expr> = keys.iter().collect();
    if let Some(agg) = info.agg {
        let arg = match &value.kind {
            ExprKind::Call { args, .. } => args.first(),
            _ => None,
        };
        let v = match arg {
            Some(a) => {
                let at = lw.type_of(a.id);
                let v = lower_expr(lw, a)?.value();
                // Aggregations take the value at 64 bits with its signedness.
                match int_ty(&at) {
                    Some(it) => crate::codegen::emit::arith::cast(
                        &mut lw.b,
                        v,
                        it,
                        IntTy::new(64, it.signed),
                    ),
                    None => v,
                }
            }
            None => Value::Imm(0),
        };
        if lw.script.classed_maps.contains_key(&info.name) && op.is_none() {
            if let [k] = keys.as_slice() {
                return super::key_class::update(lw, &info, k, agg, v, span);
            }
        }
        let key = build_key_for(lw, &info, &keys, true)?;
        let map = map_index(lw, id);
        if lw.script.slot_maps.contains(&info.name) {
            crate::codegen::emit::agg::update_slot(&mut lw.b, map, &key, agg, v);
            return Ok(());
        }
        if lw.script.cached_maps.contains(&info.name) && op.is_none() {
            return super::agg_cache::update_cached(lw, &info, map, &key, agg, v);
        }
        let drops = lw.drops();
        if let crate::plan::agg::AggKind::TSeries(kind) = agg {
            let now = super::tseries::now(lw, span)?;
            crate::codegen::emit::tseries::update_tseries(
                &mut lw.b,
                map,
                &key,
                kind,
                v,
                now,
                Some(drops),
            );
            return Ok(());
        }
        update_agg(&mut lw.b, map, &key, agg, v, Some(drops));
        return Ok(());
    }
    let vt = lw.type_of(value.id);
    let v = super::store::lower_stored(lw, value)?;
    let (v, vt) = match op {
        Some(o) => {
            let keys_owned: Vec<Expr> = keys.iter().map(|k| (*k).clone()).collect();
            let cur = read_map_as(lw, id, &info, &keys_owned, span)?;
            let t = info.value.clone();
            (super::expr::arith(lw, o, cur, &t, v, &vt, &t, span)?, t)
        }
        None => (v, vt),
    };
    write_map(lw, id, &info, &keys, v, &vt)
}

fn read_map_as(
    lw: &mut Lower<'_>,
    id: MapId,
    info: &MapInfo,
    keys: &[Expr],
    _span: Span,
) -> Result<Val, LowerError> {
    let keys: Vec<&Expr> = keys.iter().collect();
    let key = build_key(lw, info, &keys)?;
    let map = map_index(lw, id);
    let it = int_ty(&info.value).unwrap_or(IntTy::I64);
    let v = emaps::lookup_or_zero(&mut lw.b, map, key.place, IntTy::new(64, it.signed));
    Ok(Val::Int(v, IntTy::new(64, it.signed)))
}

fn write_map(
    lw: &mut Lower<'_>,
    id: MapId,
    info: &MapInfo,
    keys: &[&Expr],
    v: Val,
    vt: &Type,
) -> Result<(), LowerError> {
    let f = slot_field(&info.value);
    let size = (f.size() as u32).max(1).next_multiple_of(8);
    // Large values (whole structs) go through the scratch buffer.
    let vp = lw.place(size, info.span)?;
    if size as usize > f.size() {
        crate::codegen::emit::mem::zero(&mut lw.b, vp.at(f.size() as i32), size - f.size() as u32);
    }
    store_val(lw, vp, &f, v, vt);
    let key = build_key(lw, info, keys)?;
    let map = map_index(lw, id);
    let drops = lw.drops();
    emaps::update(&mut lw.b, map, key.place, vp, BPF_ANY, Some(drops));
    Ok(())
}

/// `$x++`, `++$x`, `@m[k]--`…: the old (post) or new (pre) value.
pub(crate) fn increment(
    lw: &mut Lower<'_>,
    e: &Expr,
    op: UnaryOp,
    inner: &Expr,
) -> Result<Val, LowerError> {
    let delta = if matches!(op, UnaryOp::PreInc | UnaryOp::PostInc) {
        1
    } else {
        -1
    };
    let post = matches!(op, UnaryOp::PostInc | UnaryOp::PostDec);
    match &inner.kind {
        ExprKind::Var(name) => {
            let slot = lw
                .cp
                .var_slots
                .get(&inner.id)
                .copied()
                .or_else(|| lw.scopes.lookup(name))
                .ok_or_else(|| LowerError::unsupported("++ of an undeclared variable", e.span))?;
            let slot = super::stmt::var_slot_of(lw, inner.id, name).unwrap_or(slot);
            let t = lw.var_type(slot);
            let it = int_ty(&t).unwrap_or(IntTy::I64);
            let old = super::stmt::read_var(lw, slot).value();
            let new = crate::codegen::emit::arith::binop(
                &mut lw.b,
                crate::codegen::emit::arith::BinOp::Add,
                old,
                Value::Imm(delta * super::deref::stride(&t)),
                it,
            );
            super::stmt::assign_var(lw, slot, Val::Int(new, it), &t);
            Ok(Val::Int(if post { old } else { new }, it))
        }
        ExprKind::Map { name, keys } => {
            let (id, info) = map_by_name(lw, &name.name, e.span)?;
            let info = info.clone();
            let it = int_ty(&info.value).unwrap_or(IntTy::I64);
            let old = read_map_as(lw, id, &info, keys, e.span)?.value();
            let new = crate::codegen::emit::arith::binop(
                &mut lw.b,
                crate::codegen::emit::arith::BinOp::Add,
                old,
                Value::Imm(delta * super::deref::stride(&info.value)),
                IntTy::new(64, it.signed),
            );
            let ks: Vec<&Expr> = keys.iter().collect();
            let t = info.value.clone();
            write_map(lw, id, &info, &ks, Val::Int(new, it), &t)?;
            Ok(Val::Int(if post { old } else { new }, it))
        }
        _ => Err(LowerError::unsupported("++/-- of this expression", e.span)),
    }
}

/// CLOCK_TAI − CLOCK_BOOTTIME now, in nanoseconds (0 if a clock cannot be read).
pub(crate) fn tai_minus_boot_ns() -> i64 {
    let read = |clock: libc::clockid_t| {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: clock_gettime writes one timespec we own.
        let r = unsafe { libc::clock_gettime(clock, &mut ts) };
        (r == 0).then(|| ts.tv_sec * 1_000_000_000 + ts.tv_nsec)
    };
    match (read(libc::CLOCK_TAI), read(libc::CLOCK_BOOTTIME)) {
        (Some(tai), Some(boot)) => tai - boot,
        _ => 0,
    }
}
