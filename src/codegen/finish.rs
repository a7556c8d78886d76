//! The last step: register and stack allocation, peephole clean-up, label resolution and the
//! [`Template`] with its relocations and source map.
//!
//! Input: a [`Builder`] and [`FinishOptions`]. Output: [`Compiled`] (the template, per-insn
//! comments for listings, frame size, spill count) or a [`CodegenError`].
//! Peephole rules (repeated to a fixpoint): drop `rX = rX` and the `rY = rX` right after
//! `rX = rY`; drop jumps to the next
//! instruction; drop code no jump reaches after `exit`/`goto`; retarget a jump whose target is
//! an unconditional `goto`; merge identical tails before a `goto` and its target and turn a
//! conditional jump over a `goto` into the inverted jump (`crossjump`); drop a store the next
//! instruction overwrites and the write-back of a just-loaded value (`stores`). Invariants: relocations, spans and comments travel with their
//! instruction through every deletion, so the source map and relocation sites stay exact; an
//! unbound label or a jump farther than 32767 instructions is an error, never a wrong offset.

use std::collections::HashMap;

use super::builder::{Builder, Label};
use super::machine::{emit, MItem};
use super::regalloc::allocate;
use super::stack::layout;
use super::CodegenError;
use crate::asm::isa::opcode;
use crate::asm::isa::{AluOp, Class, JmpSpecial, Source};
use crate::asm::Insn;
use crate::template::{AttachKind, Reloc, Template};

/// How to package the program.
#[derive(Clone, Debug)]
pub struct FinishOptions {
    /// Program name given to the kernel.
    pub name: String,
    pub attach: AttachKind,
    /// Put the all-or-nothing arming guard ([`Template::with_arming_guard`]) in front. Every
    /// probe program has it; tests of bare semantics may leave it out.
    pub arming_guard: bool,
}

/// A finished program.
#[derive(Clone, Debug)]
pub struct Compiled {
    pub template: Template,
    /// Comments attached to instructions (index into `template.insns`), for `-d asm`.
    pub comments: Vec<(usize, String)>,
    /// Bytes of stack the program uses.
    pub stack_size: u32,
    /// Values spilled to the stack by the register allocator.
    pub spilled: usize,
}

/// Allocates, cleans up and encodes `b`.
pub fn finish(mut b: Builder, opts: &FinishOptions) -> Result<Compiled, CodegenError> {
    if let Some(l) = unbound_label(&b) {
        return Err(CodegenError::UnboundLabel { label: l.0 });
    }
    super::hoist::hoist_slot_addrs(&mut b);
    let alloc = crate::timings::time("regalloc", || allocate(&mut b))?;
    let frame = crate::timings::time("stack_layout", || layout(&b))?;
    let mut items = emit(&b.insts, &alloc.regs, &frame)?;
    crate::timings::time("peephole", || peephole(&mut items));
    let mut t = Template::new(&opts.name, opts.attach, Vec::new());
    let mut comments = Vec::new();
    let mut positions: HashMap<u32, usize> = HashMap::new();
    let mut n = 0;
    for it in &items {
        match it {
            MItem::Label(l) => {
                positions.insert(l.0, n);
            }
            MItem::Insn { .. } => n += 1,
        }
    }
    let mut last_span = None;
    for it in items {
        let MItem::Insn {
            mut insn,
            reloc,
            target,
            span,
            comment,
        } = it
        else {
            continue;
        };
        let at = t.insns.len();
        if let Some(l) = target {
            let to = positions[&l.0] as i64;
            let off = to - at as i64 - 1;
            insn.off = i16::try_from(off).map_err(|_| CodegenError::JumpRange { insn: at, off })?;
        }
        if let Some((field, kind)) = reloc {
            t.relocs.push(Reloc::new(at, field, kind));
        }
        if last_span != Some(span) {
            t.source_map.add(at, span);
            last_span = Some(span);
        }
        if let Some(c) = comment {
            comments.push((at, c));
        }
        t.insns.push(insn);
    }
    t.maps = b.maps.clone();
    t.params = b.params.clone();
    t.consts = b.consts.clone();
    t.stack_size = Some(frame.size);
    if opts.arming_guard {
        t = with_guard(&t, &mut comments);
    }
    Ok(Compiled {
        template: t,
        comments,
        stack_size: frame.size,
        spilled: alloc.spilled,
    })
}

fn unbound_label(b: &Builder) -> Option<Label> {
    let mut bound = vec![false; b.nlabels as usize];
    for i in &b.insts {
        if let super::builder::Op::Bind(l) = i.op {
            bound[l.0 as usize] = true;
        }
    }
    b.insts
        .iter()
        .filter_map(|i| i.op.target())
        .find(|l| !bound[l.0 as usize])
}

fn is_mov_self(insn: &Insn) -> bool {
    is_mov_reg(insn) && insn.dst() == insn.src()
}

/// `rX = rY` (64-bit register move).
fn is_mov_reg(insn: &Insn) -> bool {
    insn.code == opcode(Class::Alu64, AluOp::Mov.value() | Source::X.value()) && insn.off == 0
}

/// Marks `rY = rX` right after `rX = rY` (no label between, so nothing jumps in): rY already
/// holds the value. Returns whether any was marked.
fn mark_move_backs(items: &[MItem], drop: &mut [bool]) -> bool {
    let mut any = false;
    for i in 1..items.len() {
        if let (
            MItem::Insn {
                insn: a,
                reloc: None,
                ..
            },
            MItem::Insn {
                insn: b,
                reloc: None,
                ..
            },
        ) = (&items[i - 1], &items[i])
        {
            if !drop[i - 1]
                && is_mov_reg(a)
                && is_mov_reg(b)
                && a.dst() == b.src()
                && a.src() == b.dst()
            {
                drop[i] = true;
                any = true;
            }
        }
    }
    any
}

fn is_ja(insn: &Insn) -> bool {
    insn.code == opcode(Class::Jmp, JmpSpecial::Ja.value())
}

fn is_exit(insn: &Insn) -> bool {
    insn.code == opcode(Class::Jmp, JmpSpecial::Exit.value())
}

/// Applies the peephole rules of the module documentation until nothing changes.
pub(crate) fn peephole(items: &mut Vec<MItem>) {
    // A cycle of gotos would retarget forever: bound the rounds.
    for _round in 0..64 {
        let before = items.len();
        // rX = rX
        items
            .retain(|it| !matches!(it, MItem::Insn { insn, reloc: None, .. } if is_mov_self(insn)));
        // Jumps to a `goto`: retarget (one hop per round; rounds repeat to a fixpoint).
        let mut goto_of: HashMap<u32, Label> = HashMap::new();
        for w in items.windows(2) {
            if let (
                MItem::Label(l),
                MItem::Insn {
                    insn,
                    target: Some(t),
                    ..
                },
            ) = (&w[0], &w[1])
            {
                if is_ja(insn) && t.0 != l.0 {
                    goto_of.insert(l.0, *t);
                }
            }
        }
        let mut retargeted = super::crossjump::cross_jump(items);
        retargeted |= super::crossjump::invert_over_goto(items);
        retargeted |= super::stores::drop_redundant_stores(items);
        retargeted |= super::deadstores::drop_dead_stack_stores(items);
        for it in items.iter_mut() {
            if let MItem::Insn {
                target: Some(t), ..
            } = it
            {
                if let Some(nt) = goto_of.get(&t.0) {
                    *t = *nt;
                    retargeted = true;
                }
            }
        }
        // `rX = rY; rY = rX`: the second is a no-op.
        let mut drop = vec![false; items.len()];
        if mark_move_backs(items, &mut drop) {
            super::stores::remove_marked(items, &drop);
            retargeted = true;
        }
        // Jumps to the next instruction (marked, then removed at once: linear).
        let mut drop = vec![false; items.len()];
        for i in 0..items.len() {
            if let MItem::Insn {
                target: Some(t), ..
            } = &items[i]
            {
                drop[i] = items[i + 1..]
                    .iter()
                    .take_while(|x| matches!(x, MItem::Label(_)))
                    .any(|x| matches!(x, MItem::Label(l) if l == t));
            }
        }
        super::stores::remove_marked(items, &drop);
        // Unreachable code after exit / goto, up to the next label some jump names.
        let used: std::collections::HashSet<u32> = items
            .iter()
            .filter_map(|it| match it {
                MItem::Insn {
                    target: Some(t), ..
                } => Some(t.0),
                _ => None,
            })
            .collect();
        items.retain(|it| !matches!(it, MItem::Label(l) if !used.contains(&l.0)));
        let mut dead = false;
        items.retain(|it| match it {
            MItem::Label(_) => {
                dead = false;
                true
            }
            MItem::Insn { insn, .. } => {
                let keep = !dead;
                if keep && (is_exit(insn) || is_ja(insn)) {
                    dead = true;
                }
                keep
            }
        });
        if items.len() == before && !retargeted {
            break;
        }
    }
}

impl Compiled {
    /// The program in the disassembler's syntax (valid assembler input: annotations are `;`
    /// comments), with a `; <where>` line whenever the source span changes (`where_` renders
    /// a span, e.g. as `file:line:col` and the script line) and each instruction's comment.
    pub fn listing(&self, where_: impl Fn(crate::diag::Span) -> String) -> String {
        let t = &self.template;
        let mut out = String::new();
        let mut last = None;
        let mut comments = self.comments.iter().peekable();
        let mut i = 0;
        while i < t.insns.len() {
            let span = t.source_map.lookup(i);
            if span != last {
                if let Some(s) = span {
                    out.push_str("; ");
                    out.push_str(&where_(s));
                    out.push('\n');
                }
                last = span;
            }
            out.push_str("    ");
            let n = crate::asm::disassemble_one(&t.insns, i, &mut out);
            while let Some((at, c)) = comments.peek() {
                if *at > i {
                    break;
                }
                if *at == i {
                    out.push_str(" ; ");
                    out.push_str(c);
                }
                comments.next();
            }
            out.push('\n');
            i += n;
        }
        out
    }
}

/// `t` with the arming guard in front, and the listing comments moved down with the code.
pub(crate) fn with_guard(
    t: &crate::template::Template,
    comments: &mut [(usize, String)],
) -> crate::template::Template {
    let guarded = t.with_arming_guard();
    let shift = guarded.insns.len() - t.insns.len();
    for c in comments {
        c.0 += shift;
    }
    guarded
}
