//! Helpers for runtime tests: capability checks and the kernel's view of our objects.

#![allow(dead_code)] // each tier uses some of them

use std::os::fd::AsFd;
use strobe::sys::info::{all_ids, prog_fd_by_id, prog_info, ObjKind};

/// Whether maps, ring buffers and raw_tp test runs work here; reports a skip otherwise.
pub fn have_bpf(test: &str) -> bool {
    let ok = strobe::sys::Map::create(
        strobe::sys::MapType::Ringbuf,
        &strobe::sys::MapCreateOptions {
            name: "probe",
            max_entries: 4096,
            ..Default::default()
        },
    )
    .is_ok();
    if !ok {
        strobe_testkit::skip(test, "cannot create BPF ring buffers (needs CAP_BPF)");
    }
    ok
}

/// Names of loaded programs whose name starts with `tag` (waits up to 2 s for the kernel to
/// free closed ones: program teardown is deferred through RCU).
pub fn leftover_progs(tag: &str) -> Vec<String> {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(2);
    loop {
        let mut names = Vec::new();
        for id in all_ids(ObjKind::Prog).unwrap_or_default() {
            if let Ok(Some(fd)) = prog_fd_by_id(id) {
                if let Ok(info) = prog_info(fd.as_fd()) {
                    if info.name.starts_with(&format!("{tag}_")) {
                        names.push(info.name.clone());
                    }
                }
            }
        }
        if names.is_empty() || std::time::Instant::now() > deadline {
            return names;
        }
        std::thread::sleep(std::time::Duration::from_millis(20));
    }
}
