use super::*;

fn reg(off: i32) -> UsdtLoc {
    UsdtLoc::Reg {
        pt_regs_offset: off,
    }
}

#[test]
fn register_operands_at_every_width_map_to_pt_regs() {
    let cases = [
        ("-4@%eax", 4, true, reg(80)),
        ("8@%rdi", 8, false, reg(112)),
        ("1@%sil", 1, false, reg(104)),
        ("-2@%r9w", 2, true, reg(64)),
        ("4@%r15d", 4, false, reg(0)),
        ("8@%r12", 8, false, reg(24)),
        ("%rdi", 8, false, reg(112)),
    ];
    for (s, size, signed, loc) in cases {
        assert_eq!(parse_arg(s), Ok(UsdtArg { size, signed, loc }), "{s}");
    }
}

#[test]
fn memory_and_constant_operands_parse_with_their_displacement() {
    assert_eq!(
        parse_arg("8@-8(%rbp)").unwrap().loc,
        UsdtLoc::Deref {
            pt_regs_offset: 32,
            disp: -8
        }
    );
    assert_eq!(
        parse_arg("-4@(%rsp)").unwrap().loc,
        UsdtLoc::Deref {
            pt_regs_offset: 152,
            disp: 0
        }
    );
    assert_eq!(
        parse_arg("4@0x10(%r8)").unwrap().loc,
        UsdtLoc::Deref {
            pt_regs_offset: 72,
            disp: 16
        }
    );
    assert_eq!(parse_arg("-4@$-7").unwrap().loc, UsdtLoc::Const(-7));
    assert_eq!(parse_arg("8@$0x20").unwrap().loc, UsdtLoc::Const(32));
}

#[test]
fn operands_strobe_cannot_read_are_errors_naming_them() {
    for s in [
        "8@(%rax,%rbx,8)",
        "8@sym(%rip)",
        "3@%rax",
        "8@%ah",
        "8@%xmm0",
        "8@$sym",
        "x@%rax",
        "8@-8(%rbp",
        "8@foo",
    ] {
        let e = parse_arg(s).unwrap_err();
        assert!(e.to_string().contains(s), "{s}: {e}");
    }
    let all = parse_args("-4@%eax  8@(%rax,%rbx,8) 8@%rsi");
    assert_eq!(all.len(), 3);
    assert!(all[0].is_ok() && all[1].is_err() && all[2].is_ok());
}

#[test]
fn own_test_binary_sites_map_into_a_loadable_segment() {
    // This unit-test binary has no notes; a made-up note at `main`'s address must land in
    // the text segment, and one at an impossible address must be an error.
    let exe = std::env::current_exe().unwrap();
    let bytes = std::fs::read(&exe).unwrap();
    let elf = goblin::elf::Elf::parse(&bytes).unwrap();
    let main = elf
        .syms
        .iter()
        .find(|s| elf.strtab.get_at(s.st_name) == Some("main"))
        .map(|s| s.st_value)
        .unwrap();
    let note = |pc| UsdtNote {
        provider: "p".into(),
        name: "n".into(),
        args: String::new(),
        pc,
        base: 0,
        semaphore: 0,
    };
    let site = locate(&exe, &note(main)).unwrap();
    assert_eq!(site.semaphore_offset, None);
    assert!(site.offset > 0 && site.offset < bytes.len() as u64);
    assert!(locate(&exe, &note(u64::MAX - 4)).is_err());
}
