//! The host kernel's BTF (`/sys/kernel/btf/vmlinux`) parsed and queried for facts every kernel
//! strobe supports agrees on. Skips loudly when the kernel exposes no BTF.

use std::sync::{Arc, OnceLock};

use strobe::btf::{Btf, Glob, Kind, TypeKind};
use strobe_testkit::skip;

fn vmlinux(test: &str) -> Option<&'static Arc<Btf>> {
    static BTF: OnceLock<Option<Arc<Btf>>> = OnceLock::new();
    let btf = BTF.get_or_init(|| {
        if !std::path::Path::new(strobe::btf::VMLINUX_PATH).exists() {
            return None;
        }
        Some(Arc::new(
            Btf::from_vmlinux().expect("host vmlinux BTF parses"),
        ))
    });
    if btf.is_none() {
        skip(test, "no /sys/kernel/btf/vmlinux on this kernel");
    }
    btf.as_ref()
}

#[test]
fn vfs_read_prototype_matches_the_kernel_source() {
    let Some(btf) = vmlinux("vfs_read_prototype_matches_the_kernel_source") else {
        return;
    };
    let id = btf.find_func("vfs_read").expect("vfs_read in BTF");
    let proto = btf.func_proto(id).unwrap();
    let params: Vec<(String, String)> = proto
        .params()
        .map(|p| (p.name.to_string(), btf.type_to_string(p.type_id)))
        .collect();
    assert_eq!(
        params,
        [
            ("file", "struct file *"),
            ("buf", "char *"),
            ("count", "size_t"),
            ("pos", "loff_t *"),
        ]
        .map(|(a, b)| (a.to_string(), b.to_string()))
    );
    assert_eq!(btf.type_to_string(proto.ret), "ssize_t");
    assert_eq!(
        btf.decl_to_string(id, ""),
        "ssize_t vfs_read(struct file *file, char *buf, size_t count, loff_t *pos)"
    );
    let count = proto.find_param("count").unwrap();
    assert_eq!(count.0, 2);
    assert_eq!(btf.size_of(count.1.type_id).unwrap(), 8);
    assert!(!btf.int_info(count.1.type_id).unwrap().signed);
    assert!(btf.int_info(proto.ret).unwrap().signed);
}

#[test]
fn task_struct_comm_is_a_16_char_array_inside_the_struct() {
    let Some(btf) = vmlinux("task_struct_comm_is_a_16_char_array_inside_the_struct") else {
        return;
    };
    let ts = btf.find_struct("task_struct").expect("struct task_struct");
    let size = btf.size_of(ts).unwrap();
    let comm = btf.find_member(ts, "comm").unwrap().expect("comm member");
    assert_eq!(comm.bitfield_size, 0);
    assert_eq!(comm.bit_offset % 8, 0);
    let arr = btf.array_info(comm.type_id).unwrap();
    assert_eq!(arr.len, 16);
    assert_eq!(btf.type_to_string(arr.elem), "char");
    assert_eq!(btf.type_to_string(comm.type_id), "char[16]");
    assert_eq!(btf.decl_to_string(comm.type_id, "comm"), "char comm[16]");
    assert!(comm.byte_offset() + 16 <= size);
    // `pid` and `tgid` are plain members; `__state` exists since 5.14.
    let pid = btf.find_member(ts, "pid").unwrap().unwrap();
    assert_eq!(btf.type_to_string(pid.type_id), "pid_t");
    assert_eq!(btf.size_of(pid.type_id).unwrap(), 4);
    assert!(btf.find_member(ts, "no_such_member").unwrap().is_none());
}

#[test]
fn struct_layouts_are_consistent_across_all_of_vmlinux() {
    let Some(btf) = vmlinux("struct_layouts_are_consistent_across_all_of_vmlinux") else {
        return;
    };
    let mut structs = 0;
    for t in btf.types() {
        let TypeKind::Struct(members) = t.kind else {
            continue;
        };
        structs += 1;
        let mut prev_end_bits = 0u64;
        for m in members.iter() {
            let bits = if m.bitfield_size != 0 {
                u64::from(m.bitfield_size)
            } else {
                // Flexible array members have size 0; anything else must have a size.
                u64::from(
                    btf.size_of(m.type_id)
                        .unwrap_or_else(|e| panic!("{}.{}: {e}", t.name, m.name)),
                ) * 8
            };
            assert!(
                u64::from(m.bit_offset) >= prev_end_bits || members.len() == 1,
                "struct {} member {} at bit {} overlaps previous ending at {}",
                t.name,
                m.name,
                m.bit_offset,
                prev_end_bits
            );
            prev_end_bits = u64::from(m.bit_offset) + bits;
            assert!(
                prev_end_bits <= u64::from(members.size) * 8,
                "struct {} member {} ends at bit {} past size {}",
                t.name,
                m.name,
                prev_end_bits,
                members.size
            );
        }
    }
    assert!(structs > 1000, "only {structs} structs");
}

#[test]
fn anonymous_members_are_found_with_cumulative_offsets() {
    let Some(btf) = vmlinux("anonymous_members_are_found_with_cumulative_offsets") else {
        return;
    };
    // Pick every struct that has an anonymous struct/union member and check that each
    // member reached through it is found at (anon offset + inner offset).
    let mut checked = 0;
    for t in btf.types() {
        let TypeKind::Struct(members) = t.kind else {
            continue;
        };
        for m in members.iter().filter(|m| m.name.is_empty()) {
            let Ok(inner) = btf.members(m.type_id) else {
                continue;
            };
            for im in inner.iter().filter(|im| !im.name.is_empty()) {
                // Only names unique at the outer level, so the lookup is unambiguous.
                if members.iter().any(|om| om.name == im.name) {
                    continue;
                }
                let found = btf.find_member(t.id, im.name).unwrap().unwrap();
                assert_eq!(
                    found.bit_offset,
                    m.bit_offset + im.bit_offset,
                    "{}.{}",
                    t.name,
                    im.name
                );
                checked += 1;
            }
        }
    }
    assert!(checked > 100, "only {checked} anonymous members checked");
}

#[test]
fn function_globs_agree_with_a_brute_force_scan() {
    let Some(btf) = vmlinux("function_globs_agree_with_a_brute_force_scan") else {
        return;
    };
    for pat in [
        "vfs_*",
        "*_read",
        "tcp_{v4,v6}_connect",
        "vfs_rea?",
        "*",
        "ext4_*_iter",
    ] {
        let g = Glob::new(pat).unwrap();
        let via_index: Vec<u32> = btf.funcs_matching(&g).map(|(_, id)| id).collect();
        let mut brute: Vec<(String, u32)> = btf
            .types()
            .filter(|t| matches!(t.kind, TypeKind::Func { .. }) && g.matches(t.name))
            .map(|t| (t.name.to_string(), t.id))
            .collect();
        brute.sort();
        let brute: Vec<u32> = brute.into_iter().map(|(_, id)| id).collect();
        assert_eq!(via_index, brute, "pattern {pat}");
    }
    let g = Glob::new("vfs_*").unwrap();
    assert!(btf.funcs_matching(&g).count() > 20);
    let g = Glob::new("tcp_{v4,v6}_connect").unwrap();
    let names: Vec<&str> = btf.funcs_matching(&g).map(|(n, _)| n).collect();
    assert!(names.contains(&"tcp_v4_connect"), "{names:?}");
    assert_eq!(btf.func_count(), btf.funcs().count());
}

#[test]
fn sched_switch_raw_tracepoint_args_come_from_btf_trace_typedef() {
    let Some(btf) = vmlinux("sched_switch_raw_tracepoint_args_come_from_btf_trace_typedef") else {
        return;
    };
    let args = btf.raw_tracepoint_args("sched_switch").unwrap();
    let printed: Vec<String> = args
        .iter()
        .map(|p| btf.decl_to_string(p.type_id, p.name))
        .collect();
    // Since 5.18: (bool preempt, struct task_struct *prev, struct task_struct *next,
    // unsigned int prev_state).
    assert!(printed.len() >= 3, "{printed:?}");
    assert_eq!(printed[0], "bool preempt");
    assert_eq!(printed[1], "struct task_struct *prev");
    assert_eq!(printed[2], "struct task_struct *next");
    assert!(btf.raw_tracepoint_args("no_such_tracepoint").is_err());
}

#[test]
fn pointer_to_function_members_print_as_c_declarators() {
    let Some(btf) = vmlinux("pointer_to_function_members_print_as_c_declarators") else {
        return;
    };
    let fops = btf.find_struct("file_operations").unwrap();
    let read = btf.find_member(fops, "read").unwrap().unwrap();
    assert_eq!(
        btf.type_to_string(read.type_id),
        "ssize_t (*)(struct file *, char *, size_t, loff_t *)"
    );
    let unsigned_long = btf.find_type(Kind::Int, "long unsigned int").unwrap();
    assert_eq!(btf.size_of(unsigned_long).unwrap(), 8);
}

#[test]
fn every_type_of_vmlinux_decodes_prints_and_sizes_without_error() {
    let Some(btf) = vmlinux("every_type_of_vmlinux_decodes_prints_and_sizes_without_error") else {
        return;
    };
    let mut printed = 0;
    for t in btf.types() {
        let s = btf.type_to_string(t.id);
        assert!(!s.contains("<bad type"), "{} -> {s}", t.id);
        printed += 1;
        if let TypeKind::Struct(_) | TypeKind::Union(_) | TypeKind::Int(_) | TypeKind::Ptr(_) =
            t.kind
        {
            btf.size_of(t.id).unwrap();
        }
    }
    assert_eq!(printed, btf.own_type_count());
}

#[test]
fn module_btf_parses_as_split_btf_over_vmlinux() {
    let Some(btf) = vmlinux("module_btf_parses_as_split_btf_over_vmlinux") else {
        return;
    };
    let modules = strobe::btf::kernel_btf_modules().unwrap();
    let Some(name) = modules.first() else {
        skip(
            "module_btf_parses_as_split_btf_over_vmlinux",
            "no module under /sys/kernel/btf has BTF on this host (synthetic split BTF is tested in btf::tests)",
        );
        return;
    };
    let m = Btf::from_module(name, btf).unwrap();
    assert!(m.is_split());
    assert_eq!(m.first_id(), btf.last_id() + 1);
    for t in m.types() {
        let _ = m.type_to_string(t.id);
    }
    // A module's types refer to vmlinux's: resolving through the split object reaches them.
    assert_eq!(m.find_struct("task_struct"), btf.find_struct("task_struct"));
}

#[test]
fn member_chains_resolve_like_bpftrace_field_access() {
    let Some(btf) = vmlinux("member_chains_resolve_like_bpftrace_field_access") else {
        return;
    };
    // args.file->f_path.dentry->d_name.name, starting from vfs_read's first parameter.
    let proto = btf.func_proto_by_name("vfs_read").unwrap();
    let mut ty = proto.find_param("file").unwrap().1.type_id;
    let mut derefs = Vec::new();
    for name in ["f_path", "dentry", "d_name", "name"] {
        let a = btf.access_member(ty, name).unwrap();
        derefs.push(a.through_pointer);
        ty = a.member.type_id;
    }
    assert_eq!(derefs, [true, false, true, false]);
    assert!(btf.is_char_array_or_pointer(ty).unwrap());
    assert_eq!(btf.type_to_string(ty), "const unsigned char *");
    // curtask->comm
    let ts = btf.find_struct("task_struct").unwrap();
    let comm = btf.access_member(ts, "comm").unwrap();
    assert!(!comm.through_pointer);
    assert!(btf.is_char_array_or_pointer(comm.member.type_id).unwrap());
    let err = btf.access_member(ts, "commm").unwrap_err();
    assert_eq!(
        err.to_string(),
        "struct task_struct has no member named `commm`"
    );
    let pid = btf.access_member(ts, "pid").unwrap();
    assert_eq!(
        btf.classify(pid.member.type_id).unwrap(),
        strobe::btf::TypeClass::Int {
            size: 4,
            signed: true,
            bool: false,
            char: false
        }
    );
}

#[test]
fn kernel_btf_finds_function_targets_across_vmlinux_and_modules() {
    let Some(btf) = vmlinux("kernel_btf_finds_function_targets_across_vmlinux_and_modules") else {
        return;
    };
    let kb = strobe::btf::KernelBtf::with_vmlinux(btf.clone());
    let (targets, errors) = kb.funcs_matching(&Glob::new("vfs_*").unwrap()).unwrap();
    assert!(errors.is_empty(), "{errors:?}");
    let vfs_read = targets.iter().find(|t| t.name == "vfs_read").unwrap();
    assert_eq!(vfs_read.module, None);
    assert_eq!(Some(vfs_read.btf_id), btf.find_func("vfs_read"));
    assert!(targets.iter().all(|t| t.name.starts_with("vfs_")));
    assert!(kb.module("../vmlinux").is_err());
}

#[test]
fn split_btf_over_the_real_vmlinux_resolves_base_types_and_strings() {
    let Some(btf) = vmlinux("split_btf_over_the_real_vmlinux_resolves_base_types_and_strings")
    else {
        return;
    };
    use strobe::btf::encode::{BtfBuilder, MemberDef};
    let file = btf.find_struct("file").unwrap();
    let ssize_t = btf.find_typedef("ssize_t").unwrap();
    let mut b = BtfBuilder::new_split(btf);
    let file_ptr = b.add_ptr(file);
    let st = b.add_struct("mymod_state", 16, &[MemberDef::new("filp", file_ptr, 0)]);
    let st_ptr = b.add_ptr(st);
    let proto = b.add_func_proto(ssize_t, &[("state", st_ptr), ("file", file_ptr)]);
    let f = b.add_func("mymod_read", proto, strobe::btf::Linkage::Global);
    let m = Btf::parse_split(b.finish().unwrap(), btf).unwrap();
    assert_eq!(m.first_id(), btf.last_id() + 1);
    assert_eq!(
        m.decl_to_string(f, ""),
        "ssize_t mymod_read(struct mymod_state *state, struct file *file)"
    );
    let a = m.access_member(st_ptr, "filp").unwrap();
    let inode = m.access_member(a.member.type_id, "f_inode").unwrap();
    assert!(inode.through_pointer);
    assert_eq!(m.find_func("vfs_read"), btf.find_func("vfs_read"));
    assert_eq!(
        m.funcs().map(|(n, _)| n).collect::<Vec<_>>(),
        ["mymod_read"]
    );
}
