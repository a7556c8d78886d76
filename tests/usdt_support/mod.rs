//! USDT probes in this test binary: SystemTap's `.note.stapsdt` layout written with inline asm
//! (no `sys/sdt.h`, no C compiler), so the tests trace their own executable.
//!
//! Each probe site is a `nop` whose address, the `.stapsdt.base` anchor, an optional
//! semaphore and the argument description (`-4@%eax 8@%rdx …`) go into one ELF note (type 3,
//! owner `stapsdt`), as SystemTap's `sdt.h` documents. The argument strings come from the
//! asm operands' register names, so they are whatever the compiler allocated.

/// The note, the `.stapsdt.base` anchor (once per object) and the probe's `nop`.
/// `$sema` is `0` or `{sema}` (an asm `sym` operand naming a `u16` in `.probes`).
#[macro_export]
macro_rules! stapsdt_asm {
    ($provider:literal, $name:literal, $args:literal, $sema:literal) => {
        concat!(
            "990: nop\n",
            ".pushsection .note.stapsdt, \"\", \"note\"\n",
            ".balign 4\n",
            ".4byte 992f-991f, 994f-993f, 3\n",
            "991: .asciz \"stapsdt\"\n",
            "992: .balign 4\n",
            "993: .8byte 990b\n",
            ".8byte _.stapsdt.base\n",
            ".8byte ",
            $sema,
            "\n",
            ".asciz \"",
            $provider,
            "\"\n",
            ".asciz \"",
            $name,
            "\"\n",
            ".asciz \"",
            $args,
            "\"\n",
            "994: .balign 4\n",
            ".popsection\n",
            ".ifndef _.stapsdt.base\n",
            ".pushsection .stapsdt.base, \"aG\", \"progbits\", .stapsdt.base, comdat\n",
            ".weak _.stapsdt.base\n",
            ".hidden _.stapsdt.base\n",
            "_.stapsdt.base: .space 1\n",
            ".size _.stapsdt.base, 1\n",
            ".popsection\n",
            ".endif\n",
        )
    };
}

/// The semaphore of `strobe_test:guarded`: the kernel raises it while a probe is attached
/// (perf uprobe `ref_ctr_offset`), and the site fires only then, as `sdt.h`'s
/// `*_ENABLED()` macros do.
#[no_mangle]
#[link_section = ".probes"]
pub static mut strobe_test_guarded_semaphore: u16 = 0;

/// Written once per [`fire`]: the `watchpoint:` tests watch it.
#[no_mangle]
pub static strobe_test_watched: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Fires every probe of the fixture once with values derived from `i`:
/// - `strobe_test:args`: `-4@%eXX` = -5 - i (i32), `8@%rXX` = 1000 + i, `-4@$-7` (constant),
///   `-4@4(%rXX)` = -(i+1) read through memory, `1@%XXl` = 200 (u8), `-2@%XXw` = -300.
/// - `strobe_test:guarded` (semaphore): `8@%rXX` = i, only while the semaphore is non-zero.
/// - `other_provider:args`: `8@%rXX` = 42.
#[inline(never)]
pub fn fire(i: u64) {
    let a: i32 = -5 - i as i32;
    let b: u64 = 1000 + i;
    let mem: [i32; 2] = [0, -(i as i32) - 1];
    let p = mem.as_ptr();
    let c: u64 = 200;
    let d: i64 = -300;
    // SAFETY: only a `nop`; the note and anchor live in sections the program never reads.
    unsafe {
        std::arch::asm!(
            stapsdt_asm!("strobe_test", "args", "-4@{a:e} 8@{b} -4@$-7 -4@4({p}) 1@{c:l} -2@{d:x}", "0"),
            a = in(reg) a,
            b = in(reg) b,
            p = in(reg) p,
            c = in(reg) c,
            d = in(reg) d,
            options(att_syntax, nostack, preserves_flags, readonly)
        );
        std::arch::asm!(
            stapsdt_asm!("other_provider", "args", "8@{x}", "0"),
            x = in(reg) 42u64,
            options(att_syntax, nostack, preserves_flags, readonly)
        );
        if std::ptr::read_volatile(std::ptr::addr_of!(strobe_test_guarded_semaphore)) != 0 {
            std::arch::asm!(
                stapsdt_asm!("strobe_test", "guarded", "8@{x}", "{sema}"),
                x = in(reg) i,
                sema = sym strobe_test_guarded_semaphore,
                options(att_syntax, nostack, preserves_flags, readonly)
            );
        }
    }
    std::hint::black_box(&mem);
    strobe_test_watched.fetch_add(1, std::sync::atomic::Ordering::Relaxed);
}
