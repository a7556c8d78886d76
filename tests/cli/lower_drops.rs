//! The map-full drop counter of lowered code, run on this host's kernel through the real
//! binary: updates that fail because a map is full are counted (through the direct map-value
//! pointer of the one-slot drops array) and reported once at exit, for plain stores and
//! aggregations alike.

use std::process::Command;

#[test]
fn updates_to_a_full_map_are_counted_and_reported_at_exit() {
    let strobe = env!("CARGO_BIN_EXE_strobe");
    let ok = Command::new(strobe)
        .args(["-e", "BEGIN { exit(); }"])
        .output()
        .map(|o| o.status.success())
        .unwrap_or(false);
    if !ok {
        strobe_testkit::skip(
            "updates_to_a_full_map_are_counted_and_reported_at_exit",
            "cannot load BPF programs here (need root with CAP_BPF)",
        );
        return;
    }
    // Two slots per map: @[3] is one failed store, @c[3] and @c[4] two failed aggregations.
    let script = "config = { max_map_keys = 2 } BEGIN { @[1] = 1; @[2] = 2; @[3] = 3; \
                  @c[1] = count(); @c[2] = count(); @c[3] = count(); @c[4] = count(); exit(); }";
    let o = Command::new(strobe).args(["-e", script]).output().unwrap();
    let stdout = String::from_utf8_lossy(&o.stdout);
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(o.status.success(), "{stderr}");
    assert_eq!(stdout, "\n\n@[1]: 1\n@[2]: 2\n@c[1]: 1\n@c[2]: 1\n");
    assert!(
        stderr.contains("WARNING: Map full; can't update element (3 map updates were dropped)"),
        "{stderr}"
    );
    // No drops, no warning.
    let o = Command::new(strobe)
        .args(["-e", "BEGIN { @[1] = 1; exit(); }"])
        .output()
        .unwrap();
    assert!(!String::from_utf8_lossy(&o.stderr).contains("dropped"));
}
