//! `cgroup_path(id[, filter])` in userspace, as bpftrace 0.17 resolves it: every cgroup mount
//! in /proc/mounts is a hierarchy, named `unified` for cgroup2 and by its mount directory's
//! name for cgroup v1 (`cpu`, `memory`, `systemd`); the id is the inode number of the cgroup's
//! directory, found by walking each matching hierarchy. The text is `name:path` for each
//! hierarchy where the id was found (`unified` first, then by name), joined by `,`; the root
//! cgroup's path is `/`.
//!
//! Also the boot-time → wall-clock offset `strftime()` adds to its argument (bpftrace: the
//! difference of CLOCK_REALTIME and CLOCK_BOOTTIME read at start).
//!
//! Input: the ids recorded by the BPF program. Output: text. Invariant: an unreadable
//! hierarchy or an id found nowhere gives an empty text, never an error.

use std::collections::HashMap;
use std::os::unix::fs::MetadataExt;
use std::path::{Path, PathBuf};

/// One cgroup hierarchy: its name (`unified`, `cpu`) and mount point.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Hierarchy {
    pub name: String,
    pub root: PathBuf,
}

/// The cgroup hierarchies of a /proc/mounts text (lines whose source is `cgroup`/`cgroup2`).
pub fn hierarchies(mounts: &str) -> Vec<Hierarchy> {
    mounts
        .lines()
        .filter_map(|l| {
            let mut f = l.split(' ');
            let source = f.next()?;
            let root = f.next()?;
            let name = match source {
                "cgroup2" => "unified".to_string(),
                "cgroup" => Path::new(root).file_name()?.to_string_lossy().into_owned(),
                _ => return None,
            };
            Some(Hierarchy {
                name,
                root: PathBuf::from(root),
            })
        })
        .collect()
}

/// bpftrace's wildcard match of a hierarchy name: `*` matches any run of characters.
pub fn filter_matches(filter: &str, name: &str) -> bool {
    fn go(p: &[u8], s: &[u8]) -> bool {
        match p.split_first() {
            None => s.is_empty(),
            Some((b'*', rest)) => (0..=s.len()).any(|i| go(rest, &s[i..])),
            Some((c, rest)) => s.first() == Some(c) && go(rest, &s[1..]),
        }
    }
    go(filter.as_bytes(), name.as_bytes())
}

/// The path (relative to `root`, starting with `/`) of the directory whose inode is `id`.
fn find_in(root: &Path, id: u64) -> Option<String> {
    if std::fs::metadata(root).ok()?.ino() == id {
        return Some("/".into());
    }
    let mut stack = vec![root.to_path_buf()];
    while let Some(dir) = stack.pop() {
        let Ok(entries) = std::fs::read_dir(&dir) else {
            continue;
        };
        for e in entries.flatten() {
            let Ok(ft) = e.file_type() else { continue };
            if !ft.is_dir() {
                continue;
            }
            let p = e.path();
            if e.metadata().is_ok_and(|m| m.ino() == id) {
                let rel = p.strip_prefix(root).ok()?;
                return Some(format!("/{}", rel.display()));
            }
            stack.push(p);
        }
    }
    None
}

/// Resolves cgroup ids to paths, caching each (hierarchy, id).
#[derive(Default)]
pub struct CgroupPaths {
    hierarchies: Option<Vec<Hierarchy>>,
    cache: HashMap<(PathBuf, u64), Option<String>>,
}

impl CgroupPaths {
    /// The text bpftrace prints for cgroup `id` in the hierarchies matching `filter`.
    pub fn resolve(&mut self, id: u64, filter: &str) -> String {
        let hs = self
            .hierarchies
            .get_or_insert_with(|| {
                hierarchies(&std::fs::read_to_string("/proc/mounts").unwrap_or_default())
            })
            .clone();
        let mut found: Vec<(String, String)> = Vec::new();
        for h in hs.iter().filter(|h| filter_matches(filter, &h.name)) {
            let key = (h.root.clone(), id);
            let path = match self.cache.get(&key) {
                Some(p) => p.clone(),
                None => {
                    let p = find_in(&h.root, id);
                    self.cache.insert(key, p.clone());
                    p
                }
            };
            if let Some(p) = path {
                found.push((h.name.clone(), p));
            }
        }
        found.sort_by(|a, b| match (a.0 == "unified", b.0 == "unified") {
            (true, false) => std::cmp::Ordering::Less,
            (false, true) => std::cmp::Ordering::Greater,
            _ => a.0.cmp(&b.0),
        });
        found
            .iter()
            .map(|(n, p)| format!("{n}:{p}"))
            .collect::<Vec<_>>()
            .join(",")
    }
}

/// Nanoseconds to add to a CLOCK_BOOTTIME timestamp to get wall-clock time (CLOCK_REALTIME).
pub fn boot_to_wall_offset_ns() -> i128 {
    let read = |clock: libc::clockid_t| -> i128 {
        let mut ts = libc::timespec {
            tv_sec: 0,
            tv_nsec: 0,
        };
        // SAFETY: `ts` is a valid, writable timespec; clock_gettime only writes it.
        let r = unsafe { libc::clock_gettime(clock, &mut ts) };
        if r != 0 {
            return 0;
        }
        ts.tv_sec as i128 * 1_000_000_000 + ts.tv_nsec as i128
    };
    // Real time read on both sides of the boot clock, averaged (as bpftrace does).
    let before = read(libc::CLOCK_REALTIME);
    let boot = read(libc::CLOCK_BOOTTIME);
    let after = read(libc::CLOCK_REALTIME);
    (before + after) / 2 - boot
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn hierarchies_name_cgroup2_unified_and_v1_by_directory() {
        let m = "tmpfs /sys/fs/cgroup tmpfs rw 0 0\n\
                 cgroup /sys/fs/cgroup/cpu cgroup rw,cpu 0 0\n\
                 cgroup2 /sys/fs/cgroup/unified cgroup2 rw 0 0\n\
                 proc /proc proc rw 0 0\n";
        let h = hierarchies(m);
        assert_eq!(h.len(), 2);
        assert_eq!(h[0].name, "cpu");
        assert_eq!(h[1].name, "unified");
        assert_eq!(h[1].root, PathBuf::from("/sys/fs/cgroup/unified"));
    }

    #[test]
    fn filter_is_a_glob_on_the_hierarchy_name() {
        assert!(filter_matches("*", "unified"));
        assert!(filter_matches("uni*", "unified"));
        assert!(filter_matches("*acct", "cpuacct"));
        assert!(!filter_matches("cpu", "cpuacct"));
        assert!(filter_matches("cpu", "cpu"));
    }

    #[test]
    fn ids_are_directory_inodes_relative_to_the_root() {
        let dir = std::env::temp_dir().join(format!("strobe-cg-{}", std::process::id()));
        let sub = dir.join("a/b");
        std::fs::create_dir_all(&sub).unwrap();
        let ino = std::fs::metadata(&sub).unwrap().ino();
        assert_eq!(find_in(&dir, ino).as_deref(), Some("/a/b"));
        let root = std::fs::metadata(&dir).unwrap().ino();
        assert_eq!(find_in(&dir, root).as_deref(), Some("/"));
        assert_eq!(find_in(&dir, u64::MAX), None);
        std::fs::remove_dir_all(&dir).unwrap();
    }

    #[test]
    fn boot_offset_is_the_time_since_boot_subtracted_from_now() {
        let off = boot_to_wall_offset_ns();
        // Booted after 2000-01-01 and not in the future.
        assert!(off > 946_684_800 * 1_000_000_000, "{off}");
        let now = std::time::SystemTime::now()
            .duration_since(std::time::UNIX_EPOCH)
            .unwrap()
            .as_nanos() as i128;
        assert!(off <= now);
    }
}
