//! Instruction index → script span, so a verifier rejection at instruction N points at the
//! script text that produced it. Entries are sparse: an instruction maps to the span of the
//! nearest entry at or before it (the code generator records one entry per statement or
//! expression it starts emitting).

use crate::diag::Span;

#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SourceMap {
    /// (first instruction, span), sorted by instruction.
    entries: Vec<(u32, Span)>,
}

impl SourceMap {
    /// Records that instructions from `insn` on come from `span` (until the next entry).
    /// Entries may be added in any order.
    pub fn add(&mut self, insn: usize, span: Span) {
        let insn = insn as u32;
        let at = self.entries.partition_point(|(i, _)| *i <= insn);
        if at > 0 && self.entries[at - 1].0 == insn {
            self.entries[at - 1].1 = span;
        } else {
            self.entries.insert(at, (insn, span));
        }
    }

    /// The span instruction `insn` came from, if any entry precedes it.
    pub fn lookup(&self, insn: usize) -> Option<Span> {
        let at = self.entries.partition_point(|(i, _)| *i as usize <= insn);
        (at > 0).then(|| self.entries[at - 1].1)
    }

    /// The same map for a program with `n` instructions inserted at the front.
    pub fn shifted(&self, n: usize) -> SourceMap {
        SourceMap {
            entries: self
                .entries
                .iter()
                .map(|&(i, s)| (i + n as u32, s))
                .collect(),
        }
    }

    /// The entries: (first instruction, span), in instruction order.
    pub fn entries(&self) -> impl Iterator<Item = (usize, Span)> + '_ {
        self.entries.iter().map(|&(i, s)| (i as usize, s))
    }

    pub fn is_empty(&self) -> bool {
        self.entries.is_empty()
    }
}
