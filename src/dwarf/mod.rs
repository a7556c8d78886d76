//! DWARF debug information of user binaries, for uprobes: a function's parameters (names and
//! types) and the binary's struct/union/enum types, turned into BTF so the checker and the code
//! generator treat them as they treat kernel types (`CTypeRef::Btf` with module
//! [`module_name`]`(path)`).
//!
//! Input: an ELF path. Its DWARF comes from the file itself, a separate debug file
//! (`--debuginfo` directories, `.gnu_debuglink` beside the binary, in its `.debug/` or under
//! `/usr/lib/debug`, or `/usr/lib/debug/.build-id/`), and split DWARF (`.dwo` files named by
//! skeleton units, or a `.dwp` package beside the binary).
//! Output: [`Function`]s and BTF type ids in one growing BTF object per binary
//! ([`DebugInfo::btf`]), and the addresses of source lines ([`DebugInfo::line_address`]).
//! Laziness: nothing is read until a script uses `args`, a DWARF type or a listing asks; a
//! function is found through `.debug_aranges` from its symbol's address (one unit parsed), and
//! only the types a request reaches are converted. Invariant: malformed DWARF is an error or a
//! missing type, never a panic.

mod convert;
mod lines;
mod load;
pub mod symbolize;

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, OnceLock};

use gimli::{EndianSlice, RunTimeEndian};

use crate::btf::Btf;

pub use lines::{LineError, SourceLine};
pub use load::DebugError;

type R = EndianSlice<'static, RunTimeEndian>;

/// The BTF module name under which a binary's DWARF types are known to `KernelInfo::btf`.
pub fn module_name(path: &Path) -> String {
    format!("{MODULE_PREFIX}{}", path.display())
}

/// Prefix of [`module_name`]s.
pub const MODULE_PREFIX: &str = "dwarf:";

/// One function's prototype from DWARF.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Function {
    pub name: String,
    /// Parameters in order: name, BTF type id (in [`DebugInfo::btf`]), C spelling of the type.
    pub params: Vec<Param>,
    /// The return type's BTF id (0: void) and its C spelling.
    pub ret: u32,
    pub ret_name: String,
}

#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Param {
    pub name: String,
    pub type_id: u32,
    pub type_name: String,
}

/// The DWARF of one binary (shared by every question about it in this process).
pub struct DebugInfo {
    path: PathBuf,
    state: Mutex<convert::State>,
}

impl std::fmt::Debug for DebugInfo {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "DebugInfo({})", self.path.display())
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl DebugInfo {
    /// Reads the DWARF sections of `path` (or of its separate debug file).
    pub fn open(path: &Path, search: &[PathBuf]) -> Result<DebugInfo, DebugError> {
        let files = load::DebugFiles::open(path, search)?;
        Ok(DebugInfo {
            path: path.to_path_buf(),
            state: Mutex::new(convert::State::new(files)),
        })
    }

    /// The prototype of function `name` (`None`: no DWARF entry for it).
    pub fn function(&self, name: &str) -> Result<Option<Function>, DebugError> {
        lock(&self.state).function(name)
    }

    /// The BTF id of `struct`/`union`/`enum` (per `kind`) or typedef `name`, converting it on
    /// first use.
    pub fn find_type(&self, kind: TypeKind, name: &str) -> Result<Option<u32>, DebugError> {
        lock(&self.state).find_type(kind, name)
    }

    /// The link-time address where source line `at` starts (`uprobe:BIN@FILE:LINE`).
    pub fn line_address(&self, at: &SourceLine<'_>) -> Result<u64, LineError> {
        let dwarf = lock(&self.state).main_dwarf();
        lines::line_address(&dwarf, at)
    }

    /// The types converted so far (a later snapshot holds every earlier id unchanged).
    pub fn btf(&self) -> Arc<Btf> {
        lock(&self.state).snapshot()
    }
}

/// What [`DebugInfo::find_type`] looks for.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum TypeKind {
    Struct,
    Union,
    Enum,
    Typedef,
}

fn search_dirs() -> &'static Mutex<Vec<PathBuf>> {
    static DIRS: OnceLock<Mutex<Vec<PathBuf>>> = OnceLock::new();
    DIRS.get_or_init(|| Mutex::new(Vec::new()))
}

/// Directories searched first for separate debug files (`--debuginfo`, in order).
pub fn set_search_dirs(dirs: Vec<PathBuf>) {
    *lock(search_dirs()) = dirs;
}

/// The `--debuginfo` directories set so far.
pub fn search_dirs_now() -> Vec<PathBuf> {
    lock(search_dirs()).clone()
}

type Cache = Mutex<HashMap<PathBuf, Result<Arc<DebugInfo>, DebugError>>>;

/// The DWARF of binary `path`, opened once per process.
pub fn for_binary(path: &Path) -> Result<Arc<DebugInfo>, DebugError> {
    static CACHE: OnceLock<Cache> = OnceLock::new();
    let cache = CACHE.get_or_init(Default::default);
    let key = path.canonicalize().unwrap_or_else(|_| path.to_path_buf());
    if let Some(r) = lock(cache).get(&key) {
        return r.clone();
    }
    let dirs = lock(search_dirs()).clone();
    let r = DebugInfo::open(path, &dirs).map(Arc::new);
    lock(cache).insert(key, r.clone());
    r
}

/// The BTF of a [`module_name`]: the binary's types converted so far.
pub fn module_btf(module: &str) -> Option<Result<Arc<Btf>, DebugError>> {
    let path = module.strip_prefix(MODULE_PREFIX)?;
    Some(for_binary(Path::new(path)).map(|d| d.btf()))
}

#[cfg(test)]
mod tests;
