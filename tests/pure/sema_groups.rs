//! Wildcard probes are checked per target group: a field missing in some targets is a warning
//! naming them (those targets are skipped), and the others are grouped by the argument facts
//! the body depends on (`strobe::template::group_targets`).

use crate::sema_support;

use sema_support::{check_text, located};
use strobe::sema::CheckOptions;
use strobe::template::{Fact, FactOutcome, TypeClass};

#[test]
fn field_missing_in_some_targets_warns_and_names_them() {
    let (src, out) = check_text(
        "fentry:vfs_* { @bytes[comm] = sum(args.count); }",
        &CheckOptions::default(),
    );
    let msgs: Vec<String> = out.diagnostics.iter().map(|d| located(&src, d)).collect();
    assert_eq!(
        msgs,
        ["1:40: args.count is missing in 3 targets: fentry:vmlinux:vfs_fsync, fentry:vmlinux:vfs_open, fentry:vmlinux:vfs_sync_all; they are skipped"]
    );
    assert!(!out.diagnostics[0].is_error());
    let p = out.program.expect("warnings only");
    let a = &p.probes[0].attach[0];
    let names: Vec<&str> = a.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "fentry:vmlinux:vfs_fsync",
            "fentry:vmlinux:vfs_open",
            "fentry:vmlinux:vfs_read",
            "fentry:vmlinux:vfs_sync_all",
            "fentry:vmlinux:vfs_write"
        ]
    );
    assert_eq!(
        a.facts,
        [Fact::Param {
            name: "count".into(),
            requirement: strobe::template::ParamRequirement::Any
        }]
    );
    // vfs_read and vfs_write share one group (count is a size_t in both); the rest skipped.
    assert_eq!(a.grouping.groups.len(), 1);
    assert_eq!(a.grouping.groups[0].targets, [2, 4]);
    assert_eq!(
        a.grouping.groups[0].outcomes,
        [FactOutcome::Param(TypeClass::Int {
            size: 8,
            signed: false
        })]
    );
    let skipped: Vec<usize> = a.grouping.skipped.iter().map(|s| s.0).collect();
    assert_eq!(skipped, [0, 1, 3]);
}

#[test]
fn field_missing_in_every_target_is_an_error_listing_fields() {
    let (src, out) = check_text(
        "fentry:vfs_read { @ = args.coun; }",
        &CheckOptions::default(),
    );
    let d = out
        .diagnostics
        .iter()
        .find(|d| d.is_error())
        .expect("an error");
    assert_eq!(
        located(&src, d),
        "1:28: fentry:vmlinux:vfs_read has no argument named 'coun'"
    );
    assert_eq!(
        d.help.as_deref(),
        Some("did you mean 'count'? available: file, buf, count, pos")
    );
}

#[test]
fn tracepoint_field_errors_list_the_format_fields() {
    let (_, out) = check_text(
        "tracepoint:syscalls:sys_enter_openat { @ = args.name; }",
        &CheckOptions::default(),
    );
    let d = out
        .diagnostics
        .iter()
        .find(|d| d.is_error())
        .expect("an error");
    assert_eq!(
        d.help.as_deref(),
        Some("available: __syscall_nr, dfd, filename, flags, mode")
    );
}

#[test]
fn args_on_a_probe_without_args_names_the_kinds_that_have_them() {
    let (_, out) = check_text(
        "kprobe:vfs_read { @ = args.count; }",
        &CheckOptions::default(),
    );
    let d = out
        .diagnostics
        .iter()
        .find(|d| d.is_error())
        .expect("an error");
    assert_eq!(d.message, "args is not available in kprobe probes");
    assert_eq!(
        d.help.as_deref(),
        Some("probe types with args: tracepoint, rawtracepoint, fentry, fexit, uprobe")
    );
}

#[test]
fn struct_member_errors_list_the_members() {
    let (_, out) = check_text(
        "fentry:vfs_read { @ = args.file->f_flag; }",
        &CheckOptions::default(),
    );
    let d = out
        .diagnostics
        .iter()
        .find(|d| d.is_error())
        .expect("an error");
    assert_eq!(
        d.help.as_deref(),
        Some("did you mean 'f_flags'? fields: f_path, f_inode, f_flags, f_pos, private_data")
    );
}

#[test]
fn unknown_names_suggest_the_nearest_builtin() {
    let (_, out) = check_text("BEGIN { @ = coutn(); @p = pdi; }", &CheckOptions::default());
    let helps: Vec<Option<&str>> = out.diagnostics.iter().map(|d| d.help.as_deref()).collect();
    assert_eq!(
        helps,
        [Some("did you mean 'count'?"), Some("did you mean 'pid'?")]
    );
}

#[test]
fn fexit_retval_is_a_fact_and_module_targets_are_qualified() {
    let (_, out) = check_text(
        "fexit:*sync* { @[probe] = count(); @r = retval; }",
        &CheckOptions::default(),
    );
    let p = out.program.expect("checks");
    let a = &p.probes[0].attach[0];
    let names: Vec<&str> = a.targets.iter().map(|t| t.name.as_str()).collect();
    assert_eq!(
        names,
        [
            "fexit:vmlinux:vfs_fsync",
            "fexit:vmlinux:vfs_sync_all",
            "fexit:ext4:ext4_sync_file"
        ]
    );
    assert_eq!(a.facts, [Fact::ReturnsScalar]);
    // vfs_sync_all returns void: skipped with a reason; the two int-returning ones group.
    assert_eq!(a.grouping.groups.len(), 1);
    assert_eq!(a.grouping.groups[0].targets, [0, 2]);
    assert_eq!(a.grouping.skipped[0].0, 1);
}

#[test]
fn tracepoint_wildcard_skips_targets_without_the_field() {
    let (src, out) = check_text(
        "tracepoint:syscalls:sys_enter_* { @[args.fd] = count(); }",
        &CheckOptions::default(),
    );
    let msgs: Vec<String> = out.diagnostics.iter().map(|d| located(&src, d)).collect();
    assert_eq!(
        msgs,
        ["1:42: args.fd is missing in 1 target: tracepoint:syscalls:sys_enter_openat; it is skipped"]
    );
    let p = out.program.expect("warnings only");
    let a = &p.probes[0].attach[0];
    assert_eq!(a.targets.len(), 2);
    assert_eq!(a.grouping.groups.len(), 1);
    assert_eq!(a.grouping.groups[0].targets, [1]);
    assert_eq!(
        a.grouping.skipped[0].1.to_string(),
        "tracepoint:syscalls:sys_enter_openat has no parameter `fd`"
    );
}

#[test]
fn unknown_config_variables_are_errors_with_the_nearest_name() {
    let (src, out) = check_text(
        "config = { max_strln = 10 } BEGIN { exit(); }",
        &CheckOptions::default(),
    );
    assert!(out.program.is_none(), "an error, as in current bpftrace");
    let d = &out.diagnostics[0];
    assert_eq!(
        located(&src, d),
        "1:12: max_strln: not a known configuration option"
    );
    assert_eq!(d.help.as_deref(), Some("did you mean 'max_strlen'?"));
}
