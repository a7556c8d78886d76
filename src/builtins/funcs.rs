//! Value functions: strings and buffers (`str`, `buf`, `path`, `strncmp`, `strcontains`),
//! symbols and addresses (`ksym`, `usym`, `kaddr`, `uaddr`, `reg`), network (`ntop`,
//! `macaddr`), time (`strftime`, `nsecs(mode)`), cgroups, stacks with arguments, `bswap`,
//! `kptr`/`uptr`.

use super::{func, Builtin, CallCtx, FuncId, Probes, RuleError};
use crate::kinds::KindSet;
use crate::plan::layout::StackMode;
use crate::sema::types::{AddrSpace, Pointee, Type, DEFAULT_STACK_LIMIT};

fn str_(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    let t = &c.arg_types[0];
    if !(t.is_scalar() || t.is_string() || matches!(t, Type::Array { .. })) {
        return Err(RuleError::arg(
            0,
            format!("str() expects an integer or a pointer type as first argument ({t} provided)"),
        ));
    }
    let mut size = c.max_strlen;
    if c.args.len() > 1 {
        c.want_int(1, false)?;
        if let Some(n) = c.args.get(1).and_then(|a| (c.const_int)(a.id)) {
            if n < 0 {
                return Err(RuleError::arg(1, "str() length must not be negative"));
            }
            size = (n as usize + 1).min(c.max_strlen);
        }
    }
    if let Type::Str { size: s } = t {
        size = size.min(*s);
    }
    Ok(Type::Str { size })
}

fn buf(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    let t = &c.arg_types[0];
    if !(t.is_scalar() || t.is_string() || matches!(t, Type::Array { .. })) {
        return Err(RuleError::arg(
            0,
            format!("buf() expects a pointer or an array, got {t}"),
        ));
    }
    let capacity = if c.args.len() > 1 {
        c.want_int(1, false)?;
        match (c.const_int)(c.args[1].id) {
            Some(n) if n < 0 => return Err(RuleError::arg(1, "buf() length must not be negative")),
            Some(n) => (n as usize).min(c.max_strlen),
            None => c.max_strlen,
        }
    } else {
        match t {
            Type::Array { elem, len } => elem.size() * len,
            // bpftrace's words (a string is not an array to it either).
            Type::Str { .. } => {
                return Err(RuleError::call(
                    "buf() expects a length argument for non-array type string",
                ))
            }
            _ => {
                return Err(RuleError::call(
                    "buf() needs a length when its first argument is not an array",
                ))
            }
        }
    };
    Ok(Type::Buf { capacity })
}

fn ksym(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    c.want_int(0, true)?;
    Ok(if c.id == FuncId::Ksym {
        Type::KSym
    } else {
        Type::USym
    })
}

fn kaddr(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    c.str_arg(0, "the symbol name")?;
    Ok(if c.id == FuncId::Uaddr {
        Type::Pointer {
            pointee: Pointee::Opaque,
            space: AddrSpace::User,
        }
    } else {
        Type::U64
    })
}

/// `percpu_kaddr("name"[, cpu])` (`uint64 *`): the variable is looked up in BTF when lowering.
fn percpu_kaddr(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    c.str_arg(0, "the variable name")?;
    if c.arg_types.len() == 2 {
        c.want_int(1, false)?;
    }
    Ok(Type::Pointer {
        pointee: Pointee::Type(Box::new(Type::U64)),
        space: AddrSpace::Kernel,
    })
}

fn reg(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    let r = c.str_arg(0, "the register name")?;
    let arch = std::env::consts::ARCH;
    if crate::asm::isa::register_offset(arch, &r).is_none() {
        return Err(RuleError::call(format!(
            "'{r}' is not a valid register on this architecture ({arch})"
        )));
    }
    Ok(Type::U64)
}

fn ntop(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    let addr = c.arg_types.len() - 1;
    if c.arg_types.len() == 2 {
        c.want_int(0, false)?;
    }
    let t = &c.arg_types[addr];
    let ok = t.is_integer()
        || matches!(t, Type::Array { elem, len } if elem.size() == 1 && (*len == 4 || *len == 16))
        || matches!(t, Type::Str { size } if *size == 4 || *size == 16);
    if !ok {
        return Err(RuleError::arg(
            addr,
            format!("ntop() expects an integer or array argument, got {t}"),
        ));
    }
    Ok(Type::Inet)
}

fn macaddr(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    let t = &c.arg_types[0];
    if !(t.is_pointer() || t.is_integer() || matches!(t, Type::Array { .. } | Type::Str { .. })) {
        return Err(RuleError::arg(
            0,
            format!("macaddr() only supports array or pointer arguments ({t} provided)"),
        ));
    }
    if matches!(t, Type::Array { .. } | Type::Str { .. }) && t.size() != 6 {
        return Err(RuleError::call(
            "macaddr() argument must be 6 bytes in size",
        ));
    }
    Ok(Type::MacAddr)
}

/// `ppid(task)`/`pcomm(task)` read `task->real_parent` (bpftrace's stdlib macros): the
/// argument must be a `struct task_struct *`, such as `curtask`.
fn task_arg(c: &CallCtx<'_>) -> Result<(), RuleError> {
    let Some(t) = c.arg_types.first() else {
        return Ok(());
    };
    match t {
        Type::Pointer {
            pointee: Pointee::Type(p),
            ..
        } if matches!(p.as_ref(), Type::CStruct(s) if s.name == "struct task_struct") => Ok(()),
        t => Err(RuleError::arg(
            0,
            format!(
                "{}() expects a 'struct task_struct *' argument, got {t}",
                c.name
            ),
        )),
    }
}

fn ppid(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    task_arg(c)?;
    Ok(Type::U32)
}

fn pcomm(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    task_arg(c)?;
    Ok(Type::Str { size: 16 })
}

fn cgroupid(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    c.str_arg(0, "the cgroup path")?;
    Ok(Type::U64)
}

fn cgroup_path(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    c.want_int(0, false)?;
    let filter = if c.args.len() > 1 {
        c.str_arg(1, "the hierarchy filter")?
    } else {
        "*".into()
    };
    Ok(Type::CgroupPath { filter })
}

fn strftime(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    let format = c.str_arg(0, "the format")?;
    c.want_int(1, false)?;
    Ok(Type::Timestamp { format })
}

fn strncmp(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    for i in 0..2 {
        if !c.arg_types[i].is_string() {
            return Err(RuleError::arg(
                i,
                format!("strncmp() expects string arguments, got {}", c.arg_types[i]),
            ));
        }
    }
    c.int_arg(2, "the length")?;
    Ok(Type::I64)
}

/// `strlen(s)`: bytes before the first NUL of a string (or of an `int8` array), as bpftrace's
/// stdlib macro counts them.
fn strlen(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    let t = &c.arg_types[0];
    let chars = matches!(t, Type::Array { elem, .. } if elem.size() == 1 && elem.is_integer());
    if !t.is_string() && !chars {
        return Err(RuleError::arg(
            0,
            format!("strlen() expects a string or an int8 array, got {t}"),
        ));
    }
    Ok(Type::U64)
}

fn strcontains(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    // `strcontains(probe, "text")`: decided per target when compiling.
    if c.arg_types[0] == Type::Probe {
        if c.arg_types[1].is_string() && (c.const_str)(c.args[1].id).is_some() {
            return Ok(Type::Bool);
        }
        return Err(RuleError::arg(
            1,
            "strcontains(probe, …) needs a string literal to look for",
        ));
    }
    for i in 0..2 {
        if !c.arg_types[i].is_string() {
            return Err(RuleError::arg(
                i,
                format!(
                    "strcontains() expects string arguments, got {}",
                    c.arg_types[i]
                ),
            ));
        }
    }
    // A bool in current bpftrace (`print` shows true/false; 0.17 had a uint64 0/1).
    Ok(Type::Bool)
}

/// Both arguments are strings (`strstr`, `str_concat`).
fn want_strings(c: &CallCtx<'_>) -> Result<(), RuleError> {
    for i in 0..2 {
        if !c.arg_types[i].is_string() {
            return Err(RuleError::arg(
                i,
                format!(
                    "{}() expects string arguments, got {}",
                    c.name, c.arg_types[i]
                ),
            ));
        }
    }
    Ok(())
}

/// `strstr(haystack, needle)`: the index of the needle's first occurrence, -1 when it has
/// none, 0 for an empty needle (bpftrace's `int64`).
fn strstr(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    want_strings(c)?;
    Ok(Type::I64)
}

/// The size of the string `str_concat` makes, as bpftrace's (`string[1024]`, whatever the
/// parts' sizes); a longer result is cut to fit.
pub const STR_CONCAT_SIZE: usize = 1024;

fn str_concat(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    want_strings(c)?;
    Ok(Type::Str {
        size: STR_CONCAT_SIZE,
    })
}

/// `strcap(s)`: the capacity of a string-like value (bpftrace's `int64`): a string's or char
/// array's size (known when compiling), a char pointer's string length (read at run time).
fn strcap(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    match &c.arg_types[0] {
        Type::Str { .. } | Type::Array { .. } | Type::Pointer { .. } => Ok(Type::I64),
        // bpftrace's words (its stdlib's assert_str).
        _ => Err(RuleError::arg(
            0,
            "string-like values must be either strings, arrays or pointers",
        )),
    }
}

/// `path(p[, size])`: `p` is a `struct path *` or a `struct path` member (kept by address,
/// as `args.file->f_path`), which bpf_d_path takes as a BTF pointer; the kernel allows the
/// helper only in fentry/fexit on a fixed list of functions (`btf_allowlist_d_path`).
/// Checked elsewhere; the registry entry gives the name, arity and listing.
fn folded(_: &CallCtx<'_>) -> Result<Type, RuleError> {
    Ok(Type::None)
}

fn path(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    let t = &c.arg_types[0];
    if !t.is_pointer() && !matches!(t, Type::CStruct(_)) {
        return Err(RuleError::arg(
            0,
            format!("path() only supports pointer or record argument ({t} provided)"),
        ));
    }
    let size = match c.args.get(1) {
        None => c.max_strlen,
        Some(_) => {
            let n = c.int_arg(1, "the size")?;
            if !(1..=PATH_MAX).contains(&n) {
                return Err(RuleError::arg(
                    1,
                    format!("path: size {n} must be between 1 and {PATH_MAX}"),
                ));
            }
            n as usize
        }
    };
    Ok(Type::Str { size })
}

/// The kernel's `PATH_MAX`: bpf_d_path cannot produce more.
const PATH_MAX: i64 = 4096;

fn stack(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    let mut mode = c.stack_mode;
    let mut limit = DEFAULT_STACK_LIMIT;
    for (i, a) in c.args.iter().enumerate() {
        if let crate::syntax::ast::ExprKind::Ident(m) = &a.kind {
            mode = match m.as_str() {
                "bpftrace" => StackMode::Bpftrace,
                "perf" => StackMode::Perf,
                "raw" => StackMode::Raw,
                "build_id" if c.id == FuncId::Kstack => {
                    return Err(RuleError::arg(
                        i,
                        "'build_id' stack mode can only be used for ustack",
                    ))
                }
                "build_id" => StackMode::BuildId,
                other => {
                    return Err(RuleError::arg(
                        i,
                        format!(
                            "{}: invalid mode '{other}' (bpftrace, perf, raw, build_id)",
                            c.name
                        ),
                    ))
                }
            };
        } else {
            let n = c.int_arg(i, "the limit")?;
            if !(0..=1024).contains(&n) {
                return Err(RuleError::arg(
                    i,
                    format!("{}: limit {n} must be between 0 and 1024", c.name),
                ));
            }
            limit = n as usize;
        }
    }
    Ok(if c.id == FuncId::Kstack {
        Type::KStack { mode, limit }
    } else {
        Type::UStack { mode, limit }
    })
}

fn nsecs(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    if let Some(a) = c.args.first() {
        match &a.kind {
            crate::syntax::ast::ExprKind::Ident(m)
                if ["boot", "monotonic", "tai", "sw_tai"].contains(&m.as_str()) => {}
            _ => {
                return Err(RuleError::arg(
                    0,
                    "nsecs: mode must be one of boot, monotonic, tai, sw_tai",
                ))
            }
        }
    }
    Ok(Type::U64)
}

/// `pid([curr_ns|init])`, `tid([curr_ns|init])`: the namespace the id is seen from.
fn pid_ns(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    if let Some(a) = c.args.first() {
        match &a.kind {
            crate::syntax::ast::ExprKind::Ident(m) if m == "curr_ns" || m == "init" => {}
            // bpftrace's words.
            crate::syntax::ast::ExprKind::Ident(m) => {
                return Err(RuleError::arg(
                    0,
                    format!("Invalid PID namespace mode: {m} (expects: curr_ns or init)"),
                ))
            }
            _ => {
                return Err(RuleError::call(format!(
                    "{}() only supports curr_ns and init as the argument",
                    c.name
                )))
            }
        }
    }
    Ok(Type::U32)
}

/// `comm([pid])`: with a pid, the name of that process, which bpftrace reads through the
/// `bpf_task_from_pid` kfunc. Whether the probe's program type may call it is the kernel's
/// answer to a trial load, asked by the checker (`sema::environment`) and reported where the
/// call is lowered (`codegen::lower::task`).
fn comm_of(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    if let Some(t) = c.arg_types.first() {
        if !t.is_integer() {
            return Err(RuleError::arg(0, "Only integer supported for comm()'s pid"));
        }
    }
    Ok(Type::Str { size: 16 })
}

/// `dw_ustack([mode, ][limit])`: bpftrace unwinds user stacks through the traced processes'
/// `.eh_frame` (DWARF CFI) in the kernel; strobe has no DWARF unwinder, so it is refused with
/// what is missing and what works instead.
fn dw_ustack(_: &CallCtx<'_>) -> Result<Type, RuleError> {
    Err(RuleError::call(
        "dw_ustack() is not supported: strobe has no DWARF (.eh_frame) stack unwinder; \
         ustack() unwinds through frame pointers (build the traced program with \
         -fno-omit-frame-pointer)",
    ))
}

/// `memcmp(left, right, count)` (`int64`): the first `count` bytes of the two values, compared
/// as C's memcmp. `count` must be a constant within both values.
fn memcmp(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    for i in 0..2 {
        let t = &c.arg_types[i];
        if t.is_none() || t.size() == 0 {
            return Err(RuleError::arg(
                i,
                format!("memcmp() cannot compare a value of type {t}"),
            ));
        }
    }
    c.want_int(2, false)?;
    let n = c.int_arg(2, "the byte count")?;
    for i in 0..2 {
        let size = c.arg_types[i].size() as i64;
        if n < 0 || n > size {
            return Err(RuleError::arg(
                2,
                format!(
                    "memcmp(): count {n} is outside the {} value's {size} bytes",
                    if i == 0 { "left" } else { "right" }
                ),
            ));
        }
    }
    Ok(Type::I64)
}

/// `socket_cookie(sk)` (`uint64`): `sk` a `struct sock *`. The kernel gives
/// bpf_get_socket_cookie for a socket pointer only to tracing programs (fentry/fexit/iter),
/// as bpftrace allows it; other probes are refused with that reason.
fn socket_cookie(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    let t = &c.arg_types[0];
    let sock = matches!(t, Type::Pointer { pointee: Pointee::Type(p), .. }
        if matches!(p.as_ref(), Type::CStruct(s) if s.name == "struct sock"));
    if !sock {
        // bpftrace's words.
        let shown = match t {
            Type::Pointer { .. } => format!("'{t}'"),
            t => t.to_string(),
        };
        return Err(RuleError::arg(
            0,
            format!(
                "socket_cookie() only supports 'struct sock *' as the argument ({shown} provided)"
            ),
        ));
    }
    if !c.probe.info().tracing_prog() {
        return Err(RuleError::call(format!(
            "socket_cookie() needs bpf_get_socket_cookie of a BTF socket pointer, which the \
             kernel gives only to tracing programs (fentry, fexit, iter); strobe loads {} \
             probes as another program type",
            c.probe.name()
        )));
    }
    Ok(Type::U64)
}

fn bswap(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    Ok(c.want_int(0, false)?.clone())
}

fn kptr(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    let t = c.want_int(0, true)?.clone();
    let space = if c.id == FuncId::Uptr {
        AddrSpace::User
    } else {
        AddrSpace::Kernel
    };
    Ok(match t {
        Type::Pointer { pointee, .. } => Type::Pointer { pointee, space },
        t => t,
    })
}

/// The bytes of an IPv4/IPv6 address in text, in network order (`pton`).
pub fn pton_bytes(s: &str) -> Option<Vec<u8>> {
    match s.parse::<std::net::IpAddr>().ok()? {
        std::net::IpAddr::V4(a) => Some(a.octets().to_vec()),
        std::net::IpAddr::V6(a) => Some(a.octets().to_vec()),
    }
}

/// `pton("addr")` (bpftrace 0.18+): the address as `uint8[4]` or `uint8[16]`, at compile time.
fn pton(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    let s = c.str_arg(0, "the address")?;
    let bytes = pton_bytes(&s).ok_or_else(|| {
        RuleError::arg(
            0,
            format!("pton() expects a string argument of an IPv4/IPv6 address, got {s}"),
        )
    })?;
    Ok(Type::Array {
        elem: Box::new(Type::U8),
        len: bytes.len(),
    })
}

fn strerror(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    c.want_int(0, false)?;
    Ok(Type::Strerror)
}

fn signal_name(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    c.want_int(0, false)?;
    Ok(Type::SignalName)
}

fn syscall_name(c: &CallCtx<'_>) -> Result<Type, RuleError> {
    c.want_int(0, false)?;
    Ok(Type::SyscallName)
}

pub const BUILTINS: &[Builtin] = &[
    func(
        FuncId::Str,
        "str",
        1,
        2,
        str_,
        "read a NUL-terminated string",
    ),
    func(
        FuncId::Buf,
        "buf",
        1,
        2,
        buf,
        "read bytes into a printable buffer",
    ),
    func(
        FuncId::Ksym,
        "ksym",
        1,
        1,
        ksym,
        "kernel symbol of an address",
    ),
    func(
        FuncId::Usym,
        "usym",
        1,
        1,
        ksym,
        "user symbol of an address",
    ),
    func(
        FuncId::Kaddr,
        "kaddr",
        1,
        1,
        kaddr,
        "address of a kernel symbol",
    ),
    func(
        FuncId::PercpuKaddr,
        "percpu_kaddr",
        1,
        2,
        percpu_kaddr,
        "address of a percpu kernel variable on a CPU",
    ),
    Builtin {
        probes: Probes::Only(KindSet::UserSpace),
        ..func(
            FuncId::Uaddr,
            "uaddr",
            1,
            1,
            kaddr,
            "address of a user symbol",
        )
    },
    Builtin {
        // bpftrace 0.17: probes whose context is a `struct pt_regs` (perf events' starts with one).
        probes: Probes::Only(KindSet::Regs),
        ..func(FuncId::Reg, "reg", 1, 1, reg, "value of a register")
    },
    func(
        FuncId::Ntop,
        "ntop",
        1,
        2,
        ntop,
        "IPv4/IPv6 address as text",
    ),
    func(
        FuncId::Macaddr,
        "macaddr",
        1,
        1,
        macaddr,
        "MAC address as text",
    ),
    func(
        FuncId::Ppid,
        "ppid",
        0,
        1,
        ppid,
        "pid of a task's parent (real_parent)",
    ),
    func(
        FuncId::Pcomm,
        "pcomm",
        0,
        1,
        pcomm,
        "name of a task's parent (real_parent)",
    ),
    func(
        FuncId::LeaderTid,
        "leader_tid",
        0,
        1,
        ppid,
        "thread id of a task's thread-group leader",
    ),
    func(
        FuncId::LeaderComm,
        "leader_comm",
        0,
        1,
        pcomm,
        "name of a task's thread-group leader",
    ),
    func(
        FuncId::Cgroupid,
        "cgroupid",
        1,
        1,
        cgroupid,
        "id of a cgroup path",
    ),
    func(
        FuncId::CgroupPath,
        "cgroup_path",
        1,
        2,
        cgroup_path,
        "path of a cgroup id",
    ),
    func(
        FuncId::Strftime,
        "strftime",
        2,
        2,
        strftime,
        "format a time",
    ),
    func(
        FuncId::Strncmp,
        "strncmp",
        3,
        3,
        strncmp,
        "compare up to n bytes of two strings",
    ),
    func(FuncId::Strlen, "strlen", 1, 1, strlen, "length of a string"),
    func(
        FuncId::Strcontains,
        "strcontains",
        2,
        2,
        strcontains,
        "whether a string contains another",
    ),
    func(
        FuncId::Strstr,
        "strstr",
        2,
        2,
        strstr,
        "index of a string's first occurrence in another, or -1",
    ),
    func(
        FuncId::StrConcat,
        "str_concat",
        2,
        2,
        str_concat,
        "a new string of two joined",
    ),
    func(
        FuncId::Strcap,
        "strcap",
        1,
        1,
        strcap,
        "capacity of a string, char array or char pointer",
    ),
    Builtin {
        // bpf_d_path is a tracing-program helper.
        probes: Probes::Only(KindSet::BtfFunc),
        ..func(
            FuncId::Path,
            "path",
            1,
            2,
            path,
            "full path of a struct path",
        )
    },
    func(
        FuncId::DwUstack,
        "dw_ustack",
        0,
        2,
        dw_ustack,
        "user stack unwound through DWARF (not implemented: refused)",
    ),
    func(
        FuncId::Kstack,
        "kstack",
        0,
        2,
        stack,
        "kernel stack with mode/limit",
    ),
    func(
        FuncId::Ustack,
        "ustack",
        0,
        2,
        stack,
        "user stack with mode/limit",
    ),
    func(
        FuncId::Nsecs,
        "nsecs",
        0,
        1,
        nsecs,
        "time in nanoseconds of a clock",
    ),
    func(FuncId::Bswap, "bswap", 1, 1, bswap, "reverse byte order"),
    func(
        FuncId::Memcmp,
        "memcmp",
        3,
        3,
        memcmp,
        "compare the first bytes of two values",
    ),
    func(
        FuncId::SocketCookie,
        "socket_cookie",
        1,
        1,
        socket_cookie,
        "the kernel's cookie of a socket",
    ),
    func(
        FuncId::Pid,
        "pid",
        0,
        1,
        pid_ns,
        "process id, seen from strobe's PID namespace (curr_ns) or the initial one (init)",
    ),
    func(
        FuncId::Tid,
        "tid",
        0,
        1,
        pid_ns,
        "thread id, seen from strobe's PID namespace (curr_ns) or the initial one (init)",
    ),
    func(
        FuncId::Comm,
        "comm",
        0,
        1,
        comm_of,
        "name of the current task, or of the process with a pid",
    ),
    func(FuncId::Kptr, "kptr", 1, 1, kptr, "mark a pointer as kernel"),
    func(FuncId::Uptr, "uptr", 1, 1, kptr, "mark a pointer as user"),
    func(
        FuncId::Strerror,
        "strerror",
        1,
        1,
        strerror,
        "errno as text",
    ),
    func(
        FuncId::SyscallName,
        "syscall_name",
        1,
        1,
        syscall_name,
        "system call number as its name",
    ),
    func(
        FuncId::SignalName,
        "signal_name",
        1,
        1,
        signal_name,
        "signal number as its description",
    ),
    func(
        FuncId::Pton,
        "pton",
        1,
        1,
        pton,
        "IPv4/IPv6 address text as bytes",
    ),
    // Typed and folded by the checker (`sema::getopt`), which needs the command line.
    func(
        FuncId::Getopt,
        "getopt",
        1,
        3,
        folded,
        "named program option given after --",
    ),
];
