//! Build script: each concern lives in its own file under build/.

#[path = "build/version.rs"]
mod version;

fn main() {
    version::emit();
}
