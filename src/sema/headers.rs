//! Macros of the headers bpftrace's own tools `#include`, for scripts run without a C
//! preprocessor or kernel headers. bpftrace hands `#include`s to clang; strobe reads types from
//! BTF instead, which has enums but not `#define`s, so the few macro constants those tools use
//! (`AF_INET` from `<sys/socket.h>`, `TASK_RUNNING` from `<linux/sched.h>`) are known here by
//! header. Their values are Linux ABI, the same on every architecture. A script's own
//! `#define` of the same name wins.

/// Constants of `header` (as written between `<>` or quotes), if strobe knows the header.
pub fn macros(header: &str) -> &'static [(&'static str, i64)] {
    match header {
        "sys/socket.h" | "linux/socket.h" | "bits/socket.h" | "net/sock.h" => SOCKET,
        "linux/sched.h" | "sched.h" => SCHED,
        _ => &[],
    }
}

const SOCKET: &[(&str, i64)] = &[
    ("AF_UNSPEC", 0),
    ("AF_UNIX", 1),
    ("AF_LOCAL", 1),
    ("AF_INET", 2),
    ("AF_INET6", 10),
    ("AF_NETLINK", 16),
    ("AF_PACKET", 17),
    ("PF_UNSPEC", 0),
    ("PF_UNIX", 1),
    ("PF_LOCAL", 1),
    ("PF_INET", 2),
    ("PF_INET6", 10),
    ("PF_NETLINK", 16),
    ("PF_PACKET", 17),
    ("SOCK_STREAM", 1),
    ("SOCK_DGRAM", 2),
    ("SOCK_RAW", 3),
];

const SCHED: &[(&str, i64)] = &[
    ("TASK_RUNNING", 0x0000),
    ("TASK_INTERRUPTIBLE", 0x0001),
    ("TASK_UNINTERRUPTIBLE", 0x0002),
    ("__TASK_STOPPED", 0x0004),
    ("__TASK_TRACED", 0x0008),
    ("EXIT_DEAD", 0x0010),
    ("EXIT_ZOMBIE", 0x0020),
    ("TASK_DEAD", 0x0080),
    ("CLONE_VM", 0x0000_0100),
    ("CLONE_FS", 0x0000_0200),
    ("CLONE_FILES", 0x0000_0400),
    ("CLONE_SIGHAND", 0x0000_0800),
    ("CLONE_VFORK", 0x0000_4000),
    ("CLONE_PARENT", 0x0000_8000),
    ("CLONE_THREAD", 0x0001_0000),
    ("CLONE_NEWNS", 0x0002_0000),
];

#[cfg(test)]
mod tests {
    #[test]
    fn tools_headers_are_known_and_others_empty() {
        assert!(super::macros("sys/socket.h").contains(&("AF_INET6", 10)));
        assert!(super::macros("linux/sched.h").contains(&("TASK_RUNNING", 0)));
        assert!(super::macros("linux/nope.h").is_empty());
    }
}
