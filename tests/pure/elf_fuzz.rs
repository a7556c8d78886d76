//! The ELF readers (programs and maps, global data) never panic: arbitrary bytes, and valid objects with bytes overwritten,
//! cut short or with header fields set to extreme values, all give `Ok` or a typed error.

use crate::elf_common;

use proptest::prelude::*;
/// Both readers of an object: programs and maps, and global data.
fn read_object(bytes: &[u8]) {
    let _ = strobe::elf::read_object(bytes);
    let _ = strobe::elf::read_data_sections(bytes);
}

const CLANG: [&[u8]; 3] = [
    include_bytes!("../fixtures/clang_maps.o"),
    include_bytes!("../fixtures/clang_globals.o"),
    include_bytes!("../fixtures/clang_data.o"),
];

fn valid() -> Vec<u8> {
    strobe::elf::write_object(&elf_common::sample()).unwrap()
}

fn cases() -> u32 {
    std::env::var("PROPTEST_CASES")
        .ok()
        .and_then(|s| s.parse().ok())
        .unwrap_or(1000)
}

proptest! {
    // PROPTEST_CASES raises the count for a longer local run.
    #![proptest_config(ProptestConfig { cases: cases(), ..ProptestConfig::default() })]

    #[test]
    fn arbitrary_bytes_never_panic(bytes in proptest::collection::vec(any::<u8>(), 0..2048)) {
        read_object(&bytes);
    }

    #[test]
    fn arbitrary_bytes_behind_a_bpf_elf_header_never_panic(
        tail in proptest::collection::vec(any::<u8>(), 0..2048)
    ) {
        let mut bytes = valid()[..64].to_vec();
        bytes.extend_from_slice(&tail);
        read_object(&bytes);
    }

    #[test]
    fn mutated_valid_objects_never_panic(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..16),
        cut in any::<prop::sample::Index>(),
    ) {
        let mut bytes = valid();
        for (at, value) in edits {
            let i = at.index(bytes.len());
            bytes[i] = value;
        }
        read_object(&bytes);
        let end = cut.index(bytes.len());
        read_object(&bytes[..end]);
    }

    #[test]
    fn mutated_clang_objects_with_btf_never_panic(
        edits in proptest::collection::vec((any::<prop::sample::Index>(), any::<u8>()), 1..16),
        which in 0..2usize,
    ) {
        // clang's objects have .BTF (read for the .maps shapes), .BTF.ext, legacy maps,
        // data sections and many .rel sections.
        let mut bytes = CLANG[which].to_vec();
        for (at, value) in edits {
            let i = at.index(bytes.len());
            bytes[i] = value;
        }
        read_object(&bytes);
    }

    #[test]
    fn extreme_header_and_section_fields_never_panic(
        field in 0usize..64,
        wide in prop_oneof![Just(u64::MAX), Just(u64::MAX / 2), Just(1u64 << 32), Just(0), any::<u64>()],
    ) {
        // Overwrite one 8-byte window in the ELF header or in one of the section headers.
        let mut bytes = valid();
        let shoff = u64::from_le_bytes(bytes[40..48].try_into().unwrap()) as usize;
        let at = if field < 8 { field * 8 } else { shoff + (field - 8) * 8 };
        if at + 8 <= bytes.len() {
            bytes[at..at + 8].copy_from_slice(&wide.to_le_bytes());
        }
        read_object(&bytes);
    }
}
