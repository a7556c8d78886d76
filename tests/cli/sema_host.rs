//! The checker and `-l` on this host's kernel: every example passes `--dry-run` with the host's
//! BTF and tracefs, and listings match bpftrace's where bpftrace is installed and can list.
//! Skips (loudly, through `strobe_testkit::skip`) when BTF or tracefs is absent.

use std::path::Path;
use std::process::Command;

use strobe_testkit::skip;

fn strobe(args: &[&str]) -> (i32, String, String) {
    let out = Command::new(env!("CARGO_BIN_EXE_strobe"))
        .args(args)
        .output()
        .expect("strobe runs");
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn have_btf_and_tracefs(test: &str) -> bool {
    if !Path::new("/sys/kernel/btf/vmlinux").exists() {
        skip(test, "no /sys/kernel/btf/vmlinux");
        return false;
    }
    if strobe::kernel::tracefs::Tracefs::open().is_err() {
        skip(test, "tracefs is not available");
        return false;
    }
    true
}

/// bpftrace's output for `args`, when it is installed and succeeds.
fn bpftrace(args: &[&str]) -> Option<String> {
    let out = Command::new("bpftrace").args(args).output().ok()?;
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.success() && !text.is_empty()).then_some(text)
}

fn sorted(text: &str) -> Vec<String> {
    let mut v: Vec<String> = text.lines().map(str::to_string).collect();
    v.sort();
    v
}

/// Examples that check but that the code generator cannot compile yet, with the error that
/// says so. When lowering learns one of these, this test fails until the entry is removed.
const NOT_COMPILED_YET: &[(&str, &str)] = &[];

/// Positional parameters some examples need, as their usage lines give them.
fn example_args(name: &str) -> &'static [&'static str] {
    match name {
        "positional_params.bt" => &["1234", "99"],
        _ => &[],
    }
}

#[test]
fn every_example_passes_dry_run_on_this_host() {
    if !have_btf_and_tracefs("every_example_passes_dry_run_on_this_host") {
        return;
    }
    let mut failures = Vec::new();
    let mut n = 0;
    for e in std::fs::read_dir("examples").expect("examples/") {
        let path = e.expect("entry").path();
        if path.extension().is_none_or(|x| x != "bt") {
            continue;
        }
        n += 1;
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let p = path.display().to_string();
        let mut args = vec!["--dry-run", p.as_str()];
        args.extend_from_slice(example_args(&name));
        let (code, _, err) = strobe(&args);
        match NOT_COMPILED_YET.iter().find(|(n, _)| *n == name) {
            None if code != 0 => failures.push(format!("{p} (exit {code}):\n{err}")),
            Some((_, why)) if code != 1 || !err.contains(why) => failures.push(format!(
                "{p}: expected the known code-generator gap `{why}` (exit 1), got exit {code}:\n{err}\n\
                 (if it compiles now, remove it from NOT_COMPILED_YET)"
            )),
            _ => {}
        }
    }
    assert!(n >= 30, "only {n} examples");
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

/// Every example at least parses and checks, including those the code generator cannot compile
/// yet: `-d ast` stops after checking.
#[test]
fn every_example_checks_on_this_host() {
    if !have_btf_and_tracefs("every_example_checks_on_this_host") {
        return;
    }
    for e in std::fs::read_dir("examples").expect("examples/") {
        let path = e.expect("entry").path();
        if path.extension().is_none_or(|x| x != "bt") {
            continue;
        }
        let name = path.file_name().unwrap().to_string_lossy().to_string();
        let p = path.display().to_string();
        let mut args = vec!["-d", "ast", p.as_str()];
        args.extend_from_slice(example_args(&name));
        let (code, _, err) = strobe(&args);
        assert_eq!(code, 0, "{p}:\n{err}");
    }
}

#[test]
fn dry_run_reports_semantic_errors_with_location_and_exit_1() {
    let (code, _, err) = strobe(&["--dry-run", "-e", "BEGIN { @x = 1; @x = \"s\"; }"]);
    assert_eq!(code, 1);
    assert!(
        err.starts_with("stdin:1:22-") && err.contains(": ERROR: Type mismatch for @x: trying to assign value of type 'string[2]' when map already contains a value of type 'int64'\n"),
        "{err}"
    );
    let (code, _, err) = strobe(&[
        "--dry-run",
        "-e",
        "BEGIN { printf(\"%s\\n\", $1); }",
        "hello",
    ]);
    assert_eq!((code, err.as_str()), (0, ""));
}

#[test]
fn dry_run_resolves_host_btf_and_tracepoint_fields() {
    if !have_btf_and_tracefs("dry_run_resolves_host_btf_and_tracepoint_fields") {
        return;
    }
    let (code, _, err) = strobe(&[
        "--dry-run",
        "-e",
        "fentry:vfs_read { @[comm] = sum(args.count); } tracepoint:syscalls:sys_enter_openat { printf(\"%s\\n\", str(args.filename)); } rawtracepoint:sched_switch { @s[args.next->comm] = count(); }",
    ]);
    assert_eq!((code, err.as_str()), (0, ""));
    let (code, _, err) = strobe(&["--dry-run", "-e", "fentry:vfs_read { @ = args.nope; }"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("fentry:vmlinux:vfs_read has no argument named 'nope'"),
        "{err}"
    );
    assert!(err.contains("available: file, buf, count, pos"), "{err}");
}

#[test]
fn tracepoint_listing_matches_bpftrace() {
    let test = "tracepoint_listing_matches_bpftrace";
    if !have_btf_and_tracefs(test) {
        return;
    }
    let (code, ours, _) = strobe(&["-l", "tracepoint:syscalls:*"]);
    assert_eq!(code, 0);
    assert!(ours.lines().count() > 100, "{ours}");
    assert!(ours
        .lines()
        .all(|l| l.starts_with("tracepoint:syscalls:sys_")));
    match bpftrace(&["-l", "tracepoint:syscalls:*"]) {
        Some(theirs) => assert_eq!(sorted(&ours), sorted(&theirs)),
        None => skip(test, "bpftrace is not installed or cannot list tracepoints"),
    }
    let (_, ours, _) = strobe(&["-lv", "tracepoint:syscalls:sys_enter_open*"]);
    assert!(ours.contains("tracepoint:syscalls:sys_enter_openat\n    int __syscall_nr\n    int dfd\n    const char * filename\n"), "{ours}");
    if let Some(theirs) = bpftrace(&["-lv", "tracepoint:syscalls:sys_enter_open*"]) {
        assert_eq!(ours, theirs);
    }
}

#[test]
fn fentry_listing_matches_btf_and_bpftrace() {
    let test = "fentry_listing_matches_btf_and_bpftrace";
    if !have_btf_and_tracefs(test) {
        return;
    }
    let (code, ours, _) = strobe(&["-l", "fentry:vfs_*"]);
    assert_eq!(code, 0);
    // Cross-check against BTF directly: every vmlinux vfs_* FUNC, module ones qualified.
    let btf = strobe::btf::Btf::from_vmlinux().expect("vmlinux BTF");
    let glob = strobe::btf::Glob::new("vfs_*").unwrap();
    let vmlinux: Vec<String> = btf
        .funcs_matching(&glob)
        .map(|(n, _)| format!("fentry:vmlinux:{n}"))
        .collect();
    let ours_v: Vec<&str> = ours
        .lines()
        .filter(|l| l.starts_with("fentry:vmlinux:"))
        .collect();
    assert_eq!(ours_v, vmlinux);
    assert!(ours.contains("fentry:vmlinux:vfs_read\n"));
    // `kfunc:` is accepted and listed with the current name.
    let (_, old, _) = strobe(&["-l", "kfunc:vfs_read"]);
    assert_eq!(old, "fentry:vmlinux:vfs_read\n");
    let (_, v, _) = strobe(&["-lv", "fentry:vfs_read"]);
    assert_eq!(
        v,
        "fentry:vmlinux:vfs_read\n    struct file * file\n    char * buf\n    size_t count\n    loff_t * pos\n    ssize_t retval\n"
    );
    // bpftrace 0.17 spells it kfunc:; compare names after the kind when it can list them.
    match bpftrace(&["-l", "kfunc:vfs_*"]) {
        Some(theirs) => {
            let theirs: Vec<String> = sorted(&theirs)
                .into_iter()
                .map(|l| l.replacen("kfunc:", "fentry:", 1))
                .collect();
            assert_eq!(sorted(&ours), theirs);
        }
        None => skip(
            test,
            "bpftrace cannot list kfunc probes here (0.17 needs available_filter_functions, EPERM under lockdown); compared with BTF instead",
        ),
    }
}

#[test]
fn rawtracepoint_and_kprobe_listings_use_btf() {
    if !have_btf_and_tracefs("rawtracepoint_and_kprobe_listings_use_btf") {
        return;
    }
    let (_, rt, _) = strobe(&["-l", "rawtracepoint:sched_switch"]);
    assert_eq!(rt, "rawtracepoint:vmlinux:sched_switch\n");
    let (_, rtv, _) = strobe(&["-lv", "rawtracepoint:sched_switch"]);
    assert!(rtv.contains("    struct task_struct * prev\n"), "{rtv}");
    let (_, kp, _) = strobe(&["-l", "kprobe:vfs_read"]);
    assert_eq!(kp, "kprobe:vfs_read\n");
}
