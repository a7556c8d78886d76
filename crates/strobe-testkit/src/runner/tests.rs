//! The runner is exercised with shell commands and a stand-in "strobe" script, so these tests
//! need only /bin/sh.

use super::*;
use crate::cases::parse_str;

fn opts(strobe: &str) -> RunOptions {
    RunOptions {
        strobe: PathBuf::from(strobe),
        kernel: KernelVersion::parse("6.1.0-50-amd64"),
        timeout_scale: 1.0,
    }
}

fn run(text: &str) -> CaseReport {
    run_with(text, &opts("/bin/echo"))
}

fn run_with(text: &str, o: &RunOptions) -> CaseReport {
    let cases = parse_str("t", text).expect("parses");
    run_case(&cases[0], Path::new("/"), o)
}

#[test]
fn passing_case_passes_without_details() {
    let r = run("NAME ok\nRUN {{STROBE}} strobe 1.0\nEXPECT strobe 1.0\n");
    assert_eq!(r.verdict, Verdict::Pass, "{:#?}", r.details);
    assert!(r.details.is_empty());
    assert_eq!(r.id, "t.ok");
}

#[test]
fn unmet_expectation_fails_with_command_and_output() {
    let r = run("NAME bad\nRUN echo something else\nEXPECT wanted\n");
    let Verdict::Fail(why) = &r.verdict else {
        panic!("{:?}", r.verdict)
    };
    assert!(why.contains("EXPECT wanted"), "{why}");
    let text = r.details.join("\n");
    assert!(text.contains("command: echo something else"), "{text}");
    assert!(text.contains("  | something else"), "{text}");
}

#[test]
fn nonzero_exit_fails_unless_will_fail_or_return_code_says_so() {
    assert!(matches!(
        run("NAME a\nRUN echo x; exit 2\nEXPECT x\n").verdict,
        Verdict::Fail(_)
    ));
    assert_eq!(
        run("NAME a\nRUN echo x; exit 2\nEXPECT x\nWILL_FAIL\n").verdict,
        Verdict::Pass
    );
    assert_eq!(
        run("NAME a\nRUN exit 2\nRETURN_CODE 2\n").verdict,
        Verdict::Pass
    );
    let r = run("NAME a\nRUN echo x\nEXPECT x\nWILL_FAIL\n");
    assert!(
        matches!(&r.verdict, Verdict::Fail(w) if w.contains("WILL_FAIL")),
        "{:?}",
        r.verdict
    );
}

#[test]
fn stderr_counts_as_output() {
    assert_eq!(
        run("NAME a\nRUN echo oops >&2\nEXPECT oops\n").verdict,
        Verdict::Pass
    );
}

#[test]
fn requires_failure_skips_with_the_condition() {
    let r = run("NAME a\nRUN false\nEXPECT x\nREQUIRES test -e /nonexistent\n");
    assert_eq!(
        r.verdict,
        Verdict::Skip("unmet condition: test -e /nonexistent".into())
    );
}

#[test]
fn kernels_filter_skips_other_kernels() {
    let r = run("NAME a\nRUN false\nEXPECT x\nKERNELS >= 6.6\n");
    assert_eq!(
        r.verdict,
        Verdict::Skip("kernel 6.1.0 is not in `>= 6.6`".into())
    );
    assert_eq!(
        run("NAME a\nRUN echo x\nEXPECT x\nKERNELS 5.10 6.1\n").verdict,
        Verdict::Pass
    );
}

#[test]
fn timed_out_command_is_judged_on_its_output() {
    let start = Instant::now();
    let r = run("NAME a\nRUN echo ready; sleep 30\nEXPECT ready\nTIMEOUT 0.3\n");
    assert_eq!(r.verdict, Verdict::Pass, "{:#?}", r.details);
    let r = run("NAME b\nRUN sleep 30\nEXPECT ready\nTIMEOUT 0.3\n");
    assert!(
        matches!(&r.verdict, Verdict::Fail(w) if w.starts_with("timed out after 0.3 s")),
        "{:?}",
        r.verdict
    );
    assert!(start.elapsed() < Duration::from_secs(10));
}

#[test]
fn timeout_scale_stretches_timeouts() {
    let mut o = opts("/bin/echo");
    o.timeout_scale = 10.0;
    let r = run_with(
        "NAME a\nRUN sleep 0.5; echo late\nEXPECT late\nTIMEOUT 0.1\n",
        &o,
    );
    assert_eq!(r.verdict, Verdict::Pass, "{:#?}", r.details);
}

#[test]
fn after_starts_once_the_command_reports_attachment() {
    // The command announces attachment, then waits for AFTER to create a file.
    let dir = std::env::temp_dir().join(format!("strobe-runner-after-{}", std::process::id()));
    let _ = std::fs::remove_file(&dir);
    let text = format!(
        "NAME a\nRUN test -e {p} && echo early; echo $__STROBE_NOTIFY_PROBES_ATTACHED; echo __STROBE_NOTIFY_PROBES_ATTACHED; i=0; while [ ! -e {p} ] && [ $i -lt 300 ]; do sleep 0.01; i=$((i+1)); done; test -e {p} && echo saw-after\nEXPECT saw-after\nEXPECT_NONE early\nEXPECT_NONE __STROBE_NOTIFY_PROBES_ATTACHED\nAFTER touch {p}\nCLEANUP rm -f {p}\n",
        p = dir.display()
    );
    let r = run(&text);
    assert_eq!(r.verdict, Verdict::Pass, "{:#?}", r.details);
    assert!(!dir.exists());
}

#[test]
fn before_runs_during_the_command_and_its_pid_is_substituted() {
    let r =
        run("NAME a\nBEFORE sleep 30\nRUN kill -0 {{BEFORE_PID}} && echo alive\nEXPECT alive\n");
    assert_eq!(r.verdict, Verdict::Pass, "{:#?}", r.details);
}

#[test]
fn prog_runs_strobe_with_dash_e_and_env() {
    // A stand-in strobe that shows how it was called.
    let fake = std::env::temp_dir().join(format!("strobe-runner-fake-{}", std::process::id()));
    std::fs::write(
        &fake,
        "#!/bin/sh\necho \"argc=$# 1=$1 2=$2 notify=$__STROBE_NOTIFY_PROBES_ATTACHED\"\n",
    )
    .unwrap();
    use std::os::unix::fs::PermissionsExt;
    std::fs::set_permissions(&fake, std::fs::Permissions::from_mode(0o755)).unwrap();
    let r = run_with(
        "NAME a\nPROG BEGIN { exit(); }\nEXPECT argc=2 1=-e 2=BEGIN { exit(); } notify=\n",
        &opts(&fake.to_string_lossy()),
    );
    let _ = std::fs::remove_file(&fake);
    assert_eq!(r.verdict, Verdict::Pass, "{:#?}", r.details);
    let r = run("NAME a\nRUN echo $GREETING\nEXPECT hi\nENV GREETING=hi\n");
    assert_eq!(r.verdict, Verdict::Pass, "{:#?}", r.details);
}

#[test]
fn failing_setup_fails_the_case_before_the_command() {
    let r = run("NAME a\nSETUP echo broken; exit 1\nRUN echo x\nEXPECT x\n");
    assert!(
        matches!(&r.verdict, Verdict::Fail(w) if w.contains("SETUP")),
        "{:?}",
        r.verdict
    );
    assert!(r.details.join("\n").contains("  | broken"));
}

#[test]
fn strobe_path_is_substituted_quoted() {
    assert_eq!(
        expand("{{STROBE}} -l", Path::new("/bin/strobe"), None),
        "/bin/strobe -l"
    );
    assert_eq!(
        expand("{{BPFTRACE}} x", Path::new("/a b/strobe"), None),
        "'/a b/strobe' x"
    );
    assert_eq!(
        expand("kill {{BEFORE_PID}}", Path::new("/s"), Some(42)),
        "kill 42"
    );
}

#[test]
fn workload_program_names_are_found_for_plain_commands_only() {
    assert_eq!(program_name("exec sleep 30").as_deref(), Some("sleep"));
    assert_eq!(program_name("sleep 30").as_deref(), Some("sleep"));
    assert_eq!(program_name("FOO=1 /bin/sh -c x").as_deref(), Some("sh"));
    assert_eq!(program_name("while true; do cat /etc/passwd; done"), None);
    assert_eq!(program_name("echo hi"), None);
    assert_eq!(program_name("./no-such-program"), None);
}

#[test]
fn command_starts_only_once_the_before_program_runs() {
    // Without the wait, the command can read the comm of the shell that has not yet exec'd
    // `sleep` (seen in the VM); repeat to give the race a chance.
    for _ in 0..10 {
        let r =
            run("NAME a\nBEFORE exec sleep 30\nRUN cat /proc/{{BEFORE_PID}}/comm\nEXPECT sleep\n");
        assert_eq!(r.verdict, Verdict::Pass, "{:#?}", r.details);
    }
}

#[test]
fn exact_stdout_passes_byte_for_byte_and_ignores_stderr() {
    let case = "NAME e\nRUN printf 'a\\n\\n b \\n'; echo noise >&2\nEXPECT_EXACT |a\n             |\n             | b \n";
    assert_eq!(run(case).verdict, Verdict::Pass, "{:#?}", run(case).details);
}

#[test]
fn exact_stdout_fails_on_a_missing_blank_line_or_trailing_space() {
    for out in [
        "a\\n b \\n",
        "a\\n\\n b\\n",
        "a\\n\\n b \\n\\n",
        "a\\n\\n b ",
    ] {
        let case = format!(
            "NAME e\nRUN printf '{out}'\nEXPECT_EXACT |a\n             |\n             | b \n"
        );
        let r = run(&case);
        let Verdict::Fail(why) = &r.verdict else {
            panic!("{out:?} passed")
        };
        assert!(why.contains("EXPECT_EXACT"), "{why}");
        let text = r.details.join("\n");
        assert!(text.contains("first difference at stdout line"), "{text}");
    }
}

#[test]
fn bare_exact_expects_no_stdout() {
    assert_eq!(
        run("NAME e\nRUN echo only-stderr >&2\nEXPECT_EXACT\n").verdict,
        Verdict::Pass
    );
    assert!(matches!(
        run("NAME e\nRUN echo out\nEXPECT_EXACT\n").verdict,
        Verdict::Fail(_)
    ));
}

#[test]
fn before_pid_is_substituted_in_prog() {
    let r = run("NAME a\nBEFORE exec sleep 30\nPROG pid == {{BEFORE_PID}}\nEXPECT_REGEX ^pid == [1-9][0-9]*$\n");
    assert_eq!(r.verdict, Verdict::Pass, "{:#?}", r.details);
}
