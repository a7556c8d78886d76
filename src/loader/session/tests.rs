use super::*;
use crate::asm::isa::Size;
use crate::template::{instantiate, AttachKind, TargetValues};

const KF: SessionKfuncs = SessionKfuncs {
    is_return: 1001,
    cookie: 1002,
};

/// An fexit body as the code generator shapes it: ctx kept in r6, `args.b` and `args.a`
/// (params 1 and 0), `retval`, stored to the body's frame, `func` (bpf_get_func_ip(ctx)).
fn fexit_template() -> Template {
    let mut t = Template::new(
        "t",
        AttachKind::Fexit,
        vec![
            Insn::mov64_reg(Reg::R6, Reg::R1),
            Insn::load(Size::Dw, Reg::R2, Reg::R6, 8),
            Insn::load(Size::Dw, Reg::R3, Reg::R6, 0),
            Insn::load(Size::Dw, Reg::R4, Reg::R6, 16),
            Insn::store_reg(Size::Dw, Reg::R10, -8, Reg::R2),
            Insn::store_reg(Size::Dw, Reg::R10, -16, Reg::R3),
            Insn::store_reg(Size::Dw, Reg::R10, -24, Reg::R4),
            Insn::mov64_reg(Reg::R1, Reg::R6),
            Insn::call_helper(Helper::GetFuncIp),
            Insn::mov64_imm(Reg::R0, 0),
            Insn::exit(),
        ],
    );
    t.param_index("a");
    t.param_index("b");
    t.add_reloc(1, Field::Off, RelocKind::ArgSlot { param: 1 });
    t.add_reloc(2, Field::Off, RelocKind::ArgSlot { param: 0 });
    t.add_reloc(3, Field::Off, RelocKind::RetSlot);
    t.stack_size = Some(20);
    t
}

#[test]
fn the_body_reads_arguments_from_slots_below_its_frame() {
    let t = fexit_template();
    let s = session_template(&t, KF).unwrap();
    let shift = s.insns.len() - t.insns.len();
    assert_eq!(s.insns[shift..].len(), t.insns.len());
    // Frame 20 → 24; two saved u64 below it: `a` at -40, `b` at -32.
    let b = &s.insns[shift..];
    assert_eq!((b[1].src(), b[1].off), (10, -32), "args.b");
    assert_eq!((b[2].src(), b[2].off), (10, -40), "args.a");
    assert_eq!(b[3], t.insns[3], "retval stays a ctx load");
    // `retval` keeps its relocation; the arguments' are on the entry half's ctx loads.
    assert!(s
        .relocs
        .contains(&Reloc::new(3 + shift, Field::Off, RelocKind::RetSlot)));
    let args: Vec<&Reloc> = s
        .relocs
        .iter()
        .filter(|r| matches!(r.kind, RelocKind::ArgSlot { .. }))
        .collect();
    assert_eq!(args.len(), 2);
    for r in args {
        assert!(r.insn < shift, "only the prologue reads pt_regs arguments");
        assert_eq!(s.insns[r.insn].src(), 6, "from the saved ctx");
    }
    assert_eq!(s.maps.last().map(String::as_str), Some(SAVED_MAP_NAME));
    assert_eq!(s.stack_size, Some(24 + 16 + 8));
    // Both kfuncs are called by BTF id.
    let kfuncs: Vec<i32> = s.insns[..shift]
        .iter()
        .filter(|i| *i == &Insn::call_kfunc(i.imm, 0))
        .map(|i| i.imm)
        .collect();
    assert_eq!(kfuncs, vec![1001, 1002, 1002]);
}

#[test]
fn prologue_jumps_stay_inside_the_prologue_or_reach_the_body() {
    let t = fexit_template();
    let s = session_template(&t, KF).unwrap();
    let shift = s.insns.len() - t.insns.len();
    use crate::asm::decode::{decode, Decoded};
    let mut i = 0;
    while i < shift {
        let d = decode(&s.insns, i).unwrap();
        let off = match d {
            Decoded::Ja { off, .. } => Some(i64::from(off)),
            Decoded::Jmp { off, .. } => Some(i64::from(off)),
            _ => None,
        };
        if let Some(off) = off {
            let to = i as i64 + 1 + off;
            assert!(
                to > i as i64 && to <= shift as i64,
                "insn {i} jumps to {to}"
            );
        }
        i += d.len();
    }
    // The return half falls into the body with ctx back in r1.
    assert_eq!(s.insns[shift - 3], Insn::ja(2));
    assert_eq!(s.insns[shift - 4], Insn::mov64_reg(Reg::R1, Reg::R6));
}

#[test]
fn refusals_name_what_is_missing() {
    let mut t = fexit_template();
    t.stack_size = None;
    assert!(session_template(&t, KF)
        .unwrap_err()
        .contains("frame size is unknown"));
    let mut t = fexit_template();
    t.stack_size = Some(500);
    assert!(session_template(&t, KF)
        .unwrap_err()
        .contains("no stack left"));
    let mut t = fexit_template();
    t.funcs = vec![2];
    assert!(session_template(&t, KF).unwrap_err().contains("callback"));
}

#[test]
fn saved_params_are_distinct_and_in_parameter_order() {
    let mut t = fexit_template();
    t.add_reloc(5, Field::Off, RelocKind::ArgSlot { param: 1 });
    assert_eq!(saved_params(&t), vec![0, 1]);
}

/// The verifier's view, where the running kernel has kprobe.session (loads work on this
/// project's host even though kprobes cannot attach there).
#[test]
fn session_program_passes_the_verifier_where_the_kernel_has_it() {
    use crate::kernel::info::KernelInfo;
    let host = crate::kernel::info::HostKernel::new();
    let Ok(btf) = host.btf(None) else {
        eprintln!("skipped: no vmlinux BTF");
        return;
    };
    let (Some(is_return), Some(cookie)) = (
        btf.find_func("bpf_session_is_return"),
        btf.find_func("bpf_session_cookie"),
    ) else {
        eprintln!("skipped: no session kfuncs in vmlinux BTF (kernel 6.10+)");
        return;
    };
    let kf = SessionKfuncs { is_return, cookie };
    let map = match create_saved_map(2, 0) {
        Ok(m) => m,
        Err(e) => {
            eprintln!("skipped: cannot create maps: {e}");
            return;
        }
    };
    let s = session_template(&fexit_template(), kf).unwrap();
    use std::os::fd::AsRawFd;
    let fds = [map.as_raw_fd()];
    // x86_64 pt_regs: di at 112, si at 104, ax at 80.
    let insns = instantiate(
        &s,
        &TargetValues {
            map_fds: &fds,
            arg_slots: &[112, 104],
            ret_slot: Some(80),
            ..Default::default()
        },
    )
    .unwrap();
    let mut o = crate::sys::ProgLoadOptions::new(crate::sys::ProgType::Kprobe, &insns);
    o.expected_attach_type = Some(crate::sys::AttachType::TraceKprobeSession);
    o.log_size = Some(1 << 20);
    match crate::sys::Prog::load(&o) {
        Ok(_) => {}
        Err(e) if e.errno() == crate::sys::Errno::EPERM && e.log.trim().is_empty() => {
            eprintln!("skipped: kprobe programs are refused here: {e}");
        }
        Err(e) => panic!("the session program was refused: {e}\n{}", e.log),
    }
}
