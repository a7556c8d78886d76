//! The reports of `--test` and `--bench` runs, in bpftrace's shapes: a gtest-like list of
//! tests (`[ RUN      ] name`, `[       OK ] name (3 us)`, a summary) and a benchmark table
//! (`Benchmark`, `Time(ns)`, `Iterations`); in JSON, one `test_result` or `benchmark_result`
//! message per probe.
//!
//! Input: every probe's name (for the table's width and the summary), the index of the one
//! reported, and its numbers. Output: bytes appended to a buffer. Never does I/O.

use super::json::write_json_str;
use super::output::OutputFormat;

const GREEN: &str = "\x1b[32m";
const RED: &str = "\x1b[31m";
const RESET: &str = "\x1b[0m";

/// A duration as a whole number of its largest unit (`1500 ns` → `1 us`).
fn duration_text(ns: u64) -> String {
    let (scale, unit) = match ns {
        n if n >= 1_000_000_000 => (1_000_000_000, "s"),
        n if n >= 1_000_000 => (1_000_000, "ms"),
        n if n >= 1_000 => (1_000, "us"),
        _ => (1, "ns"),
    };
    format!("{} {unit}", ns / scale)
}

fn plural(n: usize) -> &'static str {
    if n == 1 {
        "test"
    } else {
        "tests"
    }
}

/// Test `index` of `names` ran: `passed[..=index]` says which passed so far; the last one
/// also prints the summary.
pub fn write_test_result(
    format: OutputFormat,
    out: &mut Vec<u8>,
    names: &[String],
    index: usize,
    passed: &[bool],
    duration_ns: u64,
    output: &[u8],
) {
    let name = &names[index];
    let ok = passed[index];
    if format == OutputFormat::Json {
        out.extend_from_slice(b"{\"type\": \"test_result\", \"data\": {");
        write_json_str(out, name.as_bytes());
        out.extend_from_slice(
            format!(": {{\"duration\": {duration_ns}, \"passed\": {ok}, \"output\": ").as_bytes(),
        );
        write_json_str(out, output);
        out.extend_from_slice(b"}}}\n");
        return;
    }
    let mut s = String::new();
    if index == 0 {
        s += &format!(
            "{GREEN}[==========]{RESET} Running {} tests.\n",
            names.len()
        );
    }
    s += &format!("{GREEN}[ RUN      ]{RESET} {name}\n");
    if ok {
        s += &format!("{GREEN}[       OK ]{RESET} {name}");
    } else {
        // A failed test shows what it printed, between its RUN and FAILED lines.
        for line in String::from_utf8_lossy(output).lines() {
            if !line.is_empty() {
                s += line;
                s.push('\n');
            }
        }
        s += &format!("{RED}[  FAILED  ]{RESET} {name}");
    }
    s += &format!(" ({})\n", duration_text(duration_ns));
    if index + 1 == names.len() {
        let n_ok = passed.iter().filter(|p| **p).count();
        let n_failed = passed.len() - n_ok;
        s += &format!(
            "{GREEN}[==========]{RESET} {} {} ran.\n",
            names.len(),
            plural(names.len())
        );
        s += &format!("{GREEN}[  PASSED  ]{RESET} {n_ok} {}.\n", plural(n_ok));
        if n_failed > 0 {
            s += &format!(
                "{RED}[  FAILED  ]{RESET} {n_failed} {}, listed below:\n",
                plural(n_failed)
            );
            for (n, _) in names.iter().zip(passed).filter(|(_, p)| !**p) {
                s += &format!("{RED}[  FAILED  ]{RESET} {n}\n");
            }
        }
    }
    out.extend_from_slice(s.as_bytes());
}

/// Benchmark `index` of `names` took `average_ns` per run over `iters` runs; the first one
/// reported (`heading`) also prints the table's heading.
pub fn write_bench_result(
    format: OutputFormat,
    out: &mut Vec<u8>,
    (names, index, heading): (&[String], usize, bool),
    average_ns: u64,
    iters: u64,
) {
    let name = &names[index];
    if format == OutputFormat::Json {
        out.extend_from_slice(b"{\"type\": \"benchmark_result\", \"data\": {");
        write_json_str(out, name.as_bytes());
        out.extend_from_slice(
            format!(": {{\"average\": {average_ns}, \"iters\": {iters}}}}}}}\n").as_bytes(),
        );
        return;
    }
    const TIME: &str = "Time(ns)";
    const ITERS: &str = "Iterations";
    const TIME_WIDTH: usize = 15;
    let width = names.iter().map(String::len).max().unwrap_or(0).max(40) + 1;
    let mut s = String::new();
    if heading {
        s += &format!("{:<width$}{TIME:<TIME_WIDTH$}{ITERS}\n", "Benchmark");
        s += &"-".repeat(width + TIME_WIDTH + ITERS.len());
        s.push('\n');
    }
    s += &format!("{name:<width$}{average_ns:<TIME_WIDTH$}{iters}\n");
    out.extend_from_slice(s.as_bytes());
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bench_table_has_a_heading_and_aligned_rows() {
        let names = vec!["a".to_string(), "b".to_string()];
        let mut out = Vec::new();
        write_bench_result(OutputFormat::Text, &mut out, (&names, 0, true), 42, 1000);
        write_bench_result(OutputFormat::Text, &mut out, (&names, 1, false), 7, 200);
        let text = String::from_utf8(out).unwrap();
        let lines: Vec<&str> = text.lines().collect();
        assert_eq!(
            lines[0],
            format!("{:<41}{:<15}Iterations", "Benchmark", "Time(ns)")
        );
        assert_eq!(lines[1], "-".repeat(66));
        assert_eq!(lines[2], format!("{:<41}{:<15}1000", "a", "42"));
        assert_eq!(lines[3], format!("{:<41}{:<15}200", "b", "7"));
    }

    #[test]
    fn bench_result_in_json() {
        let mut out = Vec::new();
        write_bench_result(
            OutputFormat::Json,
            &mut out,
            (&["a".into()], 0, true),
            42,
            1000,
        );
        assert_eq!(
            String::from_utf8(out).unwrap(),
            "{\"type\": \"benchmark_result\", \"data\": {\"a\": {\"average\": 42, \"iters\": 1000}}}\n"
        );
    }

    #[test]
    fn failed_test_shows_its_output_and_the_summary() {
        let names = vec!["ok".to_string(), "bad".to_string()];
        let mut out = Vec::new();
        write_test_result(
            OutputFormat::Text,
            &mut out,
            &names,
            0,
            &[true],
            1500,
            b"hidden\n",
        );
        write_test_result(
            OutputFormat::Text,
            &mut out,
            &names,
            1,
            &[true, false],
            2_000_000,
            b"shown\n",
        );
        let text = String::from_utf8(out).unwrap();
        assert!(text.contains("Running 2 tests."));
        assert!(text.contains("[       OK ]\x1b[0m ok (1 us)\n"));
        assert!(!text.contains("hidden"));
        assert!(text.contains("shown\n\x1b[31m[  FAILED  ]\x1b[0m bad (2 ms)\n"));
        assert!(text.contains("[  PASSED  ]\x1b[0m 1 test.\n"));
        assert!(text.contains("1 test, listed below:\n"));
        let mut json = Vec::new();
        write_test_result(
            OutputFormat::Json,
            &mut json,
            &names,
            1,
            &[true, false],
            5,
            b"x",
        );
        assert_eq!(
            String::from_utf8(json).unwrap(),
            "{\"type\": \"test_result\", \"data\": {\"bad\": {\"duration\": 5, \"passed\": false, \
             \"output\": \"x\"}}}\n"
        );
    }
}
