//! fexit reading `args` through one kprobe.session program (BPF_TRACE_KPROBE_SESSION, 6.10+)
//! per kprobe_multi group: the program runs at the function's entry and at its return.
//!
//! A kretprobe sees the registers at return, where the arguments are gone. A session program
//! saves them at entry and reads them back at return. [`session_template`] puts a prologue in
//! front of the fexit template (already instantiable for kprobe_multi: `ArgSlot` = the
//! argument's `pt_regs` offset, `RetSlot` = the return register's):
//!
//! - `bpf_session_is_return()` (kfunc, called by BTF id) tells the halves apart.
//! - Entry: `c = bpf_session_cookie()` (8 bytes the kernel keeps per invocation, at an address
//!   no other live invocation shares: a rethook node before 6.14, the task's shadow stack
//!   since); a token (`bpf_ktime_get_ns() | 1`) goes in `*c` and into a hash map keyed by the
//!   address `c`, with the arguments the body reads (`ArgSlot` loads from `pt_regs`); the
//!   entry returns 0 so the return half runs (1 when the map is full: no return half, no
//!   event, and the template's lost-events counter, [`LOST_MAP_NAME`], counts it).
//! - Return: the entry keyed by `c` is read when its token equals `*c`, its arguments copied
//!   to the stack below the body's frame, the entry deleted and `*c` cleared; then the body
//!   runs, its `args.X` loads rewritten from `ctx + pt_regs offset` to `r10 + slot`. No entry,
//!   or another token: no event.
//!
//! Why the cookie's address as key: it is distinct for every live invocation, so recursion
//! (the same function again on the same task before it returns) and concurrency (other CPUs,
//! other tasks) each get their own entry, and a reused address overwrites what a function
//! that never returned (`do_exit`) left. Why the token: 6.10–6.12 run the return half even
//! when the kernel skipped the entry half (`bpf_prog_active` busy on that CPU, i.e. another
//! kprobe/tracepoint program running there; 6.13 changed the miss to skip both), and the
//! cookie is not cleared between invocations: the token ties an entry to the one invocation
//! that wrote it. One u64 in the cookie alone would need no map but could not be validated so.
//!
//! Refused (the group stays on trampolines): arguments read inside a callback (another stack
//! frame), a template whose frame size is unknown, or no room for the saved arguments in the
//! 512-byte stack.

use crate::asm::isa::AtomicOp;
use crate::asm::isa::{AluOp, Helper, JmpOp, Size};
use crate::asm::{Insn, Reg};
use crate::template::{Field, Reloc, RelocKind, Template, LOST_MAP_NAME};

/// The BTF ids of the session kfuncs in vmlinux.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct SessionKfuncs {
    /// `bool bpf_session_is_return(void)`.
    pub is_return: u32,
    /// `__u64 *bpf_session_cookie(void)`.
    pub cookie: u32,
}

/// Whether fexit programs reading arguments can go through kprobe.session.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum SessionSupport {
    Yes(SessionKfuncs),
    /// Why not (`--no-feature kprobe_session`, a kernel before 6.10).
    No(String),
}

impl Default for SessionSupport {
    fn default() -> SessionSupport {
        SessionSupport::No("not looked for".into())
    }
}

/// The name of the saved-arguments map in the session template's map table.
pub const SAVED_MAP_NAME: &str = "strobe_sess";

/// Entries of the saved-arguments map by default: invocations of the traced functions in
/// progress at once (all tasks, recursion included). Allocated as used (`BPF_F_NO_PREALLOC`).
/// A call that finds the map full runs no return half and counts as a lost event.
pub const SESSION_ENTRIES: u32 = 65536;

/// The saved-arguments map for a session template reading `params` arguments: key the
/// cookie's address, value the token and the arguments (u64 each); `entries` of them (0:
/// [`SESSION_ENTRIES`]).
pub fn create_saved_map(
    params: usize,
    entries: u32,
) -> Result<crate::sys::Map, crate::sys::SysError> {
    use crate::sys::{Map, MapCreateOptions, MapFlags, MapType};
    Map::create(
        MapType::Hash,
        &MapCreateOptions {
            name: SAVED_MAP_NAME,
            key_size: 8,
            value_size: 8 * (params as u32 + 1),
            max_entries: if entries == 0 {
                SESSION_ENTRIES
            } else {
                entries
            },
            flags: MapFlags::NO_PREALLOC,
            ..Default::default()
        },
    )
}

/// The distinct parameters `t` reads through `ArgSlot` relocations, in parameter order.
pub fn saved_params(t: &Template) -> Vec<usize> {
    let mut ps: Vec<usize> = t
        .relocs
        .iter()
        .filter_map(|r| match r.kind {
            RelocKind::ArgSlot { param } => Some(param),
            _ => None,
        })
        .collect();
    ps.sort_unstable();
    ps.dedup();
    ps
}

/// Jump labels of the prologue.
#[derive(Clone, Copy, PartialEq, Eq)]
enum L {
    ExitHalf,
    EntryFail,
    Out,
}

/// The prologue being written: its instructions and relocations, and its jumps, resolved to
/// their labels at the end.
#[derive(Default)]
struct Prologue {
    insns: Vec<Insn>,
    relocs: Vec<Reloc>,
    jumps: Vec<(usize, L)>,
    labels: Vec<(L, usize)>,
    /// The saved-arguments map's index in the template's maps.
    saved_map: usize,
}

impl Prologue {
    fn push(&mut self, insn: Insn) {
        self.insns.push(insn);
    }

    /// `if reg OP 0 goto to`.
    fn jump_if(&mut self, op: JmpOp, reg: Reg, to: L) {
        self.jumps.push((self.insns.len(), to));
        self.push(Insn::jmp_imm(op, reg, 0, 0));
    }

    fn bind(&mut self, l: L) {
        self.labels.push((l, self.insns.len()));
    }

    /// `helper(saved map, fp + key_at, r3, r4)`: r1 and r2 set here, r3 and r4 by the caller.
    fn saved_map_call(&mut self, helper: Helper, key_at: i32) {
        self.relocs
            .push(Reloc::map_fd(self.insns.len(), self.saved_map));
        self.insns.extend(Insn::ld_map_fd(Reg::R1, 0));
        self.push(Insn::mov64_reg(Reg::R2, Reg::R10));
        self.push(Insn::alu64_imm(AluOp::Add, Reg::R2, key_at));
        self.push(Insn::call_helper(helper));
    }

    /// The prologue with every jump pointing at its label.
    fn resolved(mut self) -> Prologue {
        for &(at, to) in &self.jumps {
            let target = self
                .labels
                .iter()
                .find(|(l, _)| *l == to)
                .map(|(_, i)| *i)
                .unwrap_or_else(|| panic!("internal error: session prologue label unbound"));
            self.insns[at].off = (target as i64 - at as i64 - 1) as i16;
        }
        self
    }
}

/// `t` (an fexit template reading arguments) as one kprobe.session program: see the module
/// documentation. The saved-arguments map is the last of the result's maps
/// ([`SAVED_MAP_NAME`]); `ArgSlot` relocations stay (on the entry half's loads) and `RetSlot`
/// ones stay on the body's, so it instantiates with the same values as a kretprobe_multi
/// group's program.
pub fn session_template(t: &Template, kf: SessionKfuncs) -> Result<Template, String> {
    let params = saved_params(t);
    let n = params.len() as i32;
    let main_end = t.funcs.first().copied().unwrap_or(t.insns.len());
    let frame = t
        .stack_size
        .ok_or("the program's stack frame size is unknown")? as i32;
    let base = (frame + 7) & !7;
    // The body's arguments: [-(base + 8n), -base); the return half's key below them; the
    // entry half's key and value at the top (the body does not run after the entry half).
    let saved = |k: i32| -(base + 8 * n) + 8 * k;
    let exit_key = -(base + 8 * n + 8);
    let entry_key = -8;
    let entry_val = |j: i32| -8 - 8 * (n + 1) + 8 * j;
    let depth = (base + 8 * n + 8).max(16 + 8 * n);
    if depth > 512 {
        return Err(format!(
            "no stack left for the saved arguments ({depth} bytes of 512)"
        ));
    }
    let off = |v: i32| v as i16;
    let mut t2 = t.clone();
    let map = t2.map_index(SAVED_MAP_NAME);
    // fexit templates name the counter (`codegen::lower::probe`); one without it counts nothing.
    let lost = t.maps.iter().position(|m| m == LOST_MAP_NAME);

    let (r0, r1, r2, r3, r4) = (Reg::R0, Reg::R1, Reg::R2, Reg::R3, Reg::R4);
    let (r6, r7, r8, r9, fp) = (Reg::R6, Reg::R7, Reg::R8, Reg::R9, Reg::R10);
    let mut p = Prologue {
        saved_map: map,
        ..Default::default()
    };

    p.push(Insn::mov64_reg(r6, r1));
    p.push(Insn::call_kfunc(kf.is_return as i32, 0));
    p.jump_if(JmpOp::Jne, r0, L::ExitHalf);
    // Entry half.
    p.push(Insn::call_kfunc(kf.cookie as i32, 0));
    p.push(Insn::mov64_reg(r7, r0));
    p.jump_if(JmpOp::Jeq, r7, L::EntryFail);
    p.push(Insn::call_helper(Helper::KtimeGetNs));
    p.push(Insn::alu64_imm(AluOp::Or, r0, 1));
    p.push(Insn::store_reg(Size::Dw, r7, 0, r0));
    p.push(Insn::store_reg(Size::Dw, fp, off(entry_val(0)), r0));
    for (k, &param) in params.iter().enumerate() {
        p.relocs.push(Reloc::new(
            p.insns.len(),
            Field::Off,
            RelocKind::ArgSlot { param },
        ));
        p.push(Insn::load(Size::Dw, r1, r6, 0));
        p.push(Insn::store_reg(
            Size::Dw,
            fp,
            off(entry_val(1 + k as i32)),
            r1,
        ));
    }
    p.push(Insn::store_reg(Size::Dw, fp, off(entry_key), r7));
    p.push(Insn::mov64_reg(r3, fp));
    p.push(Insn::alu64_imm(AluOp::Add, r3, entry_val(0)));
    p.push(Insn::mov64_imm(r4, 0));
    p.saved_map_call(Helper::MapUpdateElem, entry_key);
    p.jump_if(JmpOp::Jne, r0, L::EntryFail);
    p.push(Insn::mov64_imm(r0, 0));
    p.push(Insn::exit());
    p.bind(L::EntryFail);
    // No map entry: skip the return half (the cookie stays, but no entry carries its token),
    // and count the event as lost.
    if let Some(lost) = lost {
        p.relocs.push(Reloc::new(
            p.insns.len(),
            Field::Imm,
            RelocKind::MapValue { map: lost, off: 0 },
        ));
        p.insns.extend(Insn::ld_map_value(r1, 0, 0));
        p.push(Insn::mov64_imm(r2, 1));
        p.push(Insn::atomic(Size::Dw, AtomicOp::Add, r1, 0, r2));
    }
    p.push(Insn::mov64_imm(r0, 1));
    p.push(Insn::exit());
    // Return half.
    p.bind(L::ExitHalf);
    p.push(Insn::call_kfunc(kf.cookie as i32, 0));
    p.push(Insn::mov64_reg(r7, r0));
    p.jump_if(JmpOp::Jeq, r7, L::Out);
    p.push(Insn::store_reg(Size::Dw, fp, off(exit_key), r7));
    p.saved_map_call(Helper::MapLookupElem, exit_key);
    p.jump_if(JmpOp::Jeq, r0, L::Out);
    p.push(Insn::mov64_reg(r8, r0));
    // r9 = token in the entry ^ token in the cookie: 0 when the entry is this invocation's.
    p.push(Insn::load(Size::Dw, r9, r8, 0));
    p.push(Insn::load(Size::Dw, r1, r7, 0));
    p.push(Insn::alu64_reg(AluOp::Xor, r9, r1));
    for k in 0..n {
        p.push(Insn::load(Size::Dw, r3, r8, off(8 + 8 * k)));
        p.push(Insn::store_reg(Size::Dw, fp, off(saved(k)), r3));
    }
    p.push(Insn::store_imm(Size::Dw, r7, 0, 0));
    p.saved_map_call(Helper::MapDeleteElem, exit_key);
    p.jump_if(JmpOp::Jne, r9, L::Out);
    p.push(Insn::mov64_reg(r1, r6));
    p.push(Insn::ja(2));
    p.bind(L::Out);
    p.push(Insn::mov64_imm(r0, 0));
    p.push(Insn::exit());
    let Prologue {
        insns: p, relocs, ..
    } = p.resolved();

    // The body: `args.X` from the saved slots.
    let shift = p.len();
    let ldx_dw = Insn::load(Size::Dw, r0, r0, 0).code;
    let mut body = t.insns.clone();
    let mut kept = Vec::new();
    for r in &t.relocs {
        let RelocKind::ArgSlot { param } = r.kind else {
            kept.push(r.shifted(shift));
            continue;
        };
        if r.insn >= main_end {
            return Err("a callback reads arguments (another stack frame)".into());
        }
        let insn = &mut body[r.insn];
        if r.field != Field::Off || insn.code != ldx_dw {
            return Err("internal error: an argument read is not a 64-bit load".into());
        }
        let k = params.iter().position(|&q| q == param).unwrap_or(0) as i32;
        insn.set_src(fp.num());
        insn.off = off(saved(k));
    }
    t2.insns = p.into_iter().chain(body).collect();
    t2.relocs = relocs.into_iter().chain(kept).collect();
    t2.source_map = t.source_map.shifted(shift);
    t2.funcs = t.funcs.iter().map(|f| f + shift).collect();
    t2.stack_size = Some(depth as u32);
    Ok(t2)
}

#[cfg(test)]
mod tests;
