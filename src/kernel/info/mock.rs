//! [`MockKernel`]: a [`KernelInfo`] made of tables, for tests that must not depend on the host's
//! kernel. [`MockKernel::fixture`] is a small, fixed system: a synthetic vmlinux BTF with a few
//! `vfs_*` functions, `struct file`/`task_struct`/`path`, a raw tracepoint prototype
//! (`btf_trace_sched_switch`), one module (`ext4`), four tracepoints and one binary.

use std::collections::BTreeMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::{KernelInfo, KernelInfoError, UsdtNote};
use crate::btf::encode::{BtfBuilder, MemberDef};
use crate::btf::{Btf, FuncTarget, Glob, Linkage};
use crate::kernel::tracefs::{parse_format, Tracepoint, TracepointFormat};

/// A system described by tables.
#[derive(Default)]
pub struct MockKernel {
    pub vmlinux: Option<Arc<Btf>>,
    pub modules: BTreeMap<String, Arc<Btf>>,
    /// `(category, format)`.
    pub tracepoints: Vec<(String, TracepointFormat)>,
    pub kprobe_functions: Option<Vec<(Option<String>, String)>>,
    /// Binaries by the name scripts use (path or bare name): path, symbols, USDT notes.
    pub binaries: BTreeMap<String, (PathBuf, Vec<String>, Vec<UsdtNote>)>,
}

/// Tracepoint format files of the fixture, in the kernel's text form.
const FORMATS: &[(&str, &str)] = &[
    (
        "syscalls",
        "name: sys_enter_openat\nID: 782\nformat:\n\
         \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
         \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
         \tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n\
         \tfield:int dfd;\toffset:16;\tsize:8;\tsigned:0;\n\
         \tfield:const char * filename;\toffset:24;\tsize:8;\tsigned:0;\n\
         \tfield:int flags;\toffset:32;\tsize:8;\tsigned:0;\n\
         \tfield:umode_t mode;\toffset:40;\tsize:8;\tsigned:0;\n\n\
         print fmt: \"dfd: 0x%08lx\", ((unsigned long)(REC->dfd))\n",
    ),
    (
        "syscalls",
        "name: sys_enter_read\nID: 700\nformat:\n\
         \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
         \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
         \tfield:int __syscall_nr;\toffset:8;\tsize:4;\tsigned:1;\n\
         \tfield:unsigned int fd;\toffset:16;\tsize:8;\tsigned:0;\n\
         \tfield:char * buf;\toffset:24;\tsize:8;\tsigned:0;\n\
         \tfield:size_t count;\toffset:32;\tsize:8;\tsigned:0;\n\n\
         print fmt: \"fd: 0x%08lx\", ((unsigned long)(REC->fd))\n",
    ),
    (
        "sched",
        "name: sched_process_exec\nID: 365\nformat:\n\
         \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
         \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
         \tfield:__data_loc char[] filename;\toffset:8;\tsize:4;\tsigned:0;\n\
         \tfield:pid_t pid;\toffset:12;\tsize:4;\tsigned:1;\n\
         \tfield:pid_t old_pid;\toffset:16;\tsize:4;\tsigned:1;\n\n\
         print fmt: \"filename=%s\", __get_str(filename)\n",
    ),
    (
        "raw_syscalls",
        "name: sys_exit\nID: 442\nformat:\n\
         \tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
         \tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
         \tfield:long id;\toffset:8;\tsize:8;\tsigned:1;\n\
         \tfield:long ret;\toffset:16;\tsize:8;\tsigned:1;\n\n\
         print fmt: \"NR %ld = %ld\", REC->id, REC->ret\n",
    ),
];

/// The fixture's vmlinux BTF (see the module doc).
pub fn fixture_btf() -> Btf {
    let mut b = BtfBuilder::new();
    let int = b.add_int("int", 4, true);
    let uint = b.add_int("unsigned int", 4, false);
    let long = b.add_int("long", 8, true);
    let ulong = b.add_int("unsigned long", 8, false);
    let longlong = b.add_int("long long", 8, true);
    let char_ = b.add_int("char", 1, true);
    let bool_ = b.add_int("_Bool", 1, false);
    let size_t = b.add_typedef("size_t", ulong);
    let ssize_t = b.add_typedef("ssize_t", long);
    let loff_t = b.add_typedef("loff_t", longlong);
    let pid_t = b.add_typedef("pid_t", int);
    let cchar = b.add_const(char_);
    let char_p = b.add_ptr(char_);
    let cchar_p = b.add_ptr(cchar);
    let loff_p = b.add_ptr(loff_t);
    let idx = b.add_int("__ARRAY_SIZE_TYPE__", 4, false);
    let comm = b.add_array(char_, idx, 16);
    let void_p = b.add_ptr(0);

    let inode = b.add_struct(
        "inode",
        16,
        &[
            MemberDef::new("i_ino", ulong, 0),
            MemberDef::new("i_size", loff_t, 8),
        ],
    );
    let inode_p = b.add_ptr(inode);
    let dentry_fwd = b.add_fwd("dentry", false);
    let dentry_p = b.add_ptr(dentry_fwd);
    let path = b.add_struct(
        "path",
        16,
        &[
            MemberDef::new("mnt", void_p, 0),
            MemberDef::new("dentry", dentry_p, 8),
        ],
    );
    let cpath = b.add_const(path);
    let cpath_p = b.add_ptr(cpath);
    let file = b.add_struct(
        "file",
        48,
        &[
            MemberDef::new("f_path", path, 0),
            MemberDef::new("f_inode", inode_p, 16),
            MemberDef::new("f_flags", uint, 24),
            MemberDef::new("f_pos", loff_t, 32),
            MemberDef::new("private_data", void_p, 40),
        ],
    );
    let file_p = b.add_ptr(file);
    // The struct refers to itself: its pointer is added first with the id it will get.
    let task_id = b.next_id() + 1;
    let task_p = b.add_ptr(task_id);
    let task = b.add_struct(
        "task_struct",
        64,
        &[
            MemberDef::new("pid", pid_t, 0),
            MemberDef::new("tgid", pid_t, 4),
            MemberDef::new("comm", comm, 8),
            MemberDef::new("flags", uint, 24),
            MemberDef::new("real_parent", task_p, 32),
            MemberDef::new("start_time", ulong, 40),
            MemberDef::new("on_cpu", int, 48),
        ],
    );
    assert_eq!(task, task_id, "internal error: fixture task_struct id");

    let func = |b: &mut BtfBuilder, name: &str, ret: u32, params: &[(&str, u32)]| {
        let p = b.add_func_proto(ret, params);
        b.add_func(name, p, Linkage::Global)
    };
    let rw = [
        ("file", file_p),
        ("buf", char_p),
        ("count", size_t),
        ("pos", loff_p),
    ];
    func(&mut b, "vfs_read", ssize_t, &rw);
    let ww = [
        ("file", file_p),
        ("buf", cchar_p),
        ("count", size_t),
        ("pos", loff_p),
    ];
    func(&mut b, "vfs_write", ssize_t, &ww);
    func(
        &mut b,
        "vfs_open",
        int,
        &[("path", cpath_p), ("file", file_p)],
    );
    func(
        &mut b,
        "vfs_fsync",
        int,
        &[("file", file_p), ("datasync", int)],
    );
    func(&mut b, "vfs_sync_all", 0, &[]);
    func(
        &mut b,
        "do_sys_openat2",
        long,
        &[("dfd", int), ("filename", cchar_p), ("how", void_p)],
    );
    func(&mut b, "wake_up_new_task", 0, &[("p", task_p)]);
    let sched_proto = b.add_func_proto(0, &[("", void_p), ("", bool_), ("", task_p), ("", task_p)]);
    let sched_ptr = b.add_ptr(sched_proto);
    b.add_typedef("btf_trace_sched_switch", sched_ptr);
    let named = b.add_func_proto(
        0,
        &[
            ("__data", void_p),
            ("preempt", bool_),
            ("prev", task_p),
            ("next", task_p),
        ],
    );
    b.add_func("__bpf_trace_sched_switch", named, Linkage::Static);
    let _ = (uint, pid_t);
    Btf::parse(b.finish().expect("fixture BTF encodes")).expect("fixture BTF parses")
}

fn fixture_module(base: &Arc<Btf>) -> Btf {
    let mut b = BtfBuilder::new_split(base);
    let int = base.find_type(crate::btf::Kind::Int, "int").unwrap_or(1);
    let file_p = base.find_struct("file").map(|f| b.add_ptr(f)).unwrap_or(0);
    let p = b.add_func_proto(int, &[("file", file_p), ("datasync", int)]);
    b.add_func("ext4_sync_file", p, Linkage::Global);
    let p = b.add_func_proto(int, &[("iocb", 0), ("to", 0)]);
    b.add_func("ext4_file_read_iter", p, Linkage::Global);
    Btf::parse_split(b.finish().expect("module BTF encodes"), base).expect("module BTF parses")
}

impl MockKernel {
    /// The fixed test system described in the module doc.
    pub fn fixture() -> MockKernel {
        let vmlinux = Arc::new(fixture_btf());
        let mut modules = BTreeMap::new();
        modules.insert("ext4".to_string(), Arc::new(fixture_module(&vmlinux)));
        let tracepoints = FORMATS
            .iter()
            .map(|(cat, text)| {
                (
                    cat.to_string(),
                    parse_format(text).expect("fixture format parses"),
                )
            })
            .collect();
        let mut binaries = BTreeMap::new();
        binaries.insert(
            "/bin/bash".to_string(),
            (
                PathBuf::from("/bin/bash"),
                vec!["main".into(), "readline".into(), "rl_insert".into()],
                vec![],
            ),
        );
        binaries.insert(
            "/usr/lib/libc.so.6".to_string(),
            (
                PathBuf::from("/usr/lib/libc.so.6"),
                vec!["free".into(), "malloc".into(), "read".into()],
                vec![UsdtNote {
                    provider: "libc".into(),
                    name: "setjmp".into(),
                    args: "8@%rdi -4@%esi 8@%rdx".into(),
                    pc: 0x1000,
                    base: 0,
                    semaphore: 0,
                }],
            ),
        );
        MockKernel {
            vmlinux: Some(vmlinux),
            modules,
            tracepoints,
            kprobe_functions: None,
            binaries,
        }
    }
}

impl KernelInfo for MockKernel {
    fn btf(&self, module: Option<&str>) -> Result<Arc<Btf>, KernelInfoError> {
        let missing = |what: &str| KernelInfoError::Unavailable {
            what: what.to_string(),
            reason: "not in the mock".into(),
        };
        // DWARF of real binaries, as on the host (tests compile their own).
        if let Some(r) = module.and_then(crate::dwarf::module_btf) {
            return r.map_err(|e| KernelInfoError::Unavailable {
                what: "DWARF".into(),
                reason: e.to_string(),
            });
        }
        match module {
            None | Some("vmlinux") => self.vmlinux.clone().ok_or_else(|| missing("kernel BTF")),
            Some(m) => self
                .modules
                .get(m)
                .cloned()
                .ok_or_else(|| missing(&format!("BTF of module {m}"))),
        }
    }

    fn btf_functions(
        &self,
        module: Option<&str>,
        glob: &Glob,
    ) -> Result<Vec<FuncTarget>, KernelInfoError> {
        let mut out = Vec::new();
        let mut add = |btf: &Btf, m: Option<&str>| {
            out.extend(btf.funcs_matching(glob).map(|(n, id)| FuncTarget {
                module: m.map(str::to_string),
                name: n.to_string(),
                btf_id: id,
            }))
        };
        if matches!(module, None | Some("vmlinux")) {
            add(&*self.btf(None)?, None);
        }
        for (name, btf) in &self.modules {
            if module.is_none() || module == Some(name.as_str()) {
                add(btf, Some(name));
            }
        }
        Ok(out)
    }

    fn kprobe_functions(&self) -> Option<Vec<(Option<String>, String)>> {
        self.kprobe_functions.clone()
    }

    fn tracepoints(&self, pattern: &str) -> Result<Vec<Tracepoint>, KernelInfoError> {
        let (c, n) = pattern.split_once(':').unwrap_or(("*", pattern));
        let glob = |p: &str| {
            Glob::new(p).map_err(|e| KernelInfoError::Unavailable {
                what: "tracepoint pattern".into(),
                reason: e.to_string(),
            })
        };
        let (cg, ng) = (glob(c)?, glob(n)?);
        let mut out: Vec<Tracepoint> = self
            .tracepoints
            .iter()
            .filter(|(cat, f)| cg.matches(cat) && ng.matches(&f.name))
            .map(|(cat, f)| Tracepoint {
                category: cat.clone(),
                name: f.name.clone(),
            })
            .collect();
        out.sort();
        Ok(out)
    }

    fn tracepoint_format(
        &self,
        category: &str,
        name: &str,
    ) -> Result<TracepointFormat, KernelInfoError> {
        self.tracepoints
            .iter()
            .find(|(c, f)| c == category && f.name == name)
            .map(|(_, f)| f.clone())
            .ok_or_else(|| KernelInfoError::NoTracepoint {
                category: category.into(),
                name: name.into(),
            })
    }

    fn find_binary(&self, target: &str) -> Option<PathBuf> {
        if let Some((p, _, _)) = self.binaries.get(target) {
            return Some(p.clone());
        }
        let stem = target.strip_prefix("lib").unwrap_or(target);
        self.binaries.values().map(|b| &b.0).find_map(|p| {
            let file = p.file_name()?.to_str()?;
            (file == target || file.starts_with(&format!("lib{stem}.so"))).then(|| p.clone())
        })
    }

    fn elf_symbols(&self, path: &Path) -> Result<Vec<String>, KernelInfoError> {
        self.binaries
            .values()
            .find(|b| b.0 == path)
            .map(|b| b.1.clone())
            .ok_or_else(|| KernelInfoError::Binary {
                path: path.to_path_buf(),
                reason: "No such file or directory".into(),
            })
    }

    fn usdt_probes(&self, path: &Path) -> Result<Vec<UsdtNote>, KernelInfoError> {
        self.binaries
            .values()
            .find(|b| b.0 == path)
            .map(|b| b.2.clone())
            .ok_or_else(|| KernelInfoError::Binary {
                path: path.to_path_buf(),
                reason: "No such file or directory".into(),
            })
    }
}
