//! `strobe info` (also `strobe --info`): what the running kernel supports, probed by
//! `kernel::features`, printed like `bpftrace --info` (sections of aligned
//! `name: yes` / `name: no (reason)` lines) or as JSON with `--json`.

use std::ffi::OsString;

use super::EXIT_USAGE;
use crate::kernel::features::{features, Section};

pub fn run(args: &[OsString]) -> i32 {
    let mut json = false;
    for a in args {
        match a.to_str() {
            Some("--json") => json = true,
            Some("-h" | "--help") => {
                return super::print_stdout("usage: strobe info [--json]\n\nProbes the running kernel's BPF features and prints them.\n");
            }
            _ => {
                eprintln!(
                    "strobe info: unknown argument {:?} (usage: strobe info [--json])",
                    a
                );
                return EXIT_USAGE;
            }
        }
    }
    let sections = features().sections();
    if json {
        super::print_stdout(format!("{}\n", render_json(&sections)))
    } else {
        super::print_stdout(render_text(&sections))
    }
}

/// Sections with their lines' values aligned one column past the longest name.
pub fn render_text(sections: &[Section]) -> String {
    let mut out = String::new();
    for s in sections {
        out.push_str(s.title);
        out.push('\n');
        let w = s.lines.iter().map(|(n, _)| n.len() + 1).max().unwrap_or(0);
        for (name, value) in &s.lines {
            out.push_str(&format!("  {:<w$} {value}\n", format!("{name}:")));
        }
    }
    out
}

/// `{"System": {"kernel": "...", …}, …}`.
pub fn render_json(sections: &[Section]) -> String {
    let obj = |pairs: Vec<String>| format!("{{{}}}", pairs.join(","));
    obj(sections
        .iter()
        .map(|s| {
            let inner = obj(s
                .lines
                .iter()
                .map(|(n, v)| format!("{}:{}", json_str(n), json_str(v)))
                .collect());
            format!("{}:{inner}", json_str(s.title))
        })
        .collect())
}

fn json_str(s: &str) -> String {
    let mut o = String::with_capacity(s.len() + 2);
    o.push('"');
    for c in s.chars() {
        match c {
            '"' => o.push_str("\\\""),
            '\\' => o.push_str("\\\\"),
            '\n' => o.push_str("\\n"),
            c if (c as u32) < 0x20 => o.push_str(&format!("\\u{:04x}", c as u32)),
            c => o.push(c),
        }
    }
    o.push('"');
    o
}

#[cfg(test)]
mod tests {
    use super::*;

    fn sample() -> Vec<Section> {
        vec![Section {
            title: "Probe types",
            lines: vec![
                ("fentry".into(), "no (EPERM: \"lockdown\")".into()),
                ("uprobe_multi".into(), "yes".into()),
            ],
        }]
    }

    #[test]
    fn text_aligns_values_within_a_section() {
        assert_eq!(
            render_text(&sample()),
            "Probe types\n  fentry:       no (EPERM: \"lockdown\")\n  uprobe_multi: yes\n"
        );
    }

    #[test]
    fn json_escapes_strings() {
        assert_eq!(
            render_json(&sample()),
            r#"{"Probe types":{"fentry":"no (EPERM: \"lockdown\")","uprobe_multi":"yes"}}"#
        );
    }
}
