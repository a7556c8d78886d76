//! Hand-built raw_tracepoint programs that write records the ring buffer and perf buffer tests
//! (and the throughput benchmark) read back. Run through BPF_PROG_TEST_RUN with the raw_tp
//! context `args[0] = first sequence number`, `args[1] = record count`; they loop with
//! `bpf_loop` (helper 181) and return what `bpf_loop` returned (the iterations done).
//!
//! Every record is 32 bytes: `seq`, `seq * 0x9E3779B1` (wrapping), `MAGIC`, `!seq`, so a reader
//! can check order and content. When a write fails, slot `lost_slot` of the per-CPU array map
//! `lost_map` is incremented (strobe's lost-record convention, see `runtime::ringbuf`).

use strobe::asm::Insn;

pub const RECORD_SIZE: usize = 32;
pub const MAGIC: i32 = 0x5eed_f00d;
const MUL: i32 = 0x9E37_79B1_u32 as i32;

/// How the callback writes each record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Emit {
    /// `bpf_ringbuf_output(map, rec, 32, 0)`.
    RingOutput,
    /// `bpf_ringbuf_reserve`, fill, then `bpf_ringbuf_discard` for odd `seq`, submit for even.
    RingReserveDiscardOdd,
    /// `bpf_perf_event_output(ctx, map, BPF_F_CURRENT_CPU, rec, 32)`.
    PerfOutput,
}

/// The 32 bytes the program writes for `seq`.
pub fn expected_record(seq: u64) -> [u8; RECORD_SIZE] {
    let mut r = [0u8; RECORD_SIZE];
    r[0..8].copy_from_slice(&seq.to_le_bytes());
    r[8..16].copy_from_slice(&seq.wrapping_mul(MUL as i64 as u64).to_le_bytes());
    r[16..24].copy_from_slice(&(MAGIC as i64 as u64).to_le_bytes());
    r[24..32].copy_from_slice(&(!seq).to_le_bytes());
    r
}

// Opcodes (include/uapi/linux/bpf.h, bpf_common.h).
const ALU64_MOV_K: u8 = 0xb7;
const ALU64_MOV_X: u8 = 0xbf;
const ALU_MOV_K: u8 = 0xb4;
const ALU64_ADD_K: u8 = 0x07;
const ALU64_ADD_X: u8 = 0x0f;
const ALU64_MUL_K: u8 = 0x27;
const ALU64_XOR_K: u8 = 0xa7;
const ALU64_AND_K: u8 = 0x57;
const LD_IMM64: u8 = 0x18;
const LDX_DW: u8 = 0x79;
const STX_DW: u8 = 0x7b;
const ST_DW: u8 = 0x7a;
const ST_W: u8 = 0x62;
const ATOMIC_DW: u8 = 0xdb;
const JEQ_K: u8 = 0x15;
const JNE_K: u8 = 0x55;
const JGE_K: u8 = 0x35;
const JGE_X: u8 = 0x3d;
const JA: u8 = 0x05;
const CALL: u8 = 0x85;
const EXIT: u8 = 0x95;
const PSEUDO_MAP_FD: u8 = 1;
const R10: u8 = 10;

const HELPER_MAP_LOOKUP: i32 = 1;
const HELPER_PERF_EVENT_OUTPUT: i32 = 25;
const HELPER_RINGBUF_OUTPUT: i32 = 130;
const HELPER_RINGBUF_RESERVE: i32 = 131;
const HELPER_RINGBUF_SUBMIT: i32 = 132;
const HELPER_RINGBUF_DISCARD: i32 = 133;

fn i(code: u8, dst: u8, src: u8, off: i16, imm: i32) -> Insn {
    Insn::new(code, dst, src, off, imm)
}

fn ld_map(dst: u8, fd: i32) -> [Insn; 2] {
    [i(LD_IMM64, dst, PSEUDO_MAP_FD, 0, fd), i(0, 0, 0, 0, 0)]
}

/// A small builder with forward jumps patched by label.
#[derive(Default)]
struct Code {
    insns: Vec<Insn>,
    fixups: Vec<(usize, &'static str)>,
    labels: Vec<(&'static str, usize)>,
}

impl Code {
    fn push(&mut self, insn: Insn) {
        self.insns.push(insn);
    }
    fn extend(&mut self, insns: impl IntoIterator<Item = Insn>) {
        self.insns.extend(insns);
    }
    fn jump(&mut self, code: u8, dst: u8, imm: i32, label: &'static str) {
        self.fixups.push((self.insns.len(), label));
        self.push(i(code, dst, 0, 0, imm));
    }
    fn label(&mut self, name: &'static str) {
        self.labels.push((name, self.insns.len()));
    }
    fn finish(mut self) -> Vec<Insn> {
        for (at, name) in &self.fixups {
            let target = self
                .labels
                .iter()
                .find(|(n, _)| n == name)
                .unwrap_or_else(|| panic!("internal error: label {name} undefined"))
                .1;
            self.insns[*at].off = (target as i64 - *at as i64 - 1) as i16;
        }
        self.insns
    }
}

/// Most records one run may write: the loop's constant bound, which the verifier needs to
/// prove termination (it walks every iteration, so this also bounds verification time).
pub const MAX_RECORDS_PER_RUN: u64 = 1024;

/// The program: a bounded loop (no `bpf_loop`, so it also loads on the pre-5.8 kernels the perf
/// buffer exists for) writing records `args[0] .. args[0] + min(args[1], MAX)`; returns the
/// number of iterations.
pub fn emit_prog(emit: Emit, map_fd: i32, lost_map_fd: i32, lost_slot: u32) -> Vec<Insn> {
    let mut c = Code::default();
    // r6 = ctx, r7 = first seq, r8 = count, r9 = i (all callee-saved across helper calls)
    c.push(i(ALU64_MOV_X, 6, 1, 0, 0));
    c.push(i(LDX_DW, 7, 6, 0, 0));
    c.push(i(LDX_DW, 8, 6, 8, 0));
    c.push(i(ALU64_MOV_K, 9, 0, 0, 0));
    c.label("loop");
    c.jump(JGE_X, 9, 0, "out");
    c.insns.last_mut().expect("just pushed").set_src(8); // if i >= count
    c.jump(JGE_K, 9, MAX_RECORDS_PER_RUN as i32, "out");
    c.push(i(ALU64_MOV_X, 1, 7, 0, 0));
    c.push(i(ALU64_ADD_X, 1, 9, 0, 0)); // r1 = seq
    c.push(i(STX_DW, R10, 1, -32, 0));
    c.push(i(ALU64_MOV_X, 2, 1, 0, 0));
    c.push(i(ALU64_MUL_K, 2, 0, 0, MUL));
    c.push(i(STX_DW, R10, 2, -24, 0));
    c.push(i(ST_DW, R10, 0, -16, MAGIC));
    c.push(i(ALU64_MOV_X, 2, 1, 0, 0));
    c.push(i(ALU64_XOR_K, 2, 0, 0, -1));
    c.push(i(STX_DW, R10, 2, -8, 0));
    match emit {
        Emit::RingOutput => {
            c.extend(ld_map(1, map_fd));
            c.push(i(ALU64_MOV_X, 2, R10, 0, 0));
            c.push(i(ALU64_ADD_K, 2, 0, 0, -32));
            c.push(i(ALU64_MOV_K, 3, 0, 0, RECORD_SIZE as i32));
            c.push(i(ALU64_MOV_K, 4, 0, 0, 0));
            c.push(i(CALL, 0, 0, 0, HELPER_RINGBUF_OUTPUT));
            c.jump(JNE_K, 0, 0, "lost");
            c.jump(JA, 0, 0, "next");
        }
        Emit::RingReserveDiscardOdd => {
            c.extend(ld_map(1, map_fd));
            c.push(i(ALU64_MOV_K, 2, 0, 0, RECORD_SIZE as i32));
            c.push(i(ALU64_MOV_K, 3, 0, 0, 0));
            c.push(i(CALL, 0, 0, 0, HELPER_RINGBUF_RESERVE));
            c.jump(JEQ_K, 0, 0, "lost");
            for off in (0..RECORD_SIZE as i16).step_by(8) {
                c.push(i(LDX_DW, 1, R10, -32 + off, 0));
                c.push(i(STX_DW, 0, 1, off, 0));
            }
            c.push(i(ALU64_MOV_X, 1, 0, 0, 0));
            c.push(i(ALU64_MOV_K, 2, 0, 0, 0));
            c.push(i(LDX_DW, 3, R10, -32, 0));
            c.push(i(ALU64_AND_K, 3, 0, 0, 1));
            c.jump(JEQ_K, 3, 0, "submit");
            c.push(i(CALL, 0, 0, 0, HELPER_RINGBUF_DISCARD));
            c.jump(JA, 0, 0, "next");
            c.label("submit");
            c.push(i(CALL, 0, 0, 0, HELPER_RINGBUF_SUBMIT));
            c.jump(JA, 0, 0, "next");
        }
        Emit::PerfOutput => {
            c.push(i(ALU64_MOV_X, 1, 6, 0, 0)); // the raw_tp ctx
            c.extend(ld_map(2, map_fd));
            c.push(i(ALU_MOV_K, 3, 0, 0, -1)); // BPF_F_CURRENT_CPU = 0xffffffff, zero-extended
            c.push(i(ALU64_MOV_X, 4, R10, 0, 0));
            c.push(i(ALU64_ADD_K, 4, 0, 0, -32));
            c.push(i(ALU64_MOV_K, 5, 0, 0, RECORD_SIZE as i32));
            c.push(i(CALL, 0, 0, 0, HELPER_PERF_EVENT_OUTPUT));
            c.jump(JNE_K, 0, 0, "lost");
            c.jump(JA, 0, 0, "next");
        }
    }
    // lost: ++lost_map[lost_slot] (this CPU's copy)
    c.label("lost");
    c.push(i(ST_W, R10, 0, -36, lost_slot as i32));
    c.extend(ld_map(1, lost_map_fd));
    c.push(i(ALU64_MOV_X, 2, R10, 0, 0));
    c.push(i(ALU64_ADD_K, 2, 0, 0, -36));
    c.push(i(CALL, 0, 0, 0, HELPER_MAP_LOOKUP));
    c.jump(JEQ_K, 0, 0, "next");
    c.push(i(ALU64_MOV_K, 1, 0, 0, 1));
    c.push(i(ATOMIC_DW, 0, 1, 0, 0)); // lock *(u64 *)(r0 + 0) += r1
    c.label("next");
    c.push(i(ALU64_ADD_K, 9, 0, 0, 1));
    c.jump(JA, 0, 0, "loop");
    c.label("out");
    c.push(i(ALU64_MOV_X, 0, 9, 0, 0));
    c.push(i(EXIT, 0, 0, 0, 0));
    c.finish()
}
