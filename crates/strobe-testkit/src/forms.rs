//! Every instruction form of the ISA, generated from the `isa` tables: each ALU/JMP operation ×
//! width × source, every load/store size and mode, every atomic, every `ld_imm64` pseudo
//! source, every call kind, with boundary immediates and offsets. Used by round-trip tests and
//! by the LLVM differential test as the corpus; never by the tracer itself.

use strobe::asm::decode::{Call, Decoded, Operand};
use strobe::asm::isa::{AluOp, AtomicOp, Endian, JmpOp, MovsxWidth, Pseudo, Size};
use strobe::asm::Reg;

const IMMS: [i32; 5] = [0, 1, -1, i32::MAX, i32::MIN];
const OFFS: [i16; 4] = [0, -8, i16::MAX, i16::MIN];

fn reg(n: usize) -> Reg {
    Reg::new((n % 11) as u8).unwrap_or(Reg::R0)
}

/// One or more instances of every form (about 700 instructions).
pub fn all_forms() -> Vec<Decoded> {
    let mut v = Vec::new();
    let mut n = 0usize;
    let mut next = || {
        n += 1;
        n
    };
    for wide in [true, false] {
        for op in AluOp::ALL {
            for imm in IMMS {
                let dst = reg(next());
                v.push(Decoded::Alu {
                    wide,
                    op,
                    dst,
                    src: Operand::Imm(imm),
                });
            }
            let (dst, src) = (reg(next()), reg(next()));
            v.push(Decoded::Alu {
                wide,
                op,
                dst,
                src: Operand::Reg(src),
            });
        }
        v.push(Decoded::Neg {
            wide,
            dst: reg(next()),
        });
        for width in MovsxWidth::ALL {
            if wide || width != MovsxWidth::S32 {
                let (dst, src) = (reg(next()), reg(next()));
                v.push(Decoded::Movsx {
                    wide,
                    dst,
                    src,
                    width,
                });
            }
        }
        for op in JmpOp::ALL {
            for (imm, off) in IMMS.iter().zip(OFFS.iter().cycle()) {
                let dst = reg(next());
                v.push(Decoded::Jmp {
                    wide,
                    op,
                    dst,
                    src: Operand::Imm(*imm),
                    off: *off,
                });
            }
            let (dst, src) = (reg(next()), reg(next()));
            v.push(Decoded::Jmp {
                wide,
                op,
                dst,
                src: Operand::Reg(src),
                off: -1,
            });
        }
    }
    for kind in Endian::ALL {
        for bits in [16, 32, 64] {
            v.push(Decoded::Endian {
                kind,
                bits,
                dst: reg(next()),
            });
        }
    }
    for value in [
        0u64,
        5,
        u64::MAX,
        0x8000_0000,
        0x1234_5678_9abc_def0,
        i64::MIN as u64,
    ] {
        let (imm, next_imm) = (value as u32 as i32, (value >> 32) as u32 as i32);
        v.push(Decoded::LdImm64 {
            dst: reg(next()),
            pseudo: Pseudo::None,
            imm,
            next_imm,
        });
    }
    for pseudo in Pseudo::ALL.into_iter().filter(|p| *p != Pseudo::None) {
        let next_imm = match pseudo {
            Pseudo::MapValue | Pseudo::MapIdxValue | Pseudo::BtfId => 16,
            _ => 0,
        };
        v.push(Decoded::LdImm64 {
            dst: reg(next()),
            pseudo,
            imm: 3,
            next_imm,
        });
    }
    for size in [Size::B, Size::H, Size::W] {
        v.push(Decoded::LdAbs { size, imm: 14 });
        v.push(Decoded::LdInd {
            size,
            src: reg(next()),
            imm: 0,
        });
        v.push(Decoded::LdInd {
            size,
            src: reg(next()),
            imm: -4,
        });
    }
    for size in Size::ALL {
        for off in OFFS {
            let (dst, src) = (reg(next()), reg(next()));
            v.push(Decoded::Load {
                size,
                sx: false,
                dst,
                src,
                off,
            });
            if size != Size::Dw {
                v.push(Decoded::Load {
                    size,
                    sx: true,
                    dst,
                    src,
                    off,
                });
            }
            v.push(Decoded::Store {
                size,
                dst,
                off,
                src: Operand::Reg(src),
            });
            v.push(Decoded::Store {
                size,
                dst,
                off,
                src: Operand::Imm(IMMS[next() % 5]),
            });
        }
    }
    for op in AtomicOp::ALL {
        let any = matches!(op, AtomicOp::LoadAcquire | AtomicOp::StoreRelease);
        for size in Size::ALL {
            if any || matches!(size, Size::W | Size::Dw) {
                let (dst, src) = (reg(next()), reg(next()));
                v.push(Decoded::Atomic {
                    size,
                    op,
                    dst,
                    src,
                    off: OFFS[next() % 4],
                });
            }
        }
    }
    for off in [0, 1, -1, i16::MAX as i32, i16::MIN as i32] {
        v.push(Decoded::Ja { off, long: false });
    }
    for off in IMMS {
        v.push(Decoded::Ja { off, long: true });
        v.push(Decoded::Call(Call::Local(off)));
    }
    for id in [1, 6, 211, 212, 0x7fff_ffff] {
        v.push(Decoded::Call(Call::Helper(id)));
    }
    v.push(Decoded::Call(Call::Kfunc {
        btf_id: 12345,
        fd_idx: 0,
    }));
    v.push(Decoded::Call(Call::Kfunc {
        btf_id: 7,
        fd_idx: 2,
    }));
    v.push(Decoded::Exit);
    for off in [0, -1, i16::MAX] {
        v.push(Decoded::MayGoto { off });
    }
    v.push(Decoded::AddrSpaceCast {
        dst: Reg::R1,
        src: Reg::R2,
        dst_as: 0,
        src_as: 1,
    });
    v.push(Decoded::AddrSpaceCast {
        dst: Reg::R3,
        src: Reg::R3,
        dst_as: 1,
        src_as: 0,
    });
    v
}
