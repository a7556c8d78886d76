//! Name indexes built once per [`Btf`]: FUNC entries sorted by name (built at parse time, since
//! every fentry/kprobe wildcard needs it) and all other named types sorted by (name, kind)
//! (built on first use). Lookups by exact name are binary searches; globs narrow the search to
//! the range sharing the pattern's literal prefix, then match each candidate.

use super::raw::{info_kind, u32_at, Kind};
use super::{Btf, Glob};

/// One indexed name: where it lies in the logical string space, and its type id.
#[derive(Clone, Copy, Debug)]
pub(super) struct FuncEntry {
    name_off: u32,
    name_len: u32,
    id: u32,
    kind: u8,
}

impl Btf {
    fn entry_name(&self, e: &FuncEntry) -> &str {
        if e.name_off >= self.str_base {
            let local = (e.name_off - self.str_base) as usize;
            self.own_strs()
                .get(local..local + e.name_len as usize)
                .unwrap_or_default()
        } else {
            self.str_at(e.name_off)
        }
    }

    /// Own named types of the kinds `want` accepts, sorted by (name, kind, id).
    fn build_index(&self, want: impl Fn(Kind) -> bool) -> Vec<FuncEntry> {
        let b: &[u8] = &self.bytes;
        let mut v: Vec<(&str, FuncEntry)> = Vec::new();
        for (i, &off) in self.offsets.iter().enumerate() {
            let off = off as usize;
            let name_off = u32_at(b, off);
            if name_off == 0 {
                continue;
            }
            let Some(kind) = Kind::from_u32(info_kind(u32_at(b, off + 4))) else {
                continue;
            };
            if !want(kind) {
                continue;
            }
            let name = self.str_at(name_off);
            if name.is_empty() {
                continue;
            }
            v.push((
                name,
                FuncEntry {
                    name_off,
                    name_len: name.len() as u32,
                    id: self.first_id + i as u32,
                    kind: kind as u8,
                },
            ));
        }
        // Sorting on a big-endian 8-byte prefix first keeps most comparisons on integers
        // already in the vector, instead of chasing two string pointers each time.
        let mut keyed: Vec<(u64, &str, FuncEntry)> = v
            .into_iter()
            .map(|(n, e)| {
                let mut k = [0u8; 8];
                let p = &n.as_bytes()[..n.len().min(8)];
                k[..p.len()].copy_from_slice(p);
                (u64::from_be_bytes(k), n, e)
            })
            .collect();
        keyed.sort_unstable_by(|a, b| {
            a.0.cmp(&b.0)
                .then_with(|| a.1.cmp(b.1))
                .then_with(|| (a.2.kind, a.2.id).cmp(&(b.2.kind, b.2.id)))
        });
        keyed.into_iter().map(|(_, _, e)| e).collect()
    }

    fn funcs_index(&self) -> &[FuncEntry] {
        self.funcs.get_or_init(|| {
            crate::timings::time("btf_func_index", || self.build_index(|k| k == Kind::Func))
        })
    }

    fn names_index(&self) -> &[FuncEntry] {
        self.names
            .get_or_init(|| self.build_index(|k| k != Kind::Func))
    }

    /// The index range whose names equal `name`.
    fn equal_range(&self, idx: &[FuncEntry], name: &str) -> std::ops::Range<usize> {
        let lo = idx.partition_point(|e| self.entry_name(e) < name);
        let hi = lo + idx[lo..].partition_point(|e| self.entry_name(e) == name);
        lo..hi
    }

    /// The id of the function called `name` (own first, then the base's).
    pub fn find_func(&self, name: &str) -> Option<u32> {
        let funcs = self.funcs_index();
        let r = self.equal_range(funcs, name);
        match funcs.get(r.start) {
            Some(e) if !r.is_empty() => Some(e.id),
            _ => self.base.as_ref()?.find_func(name),
        }
    }

    /// Every own function called `name` (static functions of different files may share one).
    pub fn find_funcs<'a>(&'a self, name: &str) -> impl Iterator<Item = u32> + 'a {
        let funcs = self.funcs_index();
        let r = self.equal_range(funcs, name);
        funcs[r].iter().map(|e| e.id)
    }

    /// Number of own FUNC entries with a name.
    pub fn func_count(&self) -> usize {
        self.funcs_index().len()
    }

    /// Own functions as (name, id), sorted by name.
    pub fn funcs(&self) -> impl Iterator<Item = (&str, u32)> + '_ {
        self.funcs_index()
            .iter()
            .map(move |e| (self.entry_name(e), e.id))
    }

    /// Own functions whose names match `glob`, as (name, id) sorted by name (then id). Uses
    /// the name index when an exact lookup has built it; otherwise one pass over the type
    /// records, comparing the literal prefix in place before matching the rest.
    pub fn funcs_matching<'a>(
        &'a self,
        glob: &'a Glob,
    ) -> impl Iterator<Item = (&'a str, u32)> + 'a {
        let prefix = glob.literal_prefix();
        let found: Vec<(&str, u32)> = match self.funcs.get() {
            Some(funcs) => {
                let lo = funcs.partition_point(|e| self.entry_name(e) < prefix);
                let hi =
                    lo + funcs[lo..].partition_point(|e| self.entry_name(e).starts_with(prefix));
                funcs[lo..hi]
                    .iter()
                    .map(|e| (self.entry_name(e), e.id))
                    .filter(|(n, _)| glob.matches(n))
                    .collect()
            }
            None => {
                let b: &[u8] = &self.bytes;
                let mut v: Vec<(&str, u32)> = Vec::new();
                for (i, &off) in self.offsets.iter().enumerate() {
                    let off = off as usize;
                    if info_kind(u32_at(b, off + 4)) != Kind::Func as u32 {
                        continue;
                    }
                    let name_off = u32_at(b, off);
                    if name_off == 0 || !self.name_starts_with(name_off, prefix.as_bytes()) {
                        continue;
                    }
                    let name = self.str_at(name_off);
                    if !name.is_empty() && glob.matches(name) {
                        v.push((name, self.first_id + i as u32));
                    }
                }
                v.sort_unstable();
                v
            }
        };
        found.into_iter()
    }

    /// Whether the string at logical offset `off` starts with `prefix`, without measuring it.
    fn name_starts_with(&self, off: u32, prefix: &[u8]) -> bool {
        if off < self.str_base {
            return self.str_at(off).as_bytes().starts_with(prefix);
        }
        let local = (off - self.str_base) as usize;
        self.own_strs()
            .as_bytes()
            .get(local..local + prefix.len())
            .is_some_and(|s| s == prefix)
    }

    /// The id of the type of kind `kind` called `name` (own first, then the base's). For
    /// structs and unions this skips forward declarations, which have kind FWD.
    pub fn find_type(&self, kind: Kind, name: &str) -> Option<u32> {
        if kind == Kind::Func {
            return self.find_func(name);
        }
        let idx = self.names_index();
        let r = self.equal_range(idx, name);
        let found = idx[r].iter().find(|e| e.kind == kind as u8).map(|e| e.id);
        match found {
            Some(id) => Some(id),
            None => self.base.as_ref()?.find_type(kind, name),
        }
    }

    /// All types (own first, then base) called `name`, whatever their kind.
    pub fn find_types_named(&self, name: &str) -> Vec<u32> {
        let idx = self.names_index();
        let r = self.equal_range(idx, name);
        let mut v: Vec<u32> = idx[r].iter().map(|e| e.id).collect();
        v.extend(self.find_funcs(name));
        if let Some(b) = &self.base {
            v.extend(b.find_types_named(name));
        }
        v
    }

    /// `struct <name>`.
    pub fn find_struct(&self, name: &str) -> Option<u32> {
        self.find_type(Kind::Struct, name)
    }
    /// `union <name>`.
    pub fn find_union(&self, name: &str) -> Option<u32> {
        self.find_type(Kind::Union, name)
    }
    /// `typedef … <name>`.
    pub fn find_typedef(&self, name: &str) -> Option<u32> {
        self.find_type(Kind::Typedef, name)
    }
    /// `enum <name>` (32- or 64-bit).
    pub fn find_enum(&self, name: &str) -> Option<u32> {
        self.find_type(Kind::Enum, name)
            .or_else(|| self.find_type(Kind::Enum64, name))
    }
}
