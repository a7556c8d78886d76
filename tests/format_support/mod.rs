//! Golden files for output formatting: tests/format/NAME.golden holds a header naming the
//! bpftrace command that produced it, then `# ---`, then bpftrace's stdout byte for byte.

#![allow(dead_code)]

use std::path::PathBuf;

pub struct Golden {
    pub name: String,
    pub path: PathBuf,
    /// Extra bpftrace flags (`-f json`).
    pub flags: Vec<String>,
    /// The program passed with `-e`.
    pub program: String,
    /// The header lines, kept verbatim when blessing.
    pub header: String,
    pub body: Vec<u8>,
}

pub fn dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("tests/format")
}

pub fn load(name: &str) -> Golden {
    let path = dir().join(format!("{name}.golden"));
    let raw = std::fs::read(&path).unwrap_or_else(|e| panic!("reading {}: {e}", path.display()));
    let marker = b"# ---\n";
    let at = raw
        .windows(marker.len())
        .position(|w| w == marker)
        .unwrap_or_else(|| panic!("{}: no '# ---' line", path.display()));
    let header = String::from_utf8(raw[..at + marker.len()].to_vec()).expect("header is UTF-8");
    let body = raw[at + marker.len()..].to_vec();
    let mut flags = Vec::new();
    let mut program = String::new();
    for line in header.lines() {
        if let Some(f) = line.strip_prefix("# flags:") {
            flags = f.split_whitespace().map(str::to_string).collect();
        } else if let Some(p) = line.strip_prefix("# program: ") {
            program = p.to_string();
        }
    }
    Golden {
        name: name.to_string(),
        path,
        flags,
        program,
        header,
        body,
    }
}

pub fn all_names() -> Vec<String> {
    let mut names: Vec<String> = std::fs::read_dir(dir())
        .expect("tests/format exists")
        .filter_map(|e| {
            let p = e.ok()?.path();
            if p.extension()? != "golden" {
                return None;
            }
            Some(p.file_stem()?.to_string_lossy().into_owned())
        })
        .collect();
    names.sort();
    names
}

/// Shows the first differing line, so a failure says what is wrong without a hex dump.
pub fn assert_same(name: &str, got: &[u8], want: &[u8]) {
    if got == want {
        return;
    }
    let g = String::from_utf8_lossy(got);
    let w = String::from_utf8_lossy(want);
    for (i, (a, b)) in g.split('\n').zip(w.split('\n')).enumerate() {
        if a != b {
            panic!("{name}: line {} differs\n  got:  {a:?}\n  want: {b:?}\n--- got ---\n{g}\n--- want ---\n{w}", i + 1);
        }
    }
    panic!("{name}: outputs differ in length\n--- got ---\n{g}\n--- want ---\n{w}");
}
