//! Printing case results, for people and for the VM harness.
//!
//! Input: [`CaseReport`]s. Output: text lines. The human form is `[  OK  ] suite.name (12 ms)`
//! with indented details under a failure. The machine form, used inside the VM where the host
//! reads the serial console, is one tab-separated line per case,
//! `PREFIX-CASE<TAB>pass|fail|skip<TAB>suite.name<TAB>ms<TAB>reason`, then
//! `PREFIX-OUT<TAB>suite.name<TAB>detail` per detail line of a failure, and finally
//! `PREFIX-RESULT passed=N failed=M skipped=K`. Tabs and newlines inside fields become spaces,
//! so every record is exactly one line.

use super::runner::{CaseReport, Verdict};

/// Counts of verdicts.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Summary {
    pub passed: usize,
    pub failed: usize,
    pub skipped: usize,
}

impl Summary {
    pub fn add(&mut self, v: &Verdict) {
        match v {
            Verdict::Pass => self.passed += 1,
            Verdict::Fail(_) => self.failed += 1,
            Verdict::Skip(_) => self.skipped += 1,
        }
    }
}

/// The human-readable lines for one case.
pub fn human(r: &CaseReport) -> Vec<String> {
    let ms = r.elapsed.as_millis();
    let mut out = vec![match &r.verdict {
        Verdict::Pass => format!("[  OK  ] {} ({ms} ms)", r.id),
        Verdict::Skip(why) => format!("[ SKIP ] {}: {why}", r.id),
        Verdict::Fail(why) => format!("[ FAIL ] {} ({ms} ms): {why}", r.id),
    }];
    out.extend(r.details.iter().map(|d| format!("    {d}")));
    out
}

/// The machine-readable lines for one case.
pub fn machine(prefix: &str, r: &CaseReport) -> Vec<String> {
    let (kind, why) = match &r.verdict {
        Verdict::Pass => ("pass", ""),
        Verdict::Fail(w) => ("fail", w.as_str()),
        Verdict::Skip(w) => ("skip", w.as_str()),
    };
    let id = one_field(&r.id);
    let mut out = vec![format!(
        "{prefix}-CASE\t{kind}\t{id}\t{}\t{}",
        r.elapsed.as_millis(),
        one_field(why)
    )];
    out.extend(
        r.details
            .iter()
            .map(|d| format!("{prefix}-OUT\t{id}\t{}", one_field(d))),
    );
    out
}

/// The closing machine-readable line.
pub fn machine_result(prefix: &str, s: &Summary) -> String {
    format!(
        "{prefix}-RESULT passed={} failed={} skipped={}",
        s.passed, s.failed, s.skipped
    )
}

fn one_field(s: &str) -> String {
    s.replace(['\t', '\n', '\r'], " ")
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::time::Duration;

    fn report(verdict: Verdict, details: &[&str]) -> CaseReport {
        CaseReport {
            id: "info.fentry".into(),
            verdict,
            elapsed: Duration::from_millis(42),
            details: details.iter().map(|s| s.to_string()).collect(),
        }
    }

    #[test]
    fn machine_lines_are_one_record_per_line_with_tabs_only_between_fields() {
        let r = report(Verdict::Fail("a\tb\nc".into()), &["output:", "  | x\ty"]);
        let lines = machine("STROBE-VMTEST", &r);
        assert_eq!(
            lines,
            [
                "STROBE-VMTEST-CASE\tfail\tinfo.fentry\t42\ta b c",
                "STROBE-VMTEST-OUT\tinfo.fentry\toutput:",
                "STROBE-VMTEST-OUT\tinfo.fentry\t  | x y",
            ]
        );
    }

    #[test]
    fn summary_counts_each_verdict() {
        let mut s = Summary::default();
        for v in [
            Verdict::Pass,
            Verdict::Pass,
            Verdict::Fail("x".into()),
            Verdict::Skip("y".into()),
        ] {
            s.add(&v);
        }
        assert_eq!(
            machine_result("P", &s),
            "P-RESULT passed=2 failed=1 skipped=1"
        );
    }

    #[test]
    fn human_lines_show_details_under_a_failure_only() {
        let pass = human(&report(Verdict::Pass, &[]));
        assert_eq!(pass, ["[  OK  ] info.fentry (42 ms)"]);
        let fail = human(&report(Verdict::Fail("no".into()), &["command: x"]));
        assert_eq!(fail, ["[ FAIL ] info.fentry (42 ms): no", "    command: x"]);
        let skip = human(&report(Verdict::Skip("kernel".into()), &[]));
        assert_eq!(skip, ["[ SKIP ] info.fentry: kernel"]);
    }
}
