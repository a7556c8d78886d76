//! The typed identity of every builtin: [`ValueId`] for builtin values (`pid`, `args`,
//! `arg3`), [`FuncId`] for builtin functions (`count()`, `str()`, `pid(init)`), and
//! [`BuiltinId`] for either.
//!
//! The checker resolves each identifier and call that names a builtin to its id once
//! (`CheckedProgram::builtins`); later passes match on the id, never on the name, and without
//! a catch-all arm, so a new variant is a compile error in every pass that must handle it.
//! Invariant: every id has exactly one [`super::Builtin`] entry in the registry and every
//! entry has its own id (a test checks both ways). Spellings that mean the same builtin
//! (`__builtin_pid`, `pid`; `cpu()`, `cpu`) resolve to the same id; a value and a function of
//! one name (`pid`, `pid(init)`) are two entries and two ids.

/// Defines an id enum and `ALL`, the list of its variants.
macro_rules! ids {
    ($(#[$m:meta])* $name:ident { $($(#[$vm:meta])* $v:ident,)* }) => {
        $(#[$m])*
        #[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
        pub enum $name {
            $($(#[$vm])* $v,)*
        }

        impl $name {
            /// Every variant, in declaration order.
            pub const ALL: &'static [$name] = &[$($name::$v,)*];
        }
    };
}

ids! {
    /// A builtin value: a bare name (`pid`), or the name called with no arguments (`pid()`)
    /// when no function of that name exists.
    ValueId {
        Pid,
        Tid,
        Uid,
        Gid,
        Cpu,
        Ncpus,
        Numaid,
        Nsecs,
        Elapsed,
        Jiffies,
        Rand,
        Cgroup,
        Cpid,
        Comm,
        Kstack,
        Ustack,
        Curtask,
        Ppid,
        Pcomm,
        LeaderTid,
        LeaderComm,
        Username,
        Probe,
        Usermode,
        Probetype,
        Config,
        Ctx,
        Retval,
        Args,
        /// `arg0`, `arg1`, …: the number is in the name (`builtins::numbered`).
        ArgN,
        /// `sarg0`, `sarg1`, …
        SargN,
        Func,
        ElfIsExe,
        ElfIno,
    }
}

ids! {
    /// A builtin function, called with parentheses.
    FuncId {
        // Aggregations (`agg.rs`).
        Count,
        Sum,
        Min,
        Max,
        Avg,
        Stats,
        Hist,
        Lhist,
        Tseries,
        // Output and control (`output.rs`).
        Printf,
        Errorf,
        Warnf,
        Debugf,
        Cat,
        System,
        Print,
        Exit,
        Time,
        Join,
        Signal,
        SignalThread,
        WriteUser,
        Override,
        Unwatch,
        Skboutput,
        // Value functions (`funcs.rs`).
        Str,
        Buf,
        Ksym,
        Usym,
        Kaddr,
        PercpuKaddr,
        Uaddr,
        Reg,
        Ntop,
        Macaddr,
        Ppid,
        Pcomm,
        LeaderTid,
        LeaderComm,
        Cgroupid,
        CgroupPath,
        Strftime,
        Strncmp,
        Strlen,
        Strcontains,
        Strstr,
        StrConcat,
        Strcap,
        Path,
        Kstack,
        Ustack,
        DwUstack,
        Nsecs,
        Bswap,
        Memcmp,
        SocketCookie,
        Pid,
        Tid,
        Comm,
        Kptr,
        Uptr,
        Strerror,
        SyscallName,
        SignalName,
        Pton,
        Getopt,
        // Maps (`maps.rs`).
        Delete,
        Clear,
        Zero,
        Len,
        HasKey,
        CheckKey,
        // Checks and folds (`meta.rs`).
        IsStr,
        IsPtr,
        IsArray,
        IsInteger,
        IsUnsignedInteger,
        IsLiteral,
        KfuncExist,
        KfuncAllowed,
        Assert,
        StaticAssert,
        AssertStr,
        Fail,
    }
}

/// A builtin value or function.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum BuiltinId {
    Value(ValueId),
    Func(FuncId),
}

impl BuiltinId {
    /// Every id: values, then functions.
    pub fn all() -> impl Iterator<Item = BuiltinId> {
        ValueId::ALL
            .iter()
            .map(|&v| BuiltinId::Value(v))
            .chain(FuncId::ALL.iter().map(|&f| BuiltinId::Func(f)))
    }

    /// Its registry entry.
    pub fn entry(self) -> &'static super::Builtin {
        // The registry test proves every id has an entry.
        super::all()
            .find(|b| b.id == self)
            .unwrap_or_else(|| panic!("internal error: builtin {self:?} has no registry entry"))
    }

    /// Its name as scripts spell it (`argN` for the numbered arguments).
    pub fn name(self) -> &'static str {
        self.entry().name
    }

    pub fn form(self) -> super::Form {
        match self {
            BuiltinId::Value(_) => super::Form::Value,
            BuiltinId::Func(_) => super::Form::Function,
        }
    }
}

impl From<ValueId> for BuiltinId {
    fn from(v: ValueId) -> BuiltinId {
        BuiltinId::Value(v)
    }
}

impl From<FuncId> for BuiltinId {
    fn from(f: FuncId) -> BuiltinId {
        BuiltinId::Func(f)
    }
}

impl ValueId {
    /// Its registry entry.
    pub fn entry(self) -> &'static super::Builtin {
        BuiltinId::Value(self).entry()
    }
}

impl FuncId {
    /// Its registry entry.
    pub fn entry(self) -> &'static super::Builtin {
        BuiltinId::Func(self).entry()
    }

    /// Its name as scripts spell it.
    pub fn name(self) -> &'static str {
        self.entry().name
    }
}

impl PartialEq<ValueId> for BuiltinId {
    fn eq(&self, v: &ValueId) -> bool {
        *self == BuiltinId::Value(*v)
    }
}

impl PartialEq<FuncId> for BuiltinId {
    fn eq(&self, f: &FuncId) -> bool {
        *self == BuiltinId::Func(*f)
    }
}
