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
    // The main program's own frame (the others are the callbacks').
    t.stack_size = Some(first.stack_size);
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
        t = super::finish::with_guard(&t, &mut comments);
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
    // Index translation, each name looked up once (not one table search per relocation);
    // only names a relocation uses join `t`'s tables, in order of first use.
    let mut maps = Names::new(&t.maps, sub.maps.len());
    let mut params = Names::new(&t.params, sub.params.len());
    let mut btf_ids = Names::new(&t.btf_ids, sub.btf_ids.len());
    let mut consts = Names::new(&t.consts, sub.consts.len());
    for r in &sub.relocs {
        let kind = match r.kind {
            RelocKind::MapFd { map } => RelocKind::MapFd {
                map: maps.get(&mut t.maps, &sub.maps, map),
            },
            RelocKind::MapValue { map, off } => RelocKind::MapValue {
                map: maps.get(&mut t.maps, &sub.maps, map),
                off,
            },
            RelocKind::ArgSlot { param } => RelocKind::ArgSlot {
                param: params.get(&mut t.params, &sub.params, param),
            },
            RelocKind::BtfId { func } => RelocKind::BtfId {
                func: btf_ids.get(&mut t.btf_ids, &sub.btf_ids, func),
            },
            RelocKind::Const { id } => RelocKind::Const {
                id: consts.get(&mut t.consts, &sub.consts, id),
            },
            k => k,
        };
        t.relocs.push(Reloc::new(r.insn + base, r.field, kind));
    }
    for (i, span) in sub.source_map.entries() {
        t.source_map.add(i + base, span);
    }
}

/// Where a callee's table entries go in the caller's table (the first occurrence of a name is
/// its index, as [`Template::map_index`] does).
struct Names {
    index: std::collections::HashMap<String, usize>,
    done: Vec<Option<usize>>,
}

impl Names {
    fn new(table: &[String], n: usize) -> Names {
        let mut index = std::collections::HashMap::new();
        for (i, name) in table.iter().enumerate() {
            index.entry(name.clone()).or_insert(i);
        }
        Names {
            index,
            done: vec![None; n],
        }
    }

    /// The caller's index of the callee's entry `i`, adding its name to `table` if new.
    fn get(&mut self, table: &mut Vec<String>, names: &[String], i: usize) -> usize {
        if let Some(k) = self.done[i] {
            return k;
        }
        let k = *self.index.entry(names[i].clone()).or_insert_with(|| {
            table.push(names[i].clone());
            table.len() - 1
        });
        self.done[i] = Some(k);
        k
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

#[cfg(test)]
mod tests {
    use super::*;
    use crate::asm::isa::{Helper, Size};
    use crate::codegen::Arg;
    use crate::template::AttachKind;

    fn opts(guard: bool) -> FinishOptions {
        FinishOptions {
            name: "t".into(),
            attach: AttachKind::RawTracepoint,
            arming_guard: guard,
        }
    }

    /// A main program using map `a` that walks map `b` with a callback using map `c` and
    /// `frame` bytes of stack in each function.
    fn program(frame: u32) -> (Builder, Vec<Builder>) {
        let mut main = Builder::new();
        let s = main.slot(frame, 8);
        main.store(Size::Dw, s, 0, 0);
        main.store(Size::Dw, s, frame as i32 - 8, 0);
        let a = main.map("a");
        let b = main.map("b");
        main.call_void(Helper::MapDeleteElem, &[Arg::Map(a), Arg::Slot(s, 0)]);
        main.call_void(
            Helper::ForEachMapElem,
            &[Arg::Map(b), Arg::Func(0), Arg::Slot(s, 0), Arg::Imm(0)],
        );
        main.exit(0);
        let (mut cb, params) = Builder::subprog(4);
        let t = cb.slot(frame, 8);
        cb.store(Size::Dw, t, 0, 0);
        cb.store(Size::Dw, t, frame as i32 - 8, params[1]);
        let c = cb.map("c");
        cb.call_void(Helper::MapDeleteElem, &[Arg::Map(c), Arg::Slot(t, 0)]);
        cb.exit(0);
        (main, vec![cb])
    }

    #[test]
    fn callbacks_are_appended_with_merged_tables_and_resolved_offsets() {
        let (main, subs) = program(16);
        let c = finish_program(main, subs, &opts(true)).unwrap();
        let t = &c.template;
        assert_eq!(t.funcs.len(), 1);
        let start = t.funcs[0];
        assert_eq!(t.insns[start - 1].code, 0x95, "main ends with exit");
        let (at, ld) = t
            .insns
            .iter()
            .enumerate()
            .find(|(_, i)| {
                i.code == crate::asm::isa::CODE_LD_IMM64 && i.src() == crate::asm::isa::PSEUDO_FUNC
            })
            .unwrap();
        assert_eq!(at as i64 + ld.imm as i64 + 1, start as i64);
        // The callback's map `c` joined the main table; its relocation names it there.
        assert!(t.maps.iter().any(|m| m == "c"));
        let c_idx = t.maps.iter().position(|m| m == "c").unwrap();
        assert!(t
            .relocs
            .iter()
            .any(|r| r.insn >= start && r.kind == RelocKind::MapFd { map: c_idx }));
        assert!(t
            .relocs
            .iter()
            .all(|r| !matches!(r.kind, RelocKind::Subprog { .. })));
    }

    #[test]
    fn frames_along_a_call_chain_share_the_512_byte_stack() {
        let (main, subs) = program(264);
        let e = finish_program(main, subs, &opts(false)).unwrap_err();
        assert!(
            matches!(e, CodegenError::StackOverflow { needed: 576, .. }),
            "{e:?}"
        );
        let (main, subs) = program(200);
        let c = finish_program(main, subs, &opts(false)).unwrap();
        assert_eq!(c.stack_size, 448, "two frames rounded up to 32 bytes");
    }
}
