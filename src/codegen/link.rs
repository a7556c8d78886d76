//! Linking a program with its subprograms: the callbacks `bpf_for_each_map_elem` and
//! `bpf_loop` call (BPF-to-BPF functions of the same program, kernel 5.13+ / 5.17+).
//!
//! Input: the main [`Builder`] and one builder per subprogram (index = the `func` of
//! [`Arg::Func`](super::Arg::Func)). Each is finished on its own (registers, frame, peephole),
//! then they are laid out one after the other behind the main program, their map, parameter
//! and constant tables merged into the main template's, and every `ld_imm64` with
//! `BPF_PSEUDO_FUNC` gets its callee's offset relative to the next instruction. Output: one
//! [`Compiled`] whose template carries no `Subprog` relocation.
//! Invariants: relative jumps never cross a function boundary (each function is finished
//! alone, and ends with `exit`); the arming guard goes in front last, which moves every
//! function by the same amount; the frames along any call chain, each rounded up to 32 bytes
//! as the verifier counts them (`check_max_stack_depth`, kernel/bpf/verifier.c), fit in
//! [`MAX_STACK`](super::stack::MAX_STACK) bytes.

use super::builder::Builder;
use super::finish::{finish, Compiled, FinishOptions};
use super::stack::MAX_STACK;
use super::CodegenError;
use crate::template::{Reloc, RelocKind, Template};

/// Finishes `main` and its subprograms `subs` into one program (see the module documentation).
pub fn finish_program(
    main: Builder,
    subs: Vec<Builder>,
    opts: &FinishOptions,
) -> Result<Compiled, CodegenError> {
    if subs.is_empty() {
        return finish(main, opts);
    }
    let bare = FinishOptions {
        arming_guard: false,
        ..opts.clone()
    };
    let mut parts = vec![finish(main, &bare)?];
    for s in subs {
        parts.push(finish(s, &bare)?);
    }
    let needed = chain_depth(&parts, 0, 0)?;
    if needed > MAX_STACK {
        return Err(CodegenError::StackOverflow {
            needed,
            limit: MAX_STACK,
        });
    }
    let spilled = parts.iter().map(|p| p.spilled).sum();
    let mut parts = parts.into_iter();
    let first = parts
        .next()
        .unwrap_or_else(|| panic!("internal error: link without main"));
    let mut t = first.template;
    let mut comments = first.comments;
    let mut starts = vec![0usize];
    for p in parts {
        let base = t.insns.len();
        starts.push(base);
        append(&mut t, &p.template, base);
        comments.extend(p.comments.into_iter().map(|(i, c)| (i + base, c)));
    }
    resolve_calls(&mut t, &starts);
    t.funcs = starts[1..].to_vec();
    if opts.arming_guard {
        let before = t.insns.len();
        t = t.with_arming_guard();
        let shift = t.insns.len() - before;
        for c in &mut comments {
            c.0 += shift;
        }
    }
    Ok(Compiled {
        template: t,
        comments,
        stack_size: needed,
        spilled,
    })
}

/// Bytes of stack the deepest call chain from function `f` needs.
fn chain_depth(parts: &[Compiled], f: usize, depth: usize) -> Result<u32, CodegenError> {
    // Subprograms only call ones created after them, so the recursion ends; a cycle would
    // be an internal error, caught by the depth bound (the kernel allows 8 frames).
    if depth > 8 {
        return Err(CodegenError::TooLarge {
            what: "a chain of nested callbacks",
            size: depth,
            limit: 8,
        });
    }
    let own = parts[f].stack_size.max(1).next_multiple_of(32);
    let mut deepest = 0;
    for r in &parts[f].template.relocs {
        if let RelocKind::Subprog { func } = r.kind {
            if func + 1 < parts.len() {
                deepest = deepest.max(chain_depth(parts, func + 1, depth + 1)?);
            }
        }
    }
    Ok(own + deepest)
}

/// Appends `sub` at instruction `base` of `t`, merging its tables into `t`'s.
fn append(t: &mut Template, sub: &Template, base: usize) {
    t.insns.extend_from_slice(&sub.insns);
    for r in &sub.relocs {
        let kind = match r.kind {
            RelocKind::MapFd { map } => RelocKind::MapFd {
                map: t.map_index(&sub.maps[map]),
            },
            RelocKind::MapValue { map, off } => RelocKind::MapValue {
                map: t.map_index(&sub.maps[map]),
                off,
            },
            RelocKind::ArgSlot { param } => RelocKind::ArgSlot {
                param: t.param_index(&sub.params[param]),
            },
            RelocKind::BtfId { func } => RelocKind::BtfId {
                func: t.btf_id_index(&sub.btf_ids[func]),
            },
            RelocKind::Const { id } => RelocKind::Const {
                id: t.const_index(&sub.consts[id]),
            },
            k => k,
        };
        t.relocs.push(Reloc::new(r.insn + base, r.field, kind));
    }
    for (i, span) in sub.source_map.entries() {
        t.source_map.add(i + base, span);
    }
}

/// Turns every `Subprog` relocation into the callee's offset from the next instruction.
fn resolve_calls(t: &mut Template, starts: &[usize]) {
    let mut kept = Vec::with_capacity(t.relocs.len());
    for r in std::mem::take(&mut t.relocs) {
        match r.kind {
            RelocKind::Subprog { func } => {
                let to = *starts
                    .get(func + 1)
                    .unwrap_or_else(|| panic!("internal error: no subprogram {func}"));
                t.insns[r.insn].imm = (to as i64 - r.insn as i64 - 1) as i32;
            }
            _ => kept.push(r),
        }
    }
    t.relocs = kept;
}
