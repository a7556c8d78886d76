use super::*;
use crate::asm::isa::{AluOp, Size};
use crate::asm::{assemble_insns, Reg};
use crate::diag::Span;

fn int(size: u32) -> TypeClass {
    TypeClass::Int {
        size,
        signed: false,
    }
}

fn proto(name: &str, params: &[(&str, TypeClass)], ret: TypeClass) -> TargetProto {
    TargetProto {
        name: name.into(),
        params: params.iter().map(|(n, c)| (n.to_string(), *c)).collect(),
        ret,
    }
}

/// `r2 = *(u64 *)(r1 + <count>)`, `r3 = <index>`, `r1 = <map> ll`, `r4 = *(u64*)(r1 + <ret>)`.
fn sample() -> Template {
    let mut t = Template::new("t", AttachKind::Fexit, Vec::new());
    let count = t.param_index("count");
    let map = t.map_index("counts");
    t.insns.push(Insn::load(Size::Dw, Reg::R2, Reg::R1, 0));
    t.insns.push(Insn::mov64_imm(Reg::R3, 0));
    t.insns.extend(Insn::ld_map_fd(Reg::R1, 0));
    t.insns.push(Insn::load(Size::Dw, Reg::R4, Reg::R1, 0));
    t.insns.push(Insn::alu64_imm(AluOp::Add, Reg::R4, 7));
    t.insns.push(Insn::exit());
    t.relocs = vec![
        Reloc::new(0, Field::Off, RelocKind::ArgSlot { param: count }),
        Reloc::new(1, Field::Imm, RelocKind::TargetIndex),
        Reloc::map_fd(2, map),
        Reloc::new(4, Field::Off, RelocKind::RetSlot),
    ];
    t
}

#[test]
fn instantiate_patches_each_site_with_the_targets_value() {
    let t = sample();
    let v = TargetValues {
        index: 41,
        map_fds: &[9],
        arg_slots: &[16],
        ret_slot: Some(24),
        ..Default::default()
    };
    let c = instantiate(&t, &v).unwrap();
    assert_eq!(c[0].off, 16);
    assert_eq!(c[1].imm, 41);
    assert_eq!(c[2].imm, 9);
    assert_eq!(c[4].off, 24);
    assert_eq!(c[5], t.insns[5]);
    let text = crate::asm::disassemble(&c);
    assert!(text.contains("r2 = *(u64 *)(r1 + 16)"), "{text}");
    assert!(text.contains("r3 = 41"), "{text}");
}

#[test]
fn instantiate_fails_when_a_value_is_missing() {
    let t = sample();
    let v = TargetValues {
        index: 1,
        map_fds: &[9],
        arg_slots: &[16],
        ret_slot: None,
        ..Default::default()
    };
    assert_eq!(
        instantiate(&t, &v),
        Err(InstantiateError::MissingValue {
            insn: 4,
            kind: RelocKind::RetSlot
        })
    );
    let no_map = TargetValues {
        arg_slots: &[16],
        ret_slot: Some(0),
        ..Default::default()
    };
    assert!(matches!(
        instantiate(&t, &no_map),
        Err(InstantiateError::MissingValue { insn: 2, .. })
    ));
}

#[test]
fn instantiate_rejects_values_that_do_not_fit_the_field() {
    let t = sample();
    let v = TargetValues {
        map_fds: &[9],
        arg_slots: &[1 << 20],
        ret_slot: Some(0),
        ..Default::default()
    };
    assert_eq!(
        instantiate(&t, &v),
        Err(InstantiateError::OutOfRange {
            insn: 0,
            field: Field::Off,
            value: 1 << 20
        })
    );
}

#[test]
fn instantiate_rejects_a_map_reloc_on_a_non_ld_imm64() {
    let mut t = sample();
    t.relocs.push(Reloc::map_fd(1, 0));
    let v = TargetValues {
        map_fds: &[9],
        arg_slots: &[0],
        ret_slot: Some(0),
        ..Default::default()
    };
    assert!(matches!(
        instantiate(&t, &v),
        Err(InstantiateError::BadSite { insn: 1, .. })
    ));
    let mut past_end = sample();
    past_end
        .relocs
        .push(Reloc::new(99, Field::Imm, RelocKind::TargetIndex));
    assert!(matches!(
        instantiate(&past_end, &v),
        Err(InstantiateError::BadSite { insn: 99, .. })
    ));
}

#[test]
fn imm64_field_spans_both_halves_of_ld_imm64() {
    let mut t = Template::new("t", AttachKind::RawTracepoint, Vec::new());
    t.insns.extend(Insn::ld_imm64(Reg::R1, 0));
    t.insns.push(Insn::exit());
    t.consts.push("cookie".into());
    t.relocs
        .push(Reloc::new(0, Field::Imm64, RelocKind::Const { id: 0 }));
    let c = instantiate(
        &t,
        &TargetValues {
            consts: &[0x1122_3344_5566_7788],
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(c[0].imm as u32, 0x5566_7788);
    assert_eq!(c[1].imm as u32, 0x1122_3344);
}

#[test]
fn arming_guard_shifts_relocs_and_source_map_and_keeps_the_body() {
    let mut t = sample();
    t.source_map.add(1, Span::new(10, 20));
    let g = t.with_arming_guard();
    assert_eq!(g.maps, vec!["counts".to_string(), ARM_MAP_NAME.to_string()]);
    assert_eq!(&g.insns[guard::GUARD_LEN..], &t.insns[..]);
    assert_eq!(g.relocs[0].kind, RelocKind::MapValue { map: 1, off: 0 });
    assert_eq!(g.relocs[1].insn, t.relocs[0].insn + guard::GUARD_LEN);
    assert_eq!(
        g.source_map.lookup(guard::GUARD_LEN + 1),
        Some(Span::new(10, 20))
    );
    assert_eq!(g.source_map.lookup(0), None);
    let text = crate::asm::disassemble(&g.insns[..guard::GUARD_LEN]);
    assert!(text.contains("map_value"), "{text}");
}

#[test]
fn arming_guard_branches_to_a_programs_own_return_0_tail() {
    let mut t = sample();
    t.insns.pop();
    t.insns.push(Insn::mov64_imm(Reg::R0, 0));
    t.insns.push(Insn::exit());
    let g = t.with_arming_guard();
    assert_eq!(g.insns.len(), t.insns.len() + guard::SHORT_GUARD_LEN);
    assert_eq!(&g.insns[guard::SHORT_GUARD_LEN..], &t.insns[..]);
    let jump = g.insns[guard::SHORT_GUARD_LEN - 1];
    let target = (guard::SHORT_GUARD_LEN as i64 + jump.off as i64) as usize;
    assert_eq!(target, g.insns.len() - 2, "lands on `r0 = 0`");
    assert_eq!(g.relocs[1].insn, t.relocs[0].insn + guard::SHORT_GUARD_LEN);
    // With a subprogram after it, the main program's tail is the one before the subprogram.
    let mut t2 = t.clone();
    let main_len = t2.insns.len();
    t2.insns.push(Insn::mov64_imm(Reg::R0, 1));
    t2.insns.push(Insn::exit());
    t2.funcs = vec![main_len];
    let g2 = t2.with_arming_guard();
    assert_eq!(g2.insns[guard::SHORT_GUARD_LEN - 1], jump);
    assert_eq!(g2.funcs, vec![main_len + guard::SHORT_GUARD_LEN]);
}

#[test]
fn source_map_returns_the_nearest_preceding_entry() {
    let mut m = SourceMap::default();
    m.add(5, Span::new(50, 60));
    m.add(0, Span::new(0, 4));
    m.add(5, Span::new(51, 61));
    assert_eq!(m.lookup(0), Some(Span::new(0, 4)));
    assert_eq!(m.lookup(4), Some(Span::new(0, 4)));
    assert_eq!(m.lookup(9), Some(Span::new(51, 61)));
}

#[test]
fn grouping_shares_a_template_across_positions_and_skips_targets_lacking_a_fact() {
    let facts = vec![
        Fact::Param {
            name: "count".into(),
            requirement: ParamRequirement::Integer { max_size: 8 },
        },
        Fact::ReturnsScalar,
    ];
    let ptr = TypeClass::Pointer;
    let targets = vec![
        proto(
            "vfs_read",
            &[("file", ptr), ("buf", ptr), ("count", int(8))],
            int(8),
        ),
        proto(
            "vfs_write",
            &[("file", ptr), ("count", int(8)), ("pos", ptr)],
            int(8),
        ),
        proto("vfs_fsync", &[("file", ptr), ("datasync", int(4))], int(4)),
        proto("odd", &[("count", int(4))], int(8)),
        proto("weird", &[("count", int(8))], TypeClass::Union { size: 16 }),
    ];
    let g = group_targets(&facts, &targets);
    assert_eq!(g.groups.len(), 2);
    assert_eq!(g.groups[0].targets, vec![0, 1]);
    assert_eq!(g.groups[1].targets, vec![3]);
    assert_eq!(g.skipped.len(), 2);
    assert_eq!(
        g.skipped[0].1.to_string(),
        "vfs_fsync has no parameter `count`"
    );
    assert_eq!(
        g.skipped[1].1.to_string(),
        "weird returns a 16-byte union, which fexit cannot read as `retval`"
    );
    assert_eq!(arg_slots(&["count".into()], &targets[0]), Ok(vec![16]));
    assert_eq!(arg_slots(&["count".into()], &targets[1]), Ok(vec![8]));
    assert_eq!(ret_slot(&targets[1]), 24);
}

#[test]
fn grouping_reports_param_type_mismatch_with_both_types() {
    let facts = vec![Fact::Param {
        name: "buf".into(),
        requirement: ParamRequirement::Integer { max_size: 8 },
    }];
    let g = group_targets(
        &facts,
        &[proto("f", &[("buf", TypeClass::Pointer)], int(8))],
    );
    assert_eq!(
        g.skipped[0].1.to_string(),
        "parameter `buf` of f is a pointer, not an integer of at most 8 bytes"
    );
    let idx = group_targets(&[Fact::ParamIndex { index: 2 }], &[proto("g", &[], int(8))]);
    assert_eq!(idx.skipped[0].1.to_string(), "g has 0 parameters, not 3");
}

#[test]
fn from_section_turns_map_references_into_map_relocations() {
    // As clang leaves it: src_reg 0, the relocation says which map.
    let insns = assemble_insns("r1 = 0 ll\nr2 = 0\nexit\n").unwrap();
    let section = crate::asm::Section {
        name: "fentry/vfs_read".into(),
        insns,
        symbols: vec![],
        relocs: vec![crate::asm::Reloc {
            insn: 0,
            symbol: "counts".into(),
        }],
    };
    let t =
        Template::from_section(&section, &["counts".into()], AttachKind::Fentry, "GPL").unwrap();
    assert_eq!(t.name, "vfs_read");
    assert_eq!(t.relocs, vec![Reloc::map_fd(0, 0)]);
    assert_eq!(t.insns[0].src(), 1, "BPF_PSEUDO_MAP_FD set");
    let c = instantiate(
        &t,
        &TargetValues {
            map_fds: &[7],
            ..Default::default()
        },
    )
    .unwrap();
    assert_eq!(c[0].imm, 7);
    let unknown = Template::from_section(&section, &[], AttachKind::Fentry, "GPL");
    assert_eq!(unknown, Err("counts".to_string()));
}

mod props {
    use super::*;
    use proptest::prelude::*;

    /// A template of `n` filler instructions with relocation sites of every kind at random
    /// positions; each ld_imm64 takes two slots.
    fn arb_template() -> impl Strategy<Value = (Template, Vec<i32>, Vec<i64>, i64, u32)> {
        (
            proptest::collection::vec(0u8..6, 1..40),
            proptest::collection::vec(any::<i32>(), 1..4),
            proptest::collection::vec(-4096i64..4096, 1..4),
            0i64..512,
            any::<u32>(),
            any::<u64>(),
        )
            .prop_map(|(kinds, fds, slots, ret, index, filler)| {
                let mut t = Template::new("p", AttachKind::Fexit, Vec::new());
                for n in 0..fds.len() {
                    t.map_index(&format!("m{n}"));
                }
                for n in 0..slots.len() {
                    t.param_index(&format!("p{n}"));
                }
                for (k, kind) in kinds.iter().enumerate() {
                    let at = t.insns.len();
                    let imm = (filler >> (k % 32)) as i32;
                    match kind {
                        0 => t.insns.push(Insn::mov64_imm(Reg::R0, imm)),
                        1 => {
                            t.insns.extend(Insn::ld_map_fd(Reg::R1, imm));
                            t.relocs.push(Reloc::map_fd(at, k % fds.len()));
                        }
                        2 => {
                            t.insns.push(Insn::mov64_imm(Reg::R2, imm));
                            t.relocs
                                .push(Reloc::new(at, Field::Imm, RelocKind::TargetIndex));
                        }
                        3 => {
                            t.insns
                                .push(Insn::load(Size::Dw, Reg::R3, Reg::R1, imm as i16));
                            let param = k % slots.len();
                            t.relocs
                                .push(Reloc::new(at, Field::Off, RelocKind::ArgSlot { param }));
                        }
                        4 => {
                            t.insns.push(Insn::load(Size::Dw, Reg::R4, Reg::R1, 0));
                            t.relocs
                                .push(Reloc::new(at, Field::Off, RelocKind::RetSlot));
                        }
                        _ => t.insns.extend(Insn::ld_imm64(Reg::R5, filler)),
                    }
                }
                t.insns.push(Insn::exit());
                (t, fds, slots, ret, index)
            })
    }

    proptest! {
        #[test]
        fn instantiate_writes_every_site_and_nothing_else(
            (t, fds, slots, ret, index) in arb_template()
        ) {
            let v = TargetValues {
                index,
                map_fds: &fds,
                arg_slots: &slots,
                ret_slot: Some(ret),
                ..Default::default()
            };
            let c = instantiate(&t, &v).unwrap();
            prop_assert_eq!(c.len(), t.insns.len());
            let mut touched = vec![false; c.len()];
            for r in &t.relocs {
                touched[r.insn] = true;
                let (got, want) = match (r.field, r.kind) {
                    (Field::Imm, RelocKind::MapFd { map }) => (c[r.insn].imm as i64, fds[map] as i64),
                    (Field::Imm, RelocKind::TargetIndex) => (c[r.insn].imm as i64, index as i32 as i64),
                    (Field::Off, RelocKind::ArgSlot { param }) => (c[r.insn].off as i64, slots[param]),
                    (Field::Off, RelocKind::RetSlot) => (c[r.insn].off as i64, ret),
                    other => panic!("internal error: unexpected reloc {other:?}"),
                };
                prop_assert_eq!(got, want);
                // The rest of the site's instruction is untouched.
                let (mut a, mut b) = (c[r.insn], t.insns[r.insn]);
                match r.field {
                    Field::Imm => { a.imm = 0; b.imm = 0; }
                    Field::Off => { a.off = 0; b.off = 0; }
                    Field::Imm64 => unreachable!(),
                }
                prop_assert_eq!(a, b);
                // Decoding the clone still works: patched sites are valid instructions.
                prop_assert!(crate::asm::decode(&c, r.insn).is_ok());
            }
            for (i, was) in touched.iter().enumerate() {
                if !was {
                    prop_assert_eq!(c[i], t.insns[i]);
                }
            }
        }
    }
}
