//! The `strobe` binary: everything lives in the library; this only sets up the allocator and
//! maps the result to an exit code.

fn main() {
    one_malloc_arena();
    let args: Vec<std::ffi::OsString> = std::env::args_os().collect();
    std::process::exit(strobe::cli::run(args));
}

/// strobe runs a script on a worker thread (`runtime::main_thread`). glibc gives a thread its
/// own arena, which grows one `mprotect` at a time: checking `fentry:*` (tens of thousands of
/// prototypes) made some 300k of those calls and took six times as long as in the main arena,
/// which grows by `brk` with a pad. The few other threads (parallel loads, `--serve`) allocate
/// little, so one arena costs them nothing worth a second.
fn one_malloc_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: mallopt only tunes the allocator; called before any other thread exists.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
        libc::mallopt(libc::M_TOP_PAD, 1 << 20);
    }
}
