//! `-l`/`-lv` listings against the mock kernel: names and argument lines in bpftrace's format,
//! old kind names accepted, kprobes from `available_filter_functions` when readable.

use strobe::kernel::info::MockKernel;
use strobe::sema::list::list_probes;

fn list(pattern: &str, verbose: bool, k: &MockKernel) -> Vec<String> {
    list_probes(Some(pattern), verbose, k).expect("lists")
}

#[test]
fn fentry_lists_vmlinux_then_modules_with_module_names() {
    let k = MockKernel::fixture();
    assert_eq!(
        list("fentry:*sync*", false, &k),
        [
            "fentry:vmlinux:vfs_fsync",
            "fentry:vmlinux:vfs_sync_all",
            "fentry:ext4:ext4_sync_file"
        ]
    );
    assert_eq!(
        list("kfunc:vfs_open", false, &k),
        ["fentry:vmlinux:vfs_open"]
    );
    assert_eq!(
        list("fexit:ext4:*", false, &k),
        [
            "fexit:ext4:ext4_file_read_iter",
            "fexit:ext4:ext4_sync_file"
        ]
    );
}

#[test]
fn verbose_listings_show_typed_arguments() {
    let k = MockKernel::fixture();
    assert_eq!(
        list("fentry:vfs_write", true, &k),
        [
            "fentry:vmlinux:vfs_write",
            "    struct file * file",
            "    const char * buf",
            "    size_t count",
            "    loff_t * pos",
            "    ssize_t retval"
        ]
    );
    assert_eq!(
        list("tracepoint:sched:*", true, &k),
        [
            "tracepoint:sched:sched_process_exec",
            "    __data_loc char[] filename",
            "    pid_t pid",
            "    pid_t old_pid"
        ]
    );
    assert_eq!(
        list("rawtracepoint:sched_switch", true, &k),
        [
            "rawtracepoint:vmlinux:sched_switch",
            "    _Bool preempt",
            "    struct task_struct * prev",
            "    struct task_struct * next"
        ]
    );
    assert_eq!(
        list("usdt:libc:*", true, &k),
        [
            "usdt:/usr/lib/libc.so.6:libc:setjmp",
            "    arg0: 8@%rdi",
            "    arg1: -4@%esi",
            "    arg2: 8@%rdx"
        ]
    );
}

#[test]
fn kprobes_come_from_available_filter_functions_when_readable() {
    let mut k = MockKernel::fixture();
    assert_eq!(
        list("kprobe:vfs_r*", false, &k),
        ["kprobe:vfs_read"],
        "BTF fallback"
    );
    k.kprobe_functions = Some(vec![
        (None, "vfs_read".into()),
        (None, "vfs_readv".into()),
        (Some("ext4".into()), "ext4_readdir".into()),
    ]);
    assert_eq!(
        list("kprobe:vfs_r*", false, &k),
        ["kprobe:vfs_read", "kprobe:vfs_readv"]
    );
    assert_eq!(
        list("kprobe:*readdir", false, &k),
        ["kprobe:ext4:ext4_readdir"]
    );
}

#[test]
fn wildcard_kinds_and_bare_names_search_several_kinds() {
    let k = MockKernel::fixture();
    assert_eq!(
        list("*:vfs_read", false, &k),
        ["kprobe:vfs_read", "fentry:vmlinux:vfs_read"]
    );
    assert_eq!(
        list("software:cpu*", false, &k),
        ["software:cpu-clock:", "software:cpu-migrations:"]
    );
    assert!(list_probes(Some("nosuchkind:x"), false, &k).is_err());
}
