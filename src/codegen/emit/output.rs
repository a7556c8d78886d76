//! Output records through the one ring buffer: printf, print, time, exit and every other
//! event the runtime formats share one record format.
//!
//! Record layout (little-endian): an 8-byte header, `u32 kind` ([`EventKind`]) then `u32 id`
//! (an index into the userspace table of that kind: printf formats, printed maps, …), followed
//! at byte 8 by the arguments laid out by `tuple_offsets` (so a printf record's argument area
//! is exactly what `PrintfCall::offsets()` expects). The record is built on the stack and
//! copied with `bpf_ringbuf_output`; when that fails (ring full) the lost-events counter is
//! incremented (`runtime::ringbuf::LostCounter` reads a plain or a per-CPU array).

use super::maps::{count_failure, Counter};
use super::mem::{store_int, zero};
use super::{Place, Value};
use crate::asm::isa::{Helper, Size};
use crate::codegen::builder::{Arg, Builder};
use crate::codegen::stack::MAX_STACK;
use crate::codegen::CodegenError;
use crate::plan::layout::{tuple_offsets, FieldType};
pub use crate::plan::record::{record_size, EventKind, RECORD_HEADER_SIZE};

/// A record being built (on the stack or in a scratch buffer).
#[derive(Clone, Debug)]
pub struct Record {
    pub place: Place,
    pub size: u32,
    pub fields: Vec<FieldType>,
    offsets: Vec<usize>,
}

impl Record {
    /// A record of `kind`/`id` with room for `args` on the stack; padding between arguments
    /// is zeroed (the verifier insists that bytes handed to a helper are initialized).
    /// Records larger than half the stack are refused: build those in a per-CPU scratch
    /// buffer with [`Record::new_at`].
    pub fn new(
        b: &mut Builder,
        kind: EventKind,
        id: u32,
        args: &[FieldType],
    ) -> Result<Record, CodegenError> {
        let size = RECORD_HEADER_SIZE + FieldType::Tuple(args.to_vec()).size();
        if size > MAX_STACK as usize / 2 {
            return Err(CodegenError::TooLarge {
                what: "an output record",
                size,
                limit: MAX_STACK as usize / 2,
            });
        }
        let slot = b.slot(size as u32, 8);
        Ok(Record::new_at(b, Place::new(slot, 0), kind, id, args))
    }

    /// A record at `place` (e.g. a per-CPU scratch buffer from `maps::scratch`, which must
    /// be at least [`record_size`] bytes).
    pub fn new_at(
        b: &mut Builder,
        place: Place,
        kind: EventKind,
        id: u32,
        args: &[FieldType],
    ) -> Record {
        let offsets = tuple_offsets(args);
        let args_size = FieldType::Tuple(args.to_vec()).size();
        let size = RECORD_HEADER_SIZE + args_size;
        b.store(Size::W, place.mem(), place.off, kind as u32 as i32);
        b.store(Size::W, place.mem(), place.off + 4, id as i32);
        let mut at = 0usize;
        for (f, &off) in args.iter().zip(&offsets) {
            if off > at {
                zero(
                    b,
                    place.at((RECORD_HEADER_SIZE + at) as i32),
                    (off - at) as u32,
                );
            }
            at = off + f.size();
        }
        if args_size > at {
            zero(
                b,
                place.at((RECORD_HEADER_SIZE + at) as i32),
                (args_size - at) as u32,
            );
        }
        Record {
            place,
            size: size as u32,
            fields: args.to_vec(),
            offsets,
        }
    }

    /// Where argument `i` goes.
    pub fn arg(&self, i: usize) -> Place {
        self.place.at((RECORD_HEADER_SIZE + self.offsets[i]) as i32)
    }

    /// Writes integer argument `i`.
    pub fn set_int(&self, b: &mut Builder, i: usize, v: Value) {
        store_int(b, self.arg(i), v, self.fields[i].size() as u32);
    }
}

/// `bpf_ringbuf_output(ringbuf, record, size, 0)`; a failure increments `lost`.
pub fn submit(b: &mut Builder, ringbuf: usize, rec: &Record, lost: Option<Counter>) {
    // The kernel's ring record: an 8-byte header, the data rounded up to 8 (ringbuf.c).
    b.ring_bytes += 8 + (rec.size as u64).next_multiple_of(8);
    let data = rec.place.arg(b);
    let r = b.call(
        Helper::RingbufOutput,
        &[
            Arg::Map(ringbuf),
            data,
            Arg::Imm(rec.size as i64),
            Arg::Imm(0),
        ],
    );
    if let Some(c) = lost {
        count_failure(b, c, r);
    }
}
