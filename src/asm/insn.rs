//! One BPF instruction, exactly as the kernel lays it out (`struct bpf_insn` in
//! `include/uapi/linux/bpf.h`): 8 bytes, little-endian on the targets strobe supports.
//!
//! `Insn` carries no invented bits: typed views (which operation, which operands) are decoded
//! from these fields by the tables generated from `isa/`.

/// `struct bpf_insn { u8 code; u8 dst_reg:4, src_reg:4; s16 off; s32 imm; }`.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq, Hash)]
#[repr(C)]
pub struct Insn {
    pub code: u8,
    /// Low nibble: destination register; high nibble: source register.
    pub regs: u8,
    pub off: i16,
    pub imm: i32,
}

impl Insn {
    pub const SIZE: usize = 8;

    pub const fn new(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
        Insn {
            code,
            regs: (dst & 0xf) | (src << 4),
            off,
            imm,
        }
    }

    pub const fn dst(self) -> u8 {
        self.regs & 0xf
    }

    pub const fn src(self) -> u8 {
        self.regs >> 4
    }

    pub fn set_dst(&mut self, r: u8) {
        self.regs = (self.regs & 0xf0) | (r & 0xf);
    }

    pub fn set_src(&mut self, r: u8) {
        self.regs = (self.regs & 0x0f) | (r << 4);
    }

    pub fn to_bytes(self) -> [u8; 8] {
        let mut b = [0u8; 8];
        b[0] = self.code;
        b[1] = self.regs;
        b[2..4].copy_from_slice(&self.off.to_le_bytes());
        b[4..8].copy_from_slice(&self.imm.to_le_bytes());
        b
    }

    pub fn from_bytes(b: [u8; 8]) -> Insn {
        Insn {
            code: b[0],
            regs: b[1],
            off: i16::from_le_bytes([b[2], b[3]]),
            imm: i32::from_le_bytes([b[4], b[5], b[6], b[7]]),
        }
    }
}

/// Serialises instructions into the byte image the kernel and ELF files hold.
pub fn insns_to_bytes(insns: &[Insn]) -> Vec<u8> {
    insns.iter().flat_map(|i| i.to_bytes()).collect()
}

/// Parses a byte image; a trailing partial instruction is reported as `Err(len)`.
pub fn insns_from_bytes(bytes: &[u8]) -> Result<Vec<Insn>, usize> {
    if bytes.len() % Insn::SIZE != 0 {
        return Err(bytes.len());
    }
    Ok(bytes
        .chunks_exact(Insn::SIZE)
        .map(|c| Insn::from_bytes(c.try_into().expect("chunk of 8")))
        .collect())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn insn_is_the_kernels_eight_byte_layout() {
        assert_eq!(std::mem::size_of::<Insn>(), 8);
        // r1 = 0x12345678 as `mov64 imm`: code 0xb7, dst 1.
        let i = Insn::new(0xb7, 1, 0, 0, 0x1234_5678);
        assert_eq!(i.to_bytes(), [0xb7, 0x01, 0, 0, 0x78, 0x56, 0x34, 0x12]);
        assert_eq!(Insn::from_bytes(i.to_bytes()), i);
        let j = Insn::new(0x0f, 3, 10, -2, 0);
        assert_eq!((j.dst(), j.src(), j.off), (3, 10, -2));
        assert_eq!(insns_from_bytes(&insns_to_bytes(&[i, j])), Ok(vec![i, j]));
        assert_eq!(insns_from_bytes(&[0; 9]), Err(9));
    }
}
