//! Relocatable program templates: one probe compiled once, cloned and patched per attach target.
//!
//! Input: a [`Template`] (from the code generator, or from a BPF ELF program section via
//! [`Template::from_section`]) and per-target [`TargetValues`]. Output: the instructions of one
//! clone, ready for `BPF_PROG_LOAD` ([`instantiate`]).
//!
//! # What the code generator produces
//! For each probe block and each *fact group* (below), one `Template`:
//! - `insns`: the program, with placeholder values (0) wherever a per-target or per-run value
//!   goes;
//! - `relocs`: one [`Reloc`] per placeholder, naming the instruction, the field to patch
//!   ([`Field`]) and what goes there ([`RelocKind`]): a map fd (`ld_imm64` with
//!   `BPF_PSEUDO_MAP_FD`), a map value address (`BPF_PSEUDO_MAP_VALUE`), the target's index in
//!   the probe's target table (so `func`/`probe` cost one immediate and a userspace string
//!   table), an argument slot (the ctx offset of a named parameter: 8 × its position for
//!   fentry/fexit), the fexit return-value slot (8 × parameter count), a kfunc's BTF id, or a
//!   named per-target constant;
//! - `maps`: the names of the maps the program refers to, in the order the loader passes their
//!   fds; `params`, `btf_ids`, `consts`: the symbol tables relocations index into;
//! - `facts`: what the template assumes about each target (e.g. "parameter `count` exists and
//!   is an integer of ≤ 8 bytes");
//! - `prog_type`/`attach`: how clones are loaded and attached; `source_map`: instruction index →
//!   script span, for verifier errors.
//!
//! ```
//! use strobe::asm::{isa::Size, Insn, Reg};
//! use strobe::template::*;
//! // `fentry:vfs_* { … args.count … }`: read the parameter from its per-target ctx slot.
//! let mut t = Template::new("count", AttachKind::Fentry, vec![]);
//! let count = t.param_index("count");
//! t.facts.push(Fact::Param {
//!     name: "count".into(),
//!     requirement: ParamRequirement::Integer { max_size: 8 },
//! });
//! t.insns.push(Insn::load(Size::Dw, Reg::R6, Reg::R1, 0)); // r6 = *(u64 *)(r1 + slot)
//! t.add_reloc(0, Field::Off, RelocKind::ArgSlot { param: count });
//! t.insns.push(Insn::mov64_imm(Reg::R7, 0)); // r7 = target index (`func`)
//! t.add_reloc(1, Field::Imm, RelocKind::TargetIndex);
//! t.insns.push(Insn::mov64_imm(Reg::R0, 0));
//! t.insns.push(Insn::exit());
//! // vfs_read(file, buf, count, pos): count is the third slot.
//! let clone = instantiate(&t, &TargetValues { index: 7, arg_slots: &[16], ..Default::default() })
//!     .unwrap();
//! assert_eq!((clone[0].off, clone[1].imm), (16, 7));
//! ```
//!
//! # The grouping rule
//! A wildcard expands to targets that differ in their prototypes. [`group_targets`] evaluates
//! every fact of a probe against every target's [`TargetProto`]:
//! - a target for which some fact fails (parameter missing, not an integer, wider than 8
//!   bytes, no return value, a struct/union return, …) is **skipped**, with the first failing
//!   fact as the reason — it never aborts the probe;
//! - the others are grouped by the *shape* each fact resolved to ([`FactOutcome`]: the integer
//!   width and signedness, pointer or not — whatever changes the generated code), never by
//!   positions: positions differ per target and are relocations, so `vfs_read` and `vfs_write`
//!   share one template even though `count` sits in a different slot in each.
//!
//! One template is generated per group; most wildcards give exactly one group.
//!
//! # Invariants
//! `instantiate` is a copy plus patching: it fails if any relocation cannot be applied (missing
//! value, value out of the field's range, site not the instruction the kind requires), and it
//! changes nothing but the relocation sites. This module never makes a syscall.

mod facts;
pub mod funcs;
mod guard;
mod instantiate;
mod reloc;
mod source_map;

pub use facts::{
    arg_slots, evaluate, group_targets, ret_slot, Fact, FactOutcome, Grouping, ParamRequirement,
    SkipReason, TargetGroup, TargetProto, TypeClass,
};
pub use guard::{ARM_MAP_NAME, EXIT_MAP_NAME, LOST_MAP_NAME, USER_FLAG_OFF};
pub use instantiate::{instantiate, instantiate_into, InstantiateError, TargetValues};
pub(crate) use reloc::PSEUDO_FUNC;
pub use reloc::{Field, Reloc, RelocKind};
pub use source_map::SourceMap;

use crate::asm::isa::ProgType;
use crate::asm::{Insn, Section};

/// How clones of a template are attached: the probe-kind table's attach shapes.
pub use crate::kinds::AttachKind;

/// A relocatable program: see the module documentation for what each part means.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Template {
    /// Program name given to the kernel (truncated by it to 15 bytes).
    pub name: String,
    pub license: String,
    pub attach: AttachKind,
    pub insns: Vec<Insn>,
    pub relocs: Vec<Reloc>,
    /// Map names; `RelocKind::MapFd { map }` and `MapValue { map, .. }` index this, and the
    /// loader passes fds in the same order.
    pub maps: Vec<String>,
    /// Parameter names; `RelocKind::ArgSlot { param }` indexes this.
    pub params: Vec<String>,
    /// Kfunc names; `RelocKind::BtfId { func }` indexes this.
    pub btf_ids: Vec<String>,
    /// Names of other per-target constants; `RelocKind::Const { id }` indexes this.
    pub consts: Vec<String>,
    /// What the template assumes about every target it is instantiated for.
    pub facts: Vec<Fact>,
    pub source_map: SourceMap,
    /// First instruction of each subprogram (loop callbacks) after the main program, in
    /// order; loading such a program needs BTF func info ([`funcs::func_btf`]).
    pub funcs: Vec<usize>,
    /// Bytes of stack the main program's frame uses, when the code generator says (`None`:
    /// unknown, e.g. a program from an ELF object). Code put in front of the program may use
    /// the stack below it (the kprobe.session prologue, `loader::session`).
    pub stack_size: Option<u32>,
}

impl Template {
    /// An empty template (no relocations, no facts) around `insns`.
    pub fn new(name: &str, attach: AttachKind, insns: Vec<Insn>) -> Template {
        Template {
            name: name.to_string(),
            license: "GPL".to_string(),
            attach,
            insns,
            relocs: Vec::new(),
            maps: Vec::new(),
            params: Vec::new(),
            btf_ids: Vec::new(),
            consts: Vec::new(),
            facts: Vec::new(),
            source_map: SourceMap::default(),
            funcs: Vec::new(),
            stack_size: None,
        }
    }

    pub fn prog_type(&self) -> ProgType {
        self.attach.prog_type()
    }

    /// The index of map `name`, adding it to the map table if new.
    pub fn map_index(&mut self, name: &str) -> usize {
        intern(&mut self.maps, name)
    }

    /// The index of parameter `name` in the parameter table, adding it if new.
    pub fn param_index(&mut self, name: &str) -> usize {
        intern(&mut self.params, name)
    }

    /// The index of kfunc `name` in the BTF-id table, adding it if new.
    pub fn btf_id_index(&mut self, name: &str) -> usize {
        intern(&mut self.btf_ids, name)
    }

    /// The index of per-target constant `name`, adding it if new.
    pub fn const_index(&mut self, name: &str) -> usize {
        intern(&mut self.consts, name)
    }

    /// Records relocation `kind` on `field` of instruction `insn`.
    pub fn add_reloc(&mut self, insn: usize, field: Field, kind: RelocKind) {
        self.relocs.push(Reloc::new(insn, field, kind));
    }

    /// A template from one program section of an assembled or ELF object: every relocation
    /// naming a map becomes a `MapFd` relocation (or `MapValue` when the `ld_imm64` carries
    /// `BPF_PSEUDO_MAP_VALUE`); a relocation naming anything else, or on anything but an
    /// `ld_imm64`, is returned as an error (its symbol): BPF-to-BPF calls across sections are
    /// not linked here, and references to global data must first be rewritten to name their
    /// section ([`crate::loader::link_data`]), which is then one of `map_names`.
    pub fn from_section(
        section: &Section,
        map_names: &[String],
        attach: AttachKind,
        license: &str,
    ) -> Result<Template, String> {
        let mut t = Template::new(&program_name(&section.name), attach, section.insns.clone());
        t.license = license.to_string();
        for r in &section.relocs {
            if !map_names.contains(&r.symbol) {
                return Err(r.symbol.clone());
            }
            let map = t.map_index(&r.symbol);
            let insn = section.insns.get(r.insn).ok_or_else(|| r.symbol.clone())?;
            if insn.code != reloc::CODE_LD_IMM64 {
                return Err(r.symbol.clone());
            }
            let kind = if insn.src() == reloc::PSEUDO_MAP_VALUE {
                let off = section.insns.get(r.insn + 1).map_or(0, |n| n.imm as u32);
                RelocKind::MapValue { map, off }
            } else {
                // clang leaves src_reg 0 and relies on the relocation; the kernel wants the
                // pseudo source that says "imm is a map fd".
                t.insns[r.insn].set_src(reloc::PSEUDO_MAP_FD);
                RelocKind::MapFd { map }
            };
            t.relocs.push(Reloc {
                insn: r.insn,
                field: Field::Imm,
                kind,
            });
        }
        Ok(t)
    }
}

fn intern(table: &mut Vec<String>, name: &str) -> usize {
    match table.iter().position(|n| n == name) {
        Some(i) => i,
        None => {
            table.push(name.to_string());
            table.len() - 1
        }
    }
}

/// A kernel-acceptable program name from a section name (`fentry/vfs_read` → `vfs_read`):
/// the last path component, non-identifier bytes replaced, at most 15 bytes.
fn program_name(section: &str) -> String {
    let last = section.rsplit('/').next().unwrap_or(section);
    last.chars()
        .map(|c| if c.is_ascii_alphanumeric() { c } else { '_' })
        .take(15)
        .collect()
}

#[cfg(test)]
mod tests;
