//! LLVM as a test-only oracle: finds the `ziglang` Python package's bundled clang (which
//! assembles ISA v4) and `llvm-objdump`, and runs them. A missing tool makes the calling test
//! skip loudly through `strobe_testkit::skip`, never pass silently.
//!
//! The oracle's Python is `$STROBE_ORACLE_PYTHON` when that file exists, else the repository's
//! `.cache/oracle-venv/bin/python` (which `scripts/setup` creates with `pip install ziglang`).
#![allow(dead_code)]

use std::path::{Path, PathBuf};
use std::process::Command;
use std::sync::atomic::{AtomicUsize, Ordering};

pub struct Oracle {
    python: PathBuf,
}

fn candidates() -> Vec<PathBuf> {
    let mut c = Vec::new();
    if let Some(p) = std::env::var_os("STROBE_ORACLE_PYTHON") {
        c.push(PathBuf::from(p));
    }
    c.push(Path::new(env!("CARGO_MANIFEST_DIR")).join(".cache/oracle-venv/bin/python"));
    c
}

impl Oracle {
    /// The oracle, or `None` after recording that `test` was skipped and why.
    pub fn find(test: &str) -> Option<Oracle> {
        for python in candidates() {
            if !python.exists() {
                continue;
            }
            let ok = Command::new(&python)
                .args(["-m", "ziglang", "version"])
                .output()
                .is_ok_and(|o| o.status.success());
            if ok {
                return Some(Oracle { python });
            }
        }
        strobe_testkit::skip(
            test,
            "LLVM oracle missing: no python with the `ziglang` package at $STROBE_ORACLE_PYTHON \
             or .cache/oracle-venv/bin/python (run scripts/setup)",
        );
        None
    }

    /// Runs `python -m ziglang ARGS…`; `Err` holds the command's stderr.
    pub fn run(&self, args: &[&str]) -> Result<(), String> {
        let out = Command::new(&self.python)
            .args(["-m", "ziglang"])
            .args(args)
            .output()
            .map_err(|e| format!("cannot run {}: {e}", self.python.display()))?;
        if out.status.success() {
            Ok(())
        } else {
            Err(String::from_utf8_lossy(&out.stderr).into_owned())
        }
    }

    /// Assembles BPF assembly text for `-mcpu=<cpu>` into an object file.
    pub fn assemble(&self, src: &Path, out: &Path, cpu: &str) -> Result<(), String> {
        self.cc(src, out, cpu, &[])
    }

    /// Compiles C with `-O2 -g` (so the object carries `.BTF` and `.BTF.ext`).
    pub fn compile_c(&self, src: &Path, out: &Path, cpu: &str) -> Result<(), String> {
        self.cc(src, out, cpu, &["-O2", "-g"])
    }

    fn cc(&self, src: &Path, out: &Path, cpu: &str, extra: &[&str]) -> Result<(), String> {
        let mcpu = format!("-mcpu={cpu}");
        let mut args = vec!["cc", "-target", "bpfel-freestanding-none", &mcpu];
        args.extend_from_slice(extra);
        args.extend_from_slice(&["-c", src.to_str().unwrap(), "-o", out.to_str().unwrap()]);
        self.run(&args)
    }
}

/// `llvm-objdump` (any version) on PATH, or `None` after recording the skip.
pub fn llvm_objdump(test: &str) -> Option<PathBuf> {
    for name in [
        "llvm-objdump",
        "llvm-objdump-19",
        "llvm-objdump-16",
        "llvm-objdump-14",
    ] {
        let found = Command::new(name)
            .arg("--version")
            .output()
            .is_ok_and(|o| o.status.success());
        if found {
            return Some(PathBuf::from(name));
        }
    }
    strobe_testkit::skip(
        test,
        "llvm-objdump not found on PATH (Debian package `llvm`; scripts/setup installs it)",
    );
    None
}

/// A scratch directory removed on drop.
pub struct TempDir(PathBuf);

impl TempDir {
    pub fn new(tag: &str) -> TempDir {
        static N: AtomicUsize = AtomicUsize::new(0);
        let dir = std::env::temp_dir().join(format!(
            "strobe-{tag}-{}-{}",
            std::process::id(),
            N.fetch_add(1, Ordering::Relaxed)
        ));
        std::fs::create_dir_all(&dir).unwrap();
        TempDir(dir)
    }

    pub fn path(&self) -> &Path {
        &self.0
    }
}

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}
