//! The assembler reads the spellings LLVM, llvm-objdump and the kernel verifier log use.
//! Expected bytes are LLVM's (clang -target bpfel -mcpu=v4, checked with llvm-objdump).

use strobe::asm::insn::insns_to_bytes;
use strobe::asm::{assemble_insns, Insn};

fn hex(text: &str) -> String {
    let insns = assemble_insns(text).unwrap_or_else(|e| panic!("{e}"));
    insns_to_bytes(&insns)
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect::<Vec<_>>()
        .join(" ")
}

#[test]
fn llvm_syntax_assembles_to_llvm_bytes() {
    let cases: &[(&str, &str)] = &[
        (
            "r1 = 0x5 ll",
            "18 01 00 00 05 00 00 00 00 00 00 00 00 00 00 00",
        ),
        (
            "r1 = -1 ll",
            "18 01 00 00 ff ff ff ff 00 00 00 00 ff ff ff ff",
        ),
        ("r0 += r1", "0f 10 00 00 00 00 00 00"),
        ("w2 = w3", "bc 32 00 00 00 00 00 00"),
        ("w2 += 7", "04 02 00 00 07 00 00 00"),
        ("r0 = (s8)r1", "bf 10 08 00 00 00 00 00"),
        ("w0 = (s16)w1", "bc 10 10 00 00 00 00 00"),
        ("r0 = bswap16 r0", "d7 00 00 00 10 00 00 00"),
        ("r0 = be16 r0", "dc 00 00 00 10 00 00 00"),
        ("r0 = le64 r0", "d4 00 00 00 40 00 00 00"),
        ("r0 s/= r1", "3f 10 01 00 00 00 00 00"),
        ("w0 s%= 3", "94 00 01 00 03 00 00 00"),
        ("r0 s>>= 3", "c7 00 00 00 03 00 00 00"),
        ("r0 = -r0", "87 00 00 00 00 00 00 00"),
        ("w0 = -w0", "84 00 00 00 00 00 00 00"),
        ("if r1 s> 5 goto +3", "65 01 03 00 05 00 00 00"),
        ("if w0 s<= -1 goto +0", "d6 00 00 00 ff ff ff ff"),
        ("gotol +5", "06 00 00 00 05 00 00 00"),
        ("*(u32 *)(r10 - 4) = r1", "63 1a fc ff 00 00 00 00"),
        ("*(u32 *)(r10 - 4) = w1", "63 1a fc ff 00 00 00 00"),
        ("*(u64 *)(r10 - 8) = 7", "7a 0a f8 ff 07 00 00 00"),
        ("*(u16 *)(r10 - 4) = 7", "6a 0a fc ff 07 00 00 00"),
        ("r1 = *(s8 *)(r2 + 8)", "91 21 08 00 00 00 00 00"),
        ("w1 = *(u8 *)(r2 + 8)", "71 21 08 00 00 00 00 00"),
        ("r0 = *(s32 *)(r1 - 0x8)", "81 10 f8 ff 00 00 00 00"),
        ("lock *(u64 *)(r1 + 0) += r2", "db 21 00 00 00 00 00 00"),
        ("lock *(u32 *)(r1 + 0) |= w2", "c3 21 00 00 40 00 00 00"),
        (
            "r0 = atomic_fetch_add((u64 *)(r1 + 0), r0)",
            "db 01 00 00 01 00 00 00",
        ),
        (
            "w0 = atomic_fetch_xor((u32 *)(r1 + 0), w0)",
            "c3 01 00 00 a1 00 00 00",
        ),
        ("r0 = xchg_64(r1 + 0, r0)", "db 01 00 00 e1 00 00 00"),
        ("w0 = xchg32_32(r1 + 0, w0)", "c3 01 00 00 e1 00 00 00"),
        ("r0 = cmpxchg_64(r1 + 0, r0, r2)", "db 21 00 00 f1 00 00 00"),
        (
            "w0 = cmpxchg32_32(r1 + 0, w0, w2)",
            "c3 21 00 00 f1 00 00 00",
        ),
        (
            "w0 = load_acquire((u32 *)(r1 + 0))",
            "c3 10 00 00 00 01 00 00",
        ),
        (
            "store_release((u8 *)(r1 + 0), w2)",
            "d3 21 00 00 10 01 00 00",
        ),
        ("call 1", "85 00 00 00 01 00 00 00"),
        ("call bpf_map_lookup_elem", "85 00 00 00 01 00 00 00"),
        ("exit", "95 00 00 00 00 00 00 00"),
        ("r0 = *(u8 *)skb[5]", "30 00 00 00 05 00 00 00"),
        ("r0 = *(u16 *)skb[r1]", "48 10 00 00 00 00 00 00"),
        ("r0 = 4294967295", "b7 00 00 00 ff ff ff ff"),
        ("r0 = -2147483648", "b7 00 00 00 00 00 00 80"),
        ("if r0 == r1 goto +32767", "1d 10 ff 7f 00 00 00 00"),
        ("may_goto +3", "e5 00 03 00 00 00 00 00"),
        ("r1 = addr_space_cast(r2, 0, 1)", "bf 21 01 00 01 00 00 00"),
    ];
    for (text, want) in cases {
        assert_eq!(&hex(text), want, "{text}");
    }
}

#[test]
fn objdump_and_verifier_log_lines_assemble() {
    // llvm-objdump annotations after jump targets, and verifier-log prefixes and spellings.
    assert_eq!(hex("goto +3 <f+0x20>"), hex("goto +3"));
    assert_eq!(hex("0: (b7) r0 = 0"), hex("r0 = 0"));
    assert_eq!(hex("12: (07) r1 += -8"), hex("r1 += -8"));
    assert_eq!(
        hex("3: (18) r1 = 0xffff888100000000"),
        hex("r1 = 0xffff888100000000 ll")
    );
    assert_eq!(
        hex("(7b) *(u64 *)(r10 -8) = r1"),
        hex("*(u64 *)(r10 - 8) = r1")
    );
    assert_eq!(hex("5: (85) call bpf_map_lookup_elem#1"), hex("call 1"));
    assert_eq!(hex("(05) goto pc+3"), hex("goto +3"));
    assert_eq!(
        hex("(15) if r0 == 0x0 goto pc-2"),
        hex("if r0 == 0 goto -2")
    );
    assert_eq!(hex("(85) call pc+2"), hex("call pc+2"));
    assert_eq!(hex("; int x = 1;\nexit"), hex("exit"));
}

#[test]
fn labels_resolve_forward_and_backward() {
    let insns = assemble_insns(
        "start:\n  if r1 == 0 goto out  // forward\n  r1 -= 1\n  goto start\nout:\n  gotol out\n  exit\n",
    )
    .unwrap();
    assert_eq!(insns[0].off, 2);
    assert_eq!(insns[2].off, -3);
    assert_eq!(insns[3].imm, -1);
}

#[test]
fn local_calls_and_function_addresses_resolve_to_pc_relative() {
    let insns = assemble_insns(
        "main:\n  r1 = cb ll\n  call cb\n  call bpf_ktime_get_ns\n  exit\ncb:\n  r0 = 0\n  exit\n",
    )
    .unwrap();
    // ld_imm64 of a function: BPF_PSEUDO_FUNC (src 4), offset from the next instruction.
    assert_eq!((insns[0].src(), insns[0].imm), (4, 4));
    assert_eq!((insns[2].src(), insns[2].imm), (1, 2));
    assert_eq!(insns[3], Insn::call_helper(strobe::asm::Helper::KtimeGetNs));
}

#[test]
fn pseudo_loads_and_kfuncs_have_their_own_spelling() {
    assert_eq!(
        hex("r1 = map_fd(5) ll"),
        "18 11 00 00 05 00 00 00 00 00 00 00 00 00 00 00"
    );
    assert_eq!(
        hex("r2 = map_value(5, 16) ll"),
        "18 22 00 00 05 00 00 00 00 00 00 00 10 00 00 00"
    );
    assert_eq!(
        hex("r3 = btf_id(77, 0) ll"),
        "18 33 00 00 4d 00 00 00 00 00 00 00 00 00 00 00"
    );
    assert_eq!(
        hex("r1 = map_idx(1) ll"),
        "18 51 00 00 01 00 00 00 00 00 00 00 00 00 00 00"
    );
    assert_eq!(hex("call kfunc(1234)"), "85 20 00 00 d2 04 00 00");
    assert_eq!(hex("call kfunc(7, 2)"), "85 20 02 00 07 00 00 00");
    assert_eq!(hex(".insn 0xff, 0x12, -1, 7"), "ff 12 ff ff 07 00 00 00");
}

#[test]
fn verifier_log_atomic_spellings_assemble() {
    let same = |kernel: &str, llvm: &str| assert_eq!(hex(kernel), hex(llvm), "{kernel}");
    same(
        "(db) r2 = atomic64_fetch_add((u64 *)(r1 +0), r2)",
        "r2 = atomic_fetch_add((u64 *)(r1 + 0), r2)",
    );
    same(
        "(c3) r2 = atomic_fetch_or((u32 *)(r1 -8), r2)",
        "w2 = atomic_fetch_or((u32 *)(r1 - 8), w2)",
    );
    same(
        "r0 = atomic64_xchg((u64 *)(r1 +0), r0)",
        "r0 = xchg_64(r1 + 0, r0)",
    );
    same(
        "r0 = atomic_cmpxchg((u32 *)(r1 +4), r0, r3)",
        "w0 = cmpxchg32_32(r1 + 4, w0, w3)",
    );
    same(
        "r0 = atomic64_cmpxchg((u64 *)(r1 +0), r0, r2)",
        "r0 = cmpxchg_64(r1 + 0, r0, r2)",
    );
    same("lock *(u32 *)(r1 +0) += r2", "lock *(u32 *)(r1 + 0) += w2");
    same("r0 = *(u8 *)skb[r1 + 0]", "r0 = *(u8 *)skb[r1]");
}
