//! The exact-output cases against the real bpftrace 0.17 installed on the build hosts: every
//! `PROG` case of `tests/runtime/*.case` whose expectation is an `EXPECT_EXACT` block (the
//! `semantics_*` files: scripts and their whole stdout) runs under bpftrace too, and its stdout
//! must be the block, so the expected outputs are bpftrace's own. The case files themselves
//! run under strobe in tests/cases.
//!
//! A case marked `ORACLE_DIFFERS reason` is left out: 0.17 prints something else there for a
//! known reason (current bpftrace's signed division, `let`, `jiffies`, tuple keys, `begin` as
//! the probe name, …). bpftrace's own name in its output (`comm`) becomes `strobe`, 0.17's
//! `Attaching N probes...` line on stdout is dropped, and its older forms of `stats` and
//! histogram headers are rewritten into current bpftrace's ([`oracle::as_current`]). Skips
//! loudly when bpftrace 0.17 is missing or cannot run a BEGIN probe here.

use std::path::Path;
use std::process::Command;

use strobe_testkit::cases::{parse_file, Action, Case};
use strobe_testkit::oracle;

/// bpftrace's stdout for `script`, or `None` when it did not run to a clean exit.
fn bpftrace(script: &str) -> Option<String> {
    let o = Command::new("timeout")
        .args(["60", "bpftrace", "-e", script])
        .output()
        .ok()?;
    o.status
        .success()
        .then(|| String::from_utf8_lossy(&o.stdout).into_owned())
}

/// Why the oracle cannot be used here, if it cannot.
fn oracle_unusable() -> Option<String> {
    let v = match Command::new("bpftrace").arg("--version").output() {
        Ok(o) => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        Err(e) => return Some(format!("bpftrace is not installed or not runnable: {e}")),
    };
    if !v.starts_with("bpftrace v0.17") {
        return Some(format!("the oracle is bpftrace v0.17, this host has {v:?}"));
    }
    match bpftrace(r#"BEGIN { printf("ok\n"); exit(); }"#) {
        Some(o) if o.lines().any(|l| l == "ok") => None,
        _ => Some("bpftrace cannot run a BEGIN probe here (root and BPF needed)".into()),
    }
}

/// `out` without bpftrace 0.17's leading `Attaching N probes...` line.
fn strip_017_banner(out: &str) -> &str {
    match out.split_once('\n') {
        Some((first, rest)) if first.starts_with("Attaching ") => rest,
        _ => out,
    }
}

/// The cases the oracle judges: `PROG` + `EXPECT_EXACT`, not marked `ORACLE_DIFFERS`.
fn oracle_cases() -> Vec<Case> {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/runtime");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/runtime exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "case"))
        .collect();
    files.sort();
    files
        .iter()
        .flat_map(|f| parse_file(f).unwrap_or_else(|e| panic!("{}: {e}", f.display())))
        .filter(|c| {
            matches!(c.action, Action::Prog(_))
                && c.exact_stdout().is_some()
                && c.oracle_differs.is_none()
        })
        .collect()
}

#[test]
fn exact_outputs_are_what_bpftrace_017_prints() {
    let test = "exact_outputs_are_what_bpftrace_017_prints";
    let cases = oracle_cases();
    // The semantics_* files alone hold 115 such cases; far fewer means they were lost.
    assert!(cases.len() > 100, "only {} oracle cases found", cases.len());
    if let Some(why) = oracle_unusable() {
        strobe_testkit::skip(test, &why);
        return;
    }
    let mut failures = Vec::new();
    for c in &cases {
        let Action::Prog(script) = &c.action else {
            unreachable!("filtered to PROG cases")
        };
        let want = c.exact_stdout().expect("filtered to EXPECT_EXACT cases");
        match bpftrace(script) {
            None => failures.push(format!("{}: bpftrace failed on: {script}", c.id())),
            Some(theirs) => {
                let theirs =
                    oracle::as_current(strip_017_banner(&theirs.replace("bpftrace", "strobe")));
                if theirs != want {
                    failures.push(format!(
                        "{}: {script}\nbpftrace 0.17:\n{theirs}\nthe case expects:\n{want}",
                        c.id()
                    ));
                }
            }
        }
    }
    assert!(
        failures.is_empty(),
        "{} of {} cases differ from bpftrace 0.17 (mark a known difference ORACLE_DIFFERS):\n{}",
        failures.len(),
        cases.len(),
        failures.join("\n----\n")
    );
}
