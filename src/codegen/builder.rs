//! The program builder: instructions over virtual registers, symbolic labels and stack slots,
//! each carrying the script span it came from (and optionally a comment for `-d asm`).
//!
//! Input: calls from lowering (or from the `emit` primitives). Output: a [`Builder`] whose
//! instruction list [`finish`](super::finish::finish) allocates registers and stack for and
//! encodes into a [`Template`](crate::template::Template).
//! Invariants: every [`VReg`], [`Label`] and [`Slot`] value comes from this builder; a label is
//! bound at most once (binding twice is an internal error); r10 is never a virtual register.
//! Nothing here knows an opcode number: operations are the `isa` enums.

use crate::asm::isa::{AluOp, Helper, JmpOp, Size};
use crate::diag::Span;
use crate::template::RelocKind;

/// A virtual register: any number of them; the allocator maps each onto r0–r9 or a stack slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct VReg(pub(crate) u32);

/// A jump target, bound to a position with [`Builder::bind`].
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Label(pub(crate) u32);

/// A stack slot: a byte range of the frame whose offset is chosen after the program is built,
/// shared with other slots whose lifetimes do not overlap.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Slot(pub(crate) u32);

/// The second operand of an ALU, move or jump: a register or a 32-bit immediate (sign-extended
/// to 64 bits by 64-bit operations, as the ISA does).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Src {
    Reg(VReg),
    Imm(i32),
}

impl From<VReg> for Src {
    fn from(r: VReg) -> Src {
        Src::Reg(r)
    }
}

impl From<i32> for Src {
    fn from(i: i32) -> Src {
        Src::Imm(i)
    }
}

/// The base of a load or store: a register holding a pointer, or a stack slot (fp-relative).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Mem {
    Reg(VReg),
    Slot(Slot),
}

impl From<VReg> for Mem {
    fn from(r: VReg) -> Mem {
        Mem::Reg(r)
    }
}

impl From<Slot> for Mem {
    fn from(s: Slot) -> Mem {
        Mem::Slot(s)
    }
}

/// One argument of a helper call, placed in r1..r5 by position.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Arg {
    Reg(VReg),
    /// A constant (`ld_imm64` when it does not fit 32 bits).
    Imm(i64),
    /// A map (its fd, through a `MapFd` relocation): index into the builder's map table.
    Map(usize),
    /// The address of byte `off` of a stack slot.
    Slot(Slot, i32),
    /// A BPF function of the same program (a callback): `ld_imm64` with `BPF_PSEUDO_FUNC`,
    /// index into the program's subprograms (resolved when they are linked).
    Func(usize),
}

/// What an [`Op::Call`] calls: a helper by id, or a vmlinux kfunc by BTF id.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Callee {
    Helper(Helper),
    Kfunc(u32),
}

/// One operation over virtual registers.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) enum Op {
    /// Defines the context pointer from r1 at program entry.
    Entry {
        ctx: VReg,
    },
    /// Defines `dst` from argument register r`n` at a subprogram's entry. Subprograms start
    /// with these, in order, before any other operation.
    Param {
        dst: VReg,
        n: u8,
    },
    /// `dst OP= src` on 64 (`wide`) or 32 bits; `AluOp::Mov` only defines `dst`.
    Alu {
        wide: bool,
        op: AluOp,
        dst: VReg,
        src: Src,
    },
    Neg {
        dst: VReg,
    },
    LdImm64 {
        dst: VReg,
        value: u64,
    },
    /// `dst = map fd` (or the address of byte `value_off` of the map's value when `Some`).
    LdMap {
        dst: VReg,
        map: usize,
        value_off: Option<u32>,
    },
    /// `dst = &variable` of vmlinux, by the variable's BTF id (the verifier resolves it).
    LdKsym {
        dst: VReg,
        btf_id: u32,
    },
    /// `dst = imm`, the immediate patched per target by a relocation (`Field::Imm`).
    MovReloc {
        dst: VReg,
        kind: RelocKind,
    },
    /// `dst = <64-bit value patched per target>` (`Field::Imm64` of an `ld_imm64`).
    LdImm64Reloc {
        dst: VReg,
        kind: RelocKind,
    },
    Load {
        size: Size,
        dst: VReg,
        base: Mem,
        off: i32,
        /// A relocation of the `off` field (argument slots).
        reloc: Option<RelocKind>,
    },
    Store {
        size: Size,
        base: Mem,
        off: i32,
        src: Src,
    },
    /// `lock *(size *)(base + off) += src`.
    AtomicAdd {
        size: Size,
        base: VReg,
        off: i32,
        src: VReg,
    },
    /// `dst = fp + slot offset + off`.
    SlotAddr {
        dst: VReg,
        slot: Slot,
        off: i32,
    },
    Jmp {
        wide: bool,
        op: JmpOp,
        a: VReg,
        b: Src,
        target: Label,
    },
    Ja {
        target: Label,
    },
    Bind(Label),
    Call {
        helper: Callee,
        args: Vec<Arg>,
        ret: Option<VReg>,
    },
    /// `r0 = value; exit`.
    Exit {
        value: Src,
    },
    /// No instruction: `slot` is in use up to here (its address went to memory that a
    /// helper call reads, which the stack allocator does not follow).
    KeepAlive(Slot),
}

/// An operation with where it came from.
#[derive(Clone, Debug, PartialEq, Eq)]
pub(crate) struct Inst {
    pub op: Op,
    pub span: Span,
    pub comment: Option<String>,
}

/// Size and alignment of one stack slot.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) struct SlotInfo {
    pub size: u32,
    pub align: u32,
    /// Lives for the whole program (its address escapes to memory).
    pub pinned: bool,
}

/// Builds one probe program. See the module documentation.
#[derive(Clone, Debug)]
pub struct Builder {
    pub(crate) insts: Vec<Inst>,
    pub(crate) nvregs: u32,
    pub(crate) nlabels: u32,
    pub(crate) slots: Vec<SlotInfo>,
    pub(crate) maps: Vec<String>,
    pub(crate) params: Vec<String>,
    pub(crate) consts: Vec<String>,
    /// Name → index in `maps`, `params`, `consts` (lookups stay constant-time in long probes).
    names: [std::collections::HashMap<String, usize>; 3],
    span: Span,
    comment: Option<String>,
    ctx: VReg,
    /// Emit ISA v4 `sdiv`/`smod` for signed division (the kernel accepts them: 6.6+);
    /// otherwise signed division is built from unsigned operations.
    pub signed_division: bool,
    /// `bpf_get_current_pid_tgid()`'s result when the program's entry already called it (the
    /// pid filter's prelude) and kept it unmodified: `pid`/`tid` read it instead of calling
    /// the helper again. Set only on a program's own builder, never on a subprogram's.
    pub pid_tgid: Option<VReg>,
    /// The current task's pointer from `bpf_get_current_task_btf()` when the program's entry
    /// already has it (the pid filter's prelude, which then reads `tgid` from it instead of
    /// calling `bpf_get_current_pid_tgid`), with the member offsets: `pid`, `tid` and `comm`
    /// are plain loads from it. Set only on a program's own builder, never on a subprogram's.
    pub task: Option<(VReg, crate::sema::TaskFields)>,
    /// The register `emit::arith::compare` last materialized a comparison into and the
    /// operation count right after it: while it is still the tail of the program, a branch on
    /// that register can take the comparison's own jump instead (`emit::control::branch_if`).
    pub(crate) last_compare: Option<(VReg, usize)>,
    /// Ring buffer bytes the program's record submissions take (header and padding
    /// included), each counted once: a bound on one run's output when the program has no
    /// loop (see `codegen::lower::ring_size`).
    pub ring_bytes: u64,
}

impl Default for Builder {
    fn default() -> Self {
        Builder::new()
    }
}

impl Builder {
    /// An empty program whose first operation saves the context pointer (r1) in [`Builder::ctx`].
    pub fn new() -> Builder {
        let mut b = Builder {
            insts: Vec::new(),
            nvregs: 0,
            nlabels: 0,
            slots: Vec::new(),
            maps: Vec::new(),
            params: Vec::new(),
            consts: Vec::new(),
            names: Default::default(),
            span: Span::default(),
            comment: None,
            ctx: VReg(0),
            signed_division: false,
            pid_tgid: None,
            task: None,
            last_compare: None,
            ring_bytes: 0,
        };
        let ctx = b.vreg();
        b.ctx = ctx;
        b.push(Op::Entry { ctx });
        b
    }

    /// A subprogram (a callback the kernel calls with `nparams` arguments in r1..): the
    /// builder and the virtual registers holding the arguments. Its context pointer is
    /// unset until [`Builder::set_ctx`] (a callback gets the program's through memory).
    pub fn subprog(nparams: u8) -> (Builder, Vec<VReg>) {
        let mut b = Builder::new();
        b.insts.clear();
        let params = (1..=nparams.min(5))
            .map(|n| {
                let dst = b.vreg();
                b.push(Op::Param { dst, n });
                dst
            })
            .collect();
        (b, params)
    }

    /// The virtual register holding the program's context pointer.
    pub fn ctx(&self) -> VReg {
        self.ctx
    }

    /// Removes the operation defining `v` when nothing reads `v` (a value loaded in case
    /// it is needed). Returns whether it did.
    pub fn remove_if_unused(&mut self, v: VReg) -> bool {
        let mut uses = Vec::new();
        let used = self.insts.iter().any(|i| {
            i.op.uses(&mut uses);
            uses.contains(&v)
        });
        if used {
            return false;
        }
        let before = self.insts.len();
        self.insts
            .retain(|i| i.op.def() != Some(v) || matches!(i.op, Op::Call { .. }));
        self.insts.len() != before
    }

    /// Makes `ctx` the context pointer (subprograms: a value loaded from the caller's memory).
    pub fn set_ctx(&mut self, ctx: VReg) {
        self.ctx = ctx;
    }

    pub fn vreg(&mut self) -> VReg {
        self.nvregs += 1;
        VReg(self.nvregs - 1)
    }

    pub fn label(&mut self) -> Label {
        self.nlabels += 1;
        Label(self.nlabels - 1)
    }

    /// A stack slot of `size` bytes aligned to `align` (1, 2, 4 or 8).
    pub fn slot(&mut self, size: u32, align: u32) -> Slot {
        self.slots.push(SlotInfo {
            size: size.max(1),
            align: align.clamp(1, 8).next_power_of_two(),
            pinned: false,
        });
        Slot(self.slots.len() as u32 - 1)
    }

    /// The alignment `slot` was allocated with (its frame offset is a multiple of it).
    pub fn slot_align(&self, slot: Slot) -> u32 {
        self.slots.get(slot.0 as usize).map_or(1, |s| s.align)
    }

    /// Marks `slot` as in use up to this point (see [`Op::KeepAlive`]); cheaper in stack
    /// than [`Builder::pin`] when the address escapes only for a while.
    pub fn keep_alive(&mut self, slot: Slot) {
        self.push(Op::KeepAlive(slot));
    }

    /// Keeps `slot` alive for the whole program. Needed when its address is stored in memory
    /// (the allocator only follows addresses held in registers).
    pub fn pin(&mut self, slot: Slot) {
        self.slots[slot.0 as usize].pinned = true;
    }

    /// Size in bytes of `slot`.
    pub fn slot_size(&self, slot: Slot) -> u32 {
        self.slots[slot.0 as usize].size
    }

    /// Instructions emitted from now on come from `span`.
    pub fn set_span(&mut self, span: Span) {
        self.span = span;
    }

    pub fn span(&self) -> Span {
        self.span
    }

    /// Attaches `text` to the next instruction (shown by listings).
    pub fn comment(&mut self, text: impl Into<String>) {
        self.comment = Some(text.into());
    }

    /// The index of map `name` in the template's map table (added when new).
    pub fn map(&mut self, name: &str) -> usize {
        intern(&mut self.maps, &mut self.names[0], name)
    }

    /// The index of parameter `name` (for `ArgSlot` relocations).
    pub fn param(&mut self, name: &str) -> usize {
        intern(&mut self.params, &mut self.names[1], name)
    }

    /// The index of the per-target/per-run constant `name` (for `Const` relocations).
    pub fn konst(&mut self, name: &str) -> usize {
        intern(&mut self.consts, &mut self.names[2], name)
    }

    /// Number of operations so far (labels included).
    pub fn len(&self) -> usize {
        self.insts.len()
    }

    pub fn is_empty(&self) -> bool {
        self.insts.is_empty()
    }

    pub(crate) fn push(&mut self, op: Op) {
        let comment = self.comment.take();
        self.insts.push(Inst {
            op,
            span: self.span,
            comment,
        });
    }

    // ---- moves and arithmetic ----

    /// `dst = src` (64-bit).
    pub fn mov(&mut self, dst: VReg, src: impl Into<Src>) {
        self.alu(true, AluOp::Mov, dst, src);
    }

    /// `dst = (u32)src`: the upper 32 bits become 0.
    pub fn mov32(&mut self, dst: VReg, src: impl Into<Src>) {
        self.alu(false, AluOp::Mov, dst, src);
    }

    /// `dst OP= src` on 64 or 32 bits (32-bit results are zero-extended, as the ISA does).
    pub fn alu(&mut self, wide: bool, op: AluOp, dst: VReg, src: impl Into<Src>) {
        self.push(Op::Alu {
            wide,
            op,
            dst,
            src: src.into(),
        });
    }

    pub fn neg(&mut self, dst: VReg) {
        self.push(Op::Neg { dst });
    }

    /// `dst = value`, in one instruction when it fits a sign-extended 32-bit immediate.
    pub fn mov_const(&mut self, dst: VReg, value: i64) {
        match i32::try_from(value) {
            Ok(v) => self.mov(dst, v),
            Err(_) => self.push(Op::LdImm64 {
                dst,
                value: value as u64,
            }),
        }
    }

    /// A new register holding `value`.
    pub fn constant(&mut self, value: i64) -> VReg {
        let r = self.vreg();
        self.mov_const(r, value);
        r
    }

    /// A new register holding a copy of `src`.
    pub fn copy(&mut self, src: VReg) -> VReg {
        let r = self.vreg();
        self.mov(r, src);
        r
    }

    /// `dst = fd of map` (for helpers taking a map).
    pub fn ld_map_fd(&mut self, dst: VReg, map: usize) {
        self.push(Op::LdMap {
            dst,
            map,
            value_off: None,
        });
    }

    /// `dst = &value[off]` of a single-entry array map (direct value access).
    pub fn ld_map_value(&mut self, dst: VReg, map: usize, off: u32) {
        self.push(Op::LdMap {
            dst,
            map,
            value_off: Some(off),
        });
    }

    /// `dst = &variable` of vmlinux (BTF id `btf_id` of a `VAR`): a percpu variable's address
    /// for `bpf_per_cpu_ptr`/`bpf_this_cpu_ptr`.
    pub fn ld_ksym(&mut self, dst: VReg, btf_id: u32) {
        self.push(Op::LdKsym { dst, btf_id });
    }

    /// `dst = <32-bit value patched per target>` (target index, named constants).
    pub fn mov_reloc(&mut self, dst: VReg, kind: RelocKind) {
        self.push(Op::MovReloc { dst, kind });
    }

    /// `dst = <64-bit value patched per target or per run>`.
    pub fn ld_imm64_reloc(&mut self, dst: VReg, kind: RelocKind) {
        self.push(Op::LdImm64Reloc { dst, kind });
    }

    // ---- memory ----

    /// `dst = *(size *)(base + off)` (zero-extended).
    pub fn load(&mut self, size: Size, dst: VReg, base: impl Into<Mem>, off: i32) {
        self.push(Op::Load {
            size,
            dst,
            base: base.into(),
            off,
            reloc: None,
        });
    }

    /// `dst = *(size *)(base + <offset patched per target>)` (argument slots of fentry/fexit).
    pub fn load_reloc(&mut self, size: Size, dst: VReg, base: VReg, kind: RelocKind) {
        self.push(Op::Load {
            size,
            dst,
            base: Mem::Reg(base),
            off: 0,
            reloc: Some(kind),
        });
    }

    /// `*(size *)(base + off) = src`.
    pub fn store(&mut self, size: Size, base: impl Into<Mem>, off: i32, src: impl Into<Src>) {
        self.push(Op::Store {
            size,
            base: base.into(),
            off,
            src: src.into(),
        });
    }

    /// `lock *(size *)(base + off) += src` (size W or Dw).
    pub fn atomic_add(&mut self, size: Size, base: VReg, off: i32, src: VReg) {
        self.push(Op::AtomicAdd {
            size,
            base,
            off,
            src,
        });
    }

    /// `dst = &slot[off]`.
    pub fn slot_addr(&mut self, dst: VReg, slot: Slot, off: i32) {
        self.push(Op::SlotAddr { dst, slot, off });
    }

    // ---- control flow ----

    /// Binds `label` here. Binding a label twice is an internal error.
    pub fn bind(&mut self, label: Label) {
        self.push(Op::Bind(label));
    }

    /// `if a OP b goto target` comparing 64 (`wide`) or 32 bits.
    pub fn jmp(&mut self, wide: bool, op: JmpOp, a: VReg, b: impl Into<Src>, target: Label) {
        self.push(Op::Jmp {
            wide,
            op,
            a,
            b: b.into(),
            target,
        });
    }

    /// 64-bit `if a OP b goto target`.
    pub fn jmp64(&mut self, op: JmpOp, a: VReg, b: impl Into<Src>, target: Label) {
        self.jmp(true, op, a, b, target);
    }

    pub fn ja(&mut self, target: Label) {
        self.push(Op::Ja { target });
    }

    /// Calls `helper` with `args` in r1.. and returns a register with its result.
    pub fn call(&mut self, helper: Helper, args: &[Arg]) -> VReg {
        let ret = self.vreg();
        self.push(Op::Call {
            helper: Callee::Helper(helper),
            args: args.to_vec(),
            ret: Some(ret),
        });
        ret
    }

    /// Calls the vmlinux kfunc with BTF id `btf_id` (`BPF_PSEUDO_KFUNC_CALL`) with `args` in
    /// r1.. and returns a register with its result. The caller checked that the program type
    /// may call it (`sema::environment::Kfunc`).
    pub fn call_kfunc(&mut self, btf_id: u32, args: &[Arg]) -> VReg {
        let ret = self.vreg();
        self.push(Op::Call {
            helper: Callee::Kfunc(btf_id),
            args: args.to_vec(),
            ret: Some(ret),
        });
        ret
    }

    /// Calls `helper`, ignoring its result.
    pub fn call_void(&mut self, helper: Helper, args: &[Arg]) {
        self.push(Op::Call {
            helper: Callee::Helper(helper),
            args: args.to_vec(),
            ret: None,
        });
    }

    /// `return value`.
    pub fn exit(&mut self, value: impl Into<Src>) {
        self.push(Op::Exit {
            value: value.into(),
        });
    }
}

fn intern(
    table: &mut Vec<String>,
    index: &mut std::collections::HashMap<String, usize>,
    name: &str,
) -> usize {
    if let Some(&i) = index.get(name) {
        return i;
    }
    table.push(name.to_string());
    index.insert(name.to_string(), table.len() - 1);
    table.len() - 1
}
