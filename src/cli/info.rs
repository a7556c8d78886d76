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
    print(json, crate::runtime::probes::DisabledFeatures::default())
}

/// Prints the features, those `--no-feature` turned off shown as off (`strobe --no-feature
/// uprobe_multi --info`, as bpftrace's `--info` honours it).
pub fn print(json: bool, disabled: crate::runtime::probes::DisabledFeatures) -> i32 {
    // bpftrace's order: System, Build, then what the kernel offers.
    let mut sections = features().sections();
    sections.insert(1.min(sections.len()), build_section());
    mark_disabled(&mut sections, disabled);
    if json {
        super::print_stdout(format!("{}\n", render_json(&sections)))
    } else {
        super::print_stdout(render_text(&sections))
    }
}

/// Shows each feature `--no-feature` turned off as off, with the reason.
fn mark_disabled(sections: &mut [Section], d: crate::runtime::probes::DisabledFeatures) {
    for s in sections {
        for (name, value) in &mut s.lines {
            let off = match name.as_str() {
                "kprobe_multi" => d.kprobe_multi,
                "uprobe_multi" => d.uprobe_multi,
                "kprobe_session" => d.kprobe_session,
                _ => false,
            };
            if off {
                *value = "no (disabled by --no-feature)".into();
            }
        }
    }
}

/// What this build of strobe has, in `bpftrace --info`'s words (its "Build" section), so
/// tools that read those lines learn what strobe does not have.
fn build_section() -> Section {
    let no = |n: &str, why: &str| (n.to_string(), format!("no ({why})"));
    Section {
        title: "Build",
        lines: vec![
            ("version".into(), crate::cli::version::short()),
            // Read with gimli (src/dwarf): uprobe args, DWARF types in casts, -lv.
            ("libdw (DWARF support)".into(), "yes".into()),
            no("libsystemd (systemd notify support)", "not built in"),
            no("blazesym (advanced symbolization)", "not built in"),
            no("dwunwind (DWARF stack unwinding)", "not built in"),
            // `uprobe:libc:f` finds the library through ld.so.cache, as bcc's resolver did.
            ("bcc library path resolution".into(), "yes".into()),
        ],
    }
}

/// Sections of `  name: value` lines, as `bpftrace --info` prints them (programs look for
/// the exact `name: yes` text, so values are not aligned into a column).
pub fn render_text(sections: &[Section]) -> String {
    let mut out = String::new();
    for s in sections {
        out.push_str(s.title);
        out.push('\n');
        for (name, value) in &s.lines {
            out.push_str(&format!("  {name}: {value}\n"));
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
    fn text_prints_name_colon_value_as_bpftrace_does() {
        assert_eq!(
            render_text(&sample()),
            "Probe types\n  fentry: no (EPERM: \"lockdown\")\n  uprobe_multi: yes\n"
        );
    }

    #[test]
    fn no_feature_shows_the_feature_off() {
        let mut s = sample();
        let d = crate::runtime::probes::DisabledFeatures {
            uprobe_multi: true,
            ..Default::default()
        };
        mark_disabled(&mut s, d);
        assert_eq!(s[0].lines[1].1, "no (disabled by --no-feature)");
        assert_eq!(s[0].lines[0].1, "no (EPERM: \"lockdown\")");
    }

    #[test]
    fn json_escapes_strings() {
        assert_eq!(
            render_json(&sample()),
            r#"{"Probe types":{"fentry":"no (EPERM: \"lockdown\")","uprobe_multi":"yes"}}"#
        );
    }
}
