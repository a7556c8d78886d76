//! CO-RE relocations of clang-built objects for `strobe load`: the `.BTF.ext` records clang
//! emits for `__builtin_preserve_access_index` / `preserve_field_info` / `preserve_type_info`
//! / `preserve_enum_value`, resolved against the running kernel's BTF and patched into the
//! program's instructions before it is cloned.
//!
//! Input: the object's bytes (its `.BTF` and `.BTF.ext`), a program section's name and
//! instructions, and the target BTF (vmlinux). Output: the instructions with every relocated
//! immediate or offset replaced, or a [`CoreError`].
//!
//! Supported kinds: all of `enum bpf_core_relo_kind` — field byte offset, byte size,
//! existence, signedness and the two bitfield shifts (`BPF_CORE_READ_BITFIELD[_PROBED]`);
//! local and target type ids; type existence, size and "matches" ([`super::type_match`]);
//! enumerator existence and value. On a bitfield, byte offset and size describe the smallest
//! naturally aligned load (of at least the member's integer size, at most 8 bytes) that covers
//! it, and the shifts extract it from that load as a little-endian u64: `<< lshift >> rshift`.
//! A relocation whose type or field the kernel lacks makes existence and match checks 0; any
//! other kind poisons its instruction (a call to helper 0xbad2310, as libbpf does), so the
//! verifier names it if that code is reachable. Names match by their
//! essential part (`task_struct___v2` matches `task_struct`); a local member path is followed
//! in the kernel's type by member names, through anonymous structs and unions.
//! Format: `Documentation/bpf/btf.rst` (".BTF.ext section") and `llvm-project`'s
//! `BTFDebug.cpp` (what clang writes); kinds are `enum bpf_core_relo_kind` in uapi `bpf.h`.

use goblin::elf::Elf;

use crate::asm::{decode, Decoded, Insn, Operand};
use crate::btf::{Btf, TypeKind};

/// One `struct bpf_core_relo`.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct CoreRelo {
    /// Byte offset of the instruction in its section.
    pub insn_off: u32,
    /// Local (the object's BTF) root type.
    pub type_id: u32,
    /// Offset of the access string (`0:2:1`) in the object's BTF strings.
    pub access_str_off: u32,
    pub kind: u32,
}

#[derive(Debug, thiserror::Error, PartialEq, Eq)]
pub enum CoreError {
    #[error("malformed .BTF.ext: {0}")]
    BadExt(String),
    #[error("the object's .BTF: {0}")]
    BadBtf(String),
    #[error("CO-RE relocation at insn {insn}: {what}")]
    Relo { insn: usize, what: String },
}

const FIELD_BYTE_OFFSET: u32 = 0;
const FIELD_BYTE_SIZE: u32 = 1;
const FIELD_EXISTS: u32 = 2;
const FIELD_SIGNED: u32 = 3;
const FIELD_LSHIFT_U64: u32 = 4;
const FIELD_RSHIFT_U64: u32 = 5;
const TYPE_ID_LOCAL: u32 = 6;
const TYPE_ID_TARGET: u32 = 7;
const TYPE_EXISTS: u32 = 8;
const TYPE_SIZE: u32 = 9;
const ENUMVAL_EXISTS: u32 = 10;
const ENUMVAL_VALUE: u32 = 11;
const TYPE_MATCHES: u32 = 12;
/// libbpf's poison: a call to a helper that does not exist.
const POISON_HELPER: i32 = 0xbad2310;

fn u32_at(b: &[u8], off: usize) -> Option<u32> {
    Some(u32::from_le_bytes(b.get(off..off + 4)?.try_into().ok()?))
}

/// The CO-RE relocations of section `section` in ELF `bytes`, with the object's BTF; `None`
/// when the object has no `.BTF.ext` CO-RE records for it.
pub fn section_relos(
    bytes: &[u8],
    section: &str,
) -> Result<Option<(Btf, Vec<CoreRelo>)>, CoreError> {
    let elf = Elf::parse(bytes).map_err(|e| CoreError::BadExt(e.to_string()))?;
    let data = |name: &str| {
        elf.section_headers
            .iter()
            .find(|s| elf.shdr_strtab.get_at(s.sh_name) == Some(name))
            .and_then(|s| bytes.get(s.sh_offset as usize..(s.sh_offset + s.sh_size) as usize))
    };
    let (Some(btf_bytes), Some(ext)) = (data(".BTF"), data(".BTF.ext")) else {
        return Ok(None);
    };
    let btf = Btf::parse(btf_bytes.to_vec()).map_err(|e| CoreError::BadBtf(e.to_string()))?;
    let bad = |w: &str| CoreError::BadExt(w.to_string());
    let hdr_len = u32_at(ext, 4).ok_or_else(|| bad("short header"))? as usize;
    if u32_at(ext, 0).map(|m| m & 0xffff) != Some(0xeb9f) {
        return Err(bad("bad magic"));
    }
    if hdr_len < 32 {
        return Ok(None); // no core_relo_off/len: an object without CO-RE
    }
    let (off, len) = (
        u32_at(ext, 24).ok_or_else(|| bad("short header"))? as usize,
        u32_at(ext, 28).ok_or_else(|| bad("short header"))? as usize,
    );
    let sec = ext
        .get(hdr_len + off..hdr_len + off + len)
        .ok_or_else(|| bad("core_relo section out of bounds"))?;
    if sec.is_empty() {
        return Ok(None);
    }
    let rec_size = u32_at(sec, 0).ok_or_else(|| bad("no record size"))? as usize;
    if rec_size < 16 {
        return Err(bad("core_relo records shorter than 16 bytes"));
    }
    let mut at = 4;
    let mut found = Vec::new();
    while at + 8 <= sec.len() {
        let name_off = u32_at(sec, at).ok_or_else(|| bad("truncated"))?;
        let n = u32_at(sec, at + 4).ok_or_else(|| bad("truncated"))? as usize;
        at += 8;
        let end = n
            .checked_mul(rec_size)
            .and_then(|s| s.checked_add(at))
            .filter(|&e| e <= sec.len())
            .ok_or_else(|| bad("records run past the section"))?;
        if btf_str(&btf, name_off) == Some(section) {
            for r in (at..end).step_by(rec_size) {
                found.push(CoreRelo {
                    insn_off: u32_at(sec, r).unwrap_or(0),
                    type_id: u32_at(sec, r + 4).unwrap_or(0),
                    access_str_off: u32_at(sec, r + 8).unwrap_or(0),
                    kind: u32_at(sec, r + 12).unwrap_or(0),
                });
            }
        }
        at = end;
    }
    Ok((!found.is_empty()).then_some((btf, found)))
}

/// A string of `btf`'s string section by offset (the section names of `.BTF.ext`).
fn btf_str(btf: &Btf, off: u32) -> Option<&str> {
    btf.string_at(off)
}

/// The name without a `___flavor` suffix.
pub(crate) fn essential(name: &str) -> &str {
    name.find("___").map_or(name, |i| &name[..i])
}

/// Applies `relos` (from `local`'s object) to `insns`, resolving against `target`.
pub fn apply(
    insns: &mut [Insn],
    local: &Btf,
    relos: &[CoreRelo],
    target: &Btf,
) -> Result<(), CoreError> {
    for r in relos {
        let i = (r.insn_off / 8) as usize;
        let err = |what: String| CoreError::Relo { insn: i, what };
        if i >= insns.len() {
            return Err(err("offset past the program".into()));
        }
        let access = btf_str(local, r.access_str_off)
            .ok_or_else(|| err("bad access string offset".into()))?;
        match resolve(local, target, r, access).map_err(err)? {
            Some(v) => patch(insns, i, v).map_err(err)?,
            None => {
                insns[i] = Insn::call_helper_id(POISON_HELPER);
            }
        }
    }
    Ok(())
}

/// The relocated value, or `None` when the kernel lacks what a non-existence kind needs.
fn resolve(local: &Btf, target: &Btf, r: &CoreRelo, access: &str) -> Result<Option<u64>, String> {
    let lt = local.type_by_id(r.type_id).map_err(|e| e.to_string())?;
    let idx: Vec<usize> = access
        .split(':')
        .map(|s| {
            s.parse()
                .map_err(|_| format!("bad access string `{access}`"))
        })
        .collect::<Result<_, _>>()?;
    let name = essential(lt.name);
    let candidates: Vec<u32> = if name.is_empty() {
        vec![]
    } else {
        target
            .find_types_named(name)
            .into_iter()
            .filter(|&id| same_kind(local, r.type_id, target, id))
            .collect()
    };
    let exists = |found: bool| Ok(Some(u64::from(found)));
    match r.kind {
        TYPE_ID_LOCAL => Ok(Some(u64::from(r.type_id))),
        TYPE_ID_TARGET => Ok(candidates.first().map(|&id| u64::from(id))),
        TYPE_EXISTS => exists(!candidates.is_empty()),
        TYPE_MATCHES => exists(
            candidates
                .iter()
                .any(|&id| super::type_match::types_match(local, r.type_id, target, id)),
        ),
        TYPE_SIZE => match candidates.first() {
            Some(&id) => Ok(Some(u64::from(
                target.size_of(id).map_err(|e| e.to_string())?,
            ))),
            None => Ok(None),
        },
        ENUMVAL_EXISTS | ENUMVAL_VALUE => {
            let i = *idx.first().ok_or("empty access string")?;
            let local_name = local
                .enumerators(r.type_id)
                .map_err(|e| e.to_string())?
                .iter()
                .nth(i)
                .map(|e| essential(e.name).to_string())
                .ok_or_else(|| format!("enumerator {i} out of range"))?;
            let value = candidates.iter().find_map(|&id| {
                target
                    .enumerators(id)
                    .ok()?
                    .iter()
                    .find_map(|e| (essential(e.name) == local_name).then_some(e.value))
            });
            match (r.kind, value) {
                (ENUMVAL_EXISTS, v) => exists(v.is_some()),
                (_, Some(v)) => Ok(Some(v as u64)),
                (_, None) => Ok(None),
            }
        }
        FIELD_BYTE_OFFSET | FIELD_BYTE_SIZE | FIELD_EXISTS | FIELD_SIGNED | FIELD_LSHIFT_U64
        | FIELD_RSHIFT_U64 => {
            let path = local_path(local, r.type_id, &idx)?;
            let field = candidates
                .iter()
                .find_map(|&id| target_field(target, id, &path).ok().flatten());
            let Some(f) = field else {
                return match r.kind {
                    FIELD_EXISTS => exists(false),
                    _ => Ok(None),
                };
            };
            if r.kind == FIELD_EXISTS {
                return exists(true);
            }
            if r.kind == FIELD_SIGNED {
                return Ok(Some(u64::from(matches!(
                    target.classify(f.type_id),
                    Ok(crate::btf::TypeClass::Int { signed: true, .. }
                        | crate::btf::TypeClass::Enum { signed: true, .. })
                ))));
            }
            if f.type_id == 0 {
                return Ok(None);
            }
            let size = target.size_of(f.type_id).map_err(|e| e.to_string())?;
            let load = field_load(f.bit_offset, f.bitfield_size, size)?;
            Ok(Some(u64::from(match r.kind {
                FIELD_BYTE_OFFSET => load.byte_offset,
                FIELD_BYTE_SIZE => load.byte_size,
                FIELD_LSHIFT_U64 => load.lshift,
                _ => load.rshift,
            })))
        }
        other => Err(format!("unknown relocation kind {other}")),
    }
}

/// How a program loads a field: the bytes to read and the shifts that leave the field's value
/// in a u64 (`v << lshift >> rshift`, arithmetic for signed fields).
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct FieldLoad {
    pub byte_offset: u32,
    pub byte_size: u32,
    pub lshift: u32,
    pub rshift: u32,
}

/// The load for a field at `bit_offset` of `bitfield_size` bits (0: not a bitfield) whose type
/// is `type_size` bytes. A bitfield is read with a naturally aligned load of its type's size,
/// doubled until the load covers all its bits; little-endian, so the field's lowest bit is
/// `bit_offset - 8 × byte_offset` bits into the loaded value.
pub fn field_load(
    bit_offset: u32,
    bitfield_size: u32,
    type_size: u32,
) -> Result<FieldLoad, String> {
    let (byte_offset, byte_size, bits) = if bitfield_size == 0 {
        (bit_offset / 8, type_size, type_size.saturating_mul(8))
    } else {
        if !matches!(type_size, 1 | 2 | 4 | 8) {
            return Err(format!("bitfield of a {type_size}-byte type"));
        }
        let mut size = type_size;
        loop {
            let off = bit_offset / 8 / size * size;
            // In u64: offsets come from untrusted BTF and may be near u32::MAX.
            if u64::from(bit_offset) + u64::from(bitfield_size) - u64::from(off) * 8
                <= u64::from(size) * 8
            {
                break (off, size, bitfield_size);
            }
            if size == 8 {
                return Err(format!(
                    "bitfield at bit {bit_offset} ({bitfield_size} bits) is not covered by one 8-byte load"
                ));
            }
            size *= 2;
        }
    };
    let end = (bit_offset - byte_offset * 8).saturating_add(bits);
    Ok(FieldLoad {
        byte_offset,
        byte_size,
        lshift: 64u32.saturating_sub(end),
        rshift: 64u32.saturating_sub(bits),
    })
}

/// Whether local type `l` and target type `t` are the same kind of type (struct, union, enum,
/// …), after typedefs and qualifiers on neither side (CO-RE roots are named types).
fn same_kind(local: &Btf, l: u32, target: &Btf, t: u32) -> bool {
    let kind = |b: &Btf, id| b.type_by_id(id).ok().and_then(|t| t.kind.kind());
    let (a, b) = (kind(local, l), kind(target, t));
    a.is_some() && (a == b || (enumish(a) && enumish(b)))
}

fn enumish(k: Option<crate::btf::Kind>) -> bool {
    matches!(k, Some(crate::btf::Kind::Enum | crate::btf::Kind::Enum64))
}

/// One step of a local access path.
#[derive(Debug)]
enum Step {
    /// Element `n` of an array (or of the root pointer).
    Index(usize),
    Member(String),
}

/// The access string as member names and array indexes, read in the local BTF.
fn local_path(local: &Btf, root: u32, idx: &[usize]) -> Result<Vec<Step>, String> {
    let mut steps = vec![Step::Index(*idx.first().ok_or("empty access string")?)];
    let mut ty = root;
    for &i in &idx[1..] {
        let t = local.resolve(ty).map_err(|e| e.to_string())?;
        match t.kind {
            TypeKind::Struct(m) | TypeKind::Union(m) => {
                let m = m.get(i).ok_or_else(|| format!("member {i} out of range"))?;
                if m.name.is_empty() {
                    return Err("anonymous members in an access path are not relocated".into());
                }
                steps.push(Step::Member(essential(m.name).to_string()));
                ty = m.type_id;
            }
            TypeKind::Array(a) => {
                steps.push(Step::Index(i));
                ty = a.elem;
            }
            _ => return Err(format!("access step {i} into a non-composite type")),
        }
    }
    Ok(steps)
}

/// Where a local access path lands in the target type.
struct TargetField {
    bit_offset: u32,
    type_id: u32,
    /// 0 unless the last step is a bitfield member.
    bitfield_size: u32,
}

/// Bit offset, type and bitfield width of `path` in target type `root`, `None` when a member
/// is missing.
fn target_field(target: &Btf, root: u32, path: &[Step]) -> Result<Option<TargetField>, String> {
    let e = |e: crate::btf::BtfError| e.to_string();
    let mut bits: u64 = 0;
    let mut ty = root;
    let mut bitfield_size = 0;
    for (n, step) in path.iter().enumerate() {
        match step {
            Step::Index(i) if n == 0 => {
                bits += *i as u64 * u64::from(target.size_of(ty).map_err(e)?) * 8;
            }
            Step::Index(i) => {
                let TypeKind::Array(a) = target.resolve(ty).map_err(e)?.kind else {
                    return Ok(None);
                };
                bits += *i as u64 * u64::from(target.size_of(a.elem).map_err(e)?) * 8;
                ty = a.elem;
                bitfield_size = 0;
            }
            Step::Member(name) => {
                let t = target.resolve(ty).map_err(e)?;
                if !matches!(t.kind, TypeKind::Struct(_) | TypeKind::Union(_)) {
                    return Ok(None);
                }
                let Some(m) = target.find_member(t.id, name).map_err(e)? else {
                    return Ok(None);
                };
                bits += u64::from(m.bit_offset);
                ty = m.type_id;
                bitfield_size = m.bitfield_size;
            }
        }
    }
    let bit_offset = u32::try_from(bits).map_err(|_| "offset overflow".to_string())?;
    Ok(Some(TargetField {
        bit_offset,
        type_id: ty,
        bitfield_size,
    }))
}

/// Puts `v` where instruction `i` keeps its constant: the offset of a load/store, the
/// immediate of an ALU op, or both halves of an `ld_imm64`.
fn patch(insns: &mut [Insn], i: usize, v: u64) -> Result<(), String> {
    let off = || i16::try_from(v).map_err(|_| format!("offset {v} exceeds 16 bits"));
    match decode(insns, i).map_err(|e| e.to_string())? {
        Decoded::Load { .. } | Decoded::Store { .. } | Decoded::Atomic { .. } => {
            insns[i].off = off()?;
        }
        Decoded::Alu {
            src: Operand::Imm(_),
            ..
        } => {
            insns[i].imm = i32::try_from(v).map_err(|_| format!("value {v} exceeds 32 bits"))?;
        }
        Decoded::LdImm64 { .. } => {
            insns[i].imm = v as u32 as i32;
            insns[i + 1].imm = (v >> 32) as u32 as i32;
        }
        other => return Err(format!("cannot relocate {other:?}")),
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::asm::isa::Size;
    use crate::asm::Reg;

    #[test]
    fn essential_names_drop_the_flavor_suffix() {
        assert_eq!(essential("task_struct___v2"), "task_struct");
        assert_eq!(essential("task_struct"), "task_struct");
        assert_eq!(essential("a___b___c"), "a");
    }

    #[test]
    fn bitfield_loads_are_aligned_loads_of_the_type_widened_until_they_cover_the_field() {
        let load = |o, b, s| {
            let l = field_load(o, b, s).unwrap();
            (l.byte_offset, l.byte_size, l.lshift, l.rshift)
        };
        // `unsigned x:1` at bit 9504 (task_struct's sched_reset_on_fork): the u32 at 1188.
        assert_eq!(load(9504, 1, 4), (1188, 4, 63, 63));
        assert_eq!(load(9539, 1, 4), (1192, 4, 60, 63));
        // 4 bits at bit 6 of a u8 field straddle bytes 0 and 1: a u16 load at 0 covers them.
        assert_eq!(load(6, 4, 1), (0, 2, 54, 60));
        // 20 bits at bit 40 of an int: the u32 at 4 holds bits 32..64.
        assert_eq!(load(40, 20, 4), (4, 4, 36, 44));
        // Crossing a 4-byte boundary: one u64 load.
        assert_eq!(load(28, 8, 4), (0, 8, 28, 56));
        // Ordinary members: the field itself, shifts for its full width.
        assert_eq!(load(64, 0, 4), (8, 4, 32, 32));
        assert_eq!(load(128, 0, 8), (16, 8, 0, 0));
        assert!(field_load(60, 8, 4).is_err(), "no aligned load covers it");
        assert!(field_load(60, 8, 8).is_err());
        assert!(field_load(0, 3, 3).is_err());
        assert!(
            field_load(u32::MAX - 2, 200, 1).is_err(),
            "no overflow panic"
        );
    }

    #[test]
    fn patch_writes_load_offsets_alu_immediates_and_both_ld_imm64_halves() {
        let mut insns = vec![
            Insn::load(Size::W, Reg::R1, Reg::R2, 4),
            Insn::mov64_imm(Reg::R1, 20),
        ];
        insns.extend(Insn::ld_imm64(Reg::R1, 0));
        insns.push(Insn::ja(1));
        patch(&mut insns, 0, 1264).unwrap();
        patch(&mut insns, 1, 1752).unwrap();
        patch(&mut insns, 2, 0x1_0000_0002).unwrap();
        assert_eq!((insns[0].off, insns[1].imm), (1264, 1752));
        assert_eq!((insns[2].imm, insns[3].imm), (2, 1));
        assert!(patch(&mut insns, 4, 1).is_err());
        assert!(patch(&mut insns, 0, 1 << 20).is_err());
    }
}
