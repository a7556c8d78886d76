//! The printer the runtime calls for every kind of output, in text or JSON (`-f json`).
//!
//! Input: events as they happen (printf text, `print()` values, map snapshots, counters).
//! Output: bytes appended to a caller-owned buffer, to be written to stdout (or `-o FILE`).
//! Text messages follow bpftrace (`Attached N probes` on stderr, `Lost N events`); at exit
//! bpftrace prints two newlines, then every map in name order (empty maps print as blank
//! lines in text, nothing in JSON).
//! Invariant: never panics, never does I/O.

use super::json;
use super::maps::{write_map_text, write_value_text, MapSnapshot, EXIT_PREAMBLE};
use super::value::{write_display, TextStyle, Value};

/// `-f text` or `-f json`.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub enum OutputFormat {
    #[default]
    Text,
    Json,
}

/// Formats every kind of output in one mode.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Default)]
pub struct Printer {
    pub format: OutputFormat,
    pub style: TextStyle,
}

impl Printer {
    pub fn new(format: OutputFormat) -> Printer {
        Printer {
            format,
            style: TextStyle::default(),
        }
    }

    fn message(&self, out: &mut Vec<u8>, ty: &str, text: &[u8]) {
        match self.format {
            OutputFormat::Text => out.extend_from_slice(text),
            OutputFormat::Json => json::write_message(out, ty, text),
        }
    }

    /// After attaching, as current bpftrace says it: `Attached 1 probe` / `Attached N probes`
    /// in text, which goes to `err` (stderr), or the JSON `attached_probes` message, which
    /// goes to `out` with the other messages.
    pub fn attached_probes(&self, out: &mut Vec<u8>, err: &mut Vec<u8>, n: u64) {
        match self.format {
            OutputFormat::Text => {
                let s = if n == 1 { "" } else { "s" };
                write_display(err, format_args!("Attached {n} probe{s}\n"));
            }
            OutputFormat::Json => json::write_attached_probes(out, n),
        }
    }

    /// Rendered `printf` text (see [`super::PrintfCall::render`]).
    pub fn printf(&self, out: &mut Vec<u8>, text: &[u8]) {
        self.message(out, "printf", text);
    }

    /// Rendered `time()` text.
    pub fn time(&self, out: &mut Vec<u8>, text: &[u8]) {
        self.message(out, "time", text);
    }

    /// `cat()` file contents.
    pub fn cat(&self, out: &mut Vec<u8>, text: &[u8]) {
        self.message(out, "cat", text);
    }

    /// `system()` command output.
    pub fn syscall(&self, out: &mut Vec<u8>, text: &[u8]) {
        self.message(out, "syscall", text);
    }

    /// `join(arr[, sep])`: the joined elements; text mode adds a newline.
    pub fn join(&self, out: &mut Vec<u8>, elems: &[Vec<u8>], sep: &[u8]) {
        let joined = elems.join(sep);
        match self.format {
            OutputFormat::Text => {
                out.extend_from_slice(&joined);
                out.push(b'\n');
            }
            OutputFormat::Json => json::write_message(out, "join", &joined),
        }
    }

    /// `print(value)` of a non-map value.
    pub fn value(&self, out: &mut Vec<u8>, v: &Value) {
        match self.format {
            OutputFormat::Text => write_value_text(out, v, self.style),
            OutputFormat::Json => json::write_value_message(out, v, self.style),
        }
    }

    /// `print(@map, top, div)`.
    pub fn map(&self, out: &mut Vec<u8>, m: &MapSnapshot, top: usize, div: u64) {
        match self.format {
            OutputFormat::Text => write_map_text(out, m, top, div, self.style),
            OutputFormat::Json => json::write_map_json(out, m, top, div, self.style),
        }
    }

    /// What bpftrace prints at exit: two newlines, then every map in name order.
    pub fn exit_maps(&self, out: &mut Vec<u8>, maps: &[MapSnapshot]) {
        out.extend_from_slice(EXIT_PREAMBLE);
        let mut order: Vec<&MapSnapshot> = maps.iter().collect();
        order.sort_by(|a, b| a.name.as_bytes().cmp(b.name.as_bytes()));
        for m in order {
            self.map(out, m, 0, 0);
        }
    }

    /// Probe runs the kernel skipped (see [`crate::loader::KernelMisses`]), when there were
    /// any: a warning on `err` (stderr) in text, which says why and that the results lack
    /// those events, or the JSON `missed_events` message on `out`.
    pub fn kernel_missed(
        &self,
        out: &mut Vec<u8>,
        err: &mut Vec<u8>,
        m: &crate::loader::KernelMisses,
    ) {
        let total = m.total();
        if total == 0 {
            return;
        }
        match self.format {
            OutputFormat::Text => {
                let s = if total == 1 { "" } else { "s" };
                write_display(
                    err,
                    format_args!(
                        "WARNING: the kernel skipped {total} probe run{s}; \
                         their events are missing from the results:"
                    ),
                );
                let mut sep = " ";
                if m.probe > 0 {
                    write_display(
                        err,
                        format_args!(
                            "{sep}{} in kprobe_multi/kprobe.session/kprobe links (no free \
                             return-probe slot, or the probe fired inside another probe)",
                            m.probe
                        ),
                    );
                    sep = "; ";
                }
                if m.recursion > 0 {
                    write_display(
                        err,
                        format_args!(
                            "{sep}{} because a BPF program was already running on that CPU",
                            m.recursion
                        ),
                    );
                }
                err.push(b'\n');
            }
            OutputFormat::Json => json::write_missed_events(out, total, m.probe, m.recursion),
        }
    }

    /// Ring buffer drops.
    pub fn lost_events(&self, out: &mut Vec<u8>, n: u64) {
        match self.format {
            OutputFormat::Text => write_display(out, format_args!("Lost {n} events\n")),
            OutputFormat::Json => json::write_lost_events(out, n),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn both(f: impl Fn(&Printer, &mut Vec<u8>)) -> (String, String) {
        let mut t = Vec::new();
        f(&Printer::new(OutputFormat::Text), &mut t);
        let mut j = Vec::new();
        f(&Printer::new(OutputFormat::Json), &mut j);
        (String::from_utf8(t).unwrap(), String::from_utf8(j).unwrap())
    }

    #[test]
    fn counters_in_both_formats() {
        let (t, j) = both(|p, o| {
            let mut err = Vec::new();
            p.attached_probes(o, &mut err, 1);
            p.attached_probes(o, &mut err, 3);
            o.extend_from_slice(&err);
            p.lost_events(o, 7);
        });
        assert_eq!(t, "Attached 1 probe\nAttached 3 probes\nLost 7 events\n");
        assert_eq!(
            j,
            "{\"type\": \"attached_probes\", \"count\": 1, \"data\": {\"probes\": 1}}\n\
             {\"type\": \"attached_probes\", \"count\": 3, \"data\": {\"probes\": 3}}\n\
             {\"type\": \"lost_events\", \"data\": {\"events\": 7}}\n"
        );
    }

    #[test]
    fn kernel_misses_warn_in_text_and_are_a_message_in_json() {
        use crate::loader::KernelMisses;
        let run = |p: &Printer, m: KernelMisses| {
            let (mut o, mut e) = (Vec::new(), Vec::new());
            p.kernel_missed(&mut o, &mut e, &m);
            (String::from_utf8(o).unwrap(), String::from_utf8(e).unwrap())
        };
        let text = Printer::new(OutputFormat::Text);
        let json = Printer::new(OutputFormat::Json);
        assert_eq!(
            run(&text, KernelMisses::default()),
            (String::new(), String::new())
        );
        assert_eq!(
            run(&json, KernelMisses::default()),
            (String::new(), String::new())
        );
        let one = KernelMisses {
            probe: 0,
            recursion: 1,
        };
        assert_eq!(
            run(&text, one).1,
            "WARNING: the kernel skipped 1 probe run; their events are missing from the \
             results: 1 because a BPF program was already running on that CPU\n"
        );
        let both = KernelMisses {
            probe: 5,
            recursion: 2,
        };
        assert_eq!(
            run(&text, both),
            (
                String::new(),
                "WARNING: the kernel skipped 7 probe runs; their events are missing from the \
                 results: 5 in kprobe_multi/kprobe.session/kprobe links (no free return-probe \
                 slot, or the probe fired inside another probe); 2 because a BPF program was \
                 already running on that CPU\n"
                    .to_string()
            )
        );
        assert_eq!(
            run(&json, both),
            (
                "{\"type\": \"missed_events\", \"data\": {\"events\": 7, \"kprobe\": 5, \
                 \"recursion\": 2}}\n"
                    .to_string(),
                String::new()
            )
        );
    }

    #[test]
    fn join_and_time() {
        let (t, j) = both(|p, o| {
            p.join(o, &[b"a".to_vec(), b"b".to_vec()], b" ");
            p.time(o, b"10:00:00\n");
        });
        assert_eq!(t, "a b\n10:00:00\n");
        assert_eq!(
            j,
            "{\"type\": \"join\", \"data\": \"a b\"}\n{\"type\": \"time\", \"data\": \"10:00:00\\n\"}\n"
        );
    }

    #[test]
    fn exit_prints_maps_in_name_order() {
        let m = |n: &str| MapSnapshot {
            name: n.into(),
            entries: vec![(vec![], super::super::MapValue::Plain(Value::Int(1)))],
        };
        let (t, _) = both(|p, o| p.exit_maps(o, &[m("@b"), m("@"), m("@a")]));
        assert_eq!(t, "\n\n@: 1\n@a: 1\n@b: 1\n");
    }
}
