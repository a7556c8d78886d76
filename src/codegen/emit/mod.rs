//! Reusable lowering primitives over the [`Builder`](super::Builder): what lowering calls for
//! each expression and statement kind. One small file per topic.
//!
//! Conventions every primitive follows:
//! - an integer value of type [`IntTy`] lives in a 64-bit register *normalized*: sign-extended
//!   (signed types) or zero-extended (unsigned) from its width, so comparisons, division and
//!   widening casts work on the whole register;
//! - a [`Value`] is a register or a constant; operations on constants fold at compile time
//!   with the same semantics the generated code has;
//! - memory areas are a stack [`Slot`](super::Slot) plus a byte offset ([`Place`]);
//! - primitives never panic on user input; limits come back as `CodegenError`.

pub mod agg;
pub mod arith;
pub mod builtins;
pub mod control;
pub mod hist;
pub mod maps;
pub mod mem;
pub mod output;
pub mod strings;
pub mod tseries;

use super::builder::{Builder, Slot, Src, VReg};

/// An integer type: width in bits (8, 16, 32, 64) and signedness.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub struct IntTy {
    pub bits: u8,
    pub signed: bool,
}

impl IntTy {
    pub const U8: IntTy = IntTy::new(8, false);
    pub const U16: IntTy = IntTy::new(16, false);
    pub const U32: IntTy = IntTy::new(32, false);
    pub const U64: IntTy = IntTy::new(64, false);
    pub const I8: IntTy = IntTy::new(8, true);
    pub const I16: IntTy = IntTy::new(16, true);
    pub const I32: IntTy = IntTy::new(32, true);
    pub const I64: IntTy = IntTy::new(64, true);

    pub const fn new(bits: u8, signed: bool) -> IntTy {
        IntTy { bits, signed }
    }

    pub fn bytes(self) -> u32 {
        self.bits as u32 / 8
    }

    /// `v` reduced to this type and normalized to 64 bits (what a register holding it has).
    pub fn normalize(self, v: i64) -> i64 {
        if self.bits >= 64 {
            return v;
        }
        let sh = 64 - self.bits as u32;
        if self.signed {
            (v << sh) >> sh
        } else {
            ((v as u64) << sh >> sh) as i64
        }
    }
}

/// A value: a constant known at compile time or a register.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Value {
    Imm(i64),
    Reg(VReg),
}

impl From<VReg> for Value {
    fn from(r: VReg) -> Value {
        Value::Reg(r)
    }
}

impl Value {
    /// The value in a register (a new one for constants).
    pub fn reg(self, b: &mut Builder) -> VReg {
        match self {
            Value::Reg(r) => r,
            Value::Imm(v) => b.constant(v),
        }
    }

    /// The value as an instruction operand: an immediate when it fits 32 bits.
    pub fn src(self, b: &mut Builder) -> Src {
        match self {
            Value::Imm(v) => match i32::try_from(v) {
                Ok(i) => Src::Imm(i),
                Err(_) => Src::Reg(b.constant(v)),
            },
            Value::Reg(r) => Src::Reg(r),
        }
    }

    /// The value in a register the caller may overwrite.
    pub fn fresh(self, b: &mut Builder) -> VReg {
        match self {
            Value::Reg(r) => b.copy(r),
            Value::Imm(v) => b.constant(v),
        }
    }

    pub fn imm(self) -> Option<i64> {
        match self {
            Value::Imm(v) => Some(v),
            Value::Reg(_) => None,
        }
    }
}

/// Where a memory place lives: a stack slot, or memory a register points to (a per-CPU
/// scratch buffer or another map value the verifier knows the size of).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Base {
    Slot(Slot),
    Ptr(VReg),
}

/// A memory place: byte `off` of a stack slot or of pointed-to memory.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct Place {
    pub base: Base,
    pub off: i32,
}

impl Place {
    /// Byte `off` of stack slot `slot`.
    pub fn new(slot: Slot, off: i32) -> Place {
        Place {
            base: Base::Slot(slot),
            off,
        }
    }

    /// Byte `off` of the memory `ptr` points to.
    pub fn ptr(ptr: VReg, off: i32) -> Place {
        Place {
            base: Base::Ptr(ptr),
            off,
        }
    }

    /// The place `n` bytes further.
    pub fn at(self, n: i32) -> Place {
        Place {
            base: self.base,
            off: self.off + n,
        }
    }

    /// The base for loads and stores (with `off` as their displacement).
    pub fn mem(self) -> super::builder::Mem {
        match self.base {
            Base::Slot(s) => super::builder::Mem::Slot(s),
            Base::Ptr(r) => super::builder::Mem::Reg(r),
        }
    }

    /// The address as a helper argument (one add for pointed-to memory at a non-zero offset).
    pub fn arg(self, b: &mut Builder) -> super::builder::Arg {
        match self.base {
            Base::Slot(s) => super::builder::Arg::Slot(s, self.off),
            Base::Ptr(r) if self.off == 0 => super::builder::Arg::Reg(r),
            Base::Ptr(r) => {
                let a = b.copy(r);
                b.alu(true, crate::asm::isa::AluOp::Add, a, self.off);
                super::builder::Arg::Reg(a)
            }
        }
    }
}
