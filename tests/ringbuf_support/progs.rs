//! Raw_tracepoint programs, written in strobe's assembler syntax, that write the records the ring
//! buffer and perf buffer tests (and the throughput benchmark) read back. Run through
//! BPF_PROG_TEST_RUN with the raw_tp context `args[0] = first sequence number`,
//! `args[1] = record count`; they return the number of records they tried to write.
//!
//! Every record is 32 bytes: `seq`, `seq * 0x9E3779B1` (wrapping), `MAGIC`, `!seq`, so a reader
//! can check order and content. When a write fails, slot `lost_slot` of the per-CPU array map
//! `lost_map` is incremented (strobe's lost-record convention, see `runtime::ringbuf`).

use strobe::asm::{assemble_insns, Insn};

pub const RECORD_SIZE: usize = 32;
pub const MAGIC: i32 = 0x5eed_f00d;
const MUL: i32 = 0x9E37_79B1_u32 as i32;

/// Most records one run may write: the loop's constant bound, which the verifier needs to
/// prove termination. It walks every iteration and keeps a pending state per branch (at most
/// 8192, `BPF_COMPLEXITY_LIMIT_JMP_SEQ`), which caps this near 2500; 1024 keeps loads fast.
pub const MAX_RECORDS_PER_RUN: u64 = 1024;

/// How the program writes each record.
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

/// The program, in strobe's assembler syntax: a bounded loop (no `bpf_loop`, so it also loads
/// on the pre-5.8 kernels the perf buffer exists for) writing records
/// `args[0] .. args[0] + min(args[1], MAX_RECORDS_PER_RUN)`; returns the iterations done.
pub fn emit_prog(emit: Emit, map_fd: i32, lost_map_fd: i32, lost_slot: u32) -> Vec<Insn> {
    let write = match emit {
        Emit::RingOutput => format!(
            "
    r1 = map_fd({map_fd}) ll
    r2 = r10
    r2 += -32
    r3 = {RECORD_SIZE}
    r4 = 0
    call bpf_ringbuf_output
    if r0 != 0 goto lost
    goto next"
        ),
        Emit::RingReserveDiscardOdd => format!(
            "
    r1 = map_fd({map_fd}) ll
    r2 = {RECORD_SIZE}
    r3 = 0
    call bpf_ringbuf_reserve
    if r0 == 0 goto lost
    r1 = *(u64 *)(r10 - 32)
    *(u64 *)(r0 + 0) = r1
    r1 = *(u64 *)(r10 - 24)
    *(u64 *)(r0 + 8) = r1
    r1 = *(u64 *)(r10 - 16)
    *(u64 *)(r0 + 16) = r1
    r1 = *(u64 *)(r10 - 8)
    *(u64 *)(r0 + 24) = r1
    r1 = r0
    r2 = 0
    r3 = *(u64 *)(r10 - 32)
    r3 &= 1
    if r3 == 0 goto submit
    call bpf_ringbuf_discard
    goto next
submit:
    call bpf_ringbuf_submit
    goto next"
        ),
        // BPF_F_CURRENT_CPU is 0xffffffff: a 32-bit move zero-extends it.
        Emit::PerfOutput => format!(
            "
    r1 = r6
    r2 = map_fd({map_fd}) ll
    w3 = -1
    r4 = r10
    r4 += -32
    r5 = {RECORD_SIZE}
    call bpf_perf_event_output
    if r0 != 0 goto lost
    goto next"
        ),
    };
    // r6 = ctx, r7 = first seq, r8 = count, r9 = i: callee-saved across helper calls. The
    // record is built at r10-32; the lost map key at r10-36.
    let text = format!(
        "
    r6 = r1
    r7 = *(u64 *)(r6 + 0)
    r8 = *(u64 *)(r6 + 8)
    r9 = 0
loop:
    if r9 >= r8 goto out
    if r9 >= {MAX_RECORDS_PER_RUN} goto out
    r1 = r7
    r1 += r9
    *(u64 *)(r10 - 32) = r1
    r2 = r1
    r2 *= {MUL}
    *(u64 *)(r10 - 24) = r2
    *(u64 *)(r10 - 16) = {MAGIC}
    r2 = r1
    r2 ^= -1
    *(u64 *)(r10 - 8) = r2
{write}
lost:
    *(u32 *)(r10 - 36) = {lost_slot}
    r1 = map_fd({lost_map_fd}) ll
    r2 = r10
    r2 += -36
    call bpf_map_lookup_elem
    if r0 == 0 goto next
    r1 = 1
    lock *(u64 *)(r0 + 0) += r1
next:
    r9 += 1
    goto loop
out:
    r0 = r9
    exit
"
    );
    assemble_insns(&text).unwrap_or_else(|e| panic!("internal error: test program: {e}"))
}

/// Iterations of the busy program's spin: enough to keep a record reserved for a fraction of
/// a millisecond, few enough for the verifier, which walks every iteration (2 insns each,
/// 1 M insns at most).
pub const SPIN_ITERATIONS: u32 = 300_000;

/// A program that reserves one record, spins [`SPIN_ITERATIONS`] times while it is BUSY, then
/// fills it (`expected_record(args[0])`) and submits it: a reader that ignored BUSY would see
/// stale bytes. Returns 1, or 0
/// when the reservation failed.
pub fn busy_prog(map_fd: i32) -> Vec<Insn> {
    let text = format!(
        "
    r6 = *(u64 *)(r1 + 0)
    r1 = map_fd({map_fd}) ll
    r2 = {RECORD_SIZE}
    r3 = 0
    call bpf_ringbuf_reserve
    if r0 == 0 goto fail
    r9 = 0
spin:
    r9 += 1
    if r9 < {SPIN_ITERATIONS} goto spin
    *(u64 *)(r0 + 0) = r6
    r1 = r6
    r1 *= {MUL}
    *(u64 *)(r0 + 8) = r1
    *(u64 *)(r0 + 16) = {MAGIC}
    r1 = r6
    r1 ^= -1
    *(u64 *)(r0 + 24) = r1
    r1 = r0
    r2 = 0
    call bpf_ringbuf_submit
    r0 = 1
    exit
fail:
    r0 = 0
    exit
"
    );
    assemble_insns(&text).unwrap_or_else(|e| panic!("internal error: test program: {e}"))
}
