//! Instruction counts of the scripts in issue #5's code-size table, compiled by the real
//! lowering (`strobe::compile`), kept in tests/lower_golden/sizes.txt so a change in size shows
//! in review. Each line: total count (with the arming guard), body count (without
//! it: bpftrace's programs have no guard, so the body is what compares), bpftrace 0.17's count
//! on 6.1, and the script. `BLESS=1 cargo test --test pure lower_sizes::` rewrites the file;
//! the test also fails when a body grows past bpftrace 0.17's count.

use std::path::Path;

use strobe::compile::compile;
use strobe::diag::SourceFile;
use strobe::kernel::info::MockKernel;
use strobe::sema::CheckOptions;

/// Instructions of the arming guard every probe program starts with
/// (`Template::with_arming_guard`): 4 when it branches to the program's own `r0 = 0; exit`
/// (its fourth instruction is then `if r0 == 0 goto`), else 6.
fn guard_len(insns: &[strobe::asm::Insn]) -> usize {
    const JEQ_IMM: u8 = 0x15;
    if insns[3].code == JEQ_IMM {
        4
    } else {
        6
    }
}

/// (script, bpftrace 0.17 instruction count on 6.1; `None` where the issue gives none).
const SCRIPTS: &[(&str, Option<usize>)] = &[
    ("kprobe:vfs_read { @[comm] = count(); }", Some(27)),
    ("kretprobe:vfs_read { @bytes = hist(retval); }", Some(54)),
    (
        "fentry:vfs_read { @[pid, comm] = sum(args.count); }",
        Some(35),
    ),
    (
        "tracepoint:syscalls:sys_enter_openat { printf(\"%s %s\\n\", comm, str(args.filename)); }",
        Some(53),
    ),
    (
        "tracepoint:raw_syscalls:sys_exit /args.ret < 0/ { @errs[comm, args.id] = count(); }",
        None,
    ),
];

/// (instructions, of which the guard's).
fn count(text: &str) -> (usize, usize) {
    let src = SourceFile::new("t.bt", text);
    let out = compile(&src, &MockKernel::fixture(), &CheckOptions::default());
    let script = out
        .script
        .unwrap_or_else(|| panic!("{text}: {:?}", out.diagnostics));
    assert_eq!(script.probes.len(), 1, "{text}: one probe");
    let insns = &script.probes[0].template.insns;
    (insns.len(), guard_len(insns))
}

#[test]
fn instruction_counts_match_golden_and_stay_within_bpftrace_017() {
    let mut got = String::from("# total\tbody\tbpftrace-0.17\tscript\n");
    let mut over = Vec::new();
    for (text, budget) in SCRIPTS {
        let (total, guard) = count(text);
        let body = total - guard;
        let b = budget.map_or("-".to_string(), |b| b.to_string());
        got.push_str(&format!("{total}\t{body}\t{b}\t{text}\n"));
        if budget.is_some_and(|b| body > b) {
            over.push(format!("{text}: body {body} > {b}"));
        }
    }
    let path = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/lower_golden/sizes.txt");
    if std::env::var_os("BLESS").is_some() {
        std::fs::write(&path, &got).expect("write sizes golden");
    } else {
        let want = std::fs::read_to_string(&path).unwrap_or_default();
        assert_eq!(
            want, got,
            "instruction counts changed (review, then BLESS=1 cargo test --test pure lower_sizes::)"
        );
    }
    assert!(over.is_empty(), "bodies above bpftrace 0.17: {over:?}");
}
