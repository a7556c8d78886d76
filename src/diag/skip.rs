//! Unit-test support: a test that needs a kernel capability checks for it at run time and,
//! when it is missing, reports the skip here, the way the dev crate's `strobe_testkit::skip`
//! does for integration tests (stderr, and a line in `$STROBE_SKIP_LOG` that `scripts/test`
//! lists at the end). It sits in this leaf module so that any module's unit tests can use it;
//! it is compiled for tests only.

use std::io::Write;

/// Records that `test` was skipped because of `reason`, on stderr and in `$STROBE_SKIP_LOG`.
pub(crate) fn skip(test: &str, reason: &str) {
    eprintln!("SKIPPED {test}: {reason}");
    if let Some(path) = std::env::var_os("STROBE_SKIP_LOG") {
        if let Ok(mut f) = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(path)
        {
            // One write per line: tests run on parallel threads, and O_APPEND keeps a single
            // small write whole.
            let _ = f.write_all(format!("{test}: {reason}\n").as_bytes());
        }
    }
}
