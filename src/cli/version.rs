//! The lines `strobe --version` prints after `strobe X.Y.Z`: the git commit it was built from,
//! the features compiled in and the build target (facts gathered by build/version.rs).

/// The bpftrace release whose language, CLI and output strobe follows.
pub const BPFTRACE_COMPAT: &str = "0.26.0";

/// `strobe X.Y.Z`, then the same in bpftrace's shape (`bpftrace vX.Y.Z`, which tools
/// written for bpftrace look for) naming the bpftrace release strobe speaks.
pub fn banner() -> String {
    format!(
        "strobe {}\nbpftrace v{BPFTRACE_COMPAT} (spoken by strobe {})\n",
        env!("CARGO_PKG_VERSION"),
        env!("CARGO_PKG_VERSION")
    )
}

/// One line for `--info`: strobe's version and the bpftrace release it follows.
pub fn short() -> String {
    format!(
        "strobe {} (bpftrace v{BPFTRACE_COMPAT} language)",
        env!("CARGO_PKG_VERSION")
    )
}

/// `commit: …`, `features: …` and `build: …`, each ending in a newline.
pub fn details() -> String {
    format!(
        "commit: {}\nfeatures: {}\nbuild: {}\n",
        env!("STROBE_GIT_COMMIT"),
        env!("STROBE_FEATURES"),
        env!("STROBE_BUILD"),
    )
}

#[cfg(test)]
mod tests {
    #[test]
    fn details_name_commit_features_and_build() {
        let d = super::details();
        let keys: Vec<&str> = d
            .lines()
            .filter_map(|l| l.split_once(": "))
            .map(|(k, _)| k)
            .collect();
        assert_eq!(keys, ["commit", "features", "build"]);
        assert!(d.lines().all(|l| !l.ends_with(": ")), "{d}");
    }

    #[test]
    fn banner_has_strobe_first_and_a_bpftrace_shaped_line() {
        let b = super::banner();
        let lines: Vec<&str> = b.lines().collect();
        assert!(lines[0].starts_with("strobe "), "{b}");
        assert!(lines[1].starts_with("bpftrace v0."), "{b}");
    }
}
