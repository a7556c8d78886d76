//! The default (bpftrace-style) command line: `-e`, script files, `-`, `-d ast`, `--dry-run`,
//! and exit codes (0 ok, 1 script error, 2 usage error).

use std::io::Write;
use std::process::{Command, Output, Stdio};

fn strobe(args: &[&str], stdin: Option<&str>) -> Output {
    let mut child = Command::new(env!("CARGO_BIN_EXE_strobe"))
        .args(args)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .expect("strobe runs");
    if let Some(text) = stdin {
        child
            .stdin
            .take()
            .expect("stdin")
            .write_all(text.as_bytes())
            .expect("write stdin");
    }
    drop(child.stdin.take());
    child.wait_with_output().expect("strobe exits")
}

fn text(b: &[u8]) -> String {
    String::from_utf8_lossy(b).into_owned()
}

#[test]
fn dry_run_of_a_valid_program_succeeds_silently() {
    let o = strobe(
        &["--dry-run", "-e", "BEGIN { printf(\"hi\\n\"); exit(); }"],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(text(&o.stderr), "");
}

#[test]
fn dry_run_of_an_invalid_program_prints_located_errors_and_exits_1() {
    let o = strobe(&["--dry-run", "-e", "BEGIN { $x = ; }\nkprbe:f { }"], None);
    assert_eq!(o.status.code(), Some(1));
    let err = text(&o.stderr);
    assert!(
        err.starts_with("stdin:1:13-") && err.contains(": ERROR: expected expression\n"),
        "{err}"
    );
    assert!(
        err.contains(": ERROR: unknown probe type 'kprbe'\n") && err.contains("\nstdin:2:1-"),
        "{err}"
    );
    assert!(err.contains("help: did you mean 'kprobe'?"), "{err}");
}

#[test]
fn debug_ast_prints_the_tree_on_stdout() {
    let o = strobe(
        &["-d", "ast", "-e", "kprobe:vfs_read { @[comm] = count(); }"],
        None,
    );
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    assert_eq!(
        text(&o.stdout),
        "Program @1:1
  Probe @1:1
    AttachPoint kprobe:vfs_read (kprobe func=vfs_read) @1:1
    Block @1:17
      Assign = @1:19
        Map @ @1:19
          Ident comm @1:21
        Call count @1:29
"
    );
}

#[test]
fn script_file_with_positional_arguments_and_stdin_script() {
    let dir = std::env::temp_dir().join(format!("strobe-cli-{}", std::process::id()));
    std::fs::create_dir_all(&dir).expect("temp dir");
    let path = dir.join("t.bt");
    std::fs::write(&path, "BEGIN { printf(\"%d\\n\", $1); exit(); }\n").expect("write");
    let p = path.to_str().expect("utf-8 path");
    let o = strobe(&["--dry-run", p, "42", "-x"], None);
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));

    std::fs::write(&path, "BEGIN { $x = ; }\n").expect("write");
    let o = strobe(&["--dry-run", p], None);
    assert_eq!(o.status.code(), Some(1));
    assert!(text(&o.stderr).starts_with(&format!("{p}:1:13-")));

    let o = strobe(&["--dry-run", "-"], Some("END { }"));
    assert_eq!(o.status.code(), Some(0), "{}", text(&o.stderr));
    let _ = std::fs::remove_dir_all(dir);
}

#[test]
fn usage_errors_exit_2() {
    for args in [
        &["--dry-run"][..],
        &["--no-such-flag", "-e", "BEGIN {}"][..],
        &["-d", "nonsense", "-e", "BEGIN {}"][..],
        &["--dry-run", "/nonexistent/script.bt"][..],
    ] {
        let o = strobe(args, None);
        assert_eq!(o.status.code(), Some(2), "{args:?}: {}", text(&o.stderr));
    }
}

#[test]
fn help_says_what_dry_run_does_today() {
    let o = strobe(&["--help"], None);
    assert_eq!(o.status.code(), Some(0));
    let out = text(&o.stdout);
    assert!(out.contains("--dry-run"), "{out}");
    assert!(out.contains("and compiles the script without"), "{out}");
}
