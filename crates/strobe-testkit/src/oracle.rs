//! bpftrace 0.17 (the oracle installed on the build hosts) and current bpftrace print a few
//! things differently; tests that compare strobe with live 0.17 output rewrite 0.17's forms
//! into current bpftrace's first.

/// bpftrace 0.17's output in current bpftrace's forms where strobe follows current bpftrace on
/// purpose: `stats` values as a record and a histogram's header without the space after the
/// colon. Everything else must match 0.17 byte for byte.
pub fn as_current(text: &str) -> String {
    let mut out = String::new();
    for line in text.split_inclusive('\n') {
        let (body, nl) = match line.strip_suffix('\n') {
            Some(b) => (b, "\n"),
            None => (line, ""),
        };
        let body = match body.strip_suffix(": ").filter(|_| body.starts_with('@')) {
            Some(name) => format!("{name}:"),
            None => stats_as_record(body),
        };
        out.push_str(&body);
        out.push_str(nl);
    }
    out
}

/// `@s: count 2, average 6, total 13` → `@s: { .count = 2, .average = 6, .total = 13 }`.
fn stats_as_record(line: &str) -> String {
    let Some(at) = line.find(": count ") else {
        return line.to_string();
    };
    let (head, rest) = line.split_at(at + 2);
    let parts: Vec<&str> = rest.split(", ").collect();
    match parts.as_slice() {
        [c, a, t] => match (
            c.strip_prefix("count "),
            a.strip_prefix("average "),
            t.strip_prefix("total "),
        ) {
            (Some(c), Some(a), Some(t)) => {
                format!("{head}{{ .count = {c}, .average = {a}, .total = {t} }}")
            }
            _ => line.to_string(),
        },
        _ => line.to_string(),
    }
}
