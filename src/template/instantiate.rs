//! Instantiation: copy a template and patch every relocation site with one target's values.
//! A copy plus stores; the per-site checks are a few compares, so it stays far above 1 M
//! clones/s for a 50-instruction template (benches/clone.rs).

use super::reloc::{
    Field, Reloc, RelocKind, CODE_CALL, CODE_LD_IMM64, PSEUDO_KFUNC_CALL, PSEUDO_MAP_FD,
    PSEUDO_MAP_VALUE,
};
use super::Template;
use crate::asm::Insn;

/// The values one clone is patched with. Slices are indexed like the template's tables
/// (`maps`, `params`, `btf_ids`, `consts`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TargetValues<'a> {
    /// The target's index in the probe's target table.
    pub index: u32,
    /// One fd per [`Template::maps`] entry (shared by all clones).
    pub map_fds: &'a [i32],
    /// One ctx offset per [`Template::params`] entry.
    pub arg_slots: &'a [i64],
    /// The fexit return-value slot.
    pub ret_slot: Option<i64>,
    /// One BTF id per [`Template::btf_ids`] entry.
    pub btf_ids: &'a [i32],
    /// One value per [`Template::consts`] entry.
    pub consts: &'a [i64],
}

/// A relocation that could not be applied; the clone is not produced.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum InstantiateError {
    #[error("relocation at insn {insn} ({kind:?}) has no value for this target")]
    MissingValue { insn: usize, kind: RelocKind },
    #[error("value {value} does not fit the {field:?} field of insn {insn}")]
    OutOfRange {
        insn: usize,
        field: Field,
        value: i64,
    },
    #[error("relocation at insn {insn} expects {expected}")]
    BadSite { insn: usize, expected: &'static str },
}

/// One clone of `t` for the target described by `v`.
pub fn instantiate(t: &Template, v: &TargetValues<'_>) -> Result<Vec<Insn>, InstantiateError> {
    let mut out = Vec::with_capacity(t.insns.len());
    instantiate_into(t, v, &mut out)?;
    Ok(out)
}

/// [`instantiate`] into a reused buffer (cleared first).
pub fn instantiate_into(
    t: &Template,
    v: &TargetValues<'_>,
    out: &mut Vec<Insn>,
) -> Result<(), InstantiateError> {
    out.clear();
    out.extend_from_slice(&t.insns);
    for r in &t.relocs {
        let value = value_of(r, v)?;
        check_site(out, r)?;
        patch(out, r, value)?;
    }
    Ok(())
}

fn value_of(r: &Reloc, v: &TargetValues<'_>) -> Result<i64, InstantiateError> {
    let missing = || InstantiateError::MissingValue {
        insn: r.insn,
        kind: r.kind,
    };
    Ok(match r.kind {
        RelocKind::MapFd { map } | RelocKind::MapValue { map, .. } => {
            *v.map_fds.get(map).ok_or_else(missing)? as i64
        }
        RelocKind::TargetIndex => v.index as i64,
        RelocKind::ArgSlot { param } => *v.arg_slots.get(param).ok_or_else(missing)?,
        RelocKind::RetSlot => v.ret_slot.ok_or_else(missing)?,
        RelocKind::BtfId { func } => *v.btf_ids.get(func).ok_or_else(missing)? as i64,
        RelocKind::Const { id } => *v.consts.get(id).ok_or_else(missing)?,
        // Linking resolves these before a template exists; one left over has no value.
        RelocKind::Subprog { .. } => return Err(missing()),
    })
}

fn check_site(insns: &[Insn], r: &Reloc) -> Result<(), InstantiateError> {
    let bad = |expected| InstantiateError::BadSite {
        insn: r.insn,
        expected,
    };
    let Some(i) = insns.get(r.insn) else {
        return Err(bad("an instruction index inside the program"));
    };
    let ld_imm64 = i.code == CODE_LD_IMM64 && r.insn + 1 < insns.len();
    match r.kind {
        RelocKind::MapFd { .. } if !(ld_imm64 && i.src() == PSEUDO_MAP_FD) => {
            Err(bad("an ld_imm64 with BPF_PSEUDO_MAP_FD"))
        }
        RelocKind::MapValue { .. } if !(ld_imm64 && i.src() == PSEUDO_MAP_VALUE) => {
            Err(bad("an ld_imm64 with BPF_PSEUDO_MAP_VALUE"))
        }
        RelocKind::MapFd { .. } | RelocKind::MapValue { .. } if r.field != Field::Imm => {
            Err(bad("the Imm field for a map fd"))
        }
        RelocKind::BtfId { .. } if !(i.code == CODE_CALL && i.src() == PSEUDO_KFUNC_CALL) => {
            Err(bad("a call with BPF_PSEUDO_KFUNC_CALL"))
        }
        _ if r.field == Field::Imm64 && !ld_imm64 => Err(bad("an ld_imm64 for an Imm64 field")),
        _ => Ok(()),
    }
}

fn patch(insns: &mut [Insn], r: &Reloc, value: i64) -> Result<(), InstantiateError> {
    let range = || InstantiateError::OutOfRange {
        insn: r.insn,
        field: r.field,
        value,
    };
    match r.field {
        // A 32-bit immediate is a bit pattern: signed and unsigned 32-bit values both fit.
        Field::Imm if (i32::MIN as i64..=u32::MAX as i64).contains(&value) => {
            insns[r.insn].imm = value as u32 as i32
        }
        Field::Imm => return Err(range()),
        Field::Off => insns[r.insn].off = i16::try_from(value).map_err(|_| range())?,
        Field::Imm64 => {
            insns[r.insn].imm = value as u64 as u32 as i32;
            insns[r.insn + 1].imm = ((value as u64) >> 32) as u32 as i32;
        }
    }
    Ok(())
}
