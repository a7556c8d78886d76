//! `strobe --serve[=ADDR]`: the script's maps as a Prometheus scrape target.
//!
//! The script runs until stopped (Ctrl-C, SIGTERM, `exit()`, or `-c`/`-p`'s process ending);
//! its own output (`printf`, `print`, …) still goes to stdout, but the map dump at exit is
//! left out (END still runs). `GET /metrics` reads every script map at scrape time
//! ([`read`]: batch lookups, else iteration) and answers in the text exposition format 0.0.4
//! ([`encode`]), with strobe's own metrics: lost ring buffer records, dropped map updates,
//! each probe's attach status.
//!
//! Threads: the HTTP server ([`http`]) runs on its own threads; the event loop (ring buffer
//! consumption) stays on the run's thread and never waits for a scrape. Scrapes read maps
//! through their own duplicated fds and resolver, one scrape at a time (the memory of one
//! scrape is the bound; a second waits).
//! Docs: docs/prometheus.md (mapping table, systemd unit, fleet walkthrough).

pub mod encode;
pub mod http;
pub mod read;

use crate::plan::KeyClass;
use std::collections::{BTreeMap, HashMap, HashSet};
use std::fmt::Write as _;
use std::net::{SocketAddr, TcpListener, ToSocketAddrs};
use std::os::fd::AsFd;
use std::os::unix::fs::MetadataExt;
use std::path::PathBuf;
use std::sync::{Arc, Mutex};
use std::time::Instant;

use encode::{write_header, write_sample, Kind, MetricMap};

use crate::plan::{CompiledScript, MapRole, MapSpec, ProbeKind, ProbeSpec};
use crate::runtime::symbolize::Symbolizer;
use crate::sys::Map;

/// `--serve` alone: localhost, port 9435.
pub const DEFAULT_ADDR: &str = "127.0.0.1:9435";

/// What `--serve` asks for; the listener is bound by the CLI before anything is loaded, so
/// a port in use fails before a probe is attached.
#[derive(Debug)]
pub struct ServeConfig {
    pub listener: TcpListener,
    /// `--serve-labels @map=a,b`: label names for the map's key fields, by map name (`@m`).
    pub labels: HashMap<String, Vec<String>>,
}

/// `ADDR` of `--serve=ADDR`: `HOST:PORT`, `[V6]:PORT`, `:PORT` or `PORT` (localhost then).
pub fn parse_addr(s: &str) -> Result<Vec<SocketAddr>, String> {
    let s = s.trim();
    let full = if s.bytes().all(|b| b.is_ascii_digit()) && !s.is_empty() {
        format!("127.0.0.1:{s}")
    } else if let Some(port) = s.strip_prefix(':') {
        format!("127.0.0.1:{port}")
    } else {
        s.to_string()
    };
    let addrs: Vec<SocketAddr> = full
        .to_socket_addrs()
        .map_err(|e| format!("--serve: '{s}' is not an address (HOST:PORT or PORT): {e}"))?
        .collect();
    if addrs.is_empty() {
        return Err(format!("--serve: '{s}' resolves to no address"));
    }
    Ok(addrs)
}

/// Whether a free argument looks like `--serve`'s address rather than a script file.
pub fn looks_like_addr(s: &str) -> bool {
    (!s.is_empty() && s.bytes().all(|b| b.is_ascii_digit()))
        || s.parse::<SocketAddr>().is_ok()
        || s.rsplit_once(':').is_some_and(|(h, p)| {
            !h.contains('/') && !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit())
        })
}

/// Binds the listener.
pub fn bind(addr: &str) -> Result<TcpListener, String> {
    let addrs = parse_addr(addr)?;
    TcpListener::bind(&addrs[..]).map_err(|e| format!("--serve: cannot listen on {addr}: {e}"))
}

/// `--serve-labels @map=a,b` (repeatable) into names by map.
pub fn parse_labels(args: &[String]) -> Result<HashMap<String, Vec<String>>, String> {
    let mut out = HashMap::new();
    for a in args {
        let Some((map, names)) = a.split_once('=') else {
            return Err(format!(
                "--serve-labels '{a}': expected @MAP=NAME[,NAME…] (e.g. @bytes=comm,pid)"
            ));
        };
        let map = if map.starts_with('@') {
            map.to_string()
        } else {
            format!("@{map}")
        };
        let names: Vec<String> = names.split(',').map(|n| n.trim().to_string()).collect();
        for n in &names {
            if !encode::valid_label_name(n) || encode::RESERVED_LABELS.contains(&n.as_str()) {
                return Err(format!(
                    "--serve-labels '{a}': '{n}' is not a usable label name \
                     ([A-Za-z_][A-Za-z0-9_]*, not starting with __, not le/quantile/value)"
                ));
            }
        }
        let unique: HashSet<&String> = names.iter().collect();
        if unique.len() != names.len() {
            return Err(format!("--serve-labels '{a}': a label name repeats"));
        }
        if out.insert(map.clone(), names).is_some() {
            return Err(format!("--serve-labels: {map} is named twice"));
        }
    }
    Ok(out)
}

/// strobe's own metric names (script maps may not take them).
const OWN_METRICS: &[&str] = &[
    "strobe_lost_events_total",
    "strobe_map_updates_dropped_total",
    "strobe_probe_attached",
    "strobe_probe_refused",
    "strobe_probe_up",
    "strobe_map_entries",
    "strobe_map_read_errors",
    "strobe_scrape_duration_seconds",
];

/// The number of key fields a map's entries have: one per field of a tuple key.
fn key_arity(spec: &MapSpec) -> usize {
    match &spec.role {
        MapRole::Script { key, .. } => key.len(),
        _ => 0,
    }
}

/// A served script map: its metric, spec and map, and for a map keyed by one long string its
/// short-key class map (`codegen::lower::key_class`), read along with it.
type ServedMap = (MetricMap, MapSpec, Map, Option<(KeyClass, Map)>);

/// One probe's attach status, as `strobe_probe_*` reports it.
#[derive(Clone, Debug)]
pub struct ProbeStatus {
    pub name: String,
    pub attached: usize,
    pub refused: usize,
    /// A uprobe's or usdt probe's binary and its (device, inode) when attached: the probe is
    /// gone once the path no longer names that file (deleted or replaced).
    binary: Option<(PathBuf, u64, u64)>,
}

impl ProbeStatus {
    pub fn new(p: &ProbeSpec, attached: usize, refused: usize, pid: Option<i32>) -> ProbeStatus {
        let binary = match &p.kind {
            ProbeKind::Uprobe { binary, .. } | ProbeKind::Usdt { binary, .. } => {
                let path = match pid {
                    Some(pid) if binary.is_absolute() => PathBuf::from(format!("/proc/{pid}/root"))
                        .join(binary.strip_prefix("/").unwrap_or(binary)),
                    _ => binary.clone(),
                };
                std::fs::metadata(&path)
                    .ok()
                    .map(|m| (path, m.dev(), m.ino()))
            }
            _ => None,
        };
        ProbeStatus {
            name: p.name.clone(),
            attached,
            refused,
            binary,
        }
    }

    /// Whether the probe's attach points still fire: false once its binary is gone.
    pub fn up(&self) -> bool {
        if self.attached == 0 {
            return false;
        }
        match &self.binary {
            Some((path, dev, ino)) => std::fs::metadata(path)
                .map(|m| m.dev() == *dev && m.ino() == *ino)
                .unwrap_or(false),
            None => true,
        }
    }
}

/// Everything a scrape reads, owned by the server threads (duplicated map fds).
struct Exporter {
    maps: Vec<ServedMap>,
    lost: Option<Map>,
    drops: Option<Map>,
    probes: Vec<ProbeStatus>,
    probe_names: HashMap<u64, String>,
    stacks: Vec<(bool, usize, Map)>,
    /// One scrape at a time; holds the resolver, built on first use on a server thread.
    resolver: Mutex<Option<Symbolizer>>,
}

/// The maps and names of a served script, checked before anything is attached.
pub struct Prepared {
    listener: TcpListener,
    maps: Vec<ServedMap>,
    lost: Option<Map>,
    drops: Option<Map>,
    stacks: Vec<(bool, usize, Map)>,
}

fn dup(m: &Map) -> Result<Map, String> {
    let fd = m
        .as_fd()
        .try_clone_to_owned()
        .map_err(|e| format!("--serve: cannot duplicate a map fd: {e}"))?;
    Map::from_fd(fd).map_err(|e| format!("--serve: {e}"))
}

/// Names every script map's family and checks `--serve-labels` against the maps; `maps` are
/// the created maps in `script.maps` order.
pub fn prepare(
    cfg: &ServeConfig,
    script: &CompiledScript,
    maps: &[Map],
) -> Result<Prepared, String> {
    let listener = cfg
        .listener
        .try_clone()
        .map_err(|e| format!("--serve: cannot duplicate the listener: {e}"))?;
    let mut out = Prepared {
        listener,
        maps: Vec::new(),
        lost: None,
        drops: None,
        stacks: Vec::new(),
    };
    let mut taken: HashMap<String, String> = OWN_METRICS
        .iter()
        .map(|n| (n.to_string(), "strobe's own metrics".to_string()))
        .collect();
    let mut named: HashSet<&str> = HashSet::new();
    for (spec, map) in script.maps.iter().zip(maps) {
        match &spec.role {
            MapRole::Script { value, .. } => {
                let arity = key_arity(spec);
                let labels = match cfg.labels.get(&spec.name) {
                    Some(names) => {
                        named.insert(spec.name.as_str());
                        if names.len() != arity {
                            return Err(format!(
                                "--serve-labels: {} has {arity} key field(s), {} name(s) given",
                                spec.name,
                                names.len()
                            ));
                        }
                        names.clone()
                    }
                    None => (0..arity).map(|i| format!("key{i}")).collect(),
                };
                let m = MetricMap {
                    map: spec.name.clone(),
                    base: encode::metric_base(&spec.name),
                    labels,
                    value: value.clone(),
                };
                for n in m.names() {
                    if let Some(other) = taken.insert(n.clone(), spec.name.clone()) {
                        return Err(format!(
                            "--serve: map {}'s metric {n} collides with {other}'s; rename the map",
                            spec.name
                        ));
                    }
                }
                // A map keyed by one long string has its short keys in a class map
                // (`codegen::lower::key_class`), read along with it.
                let class = match script
                    .maps
                    .iter()
                    .zip(maps)
                    .find_map(|(s, m)| match &s.role {
                        MapRole::KeyClass(c) if c.of == spec.name => Some((c.clone(), m)),
                        _ => None,
                    }) {
                    Some((c, m)) => Some((c, dup(m)?)),
                    None => None,
                };
                out.maps.push((m, spec.clone(), dup(map)?, class));
            }
            MapRole::LostCounter => out.lost = Some(dup(map)?),
            MapRole::DropCounter => out.drops = Some(dup(map)?),
            _ => {
                if let Some((user, limit)) = crate::plan::parse_stack_map_name(&spec.name) {
                    out.stacks.push((user, limit, dup(map)?));
                }
            }
        }
    }
    if let Some(unknown) = cfg.labels.keys().find(|k| !named.contains(k.as_str())) {
        return Err(format!("--serve-labels: the script has no map {unknown}"));
    }
    Ok(out)
}

/// The running exporter; dropping it stops serving.
pub struct Running {
    _server: http::Server,
}

impl Prepared {
    /// Starts answering scrapes (call once every probe is attached and armed).
    pub fn start(
        self,
        probes: Vec<ProbeStatus>,
        probe_names: HashMap<u64, String>,
    ) -> Result<Running, String> {
        let exporter = Arc::new(Exporter {
            maps: self.maps,
            lost: self.lost,
            drops: self.drops,
            probes,
            probe_names,
            stacks: self.stacks,
            resolver: Mutex::new(None),
        });
        let handler: Arc<http::Handler> = Arc::new(move |path: &str| match path {
            "/metrics" => http::Response {
                status: 200,
                content_type: "text/plain; version=0.0.4; charset=utf-8",
                body: exporter.scrape().into_bytes(),
            },
            "/" => http::Response::text(200, "strobe exporter: metrics at /metrics\n"),
            _ => http::Response::text(404, "not found: metrics are at /metrics\n"),
        });
        let server = http::Server::spawn(self.listener, handler)
            .map_err(|e| format!("--serve: cannot start the server thread: {e}"))?;
        Ok(Running { _server: server })
    }
}

/// Slot 0 of a per-CPU `u64` counter array, summed over CPUs.
fn read_counter(m: &Map) -> Option<u64> {
    let v = m.lookup_vec(&0u32.to_ne_bytes()).ok().flatten()?;
    Some(crate::runtime::format::agg::merge_sum(&v))
}

impl Exporter {
    fn scrape(&self) -> String {
        let start = Instant::now();
        let mut guard = self.resolver.lock().unwrap_or_else(|e| e.into_inner());
        let resolver = guard.get_or_insert_with(|| {
            let mut s = Symbolizer::new(self.probe_names.clone());
            for (user, limit, m) in &self.stacks {
                if let Ok(d) = dup(m) {
                    s.add_stack_map(*user, *limit, d);
                }
            }
            s
        });
        let mut out = String::new();
        let mut sizes = Vec::new();
        let mut errors = 0u64;
        for (m, spec, map, class) in &self.maps {
            let class = class.as_ref().map(|(c, m)| (c, m));
            match read::entries(spec, map, class, resolver) {
                Ok(entries) => {
                    encode::write_map(&mut out, m, &entries);
                    sizes.push((m.map.as_str(), entries.len()));
                }
                Err(e) => {
                    errors += 1;
                    let _ = writeln!(
                        out,
                        "# strobe: cannot read {}: {}",
                        m.map,
                        e.to_string().replace('\n', " ")
                    );
                }
            }
        }
        drop(guard);
        let own = |out: &mut String, name: &str, kind: Kind, help: &str, v: u64| {
            write_header(out, name, kind, help);
            write_sample(out, name, "", None, v);
        };
        own(
            &mut out,
            "strobe_lost_events_total",
            Kind::Counter,
            "Output records (printf, print, …) the ring buffer had no room for",
            self.lost.as_ref().and_then(read_counter).unwrap_or(0),
        );
        own(
            &mut out,
            "strobe_map_updates_dropped_total",
            Kind::Counter,
            "Map updates refused because a map was full (raise STROBE_MAX_MAP_KEYS)",
            self.drops.as_ref().and_then(read_counter).unwrap_or(0),
        );
        own(
            &mut out,
            "strobe_map_read_errors",
            Kind::Gauge,
            "Script maps this scrape could not read",
            errors,
        );
        // Probes of the same name (two blocks with one attach point) are one series.
        let mut by_name: BTreeMap<&str, (usize, usize, bool)> = BTreeMap::new();
        for p in &self.probes {
            let e = by_name.entry(p.name.as_str()).or_insert((0, 0, true));
            e.0 += p.attached;
            e.1 += p.refused;
            e.2 &= p.up();
        }
        let per_probe =
            |out: &mut String, name: &str, help: &str, f: &dyn Fn(&(usize, usize, bool)) -> u64| {
                write_header(out, name, Kind::Gauge, help);
                for (probe, s) in &by_name {
                    let body = encode::label_body(&["probe".to_string()], &[probe.to_string()]);
                    write_sample(out, name, &body, None, f(s));
                }
            };
        per_probe(
            &mut out,
            "strobe_probe_attached",
            "Attach points each probe took at start",
            &|s| s.0 as u64,
        );
        per_probe(
            &mut out,
            "strobe_probe_refused",
            "Attach points the kernel refused at start",
            &|s| s.1 as u64,
        );
        per_probe(
            &mut out,
            "strobe_probe_up",
            "1 while the probe is attached; 0 once it is lost (its binary deleted or replaced)",
            &|s| s.2 as u64,
        );
        write_header(
            &mut out,
            "strobe_map_entries",
            Kind::Gauge,
            "Entries (histograms: keys) read from each script map",
        );
        for (map, n) in sizes {
            let body = encode::label_body(&["map".to_string()], &[map.to_string()]);
            write_sample(&mut out, "strobe_map_entries", &body, None, n);
        }
        write_header(
            &mut out,
            "strobe_scrape_duration_seconds",
            Kind::Gauge,
            "Time this scrape took to read and encode the maps",
        );
        write_sample(
            &mut out,
            "strobe_scrape_duration_seconds",
            "",
            None,
            format_args!("{:.6}", start.elapsed().as_secs_f64()),
        );
        out
    }
}
