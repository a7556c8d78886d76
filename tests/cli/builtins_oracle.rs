//! Value functions against the real bpftrace 0.17 on this host: the same script run by strobe
//! and by bpftrace must print the same lines (`buf`, `macaddr`, `kaddr`, `cgroup_path`,
//! `strftime`). Skips loudly when bpftrace 0.17 is missing or cannot run probes.

use std::process::Command;

use strobe_testkit as testkit;

/// Scripts whose whole output must be equal. Times are compared to the hour (both tools turn
/// boot nanoseconds into wall time); kernel memory through `kaddr` is the same kernel text.
const SCRIPTS: &[&str] = &[
    r#"BEGIN { $a = "ab\x01c\x7f~ "; printf("%r|\n", buf($a, 7)); print(buf($a, 2)); @[buf($a, 3)] = count(); exit(); }"#,
    r#"BEGIN { printf("%lx\n", kaddr("vfs_read")); print(kaddr("vfs_write")); exit(); }"#,
    r#"BEGIN { print(macaddr((uint8 *)kaddr("vfs_read"))); printf("%s|\n", macaddr((uint8 *)kaddr("vfs_write"))); exit(); }"#,
    r#"BEGIN { printf("%s|\n", cgroup_path(cgroup)); print(cgroup_path(cgroup)); printf("%s|\n", cgroup_path(cgroup, "uni*")); printf("%s|\n", cgroup_path(1)); printf("%s|\n", cgroup_path(1, "cpu*")); exit(); }"#,
    r#"BEGIN { printf("%s\n", strftime("%Y-%m-%d %H", nsecs)); print(strftime("%Y-%m-%d %H", 0)); exit(); }"#,
];

fn stdout_lines(cmd: &mut Command) -> Option<Vec<String>> {
    let out = cmd.output().ok()?;
    if !out.status.success() {
        return None;
    }
    Some(
        String::from_utf8_lossy(&out.stdout)
            .lines()
            .filter(|l| !l.starts_with("Attaching "))
            .map(str::to_string)
            .collect(),
    )
}

fn bpftrace(program: &str) -> Option<Vec<String>> {
    stdout_lines(
        Command::new("timeout")
            .args(["60", "bpftrace", "-e"])
            .arg(program),
    )
}

fn oracle_unusable() -> Option<String> {
    let v = match Command::new("bpftrace").arg("--version").output() {
        Ok(o) => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        Err(e) => return Some(format!("bpftrace not runnable: {e}")),
    };
    if !v.starts_with("bpftrace v0.17") {
        return Some(format!("the oracle is bpftrace v0.17, this host has {v:?}"));
    }
    match bpftrace(r#"BEGIN { printf("ok\n"); exit(); }"#) {
        Some(o) if o.iter().any(|l| l == "ok") => None,
        _ => Some("bpftrace cannot run a BEGIN probe here (root and BPF needed)".into()),
    }
}

#[test]
fn value_functions_print_what_bpftrace_017_prints() {
    let test = "value_functions_print_what_bpftrace_017_prints";
    if let Some(why) = oracle_unusable() {
        testkit::skip(test, &why);
        return;
    }
    for script in SCRIPTS {
        let want = bpftrace(script).unwrap_or_else(|| panic!("bpftrace failed on {script}"));
        let got = stdout_lines(
            Command::new("timeout")
                .args(["60", env!("CARGO_BIN_EXE_strobe"), "-e"])
                .arg(script),
        )
        .unwrap_or_else(|| panic!("strobe failed on {script}"));
        assert!(
            want.iter().any(|l| !l.is_empty()),
            "bpftrace printed nothing for {script}"
        );
        assert_eq!(got, want, "{script}");
    }
}
