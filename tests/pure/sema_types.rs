//! Positive checks: scripts that must check clean against the mock kernel, and the types,
//! maps, formats, constants and target groups the checker records for them.

use crate::sema_support;

use sema_support::{check_text, located};
use strobe::runtime::format::agg::AggKind;
use strobe::runtime::format::hist::HistKind;
use strobe::runtime::format::FieldType;
use strobe::sema::types::{AddrSpace, Pointee, Type};
use strobe::sema::{CheckOptions, CheckedProgram};
use strobe::syntax::ast::{ExprKind, StmtKind};

fn ok(text: &str) -> CheckedProgram {
    ok_with(text, &CheckOptions::default())
}

fn ok_with(text: &str, opts: &CheckOptions) -> CheckedProgram {
    let (src, out) = check_text(text, opts);
    let errs: Vec<String> = out
        .diagnostics
        .iter()
        .filter(|d| d.is_error())
        .map(|d| located(&src, d))
        .collect();
    assert!(errs.is_empty(), "{text}: {errs:?}");
    out.program.expect("no errors, so a program")
}

fn map_value(p: &CheckedProgram, name: &str) -> Type {
    p.map(name).expect("map exists").1.value.clone()
}

fn map_keys(p: &CheckedProgram, name: &str) -> Vec<Type> {
    p.map(name).expect("map exists").1.keys.clone()
}

#[test]
fn builtins_have_bpftrace_types() {
    let p = ok("BEGIN { @a = pid; @b = nsecs; @c = comm; @d = kstack; @e = cpu; @f = username; }");
    assert_eq!(map_value(&p, "@a"), Type::U32);
    assert_eq!(map_value(&p, "@b"), Type::U64);
    assert_eq!(map_value(&p, "@c"), Type::Str { size: 16 });
    assert!(matches!(
        map_value(&p, "@d"),
        Type::KStack { limit: 127, .. }
    ));
    assert_eq!(map_value(&p, "@f"), Type::Username);
}

#[test]
fn aggregations_record_their_kind_and_signedness() {
    let p = ok(
        r#"kprobe:vfs_read { @c[comm] = count(); @s = sum(arg2); @m = min(-1); @h = hist(arg2, 2); @l = lhist(arg2, 0, 100, 10); @st = stats((int32)arg1); }"#,
    );
    assert_eq!(p.map("@c").unwrap().1.agg, Some(AggKind::Count));
    assert_eq!(
        p.map("@s").unwrap().1.agg,
        Some(AggKind::Sum { signed: false })
    );
    assert_eq!(
        p.map("@m").unwrap().1.agg,
        Some(AggKind::Min { signed: true })
    );
    assert_eq!(
        p.map("@h").unwrap().1.agg,
        Some(AggKind::Hist(HistKind::Log2 { k: 2 }))
    );
    assert_eq!(
        p.map("@l").unwrap().1.agg,
        Some(AggKind::Hist(HistKind::Linear {
            min: 0,
            max: 100,
            step: 10
        }))
    );
    assert_eq!(
        p.map("@st").unwrap().1.agg,
        Some(AggKind::Stats { signed: true })
    );
    assert_eq!(map_keys(&p, "@c"), [Type::Str { size: 16 }]);
}

#[test]
fn fentry_args_and_retval_come_from_btf() {
    let p = ok("fexit:vfs_read { @r = retval; @n = args.count; @f = args.file; @i = args.file->f_inode->i_ino; @p = args.file.f_path.dentry; }");
    assert_eq!(map_value(&p, "@r"), Type::I64, "ssize_t");
    assert_eq!(map_value(&p, "@n"), Type::U64, "size_t");
    match map_value(&p, "@f") {
        Type::Pointer {
            pointee: Pointee::Type(t),
            space: AddrSpace::Kernel,
        } => {
            assert_eq!(t.to_string(), "struct file")
        }
        t => panic!("args.file is {t}"),
    }
    assert_eq!(map_value(&p, "@i"), Type::U64);
    assert!(map_value(&p, "@p").is_pointer());
}

#[test]
fn tracepoint_args_come_from_the_format() {
    let p = ok("tracepoint:syscalls:sys_enter_openat { @f[str(args.filename)] = count(); @d = args.dfd; } tracepoint:sched:sched_process_exec { @e = args.filename; @p = args.pid; }");
    assert_eq!(map_keys(&p, "@f"), [Type::Str { size: 1024 }]);
    assert_eq!(map_value(&p, "@d"), Type::U64);
    assert_eq!(
        map_value(&p, "@e"),
        Type::Str { size: 1024 },
        "__data_loc char[]"
    );
    assert_eq!(map_value(&p, "@p"), Type::I32);
}

#[test]
fn rawtracepoint_args_are_named_from_the_bpf_trace_function() {
    let p =
        ok("rawtracepoint:sched_switch { @[args.next->comm] = count(); @pid = args.prev->pid; }");
    assert_eq!(map_keys(&p, "@"), [Type::Str { size: 16 }]);
    assert_eq!(map_value(&p, "@pid"), Type::I32);
}

#[test]
fn casts_to_btf_and_script_structs_resolve_members() {
    let p = ok("struct Foo { int a; char name[8]; u64 b; } BEGIN { @t = ((struct task_struct *)curtask)->real_parent->pid; $f = (struct Foo *)0; @n = $f->name; @b = $f->b; @o = offsetof(struct Foo, b); @s = sizeof(struct Foo); }");
    assert_eq!(map_value(&p, "@t"), Type::I32);
    assert_eq!(map_value(&p, "@n"), Type::Str { size: 8 });
    assert_eq!(map_value(&p, "@b"), Type::U64);
    let consts: Vec<i64> = p.consts.values().copied().collect();
    assert!(consts.contains(&16), "offsetof(b) = 16: {consts:?}");
    assert!(consts.contains(&24), "sizeof = 24: {consts:?}");
}

#[test]
fn printf_sites_carry_checked_layouts() {
    let p = ok(
        r#"tracepoint:syscalls:sys_enter_openat { printf("%s %d %s\n", comm, pid, str(args.filename)); }"#,
    );
    assert_eq!(p.formats.len(), 1);
    let f = &p.formats[0];
    assert_eq!(f.function, "printf");
    assert_eq!(
        f.printf.args,
        [
            FieldType::Str { size: 16 },
            FieldType::Int {
                bytes: 4,
                signed: false
            },
            FieldType::Str { size: 1024 }
        ]
    );
    assert_eq!(f.printf.offsets(), [0, 16, 20]);
}

#[test]
fn positional_params_are_ints_or_strings_and_missing_ones_zero() {
    let opts = CheckOptions {
        params: vec!["42".into(), "bash".into()],
        ..CheckOptions::default()
    };
    let p = ok_with("BEGIN { @a = $1; @b = $2; @c = $3; @n = $#; }", &opts);
    assert_eq!(map_value(&p, "@a"), Type::I64);
    assert_eq!(map_value(&p, "@b"), Type::Str { size: 5 });
    assert_eq!(map_value(&p, "@c"), Type::I64);
    assert!(p.consts.values().any(|&v| v == 42));
    assert!(p.str_consts.values().any(|v| v == b"bash"));
}

#[test]
fn max_strlen_comes_from_options_and_config() {
    let opts = CheckOptions {
        max_strlen: 128,
        ..CheckOptions::default()
    };
    let p = ok_with("kprobe:vfs_* { @s = str(arg0); }", &opts);
    assert_eq!(map_value(&p, "@s"), Type::Str { size: 128 });
    let p = ok(
        "config = { max_strlen = 200; max_map_keys = 77 } kprobe:vfs_read { @s[str(arg0)] = 1; }",
    );
    assert_eq!(map_keys(&p, "@s"), [Type::Str { size: 200 }]);
    assert_eq!(p.map("@s").unwrap().1.max_entries, 77);
}

#[test]
fn defines_macros_and_functions_check() {
    let p = ok(r#"#define LIMIT 0x10
macro twice(x) { x * 2 }
macro bump(@m, $k) { @m[$k]++ }
fn half($v: int64): int64 { return $v / 2; }
BEGIN { $k = 1; @a = twice(LIMIT); bump(@c, $k); @h = half(8); }"#);
    assert_eq!(map_value(&p, "@a"), Type::I64);
    // A literal is stored at its smallest type (bpftrace 0.25+), and so is the key built from it.
    assert_eq!(map_keys(&p, "@c"), [Type::I8]);
    assert_eq!(map_value(&p, "@h"), Type::I64);
    assert!(
        p.consts.values().any(|&v| v == 32),
        "twice(0x10) folds to 32"
    );
}

#[test]
fn variables_get_slots_per_declaration() {
    let p = ok("BEGIN { if (1) { let $x = 1; @a = $x; } if (2) { let $x = \"s\"; @b = $x; } }");
    let vars = &p.probes[0].vars.slots;
    assert_eq!(vars.len(), 2);
    assert_eq!(vars[0].1, Type::I8);
    assert_eq!(vars[1].1, Type::Str { size: 2 });
    assert_eq!(p.var_slots.len(), 2);
}

#[test]
fn map_declarations_set_kind_and_size() {
    let p = ok("let @m = lruhash(100); BEGIN { @m[1] = 2; }");
    let m = p.map("@m").unwrap().1;
    assert_eq!(m.max_entries, 100);
    assert_eq!(m.declared_kind.as_deref(), Some("lruhash"));
}

#[test]
fn every_expression_reached_has_a_type() {
    let p = ok("kprobe:vfs_read /pid > 1/ { $x = arg0 + 1; @[comm, $x] = count(); }");
    let probe = p.program.probes().next().unwrap();
    let pred = probe.predicate.as_ref().unwrap();
    assert_eq!(p.type_of(pred.id), &Type::Bool);
    let StmtKind::Assign { value, .. } = &probe.body.stmts[0].kind else {
        panic!("assignment expected")
    };
    assert!(matches!(value.kind, ExprKind::Binary { .. }));
    // `arg0` is unsigned and the literal takes its signedness, as in bpftrace.
    assert_eq!(p.type_of(value.id), &Type::U64);
}

#[test]
fn reading_a_map_assigned_in_a_later_probe_is_fine() {
    let p = ok("END { print(@total); } kprobe:vfs_read { @total = sum(arg2); }");
    assert_eq!(
        p.map("@total").unwrap().1.agg,
        Some(AggKind::Sum { signed: false })
    );
}

#[test]
fn unsafe_builtins_pass_with_unsafe() {
    let opts = CheckOptions {
        unsafe_mode: true,
        ..CheckOptions::default()
    };
    // signal() only where bpftrace allows it (not BEGIN): a tracepoint here.
    ok_with(
        r#"BEGIN { system("echo %d", 1); } tracepoint:syscalls:sys_enter_openat { signal(9); signal("KILL"); signal("sigterm"); }"#,
        &opts,
    );
}

#[test]
fn uprobe_and_usdt_targets_expand_from_elf_tables() {
    let p =
        ok("uprobe:/bin/bash:read* { @[func] = count(); } usdt:libc:libc:setjmp { @j = arg0; }");
    let t: Vec<&str> = p.probes[0].attach[0]
        .targets
        .iter()
        .map(|t| t.name.as_str())
        .collect();
    assert_eq!(t, ["uprobe:/bin/bash:readline"]);
    let t = &p.probes[1].attach[0].targets[0].name;
    assert_eq!(t, "usdt:/usr/lib/libc.so.6:libc:setjmp");
}

#[test]
fn a_declared_variable_type_is_not_widened_by_assignments() {
    let (src, out) = check_text(
        "BEGIN { let $x: uint8 = 1; $x = 2; $x = 300; }",
        &CheckOptions::default(),
    );
    let errs: Vec<String> = out.diagnostics.iter().map(|d| located(&src, d)).collect();
    assert_eq!(
        errs,
        ["1:41: Integer 300 does not fit in $x of type 'uint8'"]
    );
}

#[test]
fn config_stack_mode_sets_the_default_stack_layout() {
    use strobe::runtime::format::stack::StackMode;
    let p =
        ok("config = { stack_mode = perf } profile:hz:99 { @[kstack(8)] = count(); @u = ustack; }");
    assert_eq!(
        map_keys(&p, "@"),
        [Type::KStack {
            mode: StackMode::Perf,
            limit: 8
        }]
    );
    assert!(matches!(
        map_value(&p, "@u"),
        Type::UStack {
            mode: StackMode::Perf,
            ..
        }
    ));
}

#[test]
fn a_let_never_assigned_to_is_a_warning() {
    let (src, out) = check_text(
        "BEGIN { let $x; let $y; let $z; $y = 1; $z++; @ = $y + $z; }",
        &CheckOptions::default(),
    );
    let msgs: Vec<String> = out.diagnostics.iter().map(|d| located(&src, d)).collect();
    assert_eq!(msgs, ["1:13: Variable $x never assigned to."]);
    assert!(out.program.is_some());
}

/// The type of `$name` (its first slot) in the first probe.
fn var_type(p: &CheckedProgram, name: &str) -> Type {
    let vars = &p.probes[0].vars.slots;
    vars.iter()
        .find(|v| v.0 == name)
        .expect("variable")
        .1
        .clone()
}

#[test]
fn address_of_map_values_and_members_points_to_their_types() {
    let p = ok(
        "struct Foo { int a; char b[4]; } BEGIN { @m[1] = (int16)2; @s = \"x\"; $a = &@m[1]; $b = &@s; $p = (struct Foo *)0; $c = &$p->b; $d = &*$p; }",
    );
    assert_eq!(
        var_type(&p, "$a"),
        Type::ptr_to(Type::I16, AddrSpace::Kernel)
    );
    assert_eq!(
        var_type(&p, "$b"),
        Type::ptr_to(Type::Str { size: 2 }, AddrSpace::Kernel)
    );
    assert!(matches!(
        var_type(&p, "$c"),
        Type::Pointer { pointee: Pointee::Type(t), space: AddrSpace::Kernel } if t.size() == 4
    ));
    assert_eq!(var_type(&p, "$d"), var_type(&p, "$p"));
}

#[test]
fn uptr_marks_follow_variables_arithmetic_and_pointer_casts() {
    let p = ok(
        "BEGIN { $u = uptr(1000); $k = kptr(1000); $w = $u + 8; $q = (int8 *)$w; $n = 5; @x = str($u); @y = str($k); @z = str($n); }",
    );
    let vars = &p.probes[0].vars;
    let slot = |name: &str| {
        strobe::sema::VarSlot(vars.slots.iter().position(|v| v.0 == name).unwrap() as u32)
    };
    assert_eq!(vars.spaces.get(&slot("$u")), Some(&AddrSpace::User));
    assert_eq!(vars.spaces.get(&slot("$k")), Some(&AddrSpace::Kernel));
    assert_eq!(vars.spaces.get(&slot("$w")), Some(&AddrSpace::User));
    assert_eq!(vars.spaces.get(&slot("$n")), None);
    assert!(matches!(
        var_type(&p, "$q"),
        Type::Pointer {
            space: AddrSpace::User,
            ..
        }
    ));
    // The `str($u)` argument is recorded as a user address, `str($n)`'s is not.
    let marked: Vec<_> = p.addr_spaces.values().collect();
    assert!(marked.contains(&&AddrSpace::User) && marked.contains(&&AddrSpace::Kernel));
}
