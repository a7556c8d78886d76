//! Reading a verifier log: which instruction failed and the verifier's one-line reason.
//!
//! The verifier prints each instruction it checks as `N: (xx) text` (kernel/bpf/disasm.c via
//! `print_bpf_insn`), register state lines, then the error message, then a
//! `processed N insns …` statistics line. The failing instruction is the last `N: (xx)` line
//! before the message; the reason is the first message line after it.

/// What a verifier log says about a rejection.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct VerifierSummary {
    /// Index of the instruction the verifier rejected, when the log shows it.
    pub insn: Option<usize>,
    /// The verifier's one-line reason, e.g. `R2 !read_ok`.
    pub reason: Option<String>,
}

/// Parses `log` (any log level).
pub fn summarize(log: &str) -> VerifierSummary {
    let lines: Vec<&str> = log.lines().map(str::trim_end).collect();
    let end = lines
        .iter()
        .rposition(|l| l.starts_with("processed ") && l.contains(" insns"))
        .unwrap_or(lines.len());
    let body = &lines[..end];
    let last_insn = body.iter().rposition(|l| insn_index(l).is_some());
    let reason = match last_insn {
        Some(i) => body[i + 1..]
            .iter()
            .find(|l| is_message(l))
            .or_else(|| body.iter().rev().find(|l| is_message(l))),
        None => body.iter().rev().find(|l| is_message(l)),
    };
    VerifierSummary {
        insn: last_insn.and_then(|i| insn_index(body[i])),
        reason: reason.map(|s| s.trim().to_string()),
    }
}

/// `N: (xx) …` → `Some(N)`.
fn insn_index(line: &str) -> Option<usize> {
    let (num, rest) = line.split_once(": (")?;
    let n = num.parse::<usize>().ok()?;
    let code = rest.get(..3)?;
    (code.len() == 3
        && code.as_bytes()[2] == b')'
        && code[..2].bytes().all(|b| b.is_ascii_hexdigit()))
    .then_some(n)
}

/// A line that is neither an instruction, a register-state dump, a source annotation nor a
/// branch marker.
fn is_message(line: &str) -> bool {
    let t = line.trim();
    if t.is_empty() || t.starts_with(';') || t.starts_with("from ") || t.starts_with("func#") {
        return false;
    }
    // `N: …` (instruction or state at insn N).
    if let Some((n, _)) = t.split_once(':') {
        if !n.is_empty() && n.bytes().all(|b| b.is_ascii_digit()) {
            return false;
        }
    }
    // A bare state line `R1=ctx() R10=fp0` (every word is `Rn…=…` or `fp-N…=…`).
    let state = t
        .split_whitespace()
        .all(|w| (w.starts_with('R') || w.starts_with("fp")) && w.contains('='));
    !state
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn finds_the_failing_insn_and_reason_in_a_level2_log() {
        let log = "func#0 @0\n\
                   0: R1=ctx() R10=fp0\n\
                   0: (b7) r0 = 0                        ; R0_w=0\n\
                   1: (79) r0 = *(u64 *)(r2 +0)\n\
                   R2 !read_ok\n\
                   processed 2 insns (limit 1000000) max_states_per_insn 0 total_states 0 peak_states 0 mark_read 0\n";
        let s = summarize(log);
        assert_eq!(s.insn, Some(1));
        assert_eq!(s.reason.as_deref(), Some("R2 !read_ok"));
    }

    #[test]
    fn reason_is_the_first_message_line_after_the_insn() {
        let log = "3: (61) r1 = *(u32 *)(r0 +8)\n\
                   invalid access to map value, value_size=8 off=8 size=4\n\
                   R0 min value is outside of the allowed memory range\n\
                   processed 4 insns (limit 1000000)\n";
        let s = summarize(log);
        assert_eq!(s.insn, Some(3));
        assert_eq!(
            s.reason.as_deref(),
            Some("invalid access to map value, value_size=8 off=8 size=4")
        );
    }

    #[test]
    fn logs_without_insns_still_give_a_reason() {
        let s = summarize("back-edge from insn 1 to 0\nprocessed 0 insns (limit 1000000)\n");
        assert_eq!(s.insn, None);
        assert_eq!(s.reason.as_deref(), Some("back-edge from insn 1 to 0"));
        assert_eq!(summarize(""), VerifierSummary::default());
    }
}
