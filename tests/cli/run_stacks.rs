//! `ustack` map keys resolved per process: a uprobe on a function that a long-lived workload
//! calls in a loop, the map printed at exit while that process still runs, so its frames
//! resolve to the probed function's name through `/proc/PID/maps` and the ELF symbols.
//! Needs root with CAP_BPF and python3 (ctypes calls libc's `getenv` directly).

use std::process::{Command, Stdio};

fn strobe() -> &'static str {
    env!("CARGO_BIN_EXE_strobe")
}

/// Kills the workload when the test ends, however it ends.
struct Workload(std::process::Child);

impl Drop for Workload {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn usable(test: &str) -> bool {
    let bpf = Command::new(strobe())
        .args(["-e", "BEGIN { exit(); }"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !bpf {
        strobe_testkit::skip(
            test,
            "cannot load BPF programs here (need root with CAP_BPF)",
        );
        return false;
    }
    let py = Command::new("python3")
        .args(["-c", "import ctypes"])
        .output()
        .is_ok_and(|o| o.status.success());
    if !py {
        strobe_testkit::skip(test, "python3 with ctypes is not installed");
    }
    py
}

#[test]
fn ustack_key_from_a_uprobe_names_the_probed_function() {
    let test = "ustack_key_from_a_uprobe_names_the_probed_function";
    if !usable(test) {
        return;
    }
    let child = Command::new("python3")
        .args([
            "-c",
            "import ctypes, time\n\
             libc = ctypes.CDLL('libc.so.6')\n\
             for _ in range(400):\n    libc.getenv(b'STROBE_STACKS'); time.sleep(0.05)\n",
        ])
        .stdout(Stdio::null())
        .spawn()
        .expect("python3 starts");
    let pid = child.id();
    let _w = Workload(child);
    let script = format!("uprobe:libc:getenv /pid == {pid}/ {{ @[ustack] = count(); exit(); }}");
    let o = Command::new("timeout")
        .args(["15", strobe(), "-e", &script])
        .output()
        .expect("strobe runs");
    let out = String::from_utf8_lossy(&o.stdout);
    assert!(
        o.status.success(),
        "strobe failed: {out}\n{}",
        String::from_utf8_lossy(&o.stderr)
    );
    let lines: Vec<&str> = out.lines().collect();
    let open = lines
        .iter()
        .position(|l| *l == "@[")
        .unwrap_or_else(|| panic!("no stack key in:\n{out}"));
    // bpftrace's layout: the innermost frame first, four spaces in, `symbol+offset`.
    assert_eq!(lines.get(open + 1), Some(&"    getenv+0"), "output:\n{out}");
    assert!(
        lines.iter().any(|l| l.starts_with("]: ")),
        "no count after the key:\n{out}"
    );
}
