//! Build script: a thin entry point; each generator lives in its own module under build/.

#[path = "build/isa.rs"]
mod isa;

fn main() {
    isa::generate();
}
