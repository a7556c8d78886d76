//! FNV-1a, the hasher of the crate's name-keyed tables (assembler labels, kprobe_multi target
//! names): the keys are short and not chosen by an attacker, so one multiply per byte beats
//! SipHash, whose denial-of-service resistance would cost more than the rest of a lookup.

use std::hash::{BuildHasherDefault, Hasher};

/// The FNV-1a state; the default is the empty hash.
#[derive(Default)]
pub(crate) struct Fnv(u64);

impl Hasher for Fnv {
    fn finish(&self) -> u64 {
        self.0
    }
    fn write(&mut self, bytes: &[u8]) {
        let mut h = if self.0 == 0 {
            0xcbf2_9ce4_8422_2325
        } else {
            self.0
        };
        for &b in bytes {
            h = (h ^ u64::from(b)).wrapping_mul(0x0100_0000_01b3);
        }
        self.0 = h;
    }
}

/// Builds [`Fnv`] hashers for `HashMap`/`HashSet`.
pub(crate) type BuildFnv = BuildHasherDefault<Fnv>;

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn matches_the_published_fnv1a_values() {
        let h = |s: &str| {
            let mut f = Fnv::default();
            f.write(s.as_bytes());
            f.finish()
        };
        assert_eq!(h("a"), 0xaf63_dc4c_8601_ec8c);
        assert_eq!(h("foobar"), 0x8594_4171_f739_67e8);
    }
}
