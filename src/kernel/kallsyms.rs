//! `/proc/kallsyms`, parsed once into an address-sorted table: address → (symbol, offset) for
//! stack symbolisation and `ksym()`, name → address for `kaddr()`, and the module list.
//!
//! Input: the file's bytes (`<hex addr> <type> <name>[\t[<module>]]` per line). Output: a
//! [`Kallsyms`] table. Names live in one string buffer; each symbol is 24 bytes. Without root
//! (kptr_restrict) every address reads 0: [`Kallsyms::addresses_hidden`] says so and address
//! lookups find nothing rather than everything.

use std::sync::OnceLock;

/// Where the kernel lists its symbols.
pub const KALLSYMS_PATH: &str = "/proc/kallsyms";

/// Errors from reading or parsing kallsyms.
#[derive(Debug, thiserror::Error)]
pub enum KallsymsError {
    #[error("cannot read {path}: {source}")]
    Io {
        path: String,
        #[source]
        source: std::io::Error,
    },
    #[error("kallsyms line {line}: {message}")]
    Parse { line: usize, message: &'static str },
}

#[derive(Clone, Copy, Debug)]
struct Sym {
    addr: u64,
    name_off: u32,
    name_len: u16,
    kind: u8,
    /// 0 for the kernel image, else 1 + index into `modules`.
    module: u16,
}

/// One kernel symbol.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct KernelSymbol<'a> {
    pub addr: u64,
    pub name: &'a str,
    /// The `nm`-style type letter (`T` global text, `t` local text, `D` data, …).
    pub kind: char,
    /// The module that defines it, `None` for the kernel image.
    pub module: Option<&'a str>,
}

/// The parsed symbol table.
pub struct Kallsyms {
    syms: Vec<Sym>,
    names: String,
    modules: Vec<String>,
    by_name: OnceLock<Vec<u32>>,
    hidden: bool,
}

impl std::fmt::Debug for Kallsyms {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Kallsyms")
            .field("symbols", &self.syms.len())
            .field("modules", &self.modules.len())
            .field("hidden", &self.hidden)
            .finish()
    }
}

fn parse_hex(s: &[u8]) -> Option<u64> {
    if s.is_empty() || s.len() > 16 {
        return None;
    }
    let mut v = 0u64;
    for &c in s {
        let d = match c {
            b'0'..=b'9' => c - b'0',
            b'a'..=b'f' => c - b'a' + 10,
            b'A'..=b'F' => c - b'A' + 10,
            _ => return None,
        };
        v = (v << 4) | u64::from(d);
    }
    Some(v)
}

impl Kallsyms {
    /// Reads and parses `/proc/kallsyms`.
    pub fn load() -> Result<Kallsyms, KallsymsError> {
        crate::timings::time("kallsyms", || {
            let bytes = std::fs::read(KALLSYMS_PATH).map_err(|source| KallsymsError::Io {
                path: KALLSYMS_PATH.to_string(),
                source,
            })?;
            Kallsyms::parse(&bytes)
        })
    }

    /// Parses kallsyms text.
    pub fn parse(text: &[u8]) -> Result<Kallsyms, KallsymsError> {
        let mut syms = Vec::with_capacity(text.len() / 40);
        let mut names = String::with_capacity(text.len() / 2);
        let mut modules: Vec<String> = Vec::new();
        let mut all_zero = true;
        for (i, line) in text.split(|&b| b == b'\n').enumerate() {
            if line.is_empty() {
                continue;
            }
            let err = |message| KallsymsError::Parse {
                line: i + 1,
                message,
            };
            let mut parts = line.splitn(3, |&b| b == b' ');
            let addr = parts.next().and_then(parse_hex).ok_or(err("bad address"))?;
            let kind = match parts.next() {
                Some([k]) => *k,
                _ => return Err(err("bad symbol type")),
            };
            let rest = parts.next().ok_or(err("missing name"))?;
            let (name, module) = match rest.iter().position(|&b| b == b'\t') {
                Some(t) => {
                    let m = rest[t + 1..].trim_ascii();
                    let m = m
                        .strip_prefix(b"[")
                        .and_then(|m| m.strip_suffix(b"]"))
                        .ok_or(err("bad module"))?;
                    (&rest[..t], Some(m))
                }
                None => (rest, None),
            };
            let name =
                std::str::from_utf8(name.trim_ascii()).map_err(|_| err("name is not UTF-8"))?;
            if name.is_empty() || name.len() > u16::MAX as usize {
                return Err(err("bad name length"));
            }
            let module = match module {
                None => 0,
                Some(m) => {
                    let m = std::str::from_utf8(m).map_err(|_| err("module is not UTF-8"))?;
                    // Lines of one module are contiguous, so checking the last one is enough
                    // almost always; fall back to a scan.
                    let idx = match modules.iter().rposition(|x| x == m) {
                        Some(i) => i,
                        None => {
                            modules.push(m.to_string());
                            modules.len() - 1
                        }
                    };
                    u16::try_from(idx + 1).map_err(|_| err("more than 65535 modules"))?
                }
            };
            let name_off = u32::try_from(names.len()).map_err(|_| err("too many symbols"))?;
            names.push_str(name);
            all_zero &= addr == 0;
            syms.push(Sym {
                addr,
                name_off,
                name_len: name.len() as u16,
                kind,
                module,
            });
        }
        // Stable: symbols sharing an address keep the kernel's order.
        syms.sort_by_key(|s| s.addr);
        Ok(Kallsyms {
            syms,
            names,
            modules,
            by_name: OnceLock::new(),
            hidden: all_zero,
        })
    }

    fn sym(&self, s: &Sym) -> KernelSymbol<'_> {
        let o = s.name_off as usize;
        KernelSymbol {
            addr: s.addr,
            name: self
                .names
                .get(o..o + s.name_len as usize)
                .unwrap_or_default(),
            kind: char::from(s.kind),
            module: match s.module {
                0 => None,
                m => self.modules.get(usize::from(m) - 1).map(String::as_str),
            },
        }
    }

    /// Number of symbols.
    pub fn len(&self) -> usize {
        self.syms.len()
    }

    pub fn is_empty(&self) -> bool {
        self.syms.is_empty()
    }

    /// Whether every address is 0 (the reader lacks the privilege to see them).
    pub fn addresses_hidden(&self) -> bool {
        self.hidden
    }

    /// Modules that contribute symbols, in order of first appearance.
    pub fn modules(&self) -> impl Iterator<Item = &str> {
        self.modules.iter().map(String::as_str)
    }

    /// All symbols by address.
    pub fn iter(&self) -> impl Iterator<Item = KernelSymbol<'_>> {
        self.syms.iter().map(|s| self.sym(s))
    }

    /// The symbol containing `addr` (the nearest at or below it) and the offset into it.
    /// Symbols carry no sizes, so an address past the last symbol of a region still resolves
    /// to it, as the kernel's own `%pS` does.
    pub fn lookup(&self, addr: u64) -> Option<(KernelSymbol<'_>, u64)> {
        if self.hidden {
            return None;
        }
        let i = self.syms.partition_point(|s| s.addr <= addr);
        let mut j = i.checked_sub(1)?;
        let a = self.syms[j].addr;
        // Of several symbols at one address, report the first the kernel listed.
        while j > 0 && self.syms[j - 1].addr == a {
            j -= 1;
        }
        let s = self.sym(&self.syms[j]);
        Some((s, addr - s.addr))
    }

    fn name_index(&self) -> &[u32] {
        self.by_name.get_or_init(|| {
            // Sort on a big-endian 8-byte name prefix first: most comparisons then stay on
            // integers in the vector instead of chasing two string pointers.
            let mut keyed: Vec<(u64, u32)> = (0..self.syms.len() as u32)
                .map(|i| {
                    let n = self.name_at(i).as_bytes();
                    let mut k = [0u8; 8];
                    k[..n.len().min(8)].copy_from_slice(&n[..n.len().min(8)]);
                    (u64::from_be_bytes(k), i)
                })
                .collect();
            keyed.sort_unstable_by(|a, b| {
                a.0.cmp(&b.0)
                    .then_with(|| self.name_at(a.1).cmp(self.name_at(b.1)))
                    .then(a.1.cmp(&b.1))
            });
            keyed.into_iter().map(|(_, i)| i).collect()
        })
    }

    fn name_at(&self, i: u32) -> &str {
        self.syms.get(i as usize).map_or("", |s| {
            let o = s.name_off as usize;
            self.names
                .get(o..o + s.name_len as usize)
                .unwrap_or_default()
        })
    }

    /// Every symbol called `name` (static functions may share a name), in address order.
    pub fn symbols_named(&self, name: &str) -> Vec<KernelSymbol<'_>> {
        let idx = self.name_index();
        let lo = idx.partition_point(|&i| self.name_at(i) < name);
        let hi = lo + idx[lo..].partition_point(|&i| self.name_at(i) == name);
        let mut v: Vec<KernelSymbol<'_>> = idx[lo..hi]
            .iter()
            .map(|&i| self.sym(&self.syms[i as usize]))
            .collect();
        v.sort_by_key(|s| s.addr);
        v
    }

    /// The address of `name` (the lowest when several symbols share it).
    pub fn address_of(&self, name: &str) -> Option<u64> {
        self.symbols_named(name).first().map(|s| s.addr)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const TEXT: &[u8] = b"ffffffff81000000 T _stext\n\
ffffffff81000000 T _text\n\
ffffffff81001000 t helper\n\
ffffffff81002000 T vfs_read\n\
ffffffffc0100000 t ext4_read\t[ext4]\n\
ffffffffc0100100 t helper\t[ext4]\n\
ffffffffc0200000 T nf_hook\t[nf_tables]\n";

    #[test]
    fn address_lookup_finds_containing_symbol_and_offset() {
        let k = Kallsyms::parse(TEXT).unwrap();
        assert_eq!(k.len(), 7);
        let (s, off) = k.lookup(0xffffffff81002010).unwrap();
        assert_eq!(
            (s.name, off, s.kind, s.module),
            ("vfs_read", 0x10, 'T', None)
        );
        let (s, off) = k.lookup(0xffffffff81000000).unwrap();
        assert_eq!((s.name, off), ("_stext", 0));
        let (s, _) = k.lookup(0xffffffffc0100104).unwrap();
        assert_eq!((s.name, s.module), ("helper", Some("ext4")));
        assert!(k.lookup(0x1000).is_none());
    }

    #[test]
    fn name_lookup_and_modules() {
        let k = Kallsyms::parse(TEXT).unwrap();
        assert_eq!(k.address_of("vfs_read"), Some(0xffffffff81002000));
        assert_eq!(k.symbols_named("helper").len(), 2);
        assert_eq!(k.address_of("helper"), Some(0xffffffff81001000));
        assert_eq!(k.address_of("nope"), None);
        assert_eq!(k.modules().collect::<Vec<_>>(), ["ext4", "nf_tables"]);
    }

    #[test]
    fn zeroed_addresses_are_reported_hidden_and_resolve_nothing() {
        let k = Kallsyms::parse(b"0000000000000000 T a\n0000000000000000 T b\n").unwrap();
        assert!(k.addresses_hidden());
        assert!(k.lookup(0).is_none());
    }

    #[test]
    fn malformed_lines_are_errors_with_line_numbers() {
        for (text, line) in [
            (&b"zz T a\n"[..], 1),
            (b"ffff T a\nffff TT b\n", 2),
            (b"ffff T\n", 1),
            (b"ffff T a\t[m\n", 1),
            (b"11112222333344445 T a\n", 1),
        ] {
            match Kallsyms::parse(text) {
                Err(KallsymsError::Parse { line: l, .. }) => assert_eq!(l, line),
                r => panic!("{r:?}"),
            }
        }
    }

    #[test]
    fn host_kallsyms_resolves_its_own_symbols_both_ways() {
        let test = "host_kallsyms_resolves_its_own_symbols_both_ways";
        let k = match Kallsyms::load() {
            Ok(k) => k,
            Err(e) => return crate::diag::skip::skip(test, &e.to_string()),
        };
        assert!(k.len() > 10_000, "{k:?}");
        if k.addresses_hidden() {
            return crate::diag::skip::skip(test, "kallsyms addresses are hidden (not root?)");
        }
        let a = k.address_of("vfs_read").expect("vfs_read in kallsyms");
        let (s, off) = k.lookup(a + 3).unwrap();
        assert_eq!((s.addr, off), (a, 3));
        // Every symbol's own address maps back to a symbol at that address.
        for s in k.iter().step_by(97) {
            let (found, off) = k.lookup(s.addr).unwrap();
            assert_eq!((found.addr, off), (s.addr, 0));
        }
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_text_never_panics(s in proptest::collection::vec(proptest::num::u8::ANY, 0..300)) {
            if let Ok(k) = Kallsyms::parse(&s) {
                let _ = k.lookup(u64::MAX);
                let _ = k.address_of("a");
                let _ = k.iter().count();
            }
        }
    }
}
