//! Finding and mapping a binary's DWARF: its own sections, a separate debug file, `.dwo` files
//! of split units and a `.dwp` package.
//!
//! Input: an ELF path and `--debuginfo` directories. Output: [`DebugFiles`]: the main
//! [`gimli::Dwarf`], the binary's function symbols, and [`DebugFiles::split_unit`] for
//! skeleton units. Files are mapped once and kept for the process (they back `'static` slices).

use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use gimli::{Dwarf, DwarfPackage, RunTimeEndian, SectionId, Unit};
use goblin::elf::{section_header::SHF_COMPRESSED, Elf};

use super::R;

/// Why a binary's DWARF cannot be read.
#[derive(Clone, Debug, PartialEq, Eq, thiserror::Error)]
pub enum DebugError {
    #[error("cannot read {path}: {reason}")]
    File { path: PathBuf, reason: String },
    #[error(
        "{path} has no DWARF debug information (.debug_info) and no separate debug file was found"
    )]
    NoDwarf { path: PathBuf },
    #[error("{path}: malformed DWARF: {reason}")]
    Malformed { path: PathBuf, reason: String },
}

/// A mapped ELF file: its bytes (kept for the process) and parsed header.
struct Mapped {
    bytes: &'static [u8],
    elf: Elf<'static>,
}

fn map(path: &Path) -> Result<Mapped, DebugError> {
    let err = |reason: String| DebugError::File {
        path: path.to_path_buf(),
        reason,
    };
    let f = std::fs::File::open(path).map_err(|e| err(e.to_string()))?;
    // SAFETY: the mapping is read-only and private; a file truncated under us makes reads fault
    // as for any mapped binary, which the tracer accepts (bpftrace's libdw maps the same way).
    let m = unsafe { memmap2::Mmap::map(&f) }.map_err(|e| err(e.to_string()))?;
    let bytes: &'static [u8] = &Box::leak(Box::new(m))[..];
    let elf = Elf::parse(bytes).map_err(|e| err(format!("not a readable ELF file: {e}")))?;
    Ok(Mapped { bytes, elf })
}

impl Mapped {
    fn section(&self, name: &str) -> Option<&'static [u8]> {
        let sh = self
            .elf
            .section_headers
            .iter()
            .find(|s| self.elf.shdr_strtab.get_at(s.sh_name) == Some(name))?;
        if sh.sh_type == goblin::elf::section_header::SHT_NOBITS
            || sh.sh_flags & u64::from(SHF_COMPRESSED) != 0
        {
            return None;
        }
        let start = usize::try_from(sh.sh_offset).ok()?;
        let end = start.checked_add(usize::try_from(sh.sh_size).ok()?)?;
        self.bytes.get(start..end)
    }

    fn endian(&self) -> RunTimeEndian {
        if self.elf.little_endian {
            RunTimeEndian::Little
        } else {
            RunTimeEndian::Big
        }
    }

    fn reader(&self, name: &str) -> R {
        R::new(self.section(name).unwrap_or(&[]), self.endian())
    }

    fn has_dwarf(&self) -> bool {
        self.section(".debug_info").is_some_and(|s| !s.is_empty())
    }

    fn dwarf(&self, dwo: bool) -> Dwarf<R> {
        let load = |id: SectionId| -> Result<R, ()> {
            let name = if dwo {
                id.dwo_name().unwrap_or(id.name())
            } else {
                id.name()
            };
            Ok(self.reader(name))
        };
        let mut d = Dwarf::load(load).unwrap_or_default();
        if dwo {
            d.file_type = gimli::DwarfFileType::Dwo;
        }
        d
    }

    /// `.gnu_debuglink`'s file name.
    fn debuglink(&self) -> Option<String> {
        let s = self.section(".gnu_debuglink")?;
        let end = s.iter().position(|&b| b == 0)?;
        std::str::from_utf8(&s[..end]).ok().map(str::to_string)
    }

    /// The GNU build id, as hex.
    fn build_id(&self) -> Option<String> {
        let s = self.section(".note.gnu.build-id")?;
        let (namesz, descsz) = (
            u32::from_le_bytes(s.get(0..4)?.try_into().ok()?) as usize,
            u32::from_le_bytes(s.get(4..8)?.try_into().ok()?) as usize,
        );
        let start = 12 + namesz.next_multiple_of(4);
        let id = s.get(start..start + descsz)?;
        Some(id.iter().map(|b| format!("{b:02x}")).collect())
    }
}

/// The debug files of one binary.
pub(super) struct DebugFiles {
    pub path: PathBuf,
    pub dwarf: Arc<Dwarf<R>>,
    /// Function (and object) symbols: name → link-time address.
    pub symbols: HashMap<String, u64>,
    dwp: Option<Option<DwarfPackage<R>>>,
    search: Vec<PathBuf>,
    /// Loaded `.dwo` files by path.
    dwos: HashMap<PathBuf, Arc<Dwarf<R>>>,
}

/// Where a separate debug file of `bin` may be, in bpftrace's (libdw's) order.
fn debug_candidates(bin: &Path, m: &Mapped, search: &[PathBuf]) -> Vec<PathBuf> {
    let dir = bin.parent().unwrap_or(Path::new("."));
    let base = bin.file_name().map(|b| b.to_string_lossy().into_owned());
    let link = m.debuglink();
    let build_id = m.build_id();
    // A relative directory is relative to the binary's (as in elfutils' debuginfo path), then
    // to the working directory.
    let search: Vec<PathBuf> = search
        .iter()
        .flat_map(|d| {
            if d.is_relative() {
                vec![dir.join(d), d.clone()]
            } else {
                vec![d.clone()]
            }
        })
        .collect();
    let search = &search[..];
    let mut out = Vec::new();
    let mut by_id = |root: &Path| {
        if let Some(id) = build_id.as_deref().filter(|id| id.len() > 2) {
            out.push(root.join(format!(".build-id/{}/{}.debug", &id[..2], &id[2..])));
        }
    };
    for d in search {
        by_id(d);
    }
    by_id(Path::new("/usr/lib/debug"));
    for d in search {
        if let Some(l) = &link {
            out.push(d.join(l));
        }
        if let Some(b) = &base {
            out.push(d.join(format!("{b}.debug")));
            out.push(d.join(b));
        }
    }
    if let Some(l) = &link {
        out.push(dir.join(l));
        out.push(dir.join(".debug").join(l));
        let abs = dir.canonicalize().unwrap_or_else(|_| dir.to_path_buf());
        out.push(
            Path::new("/usr/lib/debug")
                .join(abs.strip_prefix("/").unwrap_or(&abs))
                .join(l),
        );
    }
    out.retain(|p| p != bin);
    out
}

impl DebugFiles {
    pub fn open(path: &Path, search: &[PathBuf]) -> Result<DebugFiles, DebugError> {
        let bin = map(path)?;
        let mut symbols = HashMap::new();
        for (syms, strs) in [
            (&bin.elf.syms, &bin.elf.strtab),
            (&bin.elf.dynsyms, &bin.elf.dynstrtab),
        ] {
            for s in syms.iter() {
                if s.st_value == 0 || s.st_type() != goblin::elf::sym::STT_FUNC {
                    continue;
                }
                if let Some(n) = strs.get_at(s.st_name) {
                    let n = n.split('@').next().unwrap_or(n);
                    symbols.entry(n.to_string()).or_insert(s.st_value);
                }
            }
        }
        let debug = if bin.has_dwarf() {
            bin
        } else {
            debug_candidates(path, &bin, search)
                .iter()
                .filter(|p| p.is_file())
                .find_map(|p| map(p).ok().filter(Mapped::has_dwarf))
                .ok_or_else(|| DebugError::NoDwarf {
                    path: path.to_path_buf(),
                })?
        };
        Ok(DebugFiles {
            path: path.to_path_buf(),
            dwarf: Arc::new(debug.dwarf(false)),
            symbols,
            dwp: None,
            search: search.to_vec(),
            dwos: HashMap::new(),
        })
    }

    pub fn malformed(&self, e: impl std::fmt::Display) -> DebugError {
        DebugError::Malformed {
            path: self.path.clone(),
            reason: e.to_string(),
        }
    }

    /// The split unit of skeleton unit `skel` (its `.dwo` file or the `.dwp` package), with
    /// the skeleton's relocated attributes.
    pub fn split_unit(&mut self, skel: &Unit<R>) -> Option<(Arc<Dwarf<R>>, Unit<R>)> {
        let id = skel.dwo_id?;
        if self.dwp.is_none() {
            let mut p = self.path.clone().into_os_string();
            p.push(".dwp");
            let pkg = map(Path::new(&p)).ok().and_then(|m| {
                let empty = R::new(&[], m.endian());
                DwarfPackage::load(
                    |s: SectionId| -> Result<R, gimli::Error> {
                        Ok(m.reader(s.dwo_name().unwrap_or(s.name())))
                    },
                    empty,
                )
                .ok()
            });
            self.dwp = Some(pkg);
        }
        if let Some(Some(pkg)) = &self.dwp {
            if let Ok(Some(d)) = pkg.find_cu(id, &self.dwarf) {
                let d = Arc::new(d);
                let header = d.units().next().ok()??;
                let mut unit = d.unit(header).ok()?;
                unit.copy_relocated_attributes(skel);
                return Some((d, unit));
            }
        }
        let name = skel.dwo_name().ok()??;
        let name = self.dwarf.attr_string(skel, name).ok()?;
        let name = PathBuf::from(name.to_string_lossy().into_owned());
        let comp_dir = skel
            .comp_dir
            .map(|d| PathBuf::from(d.to_string_lossy().into_owned()));
        let mut cands = Vec::new();
        if let Some(d) = &comp_dir {
            cands.push(d.join(&name));
        }
        cands.push(name.clone());
        let file = name.file_name().map(PathBuf::from).unwrap_or(name.clone());
        if let Some(dir) = self.path.parent() {
            cands.push(dir.join(&file));
        }
        for d in &self.search {
            cands.push(d.join(&file));
        }
        for c in cands {
            let d = match self.dwos.get(&c) {
                Some(d) => d.clone(),
                None => {
                    let Ok(m) = map(&c) else { continue };
                    let mut d = m.dwarf(true);
                    d.make_dwo(&self.dwarf);
                    let d = Arc::new(d);
                    self.dwos.insert(c.clone(), d.clone());
                    d
                }
            };
            let mut units = d.units();
            while let Ok(Some(h)) = units.next() {
                let Ok(mut unit) = d.unit(h) else { continue };
                if unit.dwo_id == Some(id) {
                    unit.copy_relocated_attributes(skel);
                    return Some((d.clone(), unit));
                }
            }
        }
        None
    }
}
