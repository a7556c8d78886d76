//! `%gr`: GFP (get free pages) allocation flags as names, the way the kernel's `%pGg` and
//! bpftrace print them (`GFP_KERNEL`, `GFP_ATOMIC|__GFP_HIGHMEM`, `__GFP_IO|0x4000000`).
//!
//! Input: the flags word. Output: the names joined by `|`, `0` for no flags, and any bits no
//! name covers as one trailing hex number.
//!
//! The bit numbers are the kernel's `enum` in include/linux/gfp_types.h (6.x; bit 9 unused),
//! the compound masks its `GFP_*` macros, and the order of the table the order of
//! `__def_gfpflag_names` in include/trace/events/mmflags.h: compound names first, so a value
//! is named by the widest mask it contains and left-over bits by themselves.

const fn bit(n: u32) -> u64 {
    1 << n
}

const DMA: u64 = bit(0);
const HIGHMEM: u64 = bit(1);
const DMA32: u64 = bit(2);
const MOVABLE: u64 = bit(3);
const HIGH: u64 = bit(5);
const IO: u64 = bit(6);
const FS: u64 = bit(7);
const ZERO: u64 = bit(8);
const DIRECT_RECLAIM: u64 = bit(10);
const KSWAPD_RECLAIM: u64 = bit(11);
const WRITE: u64 = bit(12);
const NOWARN: u64 = bit(13);
const RETRY_MAYFAIL: u64 = bit(14);
const NOFAIL: u64 = bit(15);
const NORETRY: u64 = bit(16);
const MEMALLOC: u64 = bit(17);
const COMP: u64 = bit(18);
const NOMEMALLOC: u64 = bit(19);
const HARDWALL: u64 = bit(20);
const THISNODE: u64 = bit(21);
const ACCOUNT: u64 = bit(22);
const ZEROTAGS: u64 = bit(23);
const SKIP_ZERO: u64 = bit(24);
const SKIP_KASAN: u64 = bit(25);
const NO_OBJ_EXT: u64 = bit(26);

const RECLAIM: u64 = DIRECT_RECLAIM | KSWAPD_RECLAIM;
const ATOMIC: u64 = HIGH | KSWAPD_RECLAIM;
const KERNEL: u64 = RECLAIM | IO | FS;
const NOWAIT: u64 = KSWAPD_RECLAIM | NOWARN;
const NOIO: u64 = RECLAIM;
const NOFS: u64 = RECLAIM | IO;
const USER: u64 = RECLAIM | IO | FS | HARDWALL;
const HIGHUSER: u64 = USER | HIGHMEM;
const HIGHUSER_MOVABLE: u64 = HIGHUSER | MOVABLE | SKIP_KASAN;
const TRANSHUGE_LIGHT: u64 = (HIGHUSER_MOVABLE | COMP | NOMEMALLOC | NOWARN) & !RECLAIM;
const TRANSHUGE: u64 = TRANSHUGE_LIGHT | DIRECT_RECLAIM;

/// Masks in the order they are matched.
const NAMES: &[(u64, &str)] = &[
    (TRANSHUGE, "GFP_TRANSHUGE"),
    (TRANSHUGE_LIGHT, "GFP_TRANSHUGE_LIGHT"),
    (HIGHUSER_MOVABLE, "GFP_HIGHUSER_MOVABLE"),
    (HIGHUSER, "GFP_HIGHUSER"),
    (USER, "GFP_USER"),
    (KERNEL | ACCOUNT, "GFP_KERNEL_ACCOUNT"),
    (KERNEL, "GFP_KERNEL"),
    (NOFS, "GFP_NOFS"),
    (ATOMIC, "GFP_ATOMIC"),
    (NOIO, "GFP_NOIO"),
    (NOWAIT, "GFP_NOWAIT"),
    (DMA, "GFP_DMA"),
    (HIGHMEM, "__GFP_HIGHMEM"),
    (DMA32, "GFP_DMA32"),
    (HIGH, "__GFP_HIGH"),
    (IO, "__GFP_IO"),
    (FS, "__GFP_FS"),
    (ZERO, "__GFP_ZERO"),
    (DIRECT_RECLAIM, "__GFP_DIRECT_RECLAIM"),
    (KSWAPD_RECLAIM, "__GFP_KSWAPD_RECLAIM"),
    (WRITE, "__GFP_WRITE"),
    (NOWARN, "__GFP_NOWARN"),
    (RETRY_MAYFAIL, "__GFP_RETRY_MAYFAIL"),
    (NOFAIL, "__GFP_NOFAIL"),
    (NORETRY, "__GFP_NORETRY"),
    (MEMALLOC, "__GFP_MEMALLOC"),
    (COMP, "__GFP_COMP"),
    (NOMEMALLOC, "__GFP_NOMEMALLOC"),
    (HARDWALL, "__GFP_HARDWALL"),
    (THISNODE, "__GFP_THISNODE"),
    (ACCOUNT, "__GFP_ACCOUNT"),
    (ZEROTAGS, "__GFP_ZEROTAGS"),
    (SKIP_ZERO, "__GFP_SKIP_ZERO"),
    (SKIP_KASAN, "__GFP_SKIP_KASAN"),
    (NO_OBJ_EXT, "__GFP_NO_OBJ_EXT"),
];

/// The flag names of `flags`, `|`-separated.
pub fn gfp_flags_text(flags: u64) -> String {
    if flags == 0 {
        return "0".into();
    }
    let mut parts: Vec<String> = Vec::new();
    let mut left = flags;
    for &(mask, name) in NAMES {
        if left & mask == mask {
            parts.push(name.into());
            left &= !mask;
        }
    }
    if left != 0 {
        parts.push(format!("{left:#x}"));
    }
    parts.join("|")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn gfp_names_compound_masks_first() {
        assert_eq!(gfp_flags_text(0), "0");
        assert_eq!(gfp_flags_text(0x1), "GFP_DMA");
        assert_eq!(gfp_flags_text(KERNEL), "GFP_KERNEL");
        assert_eq!(gfp_flags_text(KERNEL | ACCOUNT), "GFP_KERNEL_ACCOUNT");
        assert_eq!(gfp_flags_text(ATOMIC | HIGHMEM), "GFP_ATOMIC|__GFP_HIGHMEM");
        assert_eq!(
            gfp_flags_text(IO | FS | DIRECT_RECLAIM),
            "__GFP_IO|__GFP_FS|__GFP_DIRECT_RECLAIM"
        );
    }

    #[test]
    fn gfp_unnamed_bits_print_as_hex() {
        assert_eq!(gfp_flags_text(IO | bit(40)), "__GFP_IO|0x10000000000");
        assert_eq!(gfp_flags_text(bit(9)), "0x200");
    }
}
