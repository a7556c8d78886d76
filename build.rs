//! Build script: a thin entry point; each generator lives in its own module under build/.

#[path = "build/isa.rs"]
mod isa;
#[path = "build/version.rs"]
mod version;

fn main() {
    isa::generate();
    version::emit();
}
