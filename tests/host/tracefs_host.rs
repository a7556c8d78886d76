//! The host's tracefs: mounted on demand, tracepoints listed and globbed, ids read and formats
//! parsed for events every supported kernel has. Skips loudly when tracefs cannot be had.

use strobe::kernel::tracefs::{FieldLayout, Tracefs};
use strobe_testkit::skip;

fn tracefs(test: &str) -> Option<Tracefs> {
    match Tracefs::open() {
        Ok(t) => Some(t),
        Err(e) => {
            skip(test, &format!("no tracefs: {e}"));
            None
        }
    }
}

#[test]
fn sys_enter_openat_has_a_const_char_pointer_filename() {
    let Some(t) = tracefs("sys_enter_openat_has_a_const_char_pointer_filename") else {
        return;
    };
    let f = t.format("syscalls", "sys_enter_openat").unwrap();
    assert_eq!(f.name, "sys_enter_openat");
    assert_eq!(f.id, t.id("syscalls", "sys_enter_openat").unwrap());
    let filename = f.field("filename").unwrap();
    assert_eq!(filename.type_text, "const char *");
    assert_eq!(filename.size, 8);
    assert_eq!(filename.layout, FieldLayout::Scalar);
    assert_eq!(f.fields[0].name, "__syscall_nr");
    assert!(f.common_fields.iter().any(|c| c.name == "common_pid"));
    assert!(f.fields.iter().all(|x| !x.name.starts_with("common_")));
}

#[test]
fn sched_switch_has_16_byte_comm_arrays() {
    let Some(t) = tracefs("sched_switch_has_16_byte_comm_arrays") else {
        return;
    };
    let f = t.format("sched", "sched_switch").unwrap();
    for name in ["prev_comm", "next_comm"] {
        let c = f.field(name).unwrap();
        assert_eq!(c.layout, FieldLayout::Array { len: 16 });
        assert_eq!((c.type_text.as_str(), c.size), ("char", 16));
        assert!(c.is_string());
    }
    assert_eq!(f.field("prev_pid").unwrap().type_text, "pid_t");
    assert!(f.field("prev_pid").unwrap().signed);
    // Fields are in record order and do not overlap.
    for w in f.fields.windows(2) {
        assert!(w[0].offset + w[0].size <= w[1].offset, "{w:?}");
    }
}

#[test]
fn every_host_format_file_parses() {
    let Some(t) = tracefs("every_host_format_file_parses") else {
        return;
    };
    let all = t.tracepoints().unwrap();
    assert!(all.len() > 100, "only {} tracepoints", all.len());
    let mut data_loc = 0;
    for tp in &all {
        let f = match t.format(&tp.category, &tp.name) {
            Ok(f) => f,
            Err(e) => panic!("{tp}: {e}"),
        };
        assert_eq!(f.name, tp.name);
        data_loc += f
            .fields
            .iter()
            .filter(|x| x.layout == FieldLayout::DataLoc)
            .count();
    }
    assert!(data_loc > 0, "no __data_loc field anywhere");
}

#[test]
fn tracepoint_globs_match_categories_and_names() {
    let Some(t) = tracefs("tracepoint_globs_match_categories_and_names") else {
        return;
    };
    let enters = t.tracepoints_matching("syscalls:sys_enter_*").unwrap();
    assert!(enters.iter().any(|tp| tp.name == "sys_enter_openat"));
    assert!(enters
        .iter()
        .all(|tp| tp.category == "syscalls" && tp.name.starts_with("sys_enter_")));
    let brute = t
        .events("syscalls")
        .unwrap()
        .into_iter()
        .filter(|n| n.starts_with("sys_enter_"))
        .count();
    assert_eq!(enters.len(), brute);
    let two = t
        .tracepoints_matching("sched:sched_{switch,wakeup}")
        .unwrap();
    assert_eq!(
        two.iter().map(|tp| tp.to_string()).collect::<Vec<_>>(),
        ["sched:sched_switch", "sched:sched_wakeup"]
    );
    let any_cat = t.tracepoints_matching("*:sched_switch").unwrap();
    assert_eq!(any_cat.len(), 1);
    assert!(t
        .tracepoints_matching("no_such_category:*")
        .unwrap()
        .is_empty());
    assert!(matches!(
        t.format("sched", "no_such_event"),
        Err(strobe::kernel::tracefs::TracefsError::NoSuchTracepoint { .. })
    ));
    assert!(t.id("../..", "x").is_err());
}

const MOUNT_CHILD_ENV: &str = "STROBE_TRACEFS_MOUNT_CHILD";

/// Runs itself again in a private mount namespace where tracefs (and debugfs) are unmounted,
/// so `Tracefs::open` must really mount it; the host's mounts are untouched.
#[test]
fn tracefs_is_mounted_on_demand_when_absent() {
    let test = "tracefs_is_mounted_on_demand_when_absent";
    if std::env::var_os(MOUNT_CHILD_ENV).is_some() {
        assert!(
            Tracefs::find().is_none(),
            "tracefs still visible in the child namespace"
        );
        let t = Tracefs::open().unwrap();
        assert_eq!(t.root(), std::path::Path::new("/sys/kernel/tracing"));
        assert!(t.id("sched", "sched_switch").unwrap() > 0);
        println!("CHILD-MOUNTED-TRACEFS");
        return;
    }
    use std::os::unix::process::CommandExt;
    let mut cmd = std::process::Command::new(std::env::current_exe().unwrap());
    cmd.args([
        "--exact",
        &format!("tracefs_host::{test}"),
        "--nocapture",
        "--test-threads=1",
    ])
    .env(MOUNT_CHILD_ENV, "1");
    // SAFETY: only async-signal-safe syscalls with static NUL-terminated strings run between
    // fork and exec.
    unsafe {
        cmd.pre_exec(|| {
            if libc::unshare(libc::CLONE_NEWNS) != 0 {
                return Err(std::io::Error::last_os_error());
            }
            // Private propagation first, so the unmounts below stay in this namespace.
            let rc = libc::mount(
                c"none".as_ptr(),
                c"/".as_ptr(),
                std::ptr::null(),
                libc::MS_REC | libc::MS_PRIVATE,
                std::ptr::null(),
            );
            if rc != 0 {
                return Err(std::io::Error::last_os_error());
            }
            for p in [
                c"/sys/kernel/debug/tracing",
                c"/sys/kernel/debug",
                c"/sys/kernel/tracing",
            ] {
                // Repeat: a path may carry stacked mounts.
                while libc::umount2(p.as_ptr(), libc::MNT_DETACH) == 0 {}
            }
            Ok(())
        });
    }
    let out = match cmd.output() {
        Ok(o) => o,
        Err(e) => return skip(test, &format!("cannot make a private mount namespace: {e}")),
    };
    let stdout = String::from_utf8_lossy(&out.stdout);
    assert!(
        out.status.success() && stdout.contains("CHILD-MOUNTED-TRACEFS"),
        "child failed:\n{stdout}\n{}",
        String::from_utf8_lossy(&out.stderr)
    );
}
