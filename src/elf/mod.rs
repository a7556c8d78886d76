//! BPF ELF objects: writing relocatable objects from an assembled `Object`, reading any BPF ELF (clang's too).
