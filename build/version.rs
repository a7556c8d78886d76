//! Build-time facts for `strobe --version`, exported to the crate as environment variables:
//! `STROBE_GIT_COMMIT` (`git rev-parse --short HEAD`, or `unknown` outside a git checkout or
//! without git), `STROBE_FEATURES` (the cargo features enabled, plus `static` when linked with
//! `+crt-static`; `none` when empty) and `STROBE_BUILD` (target triple and profile).
//!
//! Invariant: the build script reruns when the checked-out commit changes (HEAD, the branch's
//! ref file, packed refs), not on every source edit.

use std::path::Path;
use std::process::Command;

pub fn emit() {
    let root = std::env::var("CARGO_MANIFEST_DIR").unwrap_or_else(|_| ".".to_string());
    let root = Path::new(&root);
    println!("cargo:rerun-if-changed=build/version.rs");

    let commit = git(root, &["rev-parse", "--short", "HEAD"]).unwrap_or_else(|| "unknown".into());
    println!("cargo:rustc-env=STROBE_GIT_COMMIT={commit}");
    // HEAD names the branch; the branch's ref file (or packed-refs) holds the commit. In a
    // worktree these live in different directories, which `--git-path` resolves.
    let mut watched = vec!["HEAD".to_string(), "packed-refs".to_string()];
    if let Some(r) = git(root, &["symbolic-ref", "-q", "HEAD"]) {
        watched.push(r);
    }
    for w in watched {
        if let Some(p) = git(root, &["rev-parse", "--git-path", &w]) {
            let p = root.join(p);
            if p.exists() {
                println!("cargo:rerun-if-changed={}", p.display());
            }
        }
    }

    let mut features: Vec<String> = std::env::vars()
        .filter_map(|(k, _)| {
            k.strip_prefix("CARGO_FEATURE_")
                .map(|f| f.to_lowercase().replace('_', "-"))
        })
        .collect();
    features.sort();
    let target_features = std::env::var("CARGO_CFG_TARGET_FEATURE").unwrap_or_default();
    if target_features.split(',').any(|f| f == "crt-static") {
        features.push("static".to_string());
    }
    let features = if features.is_empty() {
        "none".to_string()
    } else {
        features.join(", ")
    };
    println!("cargo:rustc-env=STROBE_FEATURES={features}");

    let target = std::env::var("TARGET").unwrap_or_default();
    let profile = std::env::var("PROFILE").unwrap_or_default();
    println!("cargo:rustc-env=STROBE_BUILD={target}, {profile}");
}

fn git(root: &Path, args: &[&str]) -> Option<String> {
    let out = Command::new("git")
        .args(args)
        .current_dir(root)
        .output()
        .ok()?;
    let text = String::from_utf8(out.stdout).ok()?;
    let text = text.trim();
    (out.status.success() && !text.is_empty()).then(|| text.to_string())
}
