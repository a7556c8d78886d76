//! Instruction constructors for the code generator and the assembler: each builds one
//! kernel-format `Insn` (two for `ld_imm64`) from typed operands, taking every opcode bit from
//! the `isa` tables. They never fail: operands are typed, so every result is encodable.

use super::isa::{
    opcode, AluOp, AluSpecial, AtomicOp, CallKind, Class, Endian, Helper, JmpOp, JmpSpecial, Mode,
    MovsxWidth, Pseudo, Size, Source,
};
use super::{Insn, Reg};

const fn alu_class(wide: bool) -> Class {
    if wide {
        Class::Alu64
    } else {
        Class::Alu
    }
}

const fn jmp_class(wide: bool) -> Class {
    if wide {
        Class::Jmp
    } else {
        Class::Jmp32
    }
}

impl Insn {
    /// Whether this is the first half of a 16-byte `ld_imm64` (the next slot is its upper half).
    pub fn is_ld_imm64(self) -> bool {
        self.code == opcode(Class::Ld, Mode::Imm.value() | Size::Dw.value())
    }

    fn with(code: u8, dst: Reg, src: Reg, off: i16, imm: i32) -> Insn {
        Insn::new(code, dst.num(), src.num(), off, imm)
    }

    /// `dst OP= imm` on 64 (`wide`) or 32 bits.
    pub fn alu_imm(wide: bool, op: AluOp, dst: Reg, imm: i32) -> Insn {
        let code = opcode(alu_class(wide), op.value() | Source::K.value());
        Insn::with(code, dst, Reg::R0, op.off(), imm)
    }

    /// `dst OP= src` on 64 (`wide`) or 32 bits.
    pub fn alu_reg(wide: bool, op: AluOp, dst: Reg, src: Reg) -> Insn {
        let code = opcode(alu_class(wide), op.value() | Source::X.value());
        Insn::with(code, dst, src, op.off(), 0)
    }

    pub fn alu64_imm(op: AluOp, dst: Reg, imm: i32) -> Insn {
        Insn::alu_imm(true, op, dst, imm)
    }

    pub fn alu64_reg(op: AluOp, dst: Reg, src: Reg) -> Insn {
        Insn::alu_reg(true, op, dst, src)
    }

    pub fn alu32_imm(op: AluOp, dst: Reg, imm: i32) -> Insn {
        Insn::alu_imm(false, op, dst, imm)
    }

    pub fn alu32_reg(op: AluOp, dst: Reg, src: Reg) -> Insn {
        Insn::alu_reg(false, op, dst, src)
    }

    /// `rD = imm` (sign-extended to 64 bits).
    pub fn mov64_imm(dst: Reg, imm: i32) -> Insn {
        Insn::alu64_imm(AluOp::Mov, dst, imm)
    }

    pub fn mov64_reg(dst: Reg, src: Reg) -> Insn {
        Insn::alu64_reg(AluOp::Mov, dst, src)
    }

    /// `wD = imm` (zero-extends into the upper half).
    pub fn mov32_imm(dst: Reg, imm: i32) -> Insn {
        Insn::alu32_imm(AluOp::Mov, dst, imm)
    }

    pub fn mov32_reg(dst: Reg, src: Reg) -> Insn {
        Insn::alu32_reg(AluOp::Mov, dst, src)
    }

    /// `dst = -dst`.
    pub fn neg(wide: bool, dst: Reg) -> Insn {
        let code = opcode(alu_class(wide), AluSpecial::Neg.value() | Source::K.value());
        Insn::with(code, dst, Reg::R0, 0, 0)
    }

    /// `dst = (s8|s16|s32)src` (ISA v4). On 32 bits only s8 and s16 exist.
    pub fn movsx(wide: bool, dst: Reg, src: Reg, width: MovsxWidth) -> Insn {
        let code = opcode(
            alu_class(wide),
            AluSpecial::Movsx.value() | Source::X.value(),
        );
        Insn::with(code, dst, src, width.value(), 0)
    }

    /// `dst = addr_space_cast(src, dst_as, src_as)`: converts a pointer between address
    /// spaces (BPF arena).
    pub fn addr_space_cast(dst: Reg, src: Reg, dst_as: u16, src_as: u16) -> Insn {
        let special = AluSpecial::AddrSpaceCast;
        let code = opcode(Class::Alu64, special.value() | Source::X.value());
        let imm = ((u32::from(dst_as) << 16) | u32::from(src_as)) as i32;
        Insn::with(code, dst, src, special.off(), imm)
    }

    /// `dst = le16 dst` / `be32` / v4 `bswap64`; `bits` is 16, 32 or 64.
    pub fn endian(kind: Endian, bits: u16, dst: Reg) -> Insn {
        let class = if kind == Endian::Bswap {
            Class::Alu64
        } else {
            Class::Alu
        };
        let code = opcode(class, AluSpecial::End.value() | kind.value());
        Insn::with(code, dst, Reg::R0, 0, i32::from(bits))
    }

    /// `ld_imm64` with a pseudo source: `imm` goes in the first half, `next_imm` in the second.
    pub fn ld_pseudo(dst: Reg, pseudo: Pseudo, imm: i32, next_imm: i32) -> [Insn; 2] {
        let code = opcode(Class::Ld, Mode::Imm.value() | Size::Dw.value());
        [
            Insn::new(code, dst.num(), pseudo.value(), 0, imm),
            Insn::new(0, 0, 0, 0, next_imm),
        ]
    }

    /// `dst = value ll`: a 64-bit constant.
    pub fn ld_imm64(dst: Reg, value: u64) -> [Insn; 2] {
        Insn::ld_pseudo(
            dst,
            Pseudo::None,
            value as u32 as i32,
            (value >> 32) as u32 as i32,
        )
    }

    /// `dst = map_fd(fd) ll`: the map with this fd (BPF_PSEUDO_MAP_FD).
    pub fn ld_map_fd(dst: Reg, fd: i32) -> [Insn; 2] {
        Insn::ld_pseudo(dst, Pseudo::MapFd, fd, 0)
    }

    /// `dst = ksym ll`: the address of the vmlinux variable with BTF id `btf_id`
    /// (BPF_PSEUDO_BTF_ID; the verifier looks the symbol up in kallsyms).
    pub fn ld_ksym(dst: Reg, btf_id: u32) -> [Insn; 2] {
        Insn::ld_pseudo(dst, Pseudo::BtfId, btf_id as i32, 0)
    }

    /// `dst = map_value(fd, off) ll`: the address of an array map's value plus `off`.
    pub fn ld_map_value(dst: Reg, fd: i32, off: i32) -> [Insn; 2] {
        Insn::ld_pseudo(dst, Pseudo::MapValue, fd, off)
    }

    /// `if dst OP imm goto +off` on 64 (`wide`) or 32 bits.
    pub fn jmp_imm_w(wide: bool, op: JmpOp, dst: Reg, imm: i32, off: i16) -> Insn {
        let code = opcode(jmp_class(wide), op.value() | Source::K.value());
        Insn::with(code, dst, Reg::R0, off, imm)
    }

    /// `if dst OP src goto +off` on 64 (`wide`) or 32 bits.
    pub fn jmp_reg_w(wide: bool, op: JmpOp, dst: Reg, src: Reg, off: i16) -> Insn {
        let code = opcode(jmp_class(wide), op.value() | Source::X.value());
        Insn::with(code, dst, src, off, 0)
    }

    pub fn jmp_imm(op: JmpOp, dst: Reg, imm: i32, off: i16) -> Insn {
        Insn::jmp_imm_w(true, op, dst, imm, off)
    }

    pub fn jmp_reg(op: JmpOp, dst: Reg, src: Reg, off: i16) -> Insn {
        Insn::jmp_reg_w(true, op, dst, src, off)
    }

    pub fn jmp32_imm(op: JmpOp, dst: Reg, imm: i32, off: i16) -> Insn {
        Insn::jmp_imm_w(false, op, dst, imm, off)
    }

    pub fn jmp32_reg(op: JmpOp, dst: Reg, src: Reg, off: i16) -> Insn {
        Insn::jmp_reg_w(false, op, dst, src, off)
    }

    /// `goto +off`.
    pub fn ja(off: i16) -> Insn {
        Insn::new(opcode(Class::Jmp, JmpSpecial::Ja.value()), 0, 0, off, 0)
    }

    /// `gotol +off` (ISA v4): the offset is in imm, so it reaches ±2^31 instructions.
    pub fn gotol(off: i32) -> Insn {
        Insn::new(opcode(Class::Jmp32, JmpSpecial::Ja.value()), 0, 0, 0, off)
    }

    /// `may_goto +off`: falls through until the kernel's loop budget runs out, then jumps.
    pub fn may_goto(off: i16) -> Insn {
        Insn::new(
            opcode(Class::Jmp, JmpSpecial::MayGoto.value()),
            0,
            0,
            off,
            0,
        )
    }

    fn call(kind: CallKind, off: i16, imm: i32) -> Insn {
        let code = opcode(Class::Jmp, JmpSpecial::Call.value());
        Insn::new(code, 0, kind.value(), off, imm)
    }

    /// `call bpf_xxx`: a helper function.
    pub fn call_helper(helper: Helper) -> Insn {
        Insn::call_helper_id(helper.id() as i32)
    }

    /// A helper call by raw id (for ids newer than the table).
    pub fn call_helper_id(id: i32) -> Insn {
        Insn::call(CallKind::Helper, 0, id)
    }

    /// `call pc+off`: a BPF-to-BPF call, `off` counted from the next instruction.
    pub fn call_local(off: i32) -> Insn {
        Insn::call(CallKind::Local, 0, off)
    }

    /// A kfunc call: `btf_id` in vmlinux (`fd_idx` 0) or in the module BTF at `fd_idx` of the
    /// program's fd_array.
    pub fn call_kfunc(btf_id: i32, fd_idx: i16) -> Insn {
        Insn::call(CallKind::Kfunc, fd_idx, btf_id)
    }

    pub fn exit() -> Insn {
        Insn::new(opcode(Class::Jmp, JmpSpecial::Exit.value()), 0, 0, 0, 0)
    }

    /// `dst = *(size *)(src + off)`, zero-extending.
    pub fn load(size: Size, dst: Reg, src: Reg, off: i16) -> Insn {
        Insn::with(
            opcode(Class::Ldx, Mode::Mem.value() | size.value()),
            dst,
            src,
            off,
            0,
        )
    }

    /// `dst = *(s8|s16|s32 *)(src + off)`, sign-extending (ISA v4; not for `Size::Dw`).
    pub fn load_sx(size: Size, dst: Reg, src: Reg, off: i16) -> Insn {
        Insn::with(
            opcode(Class::Ldx, Mode::Memsx.value() | size.value()),
            dst,
            src,
            off,
            0,
        )
    }

    /// `*(size *)(dst + off) = imm`.
    pub fn store_imm(size: Size, dst: Reg, off: i16, imm: i32) -> Insn {
        Insn::with(
            opcode(Class::St, Mode::Mem.value() | size.value()),
            dst,
            Reg::R0,
            off,
            imm,
        )
    }

    /// `*(size *)(dst + off) = src`.
    pub fn store_reg(size: Size, dst: Reg, off: i16, src: Reg) -> Insn {
        Insn::with(
            opcode(Class::Stx, Mode::Mem.value() | size.value()),
            dst,
            src,
            off,
            0,
        )
    }

    /// An atomic operation on `*(size *)(dst + off)` with `src` (see isa/opcodes.txt for which
    /// register each form reads and writes; `cmpxchg` also uses r0).
    pub fn atomic(size: Size, op: AtomicOp, dst: Reg, off: i16, src: Reg) -> Insn {
        let code = opcode(Class::Stx, Mode::Atomic.value() | size.value());
        Insn::with(code, dst, src, off, op.value())
    }

    /// Legacy `r0 = *(size *)skb[imm]`.
    pub fn ld_abs(size: Size, imm: i32) -> Insn {
        Insn::new(
            opcode(Class::Ld, Mode::Abs.value() | size.value()),
            0,
            0,
            0,
            imm,
        )
    }

    /// Legacy `r0 = *(size *)skb[src + imm]`.
    pub fn ld_ind(size: Size, src: Reg, imm: i32) -> Insn {
        let code = opcode(Class::Ld, Mode::Ind.value() | size.value());
        Insn::with(code, Reg::R0, src, 0, imm)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Encodings cross-checked with LLVM's assembler (`llvm-objdump -d` of clang's output).
    #[test]
    fn builders_produce_llvm_encodings() {
        let b = |i: Insn| i.to_bytes();
        assert_eq!(
            b(Insn::alu64_reg(AluOp::Add, Reg::R0, Reg::R1)),
            [0x0f, 0x10, 0, 0, 0, 0, 0, 0]
        );
        assert_eq!(
            b(Insn::mov32_reg(Reg::R2, Reg::R3)),
            [0xbc, 0x32, 0, 0, 0, 0, 0, 0]
        );
        assert_eq!(
            b(Insn::alu32_imm(AluOp::Smod, Reg::R0, 3)),
            [0x94, 0, 1, 0, 3, 0, 0, 0]
        );
        assert_eq!(
            b(Insn::movsx(true, Reg::R0, Reg::R1, MovsxWidth::S8)),
            [0xbf, 0x10, 8, 0, 0, 0, 0, 0]
        );
        assert_eq!(
            b(Insn::endian(Endian::Bswap, 16, Reg::R0)),
            [0xd7, 0, 0, 0, 16, 0, 0, 0]
        );
        assert_eq!(
            b(Insn::endian(Endian::Be, 16, Reg::R0)),
            [0xdc, 0, 0, 0, 16, 0, 0, 0]
        );
        assert_eq!(
            b(Insn::jmp_imm(JmpOp::Jsgt, Reg::R1, 5, 3)),
            [0x65, 1, 3, 0, 5, 0, 0, 0]
        );
        assert_eq!(
            b(Insn::jmp32_reg(JmpOp::Jeq, Reg::R1, Reg::R2, -1)),
            [0x1e, 0x21, 0xff, 0xff, 0, 0, 0, 0]
        );
        assert_eq!(b(Insn::gotol(5)), [0x06, 0, 0, 0, 5, 0, 0, 0]);
        assert_eq!(
            b(Insn::store_reg(Size::W, Reg::R10, -4, Reg::R1)),
            [0x63, 0x1a, 0xfc, 0xff, 0, 0, 0, 0]
        );
        assert_eq!(
            b(Insn::store_imm(Size::Dw, Reg::R10, -8, 7)),
            [0x7a, 0x0a, 0xf8, 0xff, 7, 0, 0, 0]
        );
        assert_eq!(
            b(Insn::load_sx(Size::B, Reg::R1, Reg::R2, 8)),
            [0x91, 0x21, 8, 0, 0, 0, 0, 0]
        );
        assert_eq!(
            b(Insn::atomic(
                Size::Dw,
                AtomicOp::Cmpxchg,
                Reg::R1,
                0,
                Reg::R2
            )),
            [0xdb, 0x21, 0, 0, 0xf1, 0, 0, 0]
        );
        assert_eq!(
            b(Insn::call_helper(Helper::MapLookupElem)),
            [0x85, 0, 0, 0, 1, 0, 0, 0]
        );
        assert_eq!(b(Insn::exit()), [0x95, 0, 0, 0, 0, 0, 0, 0]);
        assert_eq!(
            b(Insn::ld_ind(Size::H, Reg::R1, 0)),
            [0x48, 0x10, 0, 0, 0, 0, 0, 0]
        );
        let [lo, hi] = Insn::ld_imm64(Reg::R1, u64::MAX);
        assert_eq!((lo.code, lo.imm, hi.code, hi.imm), (0x18, -1, 0, -1));
        let [m, _] = Insn::ld_map_fd(Reg::R1, 5);
        assert_eq!((m.src(), m.imm), (1, 5));
    }
}
