//! Re-verifies the output-format goldens against the real bpftrace when it is installed and
//! works here (the goldens were captured from bpftrace 0.17). `BLESS=1` rewrites the golden
//! bodies from bpftrace's live output. Skips loudly when bpftrace is missing, is another
//! version, or cannot run probes (needs root).

use crate::format_support;

use std::process::Command;

use strobe::runtime::format::agg::Agg;
use strobe::runtime::format::stack::{Frame, Stack, StackMode};
use strobe::runtime::format::{
    FormatString, MapSnapshot, MapValue, OutputFormat, Printer, TextStyle, Value,
};
use strobe_testkit as testkit;

fn run_bpftrace(flags: &[String], program: &str) -> Option<Vec<u8>> {
    let out = Command::new("timeout")
        .arg("60")
        .arg("bpftrace")
        .args(flags)
        .arg("-e")
        .arg(program)
        .output()
        .ok()?;
    out.status.success().then_some(out.stdout)
}

/// Why the oracle cannot be used here, if it cannot.
fn oracle_unusable() -> Option<String> {
    let v = match Command::new("bpftrace").arg("--version").output() {
        Ok(o) => String::from_utf8_lossy(&o.stdout).trim().to_string(),
        Err(e) => return Some(format!("bpftrace not runnable: {e}")),
    };
    if !v.starts_with("bpftrace v0.17") {
        return Some(format!(
            "goldens were captured with bpftrace v0.17, this host has {v:?}"
        ));
    }
    match run_bpftrace(&[], r#"BEGIN { printf("ok\n"); exit(); }"#) {
        Some(o) if String::from_utf8_lossy(&o).contains("ok") => None,
        _ => Some("bpftrace cannot run a BEGIN probe here (root and BPF needed)".into()),
    }
}

#[test]
fn goldens_match_live_bpftrace() {
    if let Some(why) = oracle_unusable() {
        testkit::skip("goldens_match_live_bpftrace", &why);
        return;
    }
    let bless = std::env::var_os("BLESS").is_some_and(|v| v == "1");
    let names = format_support::all_names();
    assert!(names.len() >= 10, "goldens missing: {names:?}");
    for name in names {
        let g = format_support::load(&name);
        let live = run_bpftrace(&g.flags, &g.program)
            .unwrap_or_else(|| panic!("{name}: bpftrace failed on {:?}", g.program));
        let live = testkit::oracle::as_current(&String::from_utf8_lossy(&live)).into_bytes();
        if bless {
            let mut f = g.header.clone().into_bytes();
            f.extend_from_slice(&live);
            std::fs::write(&g.path, f).expect("write golden");
            eprintln!("blessed {}", g.path.display());
        } else {
            format_support::assert_same(&name, &live, &g.body);
        }
    }
}

/// Parses one frame line of bpftrace's stack text back into a frame (bpftrace or perf mode).
fn parse_frame(line: &str, perf: bool, user: bool) -> Frame {
    use strobe::runtime::format::stack::Sym;
    let (addr, rest) = if perf {
        let l = line.trim_start_matches('\t');
        let (a, r) = l.split_once(' ').expect("perf frame has an address");
        (
            u64::from_str_radix(a, 16).expect("hex address"),
            r.to_string(),
        )
    } else {
        (1, line.trim_start().to_string())
    };
    let (symtext, module) = match rest.strip_suffix(')').and_then(|r| r.rsplit_once(" (")) {
        Some((s, m)) if user => (s.to_string(), Some(m.to_string())),
        _ => (rest.clone(), None),
    };
    if let Some(hex) = symtext.strip_prefix("0x") {
        let addr = u64::from_str_radix(hex, 16).unwrap_or(addr);
        return Frame { addr, sym: None };
    }
    let (name, off) = symtext.rsplit_once('+').expect("name+offset");
    Frame {
        addr,
        sym: Some(Sym {
            name: name.to_string(),
            offset: off.parse().expect("decimal offset"),
            module,
            ..Default::default()
        }),
    }
}

/// Rebuilds the stacks bpftrace printed (addresses and symbols parsed from its output) and
/// checks that strobe lays them out identically: brackets, indents (8 in printf, 4 in map
/// keys), perf mode's tab/hex/module columns and `([unknown])`.
#[test]
fn stack_layouts_match_live_bpftrace() {
    if let Some(why) = oracle_unusable() {
        testkit::skip("stack_layouts_match_live_bpftrace", &why);
        return;
    }
    let prog = r#"BEGIN { printf("[%s]\n", kstack(perf, 3)); @k[kstack(4)] = count(); @u[ustack(perf, 3)] = count(); exit(); }"#;
    let live = run_bpftrace(&[], prog).expect("bpftrace runs");
    let text = String::from_utf8_lossy(&live).into_owned();
    // Frame lines of each block, in order: the printf block, @k's key, @u's key.
    let mut blocks: Vec<Vec<String>> = Vec::new();
    let mut cur: Option<Vec<String>> = None;
    for line in text.lines() {
        if line == "[" || line.ends_with('[') {
            cur = Some(Vec::new());
        } else if line.starts_with(']') {
            blocks.push(cur.take().unwrap_or_default());
        } else if let Some(c) = cur.as_mut() {
            c.push(line.to_string());
        }
    }
    assert_eq!(blocks.len(), 3, "unexpected bpftrace output:\n{text}");
    let stack = |lines: &[String], mode: StackMode, user: bool| Stack {
        frames: lines
            .iter()
            .map(|l| parse_frame(l, mode == StackMode::Perf, user))
            .collect(),
        mode,
        user,
    };
    let p = Printer::new(OutputFormat::Text);
    // bpftrace 0.17's stdout banner (strobe prints current bpftrace's on stderr).
    let mut out = b"Attaching 1 probe...\n".to_vec();
    let fmt = FormatString::parse("[%s]\n").unwrap();
    let ks = Value::Stack(stack(&blocks[0], StackMode::Perf, false));
    p.printf(&mut out, &fmt.render(&[ks], TextStyle::default()));
    let key_map = |name: &str, st: Stack| MapSnapshot {
        name: name.into(),
        entries: vec![(vec![Value::Stack(st)], MapValue::Agg(Agg::Count(1)))],
    };
    let maps = [
        key_map("@k", stack(&blocks[1], StackMode::Bpftrace, false)),
        key_map("@u", stack(&blocks[2], StackMode::Perf, true)),
    ];
    p.exit_maps(&mut out, &maps);
    format_support::assert_same("stack layouts", &out, &live);
}
