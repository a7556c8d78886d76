//! The instruction set, generated at build time from the data in `isa/` (see build/isa.rs).
//!
//! Output: one enum per opcode field or operation kind (`Class`, `Size`, `Mode`, `AluOp`,
//! `JmpOp`, `AtomicOp`, `Pseudo`, `CallKind`, …), each with `value()` (its encoding),
//! `name()`, `asm()` (its assembler token) and `from_value()`; the `Helper` enum of every
//! kernel helper function with its signature; and the kprobe context register table.
//! Invariant: these tables are the only Rust code that knows an encoding number; the builder,
//! the decoder, the assembler and the disassembler all go through them.

include!(concat!(env!("OUT_DIR"), "/isa_tables.rs"));

/// `enum bpf_attach_type` (the ones tracing uses).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum AttachType {
    #[doc(alias = "BPF_TRACE_RAW_TP")]
    TraceRawTp = 23,
    #[doc(alias = "BPF_TRACE_FENTRY")]
    TraceFentry = 24,
    #[doc(alias = "BPF_TRACE_FEXIT")]
    TraceFexit = 25,
    #[doc(alias = "BPF_MODIFY_RETURN")]
    ModifyReturn = 26,
    #[doc(alias = "BPF_LSM_MAC")]
    LsmMac = 27,
    #[doc(alias = "BPF_TRACE_ITER")]
    TraceIter = 28,
    #[doc(alias = "BPF_PERF_EVENT")]
    PerfEvent = 41,
    #[doc(alias = "BPF_TRACE_KPROBE_MULTI")]
    TraceKprobeMulti = 42,
    #[doc(alias = "BPF_TRACE_UPROBE_MULTI")]
    TraceUprobeMulti = 48,
    /// A kprobe_multi program run at entry and, unless its entry run returned non-zero, at
    /// return (6.10+).
    #[doc(alias = "BPF_TRACE_KPROBE_SESSION")]
    TraceKprobeSession = 56,
}

/// What a helper argument must be (isa/helpers.txt, "Argument kinds").
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ArgKind {
    /// The program's context pointer (r1 at entry).
    Ctx,
    /// A map, loaded with `ld_imm64` of a map fd.
    Map,
    /// Writable memory (stack or map value).
    Mem,
    /// Readable memory.
    ConstMem,
    /// The byte length of the preceding memory argument.
    Size,
    /// A NUL-terminated string.
    Str,
    /// A pointer to a kernel struct (BTF-typed).
    BtfPtr,
    /// A callback: `ld_imm64` of a BPF function (`Pseudo::Func`).
    Func,
    /// Any integer.
    Scalar,
}

/// What a helper returns.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RetKind {
    Void,
    /// An integer or a negative error code.
    Scalar,
    /// A pointer to memory, NULL on failure: the verifier insists on a NULL check.
    MemOrNull,
    /// A pointer to a kernel struct, NULL on failure.
    BtfPtrOrNull,
}

/// One row of the helper table.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct HelperInfo {
    pub helper: Helper,
    /// The kernel's name without the `bpf_` prefix (`map_lookup_elem`).
    pub name: &'static str,
    pub ret: RetKind,
    /// Kinds and parameter names of r1, r2, … (at most five).
    pub args: &'static [(ArgKind, &'static str)],
}

impl Helper {
    /// Every helper, in id order (id 0 is `unspec`, which is not callable).
    pub fn all() -> impl Iterator<Item = Helper> {
        HELPERS.iter().map(|h| h.helper)
    }

    /// The `enum bpf_func_id` value: the call instruction's `imm`.
    pub fn id(self) -> u32 {
        self as u32
    }

    pub fn from_id(id: u32) -> Option<Helper> {
        HELPERS.get(id as usize).map(|h| h.helper)
    }

    /// Looks a helper up by name, with or without the `bpf_` prefix.
    pub fn from_name(name: &str) -> Option<Helper> {
        helper_by_name(name.strip_prefix("bpf_").unwrap_or(name))
    }

    /// The kernel's name without the `bpf_` prefix, as in its `FN()` list.
    pub fn name(self) -> &'static str {
        self.info().name
    }

    pub fn info(self) -> &'static HelperInfo {
        &HELPERS[self as usize]
    }

    pub fn ret(self) -> RetKind {
        self.info().ret
    }

    pub fn args(self) -> &'static [(ArgKind, &'static str)] {
        self.info().args
    }
}

impl std::fmt::Display for Helper {
    /// The C name, `bpf_map_lookup_elem`, which the assembler accepts after `call`.
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "bpf_{}", self.name())
    }
}

/// Where a kprobe program's context (`struct pt_regs`) holds a register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KprobeReg {
    /// `x86_64`, `aarch64` or `riscv64` (Rust's `std::env::consts::ARCH` spelling).
    pub arch: &'static str,
    /// `arg0`…`arg7`, `ret`, `ip`, `sp`, `fp`, `reg` (any register by name).
    pub role: &'static str,
    /// The architecture's register name (`di`, `x0`).
    pub reg: &'static str,
    /// Byte offset in the context.
    pub offset: u16,
}

/// The context offset of `role` (`arg0`, `ret`, …) on `arch`, if the table has it.
pub fn kprobe_reg(arch: &str, role: &str) -> Option<&'static KprobeReg> {
    KPROBE_REGS
        .iter()
        .find(|r| r.arch == arch && r.role == role)
}

/// The context offset of register `name` on `arch` (`reg("name")`): a `reg` row of the table,
/// else the register of a role row (`x0` on aarch64).
pub fn register_offset(arch: &str, name: &str) -> Option<u16> {
    KPROBE_REGS
        .iter()
        .filter(|r| r.arch == arch && r.reg == name)
        .map(|r| r.offset)
        .next()
}

/// The class bits (0-2) of an opcode byte.
pub const CLASS_MASK: u8 = 0x07;
/// The size bits (3-4) of a load/store opcode byte.
pub const SIZE_MASK: u8 = 0x18;
/// The mode bits (5-7) of a load/store opcode byte.
pub const MODE_MASK: u8 = 0xe0;
/// The operation bits (4-7) of an alu/jmp opcode byte.
pub const OP_MASK: u8 = 0xf0;
/// The opcode byte of `ld_imm64` (`BPF_LD | BPF_IMM | BPF_DW`), the first of its two halves.
pub const CODE_LD_IMM64: u8 = opcode(Class::Ld, Mode::Imm.value() | Size::Dw.value());
/// The opcode byte of `call` (`BPF_JMP | BPF_CALL`).
pub const CODE_CALL: u8 = opcode(Class::Jmp, JmpSpecial::Call.value());
/// `src_reg` of an `ld_imm64` whose immediate is a map fd (`BPF_PSEUDO_MAP_FD`).
pub const PSEUDO_MAP_FD: u8 = Pseudo::MapFd.value();
/// `src_reg` of an `ld_imm64` whose immediate is a map fd and whose second immediate is an
/// offset into the map's value (`BPF_PSEUDO_MAP_VALUE`).
pub const PSEUDO_MAP_VALUE: u8 = Pseudo::MapValue.value();
/// `src_reg` of an `ld_imm64` whose immediate is the offset of a BPF function of the same
/// program, in instructions from the next one (`BPF_PSEUDO_FUNC`, kernel 5.13+).
pub const PSEUDO_FUNC: u8 = Pseudo::Func.value();
/// `src_reg` of a call to a kernel function by BTF id (`BPF_PSEUDO_KFUNC_CALL`).
pub const PSEUDO_KFUNC_CALL: u8 = CallKind::Kfunc.value();

/// The size of a load/store opcode byte (every 2-bit value is a size).
pub const fn size_of(code: u8) -> Size {
    match Size::from_value(code & SIZE_MASK) {
        Some(s) => s,
        None => panic!("internal error: isa/opcodes.txt must define all 4 sizes"),
    }
}

/// The mode of a load/store opcode byte, if isa/opcodes.txt names it.
pub const fn mode_of(code: u8) -> Option<Mode> {
    Mode::from_value(code & MODE_MASK)
}

/// The conditional jump of a jmp/jmp32 opcode byte, if it is one.
pub const fn jmp_op_of(code: u8) -> Option<JmpOp> {
    JmpOp::from_value(code & OP_MASK)
}

/// `code` with its operation bits replaced by `op`'s (class and source bit kept).
pub const fn with_jmp_op(code: u8, op: JmpOp) -> u8 {
    (code & !OP_MASK) | op.value()
}

impl JmpOp {
    /// The condition that holds exactly when this one does not (the `neg` column of
    /// isa/opcodes.txt); `None` for `jset`.
    pub fn negate(self) -> Option<JmpOp> {
        JmpOp::from_name(self.neg())
    }
}

/// Composes an opcode byte from its class and the operation/size/mode bits.
pub const fn opcode(class: Class, bits: u8) -> u8 {
    class.value() | bits
}

/// The class of an opcode byte (every 3-bit value is a class).
pub const fn class_of(code: u8) -> Class {
    match Class::from_value(code & CLASS_MASK) {
        Some(c) => c,
        None => panic!("internal error: isa/opcodes.txt must define all 8 classes"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tables_match_the_kernel_encodings() {
        assert_eq!(
            opcode(Class::Alu64, AluOp::Add.value() | Source::X.value()),
            0x0f
        );
        assert_eq!(AluOp::Sdiv.off(), 1);
        assert_eq!(AluOp::Sdiv.asm(), "s/=");
        assert_eq!(AluOp::Mov.asm(), "=");
        assert_eq!(JmpOp::Jeq.asm(), "==");
        assert_eq!(Size::Dw.bytes(), 8);
        assert_eq!(AtomicOp::Cmpxchg.value(), 0xf1);
        assert_eq!(Pseudo::MapIdxValue.value(), 6);
        assert_eq!(CallKind::Kfunc.value(), 2);
        assert_eq!(JmpOp::Jlt.since(), 2);
        assert_eq!(class_of(0x95), Class::Jmp);
    }

    #[test]
    fn helpers_have_ids_names_and_signatures() {
        assert_eq!(Helper::MapLookupElem.id(), 1);
        assert_eq!(
            Helper::from_name("bpf_map_lookup_elem"),
            Some(Helper::MapLookupElem)
        );
        assert_eq!(
            Helper::from_name("probe_read_kernel"),
            Some(Helper::ProbeReadKernel)
        );
        assert_eq!(Helper::from_id(211), Some(Helper::CgrpStorageDelete));
        assert_eq!(Helper::MapLookupElem.ret(), RetKind::MemOrNull);
        assert_eq!(Helper::MapLookupElem.args()[0], (ArgKind::Map, "map"));
        assert_eq!(Helper::RingbufOutput.to_string(), "bpf_ringbuf_output");
        assert!(Helper::all().all(|h| Helper::from_id(h.id()) == Some(h)));
    }

    #[test]
    fn kprobe_regs_cover_six_x86_arguments() {
        assert_eq!(kprobe_reg("x86_64", "arg0").map(|r| r.offset), Some(112));
        assert_eq!(kprobe_reg("x86_64", "ret").map(|r| r.reg), Some("ax"));
        assert_eq!(kprobe_reg("aarch64", "arg7").map(|r| r.offset), Some(56));
        assert!(kprobe_reg("x86_64", "arg6").is_none());
        assert_eq!(register_offset("x86_64", "orig_ax"), Some(120));
        assert_eq!(register_offset("x86_64", "di"), Some(112));
        assert_eq!(register_offset("x86_64", "ss"), Some(160));
        assert_eq!(register_offset("x86_64", "pc"), Some(128));
        assert_eq!(register_offset("x86_64", "orig_rax"), Some(120));
        assert!(register_offset("x86_64", "foo").is_none());
        assert_eq!(kprobe_reg("riscv64", "ret").map(|r| r.offset), Some(80));
        // Every architecture names its return register and the first six arguments.
        for arch in ["x86_64", "aarch64", "riscv64"] {
            for role in [
                "ret", "ip", "sp", "arg0", "arg1", "arg2", "arg3", "arg4", "arg5",
            ] {
                assert!(kprobe_reg(arch, role).is_some(), "{arch} {role}");
            }
        }
    }
}
