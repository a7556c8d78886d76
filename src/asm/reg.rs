//! BPF registers r0–r10. A `Reg` always holds a valid register number, so encoding one
//! never needs a check.

use std::fmt;

#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct Reg(u8);

impl Reg {
    /// Return value, and the first of the helper-call results.
    pub const R0: Reg = Reg(0);
    /// First argument; the context pointer at program entry.
    pub const R1: Reg = Reg(1);
    pub const R2: Reg = Reg(2);
    pub const R3: Reg = Reg(3);
    pub const R4: Reg = Reg(4);
    pub const R5: Reg = Reg(5);
    /// r6–r9 survive helper calls.
    pub const R6: Reg = Reg(6);
    pub const R7: Reg = Reg(7);
    pub const R8: Reg = Reg(8);
    pub const R9: Reg = Reg(9);
    /// The read-only frame pointer.
    pub const R10: Reg = Reg(10);
    pub const FP: Reg = Reg(10);

    /// The register numbered `n`, if it exists (0–10).
    pub const fn new(n: u8) -> Option<Reg> {
        if n <= 10 {
            Some(Reg(n))
        } else {
            None
        }
    }

    pub const fn num(self) -> u8 {
        self.0
    }
}

impl fmt::Display for Reg {
    /// The 64-bit name, `r3`; 32-bit views print as `w3` (see the disassembler).
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "r{}", self.0)
    }
}
