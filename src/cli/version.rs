//! The lines `strobe --version` prints after `strobe X.Y.Z`: the git commit it was built from,
//! the features compiled in and the build target (facts gathered by build/version.rs).

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
}
