//! The compiled script's shape (pure: the mock kernel, no BPF): attach kinds per probe, the
//! map table the runtime creates, the event table that gives record ids their meaning, the
//! arming guard on every probe but BEGIN/END, and errors that point at the construct.

use strobe::compile::compile;
use strobe::diag::SourceFile;
use strobe::kernel::info::MockKernel;
use strobe::plan::{CompiledScript, MapRole, MapValueSpec, PrintSpec, ProbeKind, Sampling};
use strobe::runtime::format::agg::AggKind;
use strobe::runtime::format::decode::FieldType;
use strobe::sema::CheckOptions;
use strobe::sys::MapType;
use strobe::template::{RelocKind, ARM_MAP_NAME};

fn compiled(text: &str) -> CompiledScript {
    let src = SourceFile::new("t.bt", text);
    let out = compile(&src, &MockKernel::fixture(), &CheckOptions::default());
    let s = out
        .script
        .unwrap_or_else(|| panic!("{text}: {:?}", out.diagnostics));
    s.validate().expect("valid plan");
    s
}

fn error_of(text: &str) -> String {
    let src = SourceFile::new("t.bt", text);
    let out = compile(&src, &MockKernel::fixture(), &CheckOptions::default());
    assert!(out.script.is_none(), "{text} compiled");
    out.diagnostics
        .iter()
        .find(|d| d.is_error())
        .map(|d| d.render(&src))
        .expect("an error")
}

#[test]
fn timers_become_interval_and_profile_kinds() {
    let s = compiled("interval:ms:250 { exit(); } profile:hz:99 { @ = count(); } interval:s:2 { }");
    assert!(matches!(
        s.probes[0].kind,
        ProbeKind::Interval {
            period_ns: 250_000_000
        }
    ));
    assert!(matches!(
        s.probes[1].kind,
        ProbeKind::Profile {
            sampling: Sampling::Frequency(99)
        }
    ));
    assert!(matches!(
        s.probes[2].kind,
        ProbeKind::Interval {
            period_ns: 2_000_000_000
        }
    ));
}

#[test]
fn every_probe_but_begin_and_end_is_armed() {
    let s = compiled("BEGIN { @a = 1; } interval:ms:10 { @a = 2; } END { @a = 3; }");
    let guarded = |i: usize| {
        let t = &s.probes[i].template;
        t.relocs.iter().any(
            |r| matches!(r.kind, RelocKind::MapValue { map, .. } if t.maps[map] == ARM_MAP_NAME),
        )
    };
    assert!(!guarded(0), "BEGIN runs by test run before arming");
    assert!(guarded(1));
    assert!(!guarded(2), "END runs after disarming");
}

#[test]
fn aggregations_are_per_cpu_maps_with_agg_layouts() {
    let s = compiled("BEGIN { @c[comm] = count(); @h = hist(1); @m = max(2); @v[1] = \"s\"; }");
    let map = |n: &str| s.maps.iter().find(|m| m.name == n).expect(n);
    let c = map("@c");
    assert_eq!(c.map_type, MapType::PercpuHash);
    assert_eq!((c.key_size, c.value_size), (16, 8));
    assert_eq!(
        c.role,
        MapRole::Script {
            key: vec![FieldType::Str { size: 16 }],
            value: MapValueSpec::Agg(AggKind::Count)
        }
    );
    let h = map("@h");
    assert_eq!(
        (h.map_type, h.key_size),
        (MapType::PercpuArray, 4),
        "a keyless histogram is a per-CPU array indexed by bucket"
    );
    assert_eq!(map("@m").value_size, 16, "max keeps [value, is_set]");
    let v = map("@v");
    assert_eq!(v.map_type, MapType::Hash);
    let MapRole::Script {
        value: MapValueSpec::Plain(FieldType::Str { size }),
        ..
    } = v.role
    else {
        panic!("{:?}", v.role)
    };
    assert!(
        v.value_size as usize >= size,
        "string values fit their slot"
    );
    for role in [MapRole::RingBuf, MapRole::LostCounter, MapRole::DropCounter] {
        assert!(s.map_with_role(&role).is_some(), "{role:?}");
    }
}

#[test]
fn event_table_lists_formats_in_program_order() {
    let s = compiled(
        "BEGIN { printf(\"a %d\\n\", 1); printf(\"b %s\\n\", comm); clear(@x); print(@x); @x[1] = 2; }",
    );
    assert_eq!(s.events.printf.len(), 2);
    assert_eq!(s.events.printf[1].args, vec![FieldType::Str { size: 16 }]);
    let x = s.maps.iter().position(|m| m.name == "@x").unwrap();
    assert_eq!(s.events.clear, vec![x]);
    assert!(matches!(s.events.print[0], PrintSpec::Map { map, .. } if map == x));
}

#[test]
fn fentry_templates_use_argument_slot_relocations() {
    let s = compiled("fentry:vfs_read { @[comm] = sum(args.count); }");
    let t = &s.probes[0].template;
    assert_eq!(t.params, vec!["count".to_string()]);
    assert!(t
        .relocs
        .iter()
        .any(|r| matches!(r.kind, RelocKind::ArgSlot { .. })));
    match &s.probes[0].kind {
        ProbeKind::Fentry { targets, fexit, .. } => {
            assert!(!fexit);
            assert_eq!(targets.len(), 1);
            assert_eq!(targets[0].arg_slots.len(), 1);
        }
        k => panic!("{k:?}"),
    }
}

#[test]
fn elapsed_gets_a_start_time_written_by_begin() {
    let s = compiled("interval:ms:10 { printf(\"%d\\n\", elapsed); }");
    assert!(s.maps.iter().any(|m| m.name == "elapsed_start"));
    assert!(matches!(s.probes.last().unwrap().kind, ProbeKind::Begin));
}

#[test]
fn unsupported_constructs_point_at_the_script() {
    let e = error_of("BEGIN {\n  @h = hist(1);\n  for ($kv : @h) { }\n}");
    assert!(
        e.starts_with("t.bt:3:14-")
            && e.contains(": ERROR: cannot iterate over the histogram map @h"),
        "{e}"
    );
    assert!(e.contains("\n             ~~\n"), "{e}");
}

#[test]
fn loop_callbacks_are_linked_subprograms_of_one_template() {
    let s = compiled(
        "BEGIN { @m[1] = 1; $t = 0; for ($kv : @m) { for ($i : 0..$kv.1) { $t += $i; } } \
         printf(\"%d %d\\n\", $t, len(@m)); }",
    );
    let t = &s.probes[0].template;
    // Two loop callbacks and the one `len` walks the map with.
    assert_eq!(t.funcs.len(), 3, "{:?}", t.funcs);
    assert!(t
        .relocs
        .iter()
        .all(|r| !matches!(r.kind, RelocKind::Subprog { .. })));
    // Every callback reference (ld_imm64 with BPF_PSEUDO_FUNC) points at a subprogram start,
    // and each subprogram ends with `exit`, so no code falls into the next one.
    let mut refs = 0;
    for (i, insn) in t.insns.iter().enumerate() {
        if insn.code == 0x18 && insn.src() == 4 {
            refs += 1;
            let to = (i as i64 + insn.imm as i64 + 1) as usize;
            assert!(
                t.funcs.contains(&to),
                "insn {i} calls {to}, not a subprogram"
            );
        }
    }
    assert_eq!(refs, 3);
    for &f in &t.funcs {
        assert_eq!(
            t.insns[f - 1].code,
            0x95,
            "no exit before subprogram at {f}"
        );
    }
    assert!(strobe::template::funcs::func_btf(t).is_some());
}

#[test]
fn map_keys_past_512_bytes_compile_as_current_bpftrace_allows() {
    let s = compiled("config = { max_strlen = 300 } BEGIN { @k[str(0), str(0)] = count(); }");
    let k = s.maps.iter().find(|m| m.name == "@k").expect("@k");
    assert_eq!(k.key_size, 600);
}

#[test]
fn stacks_are_stack_ids_in_one_stack_trace_map_per_kind_and_depth() {
    let s = compiled(
        "profile:hz:99 { @[kstack] = count(); @u[ustack, kstack(3)] = count(); @k[kstack] = 1; }",
    );
    let stack_maps: Vec<_> = s
        .maps
        .iter()
        .filter(|m| m.map_type == MapType::StackTrace)
        .map(|m| (m.name.as_str(), m.key_size, m.value_size))
        .collect();
    assert_eq!(
        stack_maps,
        [
            ("stack_k3", 4, 24),
            ("stack_k127", 4, 1016),
            ("stack_u127", 4, 1016)
        ]
    );
    // Keys: an 8-byte id for kstack; pid, probe and id (16 bytes) for ustack.
    let key_size = |name: &str| s.maps.iter().find(|m| m.name == name).unwrap().key_size;
    assert_eq!(key_size("@"), 8);
    assert_eq!(key_size("@u"), 24);
}

#[test]
fn stacks_of_different_depths_cannot_share_a_map_slot() {
    // Each depth has its own stack-trace map, so an id means nothing in another's slot.
    let e = error_of("BEGIN { @[kstack(3)] = count(); @[kstack(5)] = count(); }");
    assert!(e.contains("Argument mismatch"), "{e}");
    compiled("BEGIN { @[kstack(3)] = count(); @[kstack(3)] = count(); }");
}

#[test]
fn recursive_fns_are_refused_at_the_call() {
    let e = error_of(
        "fn f($n: int64): int64 { if ($n > 0) { return f($n - 1) + f($n - 2); } return 1; }\n\
         BEGIN { @ = f(3); }",
    );
    assert!(
        e.starts_with("t.bt:1:47-") && e.contains(": ERROR: calling 'f' from itself"),
        "{e}"
    );
}

#[test]
fn macros_and_fns_inline_without_subprograms() {
    let s = compiled(
        "macro twice(x) { x + x } fn clamp($v: int64, $hi: int64): int64 { \
         if ($v > $hi) { return $hi; } return $v; } BEGIN { @r = clamp(twice(cpu), 3); }",
    );
    assert!(s.probes[0].template.funcs.is_empty());
}

#[test]
fn usdt_sites_become_usdt_kinds_with_arguments_read_from_their_registers() {
    let mut k = MockKernel::fixture();
    let second = strobe::kernel::info::UsdtNote {
        provider: "libc".into(),
        name: "setjmp".into(),
        args: "8@%rax -4@-8(%rbp)".into(),
        pc: 0x2000,
        base: 0,
        semaphore: 0,
    };
    k.binaries
        .get_mut("/usr/lib/libc.so.6")
        .unwrap()
        .2
        .push(second);
    let src = SourceFile::new(
        "t.bt",
        "usdt:/usr/lib/libc.so.6:libc:setjmp { @[arg1] = count(); }",
    );
    let s = compile(&src, &k, &CheckOptions::default())
        .script
        .expect("compiles");
    // One program per site: each reads its own site's argument description.
    assert_eq!(s.probes.len(), 2);
    let pcs: Vec<u64> = s
        .probes
        .iter()
        .map(|p| match &p.kind {
            ProbeKind::Usdt { note, .. } => note.pc,
            k => panic!("{k:?}"),
        })
        .collect();
    assert_eq!(pcs, [0x1000, 0x2000]);
    let calls = |i: usize| {
        s.probes[i]
            .template
            .insns
            .iter()
            .filter(|x| x.code == 0x85)
            .count()
    };
    // The second site's arg1 is in user memory: one more helper call (probe_read_user).
    assert_eq!(calls(1), calls(0) + 1);
    assert!(
        error_of("usdt:/usr/lib/libc.so.6:libc:setjmp { @ = arg3; }")
            .contains("this USDT probe has 3 arguments")
    );
}

#[test]
fn watchpoints_become_breakpoint_kinds_with_the_mode_bits() {
    let s = compiled(
        "watchpoint:0x1000:8:rw { @ = count(); } asyncwatchpoint:4096:4:w { } watchpoint:0x2000:8:x { }",
    );
    let kinds: Vec<(u64, u64, u32)> = s
        .probes
        .iter()
        .map(|p| match p.kind {
            ProbeKind::Watchpoint {
                address,
                len,
                bp_type,
            } => (address, len, bp_type),
            ref k => panic!("{k:?}"),
        })
        .collect();
    // HW_BREAKPOINT_R = 1, _W = 2, _X = 4.
    assert_eq!(kinds, [(0x1000, 8, 3), (4096, 4, 2), (0x2000, 8, 4)]);
}

/// `@m[a, b]`, `@m[(a, b)]` and `@m[$t]` (a tuple variable) are one key: the same map with the
/// same key layout (integers widened to 8 bytes each, not the tuple's packed layout), and a
/// tuple literal is lowered to exactly the flat form's instructions.
#[test]
fn tuple_keys_have_the_multi_value_key_layout() {
    let flat = compiled("BEGIN { @m[(uint32)1, \"ab\"] = 2; @n = @m[(uint32)1, \"ab\"]; }");
    let tuple = compiled("BEGIN { @m[((uint32)1, \"ab\")] = 2; @n = @m[((uint32)1, \"ab\")]; }");
    let var = compiled("BEGIN { $t = ((uint32)1, \"ab\"); @m[$t] = 2; @n = @m[$t]; }");
    let m = |s: &CompiledScript| s.maps.iter().find(|m| m.name == "@m").cloned().unwrap();
    let want_key = vec![
        FieldType::Int {
            bytes: 8,
            signed: false,
        },
        FieldType::Str { size: 3 },
    ];
    match &m(&flat).role {
        MapRole::Script { key, .. } => assert_eq!(key, &want_key),
        r => panic!("{r:?}"),
    }
    assert_eq!(m(&flat), m(&tuple));
    assert_eq!(m(&flat), m(&var));
    assert_eq!(m(&flat).key_size, 16);
    assert_eq!(
        flat.probes[0].template.insns, tuple.probes[0].template.insns,
        "a tuple literal key is lowered like the flat form"
    );
}
