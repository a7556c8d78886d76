//! Per-phase timings of one run, for finding where start → armed goes (`STROBE_TIMINGS=1`,
//! `strobe -v`, `strobe load --timings`).
//!
//! Stages record into one process-wide table: wall time of phases that run once (BTF parse,
//! kallsyms read, target expansion, compile, arm) and summed time of per-target work done on
//! several threads (clone, load, attach), so sums may exceed wall time. Recording costs one
//! relaxed atomic load when timings are off. Output: [`json`] (one object, seconds, phases in
//! the order first recorded) or [`human`] (one line).
//!
//! Invariant: recording never fails and never changes what a stage does.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, OnceLock};
use std::time::{Duration, Instant};

static ENABLED: AtomicBool = AtomicBool::new(false);
static TABLE: Mutex<Vec<Phase>> = Mutex::new(Vec::new());
static START: OnceLock<Instant> = OnceLock::new();

/// The environment variable that turns timings on for any command.
pub const ENV: &str = "STROBE_TIMINGS";

#[derive(Clone, Debug, PartialEq)]
pub struct Phase {
    pub name: &'static str,
    pub total: Duration,
    /// How many times it was recorded (targets, for per-target phases).
    pub count: u64,
}

/// Turns recording on.
pub fn enable() {
    ENABLED.store(true, Ordering::Relaxed);
}

/// Turns recording on when `STROBE_TIMINGS` is set to something other than `0`; returns
/// whether recording is on.
pub fn enable_from_env() -> bool {
    if std::env::var_os(ENV).is_some_and(|v| v != "0" && !v.is_empty()) {
        enable();
    }
    enabled()
}

/// Marks the start of the run (the first call wins); [`since_start`] measures from it.
pub fn mark_start() {
    START.get_or_init(Instant::now);
}

/// Time since [`mark_start`] (zero when it was never called).
pub fn since_start() -> Duration {
    START.get().map_or(Duration::ZERO, Instant::elapsed)
}

pub fn enabled() -> bool {
    ENABLED.load(Ordering::Relaxed)
}

/// Adds `d` to phase `name`.
pub fn record(name: &'static str, d: Duration) {
    record_n(name, d, 1);
}

/// Adds `d`, spent on `n` items, to phase `name`.
pub fn record_n(name: &'static str, d: Duration, n: u64) {
    if !enabled() {
        return;
    }
    let mut t = TABLE.lock().unwrap_or_else(|p| p.into_inner());
    match t.iter_mut().find(|p| p.name == name) {
        Some(p) => {
            p.total += d;
            p.count += n;
        }
        None => t.push(Phase {
            name,
            total: d,
            count: n,
        }),
    }
}

/// Runs `f`, recording its wall time as phase `name`.
pub fn time<T>(name: &'static str, f: impl FnOnce() -> T) -> T {
    if !enabled() {
        return f();
    }
    let t0 = Instant::now();
    let r = f();
    record(name, t0.elapsed());
    r
}

/// Records the time from [`Timer::new`] to its drop as phase `name` (for code with early
/// returns).
pub struct Timer {
    name: &'static str,
    start: Option<Instant>,
}

impl Timer {
    pub fn new(name: &'static str) -> Timer {
        Timer {
            name,
            start: enabled().then(Instant::now),
        }
    }
}

impl Drop for Timer {
    fn drop(&mut self) {
        if let Some(t) = self.start {
            record(self.name, t.elapsed());
        }
    }
}

/// The phases recorded so far, in first-recorded order.
pub fn phases() -> Vec<Phase> {
    TABLE.lock().unwrap_or_else(|p| p.into_inner()).clone()
}

/// `{"btf_parse_s":0.1234,"load_s":…,"load_n":75,…}`: `_n` only for phases recorded more
/// than once.
pub fn json(phases: &[Phase]) -> String {
    let items: Vec<String> = phases
        .iter()
        .flat_map(|p| {
            let mut v = vec![format!("\"{}_s\":{:.4}", p.name, p.total.as_secs_f64())];
            if p.count > 1 {
                v.push(format!("\"{}_n\":{}", p.name, p.count));
            }
            v
        })
        .collect();
    format!("{{{}}}", items.join(","))
}

/// `btf_parse 0.123 s, expand 0.004 s, load 0.081 s (75×), …`
pub fn human(phases: &[Phase]) -> String {
    phases
        .iter()
        .map(|p| {
            let n = if p.count > 1 {
                format!(" ({}×)", p.count)
            } else {
                String::new()
            };
            format!("{} {:.3} s{n}", p.name, p.total.as_secs_f64())
        })
        .collect::<Vec<_>>()
        .join(", ")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn json_and_human_show_sums_and_counts_in_recorded_order() {
        let p = vec![
            Phase {
                name: "btf_parse",
                total: Duration::from_millis(120),
                count: 1,
            },
            Phase {
                name: "load",
                total: Duration::from_millis(81),
                count: 75,
            },
        ];
        assert_eq!(
            json(&p),
            r#"{"btf_parse_s":0.1200,"load_s":0.0810,"load_n":75}"#
        );
        assert_eq!(human(&p), "btf_parse 0.120 s, load 0.081 s (75×)");
    }

    #[test]
    fn recording_accumulates_only_when_enabled() {
        // The table is process-wide: use names no other test records.
        enable();
        record("test_on_phase", Duration::from_millis(2));
        record_n("test_on_phase", Duration::from_millis(3), 4);
        let p = phases();
        let on = p.iter().find(|p| p.name == "test_on_phase").unwrap();
        assert_eq!((on.total, on.count), (Duration::from_millis(5), 5));
        assert_eq!(time("test_timed_phase", || 7), 7);
        assert!(phases().iter().any(|p| p.name == "test_timed_phase"));
    }
}
