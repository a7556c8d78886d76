//! Relocation records: which instruction field of a template holds which per-target or per-run
//! value. A relocation names its site exactly (instruction index and field) so instantiation is
//! a store, never a search.

pub(crate) use crate::asm::isa::{
    CODE_CALL, CODE_LD_IMM64, PSEUDO_FUNC, PSEUDO_KFUNC_CALL, PSEUDO_MAP_FD, PSEUDO_MAP_VALUE,
};

/// The instruction field a relocation writes.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum Field {
    /// The 32-bit `imm` (sign-extended by most instructions that read it).
    Imm,
    /// The 16-bit signed `off` (a load's or store's displacement).
    Off,
    /// Both halves of an `ld_imm64`: low 32 bits in this instruction's `imm`, high 32 bits in
    /// the next one's.
    Imm64,
}

/// What value a relocation site receives.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum RelocKind {
    /// An `ld_imm64` with `BPF_PSEUDO_MAP_FD`: the fd of map `map` (index into
    /// [`Template::maps`](super::Template::maps)). Field must be `Imm`.
    MapFd { map: usize },
    /// An `ld_imm64` with `BPF_PSEUDO_MAP_VALUE`: the fd of map `map`; the value offset `off`
    /// stays in the second half. Field must be `Imm`.
    MapValue { map: usize, off: u32 },
    /// The target's index in the probe's target table (`func`, `probe` = one immediate).
    TargetIndex,
    /// The ctx offset of parameter `param` (index into
    /// [`Template::params`](super::Template::params)): 8 × its position for fentry/fexit.
    ArgSlot { param: usize },
    /// fexit: the ctx offset of the return value (8 × the number of parameters).
    RetSlot,
    /// A kfunc call's BTF id (index into [`Template::btf_ids`](super::Template::btf_ids)).
    /// The site must be a `call` with `BPF_PSEUDO_KFUNC_CALL`.
    BtfId { func: usize },
    /// Any other per-target constant (index into
    /// [`Template::consts`](super::Template::consts)).
    Const { id: usize },
    /// Code generation only: an `ld_imm64` with `BPF_PSEUDO_FUNC` naming subprogram `func`
    /// of the program being built. Linking the subprograms resolves it into a relative
    /// offset; a template never carries one (instantiating it is an error).
    Subprog { func: usize },
}

/// One relocation: instruction `insn`'s `field` receives the value of `kind`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct Reloc {
    pub insn: usize,
    pub field: Field,
    pub kind: RelocKind,
}

impl Reloc {
    pub fn new(insn: usize, field: Field, kind: RelocKind) -> Reloc {
        Reloc { insn, field, kind }
    }

    /// A relocation of instruction `insn` that is an `ld_imm64` of map `map`'s fd.
    pub fn map_fd(insn: usize, map: usize) -> Reloc {
        Reloc::new(insn, Field::Imm, RelocKind::MapFd { map })
    }

    /// The same relocation `n` instructions later (when instructions are inserted before it).
    pub fn shifted(self, n: usize) -> Reloc {
        Reloc {
            insn: self.insn + n,
            ..self
        }
    }
}
