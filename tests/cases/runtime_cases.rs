//! Runs every `tests/runtime/*.case` (bpftrace's declarative runtime-test format, parsed and
//! run by `strobe_testkit`) against the built binary on this host. Cases need root with
//! CAP_BPF; without it the whole test is skipped loudly.

use std::path::Path;

use strobe_testkit::cases::parse_file;
use strobe_testkit::report::human;
use strobe_testkit::runner::{run_case, RunOptions, Verdict};

#[test]
fn host_runtime_cases_pass() {
    let strobe = Path::new(env!("CARGO_BIN_EXE_strobe"));
    let probe = std::process::Command::new(strobe)
        .args(["-e", "BEGIN { exit(); }"])
        .output();
    if !probe.map(|o| o.status.success()).unwrap_or(false) {
        strobe_testkit::skip(
            "host_runtime_cases_pass",
            "cannot load BPF programs here (need root with CAP_BPF)",
        );
        return;
    }
    let dir = Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/runtime");
    let mut files: Vec<_> = std::fs::read_dir(&dir)
        .expect("tests/runtime exists")
        .filter_map(|e| e.ok().map(|e| e.path()))
        .filter(|p| p.extension().is_some_and(|x| x == "case"))
        .collect();
    files.sort();
    let opts = RunOptions {
        strobe: strobe.to_path_buf(),
        kernel: None,
        timeout_scale: 2.0,
    };
    let (mut passed, mut failed, mut skipped) = (0, Vec::new(), 0);
    for f in &files {
        let cases = parse_file(f).unwrap_or_else(|e| panic!("{}: {e}", f.display()));
        for c in &cases {
            let r = run_case(c, &dir, &opts);
            match &r.verdict {
                Verdict::Pass => passed += 1,
                Verdict::Skip(why) => {
                    skipped += 1;
                    strobe_testkit::skip(&r.id, why);
                }
                Verdict::Fail(_) => failed.push(human(&r).join("\n")),
            }
        }
    }
    eprintln!(
        "runtime cases: {passed} passed, {} failed, {skipped} skipped",
        failed.len()
    );
    assert!(passed > 0, "no runtime case ran");
    assert!(failed.is_empty(), "{}", failed.join("\n\n"));
}
