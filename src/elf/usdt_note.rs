//! USDT probe notes: one `.note.stapsdt` descriptor decoded into a [`UsdtNote`]. Input: the
//! note's descriptor bytes. Output: the probe's addresses and strings. The note is part of the
//! plan's USDT probe kind (the runtime maps its addresses to file offsets), so it lives here,
//! below both the kernel-info reader that finds notes and the plan that carries one.

/// One USDT probe from an ELF note (`Documentation` of SystemTap's `sdt.h`: note type 3, owner
/// `stapsdt`; the descriptor holds the probe address, the `.stapsdt.base` address and the
/// semaphore address as 64-bit words, then provider, name and argument strings).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct UsdtNote {
    pub provider: String,
    pub name: String,
    /// The argument description (`-4@%edi 8@%rsi`).
    pub args: String,
    pub pc: u64,
    pub base: u64,
    /// The semaphore's address, 0 when the probe has none.
    pub semaphore: u64,
}

/// Decodes one stapsdt descriptor (64-bit ELF only, which is all strobe traces).
pub fn parse_stapsdt(desc: &[u8]) -> Option<UsdtNote> {
    let word = |i: usize| -> Option<u64> {
        Some(u64::from_le_bytes(
            desc.get(i * 8..i * 8 + 8)?.try_into().ok()?,
        ))
    };
    let (pc, base, semaphore) = (word(0)?, word(1)?, word(2)?);
    let mut strs = desc.get(24..)?.split(|&b| b == 0);
    let mut next = || Some(String::from_utf8_lossy(strs.next()?).into_owned());
    Some(UsdtNote {
        provider: next()?,
        name: next()?,
        args: next().unwrap_or_default(),
        pc,
        base,
        semaphore,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stapsdt_descriptor_decodes_addresses_and_strings() {
        let mut d = Vec::new();
        for w in [0x1000u64, 0x2000, 0x3000] {
            d.extend_from_slice(&w.to_le_bytes());
        }
        d.extend_from_slice(b"libc\0setjmp\0-8@%rdi -4@%esi\0");
        let n = parse_stapsdt(&d).unwrap();
        assert_eq!(
            (n.provider.as_str(), n.name.as_str(), n.args.as_str()),
            ("libc", "setjmp", "-8@%rdi -4@%esi")
        );
        assert_eq!((n.pc, n.base, n.semaphore), (0x1000, 0x2000, 0x3000));
        assert_eq!(parse_stapsdt(&d[..20]), None);
    }
}
