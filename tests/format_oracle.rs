//! Re-verifies the output-format goldens against the real bpftrace when it is installed and
//! works here (the goldens were captured from bpftrace 0.17). `BLESS=1` rewrites the golden
//! bodies from bpftrace's live output. Skips loudly when bpftrace is missing, is another
//! version, or cannot run probes (needs root).

mod format_support;

use std::process::Command;

use strobe::testkit;

fn run_bpftrace(flags: &[String], program: &str) -> Option<Vec<u8>> {
    let out = Command::new("timeout")
        .arg("60")
        .arg("bpftrace")
        .args(flags)
        .arg("-e")
        .arg(program)
        .output()
        .ok()?;
    out.status.success().then_some(out.stdout)
}

/// Why the oracle cannot be used here, if it cannot.
fn oracle_unusable() -> Option<String> {
    let v = match Command::new("bpftrace").arg("--version").output() {
        Ok(o) => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        Err(e) => return Some(format!("bpftrace not runnable: {e}")),
    };
    if !v.starts_with("bpftrace v0.17") {
        return Some(format!(
            "goldens were captured with bpftrace v0.17, this host has {v:?}"
        ));
    }
    match run_bpftrace(&[], r#"BEGIN { printf("ok\n"); exit(); }"#) {
        Some(o) if String::from_utf8_lossy(&o).contains("ok") => None,
        _ => Some("bpftrace cannot run a BEGIN probe here (root and BPF needed)".into()),
    }
}

#[test]
fn goldens_match_live_bpftrace() {
    if let Some(why) = oracle_unusable() {
        testkit::skip("goldens_match_live_bpftrace", &why);
        return;
    }
    let bless = std::env::var_os("BLESS").is_some_and(|v| v == "1");
    let names = format_support::all_names();
    assert!(names.len() >= 10, "goldens missing: {names:?}");
    for name in names {
        let g = format_support::load(&name);
        let live = run_bpftrace(&g.flags, &g.program)
            .unwrap_or_else(|| panic!("{name}: bpftrace failed on {:?}", g.program));
        if bless {
            let mut f = g.header.clone().into_bytes();
            f.extend_from_slice(&live);
            std::fs::write(&g.path, f).expect("write golden");
            eprintln!("blessed {}", g.path.display());
        } else {
            format_support::assert_same(&name, &live, &g.body);
        }
    }
}
