//! The `strobe-cases` command end to end on the host (run in-process: the binary, in the
//! dev-only `strobe-testkit` crate, is a thin wrapper around `cases_cli::run`): case files
//! parse, cases run against the real `strobe` binary, and the machine-readable lines that
//! scripts/vmtest reads from the VM serial console keep their shape.

use std::ffi::OsString;
use std::path::Path;

/// What one `strobe-cases` run printed and its exit status.
struct Output {
    status: Status,
    stdout: Vec<u8>,
    stderr: Vec<u8>,
}

struct Status(u8);

impl Status {
    fn code(&self) -> Option<i32> {
        Some(i32::from(self.0))
    }
}

/// `strobe-cases --strobe STROBE ARGS…`, collected as a process's output would be.
struct StrobeCases(Vec<OsString>);

fn strobe_cases() -> StrobeCases {
    StrobeCases(vec![
        "strobe-cases".into(),
        "--strobe".into(),
        env!("CARGO_BIN_EXE_strobe").into(),
    ])
}

impl StrobeCases {
    fn args<const N: usize>(mut self, args: [&str; N]) -> Self {
        self.0.extend(args.map(OsString::from));
        self
    }

    fn arg(mut self, arg: impl AsRef<std::ffi::OsStr>) -> Self {
        self.0.push(arg.as_ref().to_owned());
        self
    }

    fn output(self) -> std::io::Result<Output> {
        let (mut stdout, mut stderr) = (Vec::new(), Vec::new());
        let code = strobe_testkit::cases_cli::run(self.0, &mut stdout, &mut stderr);
        Ok(Output {
            status: Status(code),
            stdout,
            stderr,
        })
    }
}

#[test]
fn every_vm_case_file_parses() {
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/vm");
    let mut files = 0;
    for entry in std::fs::read_dir(&dir).unwrap() {
        let path = entry.unwrap().path();
        if path.extension().is_some_and(|e| e == "case") {
            let cases = strobe_testkit::cases::parse_file(&path)
                .unwrap_or_else(|e| panic!("{}: {e}", path.display()));
            assert!(!cases.is_empty(), "{} holds no case", path.display());
            files += 1;
        }
    }
    assert!(files > 0, "no case files in {}", dir.display());
}

#[test]
fn machine_output_reports_each_verdict_and_a_result_line() {
    let dir = std::env::temp_dir().join(format!("strobe-case-runner-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    std::fs::write(
        dir.join("demo.case"),
        "NAME version\nRUN {{STROBE}} --version\nEXPECT_REGEX ^strobe [0-9]+\\.\n\n\
         NAME wrong\nRUN {{STROBE}} --version\nEXPECT no such line\n\n\
         NAME elsewhere\nRUN true\nEXPECT x\nKERNELS 2.6\n",
    )
    .unwrap();
    let out = strobe_cases()
        .args(["--machine", "T", "--kernel", "6.1.0-50-amd64"])
        .arg(&dir)
        .output()
        .unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert_eq!(out.status.code(), Some(1), "{stdout}");
    let records: Vec<Vec<&str>> = stdout
        .lines()
        .filter(|l| l.starts_with("T-CASE\t"))
        .map(|l| l.split('\t').collect())
        .collect();
    let verdicts: Vec<(&str, &str)> = records.iter().map(|r| (r[1], r[2])).collect();
    assert_eq!(
        verdicts,
        [
            ("pass", "demo.version"),
            ("fail", "demo.wrong"),
            ("skip", "demo.elsewhere")
        ]
    );
    assert!(records.iter().all(|r| r.len() == 5), "{records:?}");
    assert!(
        stdout.contains("T-OUT\tdemo.wrong\tfailed: not satisfied: EXPECT no such line"),
        "{stdout}"
    );
    assert!(
        stdout.contains("T-OUT\tdemo.wrong\t  | strobe "),
        "{stdout}"
    );
    assert_eq!(
        stdout.lines().last(),
        Some("T-RESULT passed=1 failed=1 skipped=1")
    );
}

#[test]
fn broken_case_file_is_a_usage_error_naming_the_line() {
    let dir = std::env::temp_dir().join(format!("strobe-case-runner-bad-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    let file = dir.join("bad.case");
    std::fs::write(&file, "NAME x\nRUN true\nEXPEKT y\n").unwrap();
    let out = strobe_cases().arg(&file).output().unwrap();
    let _ = std::fs::remove_dir_all(&dir);
    assert_eq!(out.status.code(), Some(2));
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("bad:3: unknown directive `EXPEKT` (did you mean `EXPECT`?)"),
        "{stderr}"
    );
}
