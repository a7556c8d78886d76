//! Loading the running kernel's BTF: vmlinux from `/sys/kernel/btf/vmlinux`, modules' split BTF
//! from `/sys/kernel/btf/<module>`, and [`KernelBtf`], a cache that parses vmlinux once and each
//! module on first use. Input: sysfs files. Output: parsed [`Btf`] objects.

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use super::{Btf, BtfError, Bytes, Glob, Trust};

/// Where the kernel exposes its own BTF.
pub const VMLINUX_PATH: &str = "/sys/kernel/btf/vmlinux";
const SYSFS_BTF_DIR: &str = "/sys/kernel/btf";

fn read(path: &Path) -> Result<Bytes, BtfError> {
    let io = |source| BtfError::Io {
        path: path.to_path_buf(),
        source,
    };
    let _t = crate::timings::Timer::new("btf_read");
    let file = std::fs::File::open(path).map_err(io)?;
    // Kernels since 6.16 let /sys/kernel/btf/vmlinux be mmapped (read-only pages of kernel
    // memory that never change), which saves copying 5+ MB in 4 KiB reads (sysfs hands out
    // at most a page per read); they refuse a shared mapping (EACCES), so map it private and
    // read-only. Older kernels refuse any mapping, so read.
    // SAFETY: the mapping is read-only and sysfs BTF is immutable while the kernel runs; for
    // ordinary files the usual memmap2 caveat (concurrent truncation) is accepted for test
    // fixtures only.
    if let Ok(map) = unsafe { memmap2::MmapOptions::new().map_copy_read_only(&file) } {
        if !map.is_empty() {
            return Ok(Bytes::Mapped(map));
        }
    }
    let mut buf = Vec::new();
    std::io::Read::read_to_end(&mut &file, &mut buf).map_err(io)?;
    Ok(Bytes::Owned(buf))
}

impl Btf {
    /// Parses the running kernel's BTF.
    pub fn from_vmlinux() -> Result<Btf, BtfError> {
        Btf::build_as(read(Path::new(VMLINUX_PATH))?, None, Trust::Kernel)
    }

    /// Parses a standalone BTF file.
    pub fn from_file(path: impl AsRef<Path>) -> Result<Btf, BtfError> {
        Btf::build(read(path.as_ref())?, None)
    }

    /// Parses a split BTF file over `base`.
    pub fn from_split_file(path: impl AsRef<Path>, base: &Arc<Btf>) -> Result<Btf, BtfError> {
        Btf::build(read(path.as_ref())?, Some(base.clone()))
    }

    /// Parses module `name`'s BTF (`/sys/kernel/btf/<name>`) over vmlinux's.
    pub fn from_module(name: &str, vmlinux: &Arc<Btf>) -> Result<Btf, BtfError> {
        let bytes = read(&module_path(name)?)?;
        Btf::build_as(bytes, Some(vmlinux.clone()), Trust::Kernel)
    }
}

fn module_path(name: &str) -> Result<PathBuf, BtfError> {
    if name.is_empty() || name.contains('/') || name == "." || name == ".." {
        return Err(BtfError::NotFound {
            what: "kernel module",
            name: name.to_string(),
        });
    }
    Ok(Path::new(SYSFS_BTF_DIR).join(name))
}

/// Names of kernel modules that have BTF (every entry of `/sys/kernel/btf` but vmlinux),
/// sorted. Empty when the directory exists but no module has BTF.
pub fn kernel_btf_modules() -> Result<Vec<String>, BtfError> {
    let dir = std::fs::read_dir(SYSFS_BTF_DIR).map_err(|source| BtfError::Io {
        path: SYSFS_BTF_DIR.into(),
        source,
    })?;
    let mut names: Vec<String> = dir
        .filter_map(|e| e.ok())
        .filter_map(|e| e.file_name().into_string().ok())
        .filter(|n| n != "vmlinux")
        .collect();
    names.sort();
    Ok(names)
}

/// The running kernel's BTF: vmlinux parsed once, modules parsed on first use and kept.
pub struct KernelBtf {
    vmlinux: Arc<Btf>,
    modules: Mutex<HashMap<String, Arc<Btf>>>,
}

impl KernelBtf {
    /// Parses vmlinux BTF.
    pub fn load() -> Result<KernelBtf, BtfError> {
        let vmlinux = crate::timings::time("btf_parse", Btf::from_vmlinux)?;
        Ok(KernelBtf::with_vmlinux(Arc::new(vmlinux)))
    }

    /// Wraps an already parsed vmlinux BTF (tests use a synthetic one).
    pub fn with_vmlinux(vmlinux: Arc<Btf>) -> KernelBtf {
        KernelBtf {
            vmlinux,
            modules: Mutex::new(HashMap::new()),
        }
    }

    pub fn vmlinux(&self) -> &Arc<Btf> {
        &self.vmlinux
    }

    /// Module `name`'s split BTF, parsed on first request.
    pub fn module(&self, name: &str) -> Result<Arc<Btf>, BtfError> {
        let mut cache = self.modules.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(m) = cache.get(name) {
            return Ok(m.clone());
        }
        let m = crate::timings::time("btf_parse_modules", || {
            Btf::from_module(name, &self.vmlinux)
        })?;
        let m = Arc::new(m);
        cache.insert(name.to_string(), m.clone());
        Ok(m)
    }

    /// Functions matching `glob` in vmlinux (`module` `None`) and in every module with BTF,
    /// vmlinux first, then modules by name; within each, sorted by name. Modules are parsed on
    /// first use. A module whose BTF cannot be read is skipped (it may have been unloaded since
    /// the listing); its error is returned in the second vector.
    pub fn funcs_matching(
        &self,
        glob: &Glob,
    ) -> Result<(Vec<FuncTarget>, Vec<BtfError>), BtfError> {
        let mut out: Vec<FuncTarget> = self
            .vmlinux
            .funcs_matching(glob)
            .map(|(name, btf_id)| FuncTarget {
                module: None,
                name: name.to_string(),
                btf_id,
            })
            .collect();
        let mut errors = Vec::new();
        for m in kernel_btf_modules()? {
            match self.module(&m) {
                Ok(btf) => out.extend(btf.funcs_matching(glob).map(|(name, btf_id)| FuncTarget {
                    module: Some(m.clone()),
                    name: name.to_string(),
                    btf_id,
                })),
                Err(e) => errors.push(e),
            }
        }
        Ok((out, errors))
    }
}

/// A function found in kernel BTF: where (`None` = vmlinux), its name and BTF id. Loading an
/// fentry program for a module function needs that module's BTF object fd as well
/// (`attach_btf_obj_fd`).
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct FuncTarget {
    pub module: Option<String>,
    pub name: String,
    pub btf_id: u32,
}
