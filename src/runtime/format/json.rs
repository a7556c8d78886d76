//! `-f json` output: one JSON object per line in bpftrace 0.17's shapes:
//! `{"type": "printf", "data": "…"}` (also `time`, `cat`, `join`, `syscall`),
//! `{"type": "value", "data": …}`, `{"type": "map"|"hist"|"stats"|"tseries", "data": {"@m": …}}` where a
//! keyed map's data is `{"k1,k2": v, …}` (keys' text joined by `,`, no spaces) and a scalar
//! map's is the value itself, `{"type": "lost_events", "data": {"events": N}}`,
//! `{"type": "attached_probes", "count": N, "data": {"probes": N}}`; and strobe's own
//! `{"type": "missed_events", …}` (probe runs the kernel skipped; bpftrace has no such message).
//!
//! Input: values and map snapshots. Output: bytes ending in `\n`.
//! Difference from bpftrace (0.17 and current): bytes ≥ 0x80 are not escaped as
//! `\uffffffXX` (a sign-extension bug that makes the line invalid JSON); valid UTF-8 passes
//! through and other bytes become `\u00XX`.
//! Invariant: always valid JSON; never panics.

use super::agg::{average, Agg, Num};
use super::hist::write_hist_json;
use super::maps::{write_key_field, Layout, MapSnapshot, MapValue};
use super::tseries::write_tseries_json;
use super::value::{hex_escape_buf, write_display, TextStyle, Value};

/// Appends `bytes` as a quoted JSON string.
pub fn write_json_str(out: &mut Vec<u8>, bytes: &[u8]) {
    out.push(b'"');
    let mut rest = bytes;
    while !rest.is_empty() {
        let (valid, bad) = match std::str::from_utf8(rest) {
            Ok(s) => (s, None),
            Err(e) => {
                let (v, b) = rest.split_at(e.valid_up_to());
                // SAFETY-free: `v` is valid UTF-8 by construction.
                (std::str::from_utf8(v).unwrap_or(""), Some(b))
            }
        };
        for ch in valid.chars() {
            match ch {
                '"' => out.extend_from_slice(b"\\\""),
                '\\' => out.extend_from_slice(b"\\\\"),
                '\n' => out.extend_from_slice(b"\\n"),
                '\r' => out.extend_from_slice(b"\\r"),
                '\t' => out.extend_from_slice(b"\\t"),
                c if (c as u32) < 0x20 => write_display(out, format_args!("\\u{:04x}", c as u32)),
                c => {
                    let mut buf = [0u8; 4];
                    out.extend_from_slice(c.encode_utf8(&mut buf).as_bytes());
                }
            }
        }
        match bad {
            Some(b) if !b.is_empty() => {
                write_display(out, format_args!("\\u{:04x}", b[0]));
                rest = &b[1..];
            }
            _ => rest = &[],
        }
    }
    out.push(b'"');
}

/// Appends one value as JSON: numbers bare, text quoted, tuples and arrays as `[a,b]`,
/// records as `{"f": v, …}` (current bpftrace; 0.17 padded the braces with spaces).
pub fn write_json_value(out: &mut Vec<u8>, v: &Value, style: TextStyle) {
    match v {
        Value::None => out.extend_from_slice(b"null"),
        Value::Bool(b) => out.extend_from_slice(if *b { b"true" } else { b"false" }),
        Value::Int(i) => write_display(out, i),
        Value::UInt(u) | Value::Pointer(u) => write_display(out, u),
        Value::Symbolic { number, .. } => write_display(out, number),
        Value::Buf(b) => {
            let mut t = Vec::new();
            hex_escape_buf(&mut t, b);
            write_json_str(out, &t);
        }
        Value::Str { .. } | Value::Symbol(_) | Value::Stack(_) => {
            write_json_str(out, &v.to_text(style))
        }
        Value::Tuple(vs) | Value::Array(vs) => {
            out.push(b'[');
            for (i, x) in vs.iter().enumerate() {
                if i > 0 {
                    out.push(b',');
                }
                write_json_value(out, x, style);
            }
            out.push(b']');
        }
        Value::Record(fields) => {
            out.push(b'{');
            for (i, (name, x)) in fields.iter().enumerate() {
                if i > 0 {
                    out.extend_from_slice(b", ");
                }
                write_json_str(out, name.as_bytes());
                out.extend_from_slice(b": ");
                write_json_value(out, x, style);
            }
            out.push(b'}');
        }
    }
}

fn write_json_agg(out: &mut Vec<u8>, a: &Agg, div: u64) {
    match a {
        Agg::Count(n) => write_display(out, n / div.max(1)),
        Agg::Sum(n) => write_display(out, n.div_by(div)),
        Agg::Min(n) | Agg::Max(n) => write_display(out, n.unwrap_or(Num::I(0)).div_by(div)),
        Agg::Avg { total, count } => write_display(out, average(*total, *count).div_by(div)),
        Agg::Stats { total, count } => write_display(
            out,
            format_args!(
                "{{\"count\": {count}, \"average\": {}, \"total\": {total}}}",
                average(*total, *count)
            ),
        ),
        Agg::Hist { kind, counts } => write_hist_json(out, kind, counts, div),
        Agg::TSeries(t) => write_tseries_json(out, t, &t.rows(t.latest())),
    }
}

/// Appends a map as one JSON line; an empty map writes nothing (as bpftrace).
pub fn write_map_json(
    out: &mut Vec<u8>,
    map: &MapSnapshot,
    top: usize,
    div: u64,
    style: TextStyle,
) {
    let entries = map.sorted(top);
    if entries.is_empty() {
        return;
    }
    let ty = match map.layout() {
        Layout::Plain => "map",
        Layout::Stats => "stats",
        Layout::Hist => "hist",
        Layout::TSeries => "tseries",
    };
    let last = map.tseries_last();
    write_display(out, format_args!("{{\"type\": \"{ty}\", \"data\": {{"));
    write_json_str(out, map.name.as_bytes());
    out.extend_from_slice(b": ");
    let keyed = !entries[0].0.is_empty();
    if keyed {
        out.push(b'{');
    }
    for (i, (keys, value)) in entries.iter().enumerate() {
        if i > 0 {
            out.extend_from_slice(b", ");
        }
        if keyed {
            let mut k = Vec::new();
            for (j, key) in keys.iter().enumerate() {
                if j > 0 {
                    k.push(b',');
                }
                write_key_field(&mut k, key, style);
            }
            write_json_str(out, &k);
            out.extend_from_slice(b": ");
        }
        match value {
            MapValue::Agg(Agg::TSeries(t)) => write_tseries_json(out, t, &t.rows(last)),
            MapValue::Agg(a) => write_json_agg(out, a, div),
            MapValue::Plain(v) => write_json_value(out, v, style),
        }
    }
    if keyed {
        out.push(b'}');
    }
    out.extend_from_slice(b"}}\n");
}

/// A message whose data is a string: `printf`, `time`, `cat`, `join`, `syscall`.
pub fn write_message(out: &mut Vec<u8>, ty: &str, data: &[u8]) {
    write_display(out, format_args!("{{\"type\": \"{ty}\", \"data\": "));
    write_json_str(out, data);
    out.extend_from_slice(b"}\n");
}

/// `print(value)` in JSON: `{"type": "value", "data": …}`.
pub fn write_value_message(out: &mut Vec<u8>, v: &Value, style: TextStyle) {
    out.extend_from_slice(b"{\"type\": \"value\", \"data\": ");
    write_json_value(out, v, style);
    out.extend_from_slice(b"}\n");
}

/// `{"type": "lost_events", "data": {"events": N}}`.
pub fn write_lost_events(out: &mut Vec<u8>, n: u64) {
    write_display(
        out,
        format_args!("{{\"type\": \"lost_events\", \"data\": {{\"events\": {n}}}}}\n"),
    );
}

/// `{"type": "missed_events", "data": {"events": N, "kprobe": A, "recursion": B}}`: probe
/// runs the kernel skipped, N = A + B (A by kprobe_multi/kprobe.session/kprobe links, B for a
/// BPF program already running on the CPU).
pub fn write_missed_events(out: &mut Vec<u8>, n: u64, kprobe: u64, recursion: u64) {
    write_display(
        out,
        format_args!(
            "{{\"type\": \"missed_events\", \"data\": {{\"events\": {n}, \"kprobe\": {kprobe}, \
             \"recursion\": {recursion}}}}}\n"
        ),
    );
}

/// `{"type": "attached_probes", "count": N, "data": {"probes": N}}` (current bpftrace's
/// shape: `count` beside the older `data.probes`).
pub fn write_attached_probes(out: &mut Vec<u8>, n: u64) {
    write_display(
        out,
        format_args!(
            "{{\"type\": \"attached_probes\", \"count\": {n}, \"data\": {{\"probes\": {n}}}}}\n"
        ),
    );
}

/// `{"type": "helper_error", "helper": "…", "retcode": N, "line": L, "col": C}`.
pub fn write_helper_error(out: &mut Vec<u8>, helper: &str, retcode: i64, line: u32, col: u32) {
    out.extend_from_slice(b"{\"type\": \"helper_error\", \"helper\": ");
    write_json_str(out, helper.as_bytes());
    write_display(
        out,
        format_args!(", \"retcode\": {retcode}, \"line\": {line}, \"col\": {col}}}\n"),
    );
}

#[cfg(test)]
mod tests {
    use super::*;

    fn s(v: Vec<u8>) -> String {
        String::from_utf8(v).unwrap()
    }

    #[test]
    fn strings_escape_controls_and_keep_utf8() {
        let mut out = Vec::new();
        write_json_str(&mut out, b"a\"b\\c\n\r\t\x01\xc3\xa9\xff");
        assert_eq!(s(out), "\"a\\\"b\\\\c\\n\\r\\t\\u0001é\\u00ff\"");
    }

    #[test]
    fn messages_have_bpftraces_shapes() {
        let mut out = Vec::new();
        write_message(&mut out, "printf", b"hi\n");
        write_lost_events(&mut out, 3);
        write_attached_probes(&mut out, 1);
        write_helper_error(&mut out, "map_update_elem", -7, 1, 9);
        assert_eq!(
            s(out),
            "{\"type\": \"printf\", \"data\": \"hi\\n\"}\n\
             {\"type\": \"lost_events\", \"data\": {\"events\": 3}}\n\
             {\"type\": \"attached_probes\", \"count\": 1, \"data\": {\"probes\": 1}}\n\
             {\"type\": \"helper_error\", \"helper\": \"map_update_elem\", \"retcode\": -7, \"line\": 1, \"col\": 9}\n"
        );
    }

    #[test]
    fn values_nest() {
        let mut out = Vec::new();
        let v = Value::Tuple(vec![
            Value::Int(1),
            Value::str("two"),
            Value::Record(vec![("f".into(), Value::Bool(true))]),
        ]);
        write_value_message(&mut out, &v, TextStyle::default());
        assert_eq!(
            s(out),
            "{\"type\": \"value\", \"data\": [1,\"two\",{\"f\": true}]}\n"
        );
    }
}
