//! The ring-buffer record header the generated code writes and the runtime reads.
//!
//! Record layout (little-endian): an 8-byte header, `u32 kind` ([`EventKind`]) then `u32 id`
//! (an index into the [`super::EventTable`] list of that kind), followed at byte 8 by the
//! arguments laid out by [`super::layout::tuple_offsets`].

use super::layout::FieldType;

/// Bytes before the arguments.
pub const RECORD_HEADER_SIZE: usize = 8;

/// What a record asks the runtime to do (the header's `kind`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
#[repr(u32)]
pub enum EventKind {
    Printf = 1,
    Print = 2,
    Time = 3,
    Exit = 4,
    Cat = 5,
    System = 6,
    Join = 7,
    Strftime = 8,
    Clear = 9,
    Zero = 10,
    /// A helper failed (`-k`): the argument is the helper's `i64` result (0 for a map lookup
    /// that found nothing); `id` indexes [`super::EventTable::helper_errors`].
    HelperError = 11,
    /// `unwatch(addr)`: the argument is the `u64` address whose watchpoints the runtime
    /// disables (`id` is 0).
    Unwatch = 12,
}

/// Bytes of a record with arguments `args`.
pub fn record_size(args: &[FieldType]) -> usize {
    RECORD_HEADER_SIZE + FieldType::Tuple(args.to_vec()).size()
}
