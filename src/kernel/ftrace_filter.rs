//! The traceable kernel functions whose names match a glob, without reading all of
//! `available_filter_functions`.
//!
//! The kernel prints `available_filter_functions` through a seq_file whose `t_start`
//! (kernel/trace/ftrace.c) walks the ftrace records from the first one again for every page
//! of output, so one whole read is quadratic in the list's length (0.2-0.3 s in a TCG guest
//! for ~60k functions). Writing a glob to a `set_ftrace_filter` matches every record in one
//! pass, and reading that file back lists only the matching functions, in the same format
//! (`name` or `name [module]` per line). The filter is set in a private tracefs instance
//! (`instances/strobe-PID`), which is removed again at once: an instance's filter applies to
//! that instance's function tracer only, so the global tracer and other instances trace what
//! they traced before.
//!
//! Only plain `PREFIX*` globs are written (a prefix of C identifier characters): ftrace's
//! filter syntax gives `!`, `:`, `[`, `?` and `\` meanings of their own. Callers fall back to
//! the whole list ([`super::info::filter_functions_text`]) when there is no such prefix or any
//! step fails.

use std::io::{Read, Write};
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use super::tracefs::Tracefs;

/// The prefix of the instance directories strobe creates (`strobe-PID`).
const INSTANCE_PREFIX: &str = "strobe-";

/// The `set_ftrace_filter` glob that matches every name starting with the longest prefix
/// common to `names` (`tcp_*`), or `None` when they have no common prefix of identifier
/// characters (then a glob would match everything, and the whole list is as cheap).
pub fn prefix_glob<'a>(names: impl IntoIterator<Item = &'a str>) -> Option<String> {
    let mut prefix: Option<&str> = None;
    for n in names {
        let p = match prefix {
            None => n,
            Some(p) => {
                let common = p.bytes().zip(n.bytes()).take_while(|(a, b)| a == b).count();
                &p[..common]
            }
        };
        prefix = Some(p);
        if p.is_empty() {
            return None;
        }
    }
    let p = prefix?;
    let ident = p
        .bytes()
        .take_while(|b| b.is_ascii_alphanumeric() || *b == b'_')
        .count();
    (ident > 0).then(|| format!("{}*", &p[..ident]))
}

/// A private tracefs instance, removed on drop.
struct Instance {
    dir: PathBuf,
}

impl Instance {
    fn create(root: &Path) -> std::io::Result<Instance> {
        let instances = root.join("instances");
        remove_stale(&instances);
        let dir = instances.join(format!("{INSTANCE_PREFIX}{}", std::process::id()));
        crate::timings::time("ftrace_instance_mkdir", || std::fs::create_dir(&dir))?;
        Ok(Instance { dir })
    }
}

impl Drop for Instance {
    fn drop(&mut self) {
        crate::timings::time("ftrace_instance_rmdir", || {
            let _ = std::fs::remove_dir(&self.dir);
        });
    }
}

/// Removes the `strobe-PID` instances of processes that no longer exist (a strobe killed
/// between creating its instance and removing it).
fn remove_stale(instances: &Path) {
    let Ok(entries) = std::fs::read_dir(instances) else {
        return;
    };
    for e in entries.flatten() {
        let name = e.file_name();
        let Some(pid) = name
            .to_str()
            .and_then(|n| n.strip_prefix(INSTANCE_PREFIX))
            .and_then(|p| p.parse::<u32>().ok())
        else {
            continue;
        };
        if !Path::new(&format!("/proc/{pid}")).exists() {
            let _ = std::fs::remove_dir(e.path());
        }
    }
}

/// The lines of `available_filter_functions` (`name` or `name [module]`) whose name matches
/// `glob` (from [`prefix_glob`]), read through a private instance's `set_ftrace_filter`;
/// `None` when any step fails (no tracefs or no instances, lockdown, no function matches).
pub fn matching(glob: &str) -> Option<String> {
    let root = Tracefs::open().ok()?.root().to_path_buf();
    let inst = Instance::create(&root).ok()?;
    let filter = inst.dir.join("set_ftrace_filter");
    crate::timings::time("ftrace_filter_write", || {
        let mut f = std::fs::OpenOptions::new()
            .write(true)
            .truncate(true)
            .open(&filter)?;
        f.write_all(glob.as_bytes())
    })
    .ok()?;
    let text = crate::timings::time("ftrace_filter_read", || {
        let mut s = String::new();
        std::fs::File::open(&filter)?.read_to_string(&mut s)?;
        Ok::<_, std::io::Error>(s)
    })
    .ok()?;
    drop(inst);
    // An empty filter reads back as a comment ("#### all functions enabled ####").
    if text.starts_with('#') {
        return None;
    }
    Some(text)
}

/// The `available_filter_functions` lines the caller needs: those matching `glob` through a
/// private instance's filter when there is a glob and that works (phases
/// `ftrace_instance_mkdir`, `ftrace_filter_write`, `ftrace_filter_read`,
/// `ftrace_instance_rmdir`), else the whole list (phase `filter_functions_full`). `None` when
/// neither can be read. Each glob's answer is kept for the process (fentry and fexit probes
/// of one wildcard ask the same).
pub fn filter_functions(glob: Option<&str>) -> Option<&'static str> {
    static BY_GLOB: Mutex<Vec<(String, &'static str)>> = Mutex::new(Vec::new());
    if let Some(g) = glob {
        let mut known = BY_GLOB.lock().unwrap_or_else(|p| p.into_inner());
        if let Some((_, text)) = known.iter().find(|(k, _)| k == g) {
            return Some(text);
        }
        if let Some(text) = matching(g) {
            let text: &'static str = Box::leak(text.into_boxed_str());
            known.push((g.to_string(), text));
            return Some(text);
        }
    }
    crate::timings::time("filter_functions_full", super::info::filter_functions_text)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn common_prefix_of_the_targets_becomes_a_front_glob() {
        assert_eq!(
            prefix_glob(["tcp_v4_rcv", "tcp_sendmsg", "tcp_close"]).as_deref(),
            Some("tcp_*")
        );
        assert_eq!(prefix_glob(["vfs_read"]).as_deref(), Some("vfs_read*"));
        assert_eq!(
            prefix_glob(["vfs_read", "vfs_readv"]).as_deref(),
            Some("vfs_read*")
        );
    }

    #[test]
    fn no_common_prefix_or_none_at_all_gives_no_glob() {
        assert_eq!(prefix_glob(["tcp_close", "udp_close"]), None);
        assert_eq!(prefix_glob(std::iter::empty()), None);
        assert_eq!(prefix_glob(["", "x"]), None);
    }

    #[test]
    fn characters_ftrace_reads_as_syntax_end_the_prefix() {
        // `.`, `:`, `[`, `?`, `!` and `\` mean something to set_ftrace_filter.
        assert_eq!(
            prefix_glob(["foo.isra.0", "foo.isra.1"]).as_deref(),
            Some("foo*")
        );
        assert_eq!(prefix_glob(["a:mod:x"]).as_deref(), Some("a*"));
        assert_eq!(prefix_glob(["!x"]), None);
        assert_eq!(prefix_glob(["[x]"]), None);
    }

    #[test]
    fn stale_instances_of_dead_processes_are_removed_and_others_kept() {
        let dir = std::env::temp_dir().join(format!("strobe-ftrace-filter-{}", std::process::id()));
        let _ = std::fs::remove_dir_all(&dir);
        std::fs::create_dir_all(&dir).unwrap();
        // pid_max is at most 2^22: this pid cannot exist.
        let dead = dir.join("strobe-99999999");
        let live = dir.join(format!("strobe-{}", std::process::id()));
        let other = dir.join("strobe-x");
        for d in [&dead, &live, &other] {
            std::fs::create_dir(d).unwrap();
        }
        remove_stale(&dir);
        assert!(!dead.exists());
        assert!(live.exists() && other.exists());
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
