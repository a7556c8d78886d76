//! Tracefs: where it is mounted (mounting it on demand), which tracepoints exist, their ids and
//! their `format` files parsed into typed field lists.
//!
//! Input: the tracefs directory tree (`events/<category>/<name>/{id,format}`) or, for
//! [`parse_format`], a format file's text. Output: [`Tracepoint`] names, ids and
//! [`TracepointFormat`]s. Field offsets and sizes are the kernel's, verbatim; the `common_*`
//! header fields are kept apart from the event's own fields. Nothing here panics on odd input.

use std::path::{Path, PathBuf};

use crate::btf::{Glob, GlobError};

/// Candidate mount points, preferred first (`Documentation/trace/ftrace.rst`).
const TRACEFS_DIRS: [&str; 2] = ["/sys/kernel/tracing", "/sys/kernel/debug/tracing"];

/// Errors from finding tracefs or reading tracepoints.
#[derive(Debug, thiserror::Error)]
pub enum TracefsError {
    #[error("tracefs is not mounted and mounting it at {path} failed: {source}")]
    Mount {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error(
        "tracefs is mounted but {path} cannot be read: {source} (tracepoints need root or \
         CAP_DAC_OVERRIDE, besides CAP_BPF and CAP_PERFMON)"
    )]
    Unreadable {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("cannot read {path}: {source}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("no tracepoint {category}:{name}")]
    NoSuchTracepoint { category: String, name: String },
    #[error("{path}: bad tracepoint id `{text}`")]
    BadId { path: PathBuf, text: String },
    #[error("tracepoint format line {line}: {message}")]
    Format { line: usize, message: String },
    #[error(transparent)]
    Glob(#[from] GlobError),
}

/// A tracepoint's name: `category:name`, e.g. `syscalls:sys_enter_openat`.
#[derive(Clone, Debug, PartialEq, Eq, PartialOrd, Ord, Hash)]
pub struct Tracepoint {
    pub category: String,
    pub name: String,
}

impl std::fmt::Display for Tracepoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}:{}", self.category, self.name)
    }
}

/// How a field's bytes are laid out in the record.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum FieldLayout {
    /// One value of `type_text`.
    Scalar,
    /// A fixed array of `len` elements of `type_text` (e.g. `char prev_comm[16]`).
    Array { len: u32 },
    /// A trailing flexible array (`char buf[]`) that runs to the end of the record.
    FlexibleArray,
    /// `__data_loc T[] name`: the field is a u32 whose low 16 bits are the data's offset from
    /// the record start and high 16 bits its length (a string when `T` is `char`).
    DataLoc,
    /// `__rel_loc T[] name`: like `DataLoc` but the offset is relative to the end of the field.
    RelLoc,
}

/// One field of a tracepoint record.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct Field {
    pub name: String,
    /// The C type as the kernel prints it, without the name and array brackets: `const char *`,
    /// `char` for `char comm[16]` and for `__data_loc char[] name`.
    pub type_text: String,
    pub offset: u32,
    pub size: u32,
    pub signed: bool,
    pub layout: FieldLayout,
}

impl Field {
    /// Whether the field holds a string (char array, fixed or dynamic).
    pub fn is_string(&self) -> bool {
        self.type_text == "char" && self.layout != FieldLayout::Scalar
    }

    /// Whether the field is a pointer (its value is an address, e.g. `const char *filename`).
    pub fn is_pointer(&self) -> bool {
        self.layout == FieldLayout::Scalar && self.type_text.ends_with('*')
    }
}

/// A parsed `format` file.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct TracepointFormat {
    pub name: String,
    pub id: u32,
    /// The shared `common_*` header fields.
    pub common_fields: Vec<Field>,
    /// The event's own fields, in record order.
    pub fields: Vec<Field>,
    pub print_fmt: String,
}

impl TracepointFormat {
    /// The event field called `name` (not a `common_` one).
    pub fn field(&self, name: &str) -> Option<&Field> {
        self.fields.iter().find(|f| f.name == name)
    }
}

/// A tracefs mount.
#[derive(Clone, Debug)]
pub struct Tracefs {
    root: PathBuf,
}

fn io_err(path: &Path) -> impl FnOnce(std::io::Error) -> TracefsError + '_ {
    move |source| TracefsError::Io {
        path: path.to_path_buf(),
        source,
    }
}

impl Tracefs {
    /// The mounted tracefs, if any (a directory with an `events` subdirectory).
    pub fn find() -> Option<Tracefs> {
        TRACEFS_DIRS
            .iter()
            .map(Path::new)
            .find(|p| p.join("events").is_dir())
            .map(Tracefs::at)
    }

    /// The first candidate mount whose `events` directory strobe may not read (EACCES): the
    /// tracefs is mounted, only unreadable without privileges (mode 700 for non-root, even
    /// with CAP_BPF and CAP_PERFMON).
    fn unreadable() -> Option<TracefsError> {
        TRACEFS_DIRS.iter().find_map(|d| {
            let events = Path::new(d).join("events");
            match std::fs::metadata(&events) {
                Err(e) if e.kind() == std::io::ErrorKind::PermissionDenied => {
                    Some(TracefsError::Unreadable {
                        path: events,
                        source: e,
                    })
                }
                _ => None,
            }
        })
    }

    /// The mounted tracefs, mounting it at `/sys/kernel/tracing` when it is absent.
    pub fn open() -> Result<Tracefs, TracefsError> {
        if let Some(t) = Tracefs::find() {
            return Ok(t);
        }
        if let Some(e) = Tracefs::unreadable() {
            return Err(e);
        }
        let path = Path::new(TRACEFS_DIRS[0]);
        let res = crate::sys::env::mount_pseudo_fs(c"tracefs", path);
        // Another process may have mounted it between our check and our mount (EBUSY).
        if let Some(t) = Tracefs::find() {
            return Ok(t);
        }
        res.map_err(|source| TracefsError::Mount {
            path: path.to_path_buf(),
            source,
        })?;
        Tracefs::find().ok_or_else(|| TracefsError::Mount {
            path: path.to_path_buf(),
            source: std::io::Error::other("mounted, but no events directory appeared"),
        })
    }

    /// A tracefs tree rooted at `root` (tests point it at a fixture directory).
    pub fn at(root: impl Into<PathBuf>) -> Tracefs {
        Tracefs { root: root.into() }
    }

    pub fn root(&self) -> &Path {
        &self.root
    }

    fn subdirs(&self, dir: &Path) -> Result<Vec<String>, TracefsError> {
        let rd = std::fs::read_dir(dir).map_err(io_err(dir))?;
        let mut out: Vec<String> = rd
            .filter_map(|e| e.ok())
            .filter(|e| e.file_type().is_ok_and(|t| t.is_dir()))
            .filter_map(|e| e.file_name().into_string().ok())
            .collect();
        out.sort();
        Ok(out)
    }

    /// Tracepoint categories (`syscalls`, `sched`, …), sorted.
    pub fn categories(&self) -> Result<Vec<String>, TracefsError> {
        self.subdirs(&self.root.join("events"))
    }

    /// Tracepoints of `category`, sorted.
    pub fn events(&self, category: &str) -> Result<Vec<String>, TracefsError> {
        self.subdirs(&self.root.join("events").join(category))
    }

    /// Every tracepoint, sorted by category then name.
    pub fn tracepoints(&self) -> Result<Vec<Tracepoint>, TracefsError> {
        self.tracepoints_matching("*:*")
    }

    /// Tracepoints matching `pattern`, `category:name` with globs in either part
    /// (`syscalls:sys_enter_*`, `sched:sched_{switch,wakeup}`); a pattern without `:` matches
    /// event names in every category.
    pub fn tracepoints_matching(&self, pattern: &str) -> Result<Vec<Tracepoint>, TracefsError> {
        let (cat_pat, name_pat) = pattern.split_once(':').unwrap_or(("*", pattern));
        let cat_glob = Glob::new(cat_pat)?;
        let name_glob = Glob::new(name_pat)?;
        let cats = if cat_glob.is_literal() {
            vec![cat_glob.literal_prefix().to_string()]
        } else {
            self.categories()?
        };
        let mut out = Vec::new();
        for cat in cats.into_iter().filter(|c| cat_glob.matches(c)) {
            let names = match self.events(&cat) {
                Ok(n) => n,
                // A literal category that does not exist simply matches nothing.
                Err(TracefsError::Io { source, .. })
                    if source.kind() == std::io::ErrorKind::NotFound =>
                {
                    continue
                }
                Err(e) => return Err(e),
            };
            for name in names.into_iter().filter(|n| name_glob.matches(n)) {
                out.push(Tracepoint {
                    category: cat.clone(),
                    name,
                });
            }
        }
        Ok(out)
    }

    fn event_file(
        &self,
        category: &str,
        name: &str,
        file: &str,
    ) -> Result<(PathBuf, String), TracefsError> {
        let bad = |s: &str| s.is_empty() || s.contains('/') || s == "." || s == "..";
        let missing = || TracefsError::NoSuchTracepoint {
            category: category.to_string(),
            name: name.to_string(),
        };
        if bad(category) || bad(name) {
            return Err(missing());
        }
        let path = self
            .root
            .join("events")
            .join(category)
            .join(name)
            .join(file);
        match std::fs::read_to_string(&path) {
            Ok(s) => Ok((path, s)),
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => Err(missing()),
            Err(e) => Err(TracefsError::Io { path, source: e }),
        }
    }

    /// The tracepoint's id (what perf_event_open's `config` takes).
    pub fn id(&self, category: &str, name: &str) -> Result<u32, TracefsError> {
        let (path, text) = self.event_file(category, name, "id")?;
        text.trim().parse().map_err(|_| TracefsError::BadId {
            path,
            text: text.trim().to_string(),
        })
    }

    /// The tracepoint's parsed `format` file.
    pub fn format(&self, category: &str, name: &str) -> Result<TracepointFormat, TracefsError> {
        let (_, text) = self.event_file(category, name, "format")?;
        parse_format(&text)
    }
}

/// Where tracepoint names and formats come from: the real tracefs, or a fixed set for tests
/// of code (the checker, `-l`) that must run without a kernel.
pub trait TracepointSource {
    /// Tracepoints matching a `category:name` glob, sorted.
    fn tracepoints_matching(&self, pattern: &str) -> Result<Vec<Tracepoint>, TracefsError>;
    /// One tracepoint's format.
    fn format(&self, category: &str, name: &str) -> Result<TracepointFormat, TracefsError>;
}

impl TracepointSource for Tracefs {
    fn tracepoints_matching(&self, pattern: &str) -> Result<Vec<Tracepoint>, TracefsError> {
        Tracefs::tracepoints_matching(self, pattern)
    }
    fn format(&self, category: &str, name: &str) -> Result<TracepointFormat, TracefsError> {
        Tracefs::format(self, category, name)
    }
}

/// An in-memory [`TracepointSource`] built from format texts.
#[derive(Clone, Debug, Default)]
pub struct FixedTracepoints {
    formats: std::collections::BTreeMap<Tracepoint, TracepointFormat>,
}

impl FixedTracepoints {
    pub fn new() -> Self {
        Self::default()
    }

    /// Adds the tracepoint `category:<name from the text>` described by a `format` file's text.
    pub fn insert(&mut self, category: &str, format_text: &str) -> Result<(), TracefsError> {
        let f = parse_format(format_text)?;
        let tp = Tracepoint {
            category: category.to_string(),
            name: f.name.clone(),
        };
        self.formats.insert(tp, f);
        Ok(())
    }
}

impl TracepointSource for FixedTracepoints {
    fn tracepoints_matching(&self, pattern: &str) -> Result<Vec<Tracepoint>, TracefsError> {
        let (cat_pat, name_pat) = pattern.split_once(':').unwrap_or(("*", pattern));
        let (cg, ng) = (Glob::new(cat_pat)?, Glob::new(name_pat)?);
        Ok(self
            .formats
            .keys()
            .filter(|tp| cg.matches(&tp.category) && ng.matches(&tp.name))
            .cloned()
            .collect())
    }

    fn format(&self, category: &str, name: &str) -> Result<TracepointFormat, TracefsError> {
        let key = Tracepoint {
            category: category.to_string(),
            name: name.to_string(),
        };
        self.formats
            .get(&key)
            .cloned()
            .ok_or(TracefsError::NoSuchTracepoint {
                category: key.category,
                name: key.name,
            })
    }
}

/// Parses the text of a tracepoint `format` file.
pub fn parse_format(text: &str) -> Result<TracepointFormat, TracefsError> {
    let mut name = None;
    let mut id = None;
    let mut print_fmt = String::new();
    let mut common_fields = Vec::new();
    let mut fields = Vec::new();
    for (i, line) in text.lines().enumerate() {
        let lineno = i + 1;
        let t = line.trim();
        if let Some(rest) = t.strip_prefix("name:") {
            name = Some(rest.trim().to_string());
        } else if let Some(rest) = t.strip_prefix("ID:") {
            id = Some(
                rest.trim()
                    .parse::<u32>()
                    .map_err(|_| TracefsError::Format {
                        line: lineno,
                        message: format!("bad ID `{}`", rest.trim()),
                    })?,
            );
        } else if let Some(rest) = t.strip_prefix("print fmt:") {
            print_fmt = rest.trim().to_string();
        } else if t.starts_with("field:") {
            let f = parse_field(t).map_err(|message| TracefsError::Format {
                line: lineno,
                message,
            })?;
            if f.name.starts_with("common_") {
                common_fields.push(f);
            } else {
                fields.push(f);
            }
        }
    }
    let missing = |what: &str| TracefsError::Format {
        line: 0,
        message: format!("no `{what}` line"),
    };
    Ok(TracepointFormat {
        name: name.ok_or_else(|| missing("name:"))?,
        id: id.ok_or_else(|| missing("ID:"))?,
        common_fields,
        fields,
        print_fmt,
    })
}

/// Parses `field:<decl>;\toffset:N;\tsize:N;\tsigned:N;`.
fn parse_field(line: &str) -> Result<Field, String> {
    let mut decl = None;
    let (mut offset, mut size, mut signed) = (None, None, false);
    for part in line.split(';').map(str::trim).filter(|p| !p.is_empty()) {
        let (key, value) = part
            .split_once(':')
            .ok_or_else(|| format!("expected `key:value`, found `{part}`"))?;
        let num = || {
            value
                .trim()
                .parse::<u32>()
                .map_err(|_| format!("bad {key} `{value}`"))
        };
        match key.trim() {
            "field" => decl = Some(value.trim()),
            "offset" => offset = Some(num()?),
            "size" => size = Some(num()?),
            "signed" => signed = num()? != 0,
            _ => {} // Unknown keys from newer kernels are ignored.
        }
    }
    let decl = decl.ok_or("missing field declaration")?;
    let (name, type_text, layout) = parse_decl(decl)?;
    Ok(Field {
        name,
        type_text,
        offset: offset.ok_or("missing offset")?,
        size: size.ok_or("missing size")?,
        signed,
        layout,
    })
}

/// Splits a C declaration into (name, type without brackets, layout).
fn parse_decl(decl: &str) -> Result<(String, String, FieldLayout), String> {
    let mut d = decl.split_whitespace().collect::<Vec<_>>().join(" ");
    let mut layout = FieldLayout::Scalar;
    for (prefix, l) in [
        ("__data_loc ", FieldLayout::DataLoc),
        ("__rel_loc ", FieldLayout::RelLoc),
    ] {
        if let Some(rest) = d.strip_prefix(prefix) {
            layout = l;
            d = rest.to_string();
        }
    }
    // Array brackets either follow the name (`char comm[16]`) or, for dynamic arrays, the type
    // (`char[] name`); remove them wherever they are and note the length.
    let mut len_text = None;
    if let (Some(open), Some(close)) = (d.find('['), d.rfind(']')) {
        if close < open {
            return Err(format!("bad brackets in `{decl}`"));
        }
        len_text = Some(d[open + 1..close].trim().to_string());
        d = format!("{} {}", &d[..open], &d[close + 1..]);
    }
    let d = d.trim();
    let split = d
        .char_indices()
        .rev()
        .find(|&(_, c)| !(c.is_ascii_alphanumeric() || c == '_'))
        .map_or(0, |(i, c)| i + c.len_utf8());
    let (ty, name) = d.split_at(split);
    let ty = ty.split_whitespace().collect::<Vec<_>>().join(" ");
    if name.is_empty() || ty.is_empty() {
        return Err(format!("cannot split `{decl}` into a type and a name"));
    }
    if layout == FieldLayout::Scalar {
        if let Some(t) = len_text {
            layout = if t.is_empty() {
                FieldLayout::FlexibleArray
            } else {
                FieldLayout::Array {
                    len: t
                        .parse()
                        .map_err(|_| format!("bad array length `{t}` in `{decl}`"))?,
                }
            };
        }
    }
    Ok((name.to_string(), ty, layout))
}

#[cfg(test)]
mod tests {
    use super::*;

    const SCHED_SWITCH: &str = "name: sched_switch\nID: 372\nformat:\n\
\tfield:unsigned short common_type;\toffset:0;\tsize:2;\tsigned:0;\n\
\tfield:int common_pid;\toffset:4;\tsize:4;\tsigned:1;\n\n\
\tfield:char prev_comm[16];\toffset:8;\tsize:16;\tsigned:0;\n\
\tfield:const char * filename;\toffset:24;\tsize:8;\tsigned:0;\n\
\tfield:__data_loc char[] name;\toffset:32;\tsize:4;\tsigned:0;\n\
\tfield:__rel_loc u64[] addrs;\toffset:36;\tsize:4;\tsigned:0;\n\
\tfield:char buf[];\toffset:40;\tsize:0;\tsigned:0;\n\
\tfield:const char *const * argv;\toffset:48;\tsize:8;\tsigned:0;\n\n\
print fmt: \"prev_comm=%s\", REC->prev_comm\n";

    #[test]
    fn format_fields_are_typed_and_common_fields_kept_apart() {
        let f = parse_format(SCHED_SWITCH).unwrap();
        assert_eq!((f.name.as_str(), f.id), ("sched_switch", 372));
        assert_eq!(f.common_fields.len(), 2);
        assert_eq!(f.common_fields[1].name, "common_pid");
        assert!(f.common_fields[1].signed);
        let comm = f.field("prev_comm").unwrap();
        assert_eq!(
            (comm.type_text.as_str(), comm.layout),
            ("char", FieldLayout::Array { len: 16 })
        );
        assert_eq!((comm.offset, comm.size), (8, 16));
        assert!(comm.is_string());
        let file = f.field("filename").unwrap();
        assert_eq!(
            (file.type_text.as_str(), file.layout),
            ("const char *", FieldLayout::Scalar)
        );
        assert!(!file.is_string());
        assert!(file.is_pointer() && !comm.is_pointer());
        let name = f.field("name").unwrap();
        assert_eq!(
            (name.type_text.as_str(), name.layout),
            ("char", FieldLayout::DataLoc)
        );
        assert!(name.is_string());
        assert_eq!(f.field("addrs").unwrap().layout, FieldLayout::RelLoc);
        assert_eq!(f.field("addrs").unwrap().type_text, "u64");
        assert_eq!(f.field("buf").unwrap().layout, FieldLayout::FlexibleArray);
        assert_eq!(f.field("argv").unwrap().type_text, "const char *const *");
        assert_eq!(f.print_fmt, "\"prev_comm=%s\", REC->prev_comm");
    }

    #[test]
    fn malformed_formats_are_errors_with_line_numbers() {
        let e = parse_format("name: x\nID: 1\n\tfield:int a;\toffset:zz;\tsize:4;\tsigned:1;\n")
            .unwrap_err();
        assert!(matches!(e, TracefsError::Format { line: 3, .. }), "{e}");
        assert!(matches!(
            parse_format("name: x\n"),
            Err(TracefsError::Format { line: 0, .. })
        ));
        assert!(parse_format("name: x\nID: 1\n\tfield:;\toffset:0;\tsize:4;\n").is_err());
        assert!(parse_format("name: x\nID: 1\n\tfield:int a];[;\toffset:0;\tsize:4;\n").is_err());
    }

    proptest::proptest! {
        #[test]
        fn arbitrary_format_text_never_panics(s in "(name: x\nID: 3\n)?(\tfield:[a-z_ *\\[\\]0-9]{0,20};\toffset:[0-9]{1,3};\tsize:[0-9];\tsigned:[01];\n){0,4}") {
            let _ = parse_format(&s);
        }

        #[test]
        fn arbitrary_bytes_never_panic(s in ".{0,200}") {
            let _ = parse_format(&s);
        }
    }

    #[test]
    fn fixed_tracepoints_serve_formats_and_globs_without_a_kernel() {
        let mut src = FixedTracepoints::new();
        src.insert("sched", SCHED_SWITCH).unwrap();
        src.insert("syscalls", "name: sys_enter_read\nID: 5\n")
            .unwrap();
        let src: &dyn TracepointSource = &src;
        let all = src.tracepoints_matching("*:*").unwrap();
        assert_eq!(
            all.iter().map(|t| t.to_string()).collect::<Vec<_>>(),
            ["sched:sched_switch", "syscalls:sys_enter_read"]
        );
        assert_eq!(src.tracepoints_matching("sys*:*_read").unwrap().len(), 1);
        assert_eq!(src.format("sched", "sched_switch").unwrap().id, 372);
        assert!(matches!(
            src.format("sched", "nope"),
            Err(TracefsError::NoSuchTracepoint { .. })
        ));
    }

    #[test]
    fn non_ascii_declarations_are_errors_not_panics() {
        assert!(parse_format("name: x\nID: 1\n\tfield:int é;\toffset:0;\tsize:4;\n").is_err());
        let f = parse_format("name: x\nID: 1\n\tfield:é a;\toffset:0;\tsize:4;\n").unwrap();
        assert_eq!(f.fields[0].type_text, "é");
    }
}
