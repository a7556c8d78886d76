//! `strobe load --pin DIR`: the maps and links of a run pinned in bpffs, so the attachment
//! outlives strobe (removing DIR's entries detaches, as with bpftool).
//!
//! Layout: `DIR/maps/<map name>` (the arming flag too, so a tool can disarm; global data maps
//! by their kernel names with `_` for `.`, `obj_rodata`) and
//! `DIR/links/<target>` (clone targets by name, shared-program links as `link<N>`).
//! Perf-event attachments without a BPF link (kernels before 5.15 for kprobes/uprobes) cannot
//! be pinned and are refused before anything is pinned.

use std::os::fd::{AsFd, BorrowedFd};
use std::path::{Path, PathBuf};

use super::report::Attached;
use crate::sys::pin::pin;
use crate::sys::SysError;

#[derive(Debug, thiserror::Error)]
pub enum PinError {
    #[error("cannot create {}: {source}", path.display())]
    Dir {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot pin {}: {source} (is the directory on a bpffs mount?)", path.display())]
    Pin {
        path: PathBuf,
        #[source]
        source: SysError,
    },
    #[error("{events} targets are attached through perf events without BPF links (kernel before 5.15), which cannot be pinned")]
    Unpinnable { events: usize },
}

/// A file name for `name`: bpffs names may not contain `/`, and it refuses `.` (EPERM: dots are
/// reserved for its own files), as libbpf's pin paths also avoid; `:` is kept out for shells.
fn entry_name(name: &str) -> String {
    name.chars()
        .map(|c| if matches!(c, '/' | ':' | '.') { '_' } else { c })
        .collect()
}

/// Pins `maps` (name, fd) and every link of `attached` under `dir`; returns how many objects
/// were pinned.
pub fn pin_objects(
    dir: &Path,
    maps: &[(&str, BorrowedFd<'_>)],
    attached: &Attached,
) -> Result<usize, PinError> {
    if !attached.events.is_empty() && attached.links.is_empty() {
        return Err(PinError::Unpinnable {
            events: attached.events.len(),
        });
    }
    let sub = |s: &str| -> Result<PathBuf, PinError> {
        let p = dir.join(s);
        std::fs::create_dir_all(&p).map_err(|source| PinError::Dir {
            path: p.clone(),
            source,
        })?;
        Ok(p)
    };
    let (map_dir, link_dir) = (sub("maps")?, sub("links")?);
    let pin_at = |fd: BorrowedFd<'_>, path: PathBuf| -> Result<(), PinError> {
        pin(fd, &path).map_err(|source| PinError::Pin { path, source })
    };
    let mut n = 0;
    for (name, fd) in maps {
        pin_at(*fd, map_dir.join(entry_name(name)))?;
        n += 1;
    }
    for c in &attached.clones {
        pin_at(c.link.as_fd(), link_dir.join(entry_name(&c.name)))?;
        n += 1;
    }
    for (i, l) in attached.links.iter().enumerate() {
        pin_at(l.as_fd(), link_dir.join(format!("link{i}")))?;
        n += 1;
    }
    Ok(n)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn entry_names_have_no_path_separators() {
        assert_eq!(
            entry_name("fentry:vmlinux:vfs_read"),
            "fentry_vmlinux_vfs_read"
        );
        assert_eq!(entry_name("a/b"), "a_b");
        assert_eq!(entry_name("clang_da.rodata"), "clang_da_rodata");
        assert_eq!(entry_name("vfs_read.cold"), "vfs_read_cold");
    }
}
