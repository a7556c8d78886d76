//! `strobe load OBJ --attach SPEC`: mass-attach one program of a BPF object (ELF from clang or
//! `strobe asm`, or assembler text `.s`) through the clone loader.
//!
//! Input: the object, an attach point with wildcards (`fentry:vfs_*`, `kprobe:tcp_*`,
//! `uprobe:/bin/bash:read*`, `rawtracepoint:sched_*`). Output: the summary line
//! (`Attached 71/75 fentry probes (4 refused; -v lists them)`), with `-v` the refused targets
//! and why; after Ctrl-C/SIGTERM or `--duration`, each map's contents (8-byte keys that are
//! kernel addresses print as functions, so a program keyed by `bpf_get_func_ip` counts per
//! function); then detach, in a background child by default so the prompt comes back at once.
//! With `--timings`, one JSON line on stderr: start → armed, results, and detach wait.
//!
//! The object's maps are created once and shared by all clones; CO-RE relocations of clang
//! objects are resolved against the kernel's BTF ([`crate::loader::co_re`]); `--pin DIR` pins
//! maps and links and exits, leaving the programs attached. Global data (`.rodata`, `.data`,
//! `.bss`) becomes one array map per section, as with libbpf ([`crate::loader::link_data`]);
//! writable ones are printed at exit like the other maps.
//! Exit codes: 0, 1 bad input, 2 usage, 3 the kernel refused (nothing attached, or `--strict`).

use std::ffi::OsString;
use std::os::fd::{AsFd, AsRawFd};
use std::path::PathBuf;
use std::time::{Duration, Instant};

use clap::Parser;

use super::{EXIT_INPUT, EXIT_KERNEL, EXIT_OK, EXIT_USAGE};
use crate::api::expand::{expand, AttachSpec, Expansion};
use crate::asm::{Object, Section};
use crate::diag::SourceFile;
use crate::loader::{
    attach_multi, detach, load_clones, map_fds_for, pin_objects, prepare_limits, progress_wanted,
    Arming, Attached, DetachMode, LoadOptions, MultiOptions, DEFAULT_WARN_ABOVE,
};
use crate::sys::{Map, MapCreateOptions, MapFlags, MapType};
use crate::template::Template;

#[derive(Parser, Debug)]
#[command(
    name = "strobe load",
    about = "Load one program of a BPF object and attach it to every target of a wildcard"
)]
struct Args {
    /// BPF ELF object, or assembler source (`.s`).
    object: PathBuf,
    /// Attach point, e.g. 'fentry:vfs_*' (default: from the program's section name).
    #[arg(long, short = 'a')]
    attach: Option<String>,
    /// Program to attach: a global symbol or section name (default: the only program).
    #[arg(long)]
    prog: Option<String>,
    /// List refused and skipped targets with reasons.
    #[arg(short, long)]
    verbose: bool,
    /// Fail if any target is refused.
    #[arg(long)]
    strict: bool,
    /// Threads loading clones (default: one per CPU).
    #[arg(long, default_value_t = 0)]
    load_threads: usize,
    /// Stop after this many seconds instead of waiting for Ctrl-C.
    #[arg(long)]
    duration: Option<f64>,
    /// Warn above this many targets (there is no cap).
    #[arg(long, default_value_t = DEFAULT_WARN_ABOVE)]
    warn_above: usize,
    /// How to detach at exit: background (default; the prompt returns at once), parallel, or
    /// sequential.
    #[arg(long, default_value = "background")]
    detach: String,
    /// Force kprobe/uprobe wildcards onto one perf event per target instead of a multi link.
    #[arg(long)]
    no_multi: bool,
    /// Print a JSON line of timings on stderr at exit.
    #[arg(long)]
    timings: bool,
    /// Pin the maps (DIR/maps/NAME) and links (DIR/links/TARGET) in this bpffs directory and
    /// exit at once, leaving the programs attached (remove the pins to detach).
    #[arg(long, value_name = "DIR")]
    pin: Option<PathBuf>,
}

pub fn run(args: &[OsString]) -> i32 {
    let start = Instant::now();
    crate::timings::mark_start();
    let args = match Args::try_parse_from(
        std::iter::once(OsString::from("strobe load")).chain(args.iter().cloned()),
    ) {
        Ok(a) => a,
        Err(e) => {
            let _ = e.print();
            return if e.use_stderr() { EXIT_USAGE } else { EXIT_OK };
        }
    };
    let detach_mode = match args.detach.as_str() {
        "background" => DetachMode::Background,
        "parallel" => DetachMode::Parallel {
            threads: args.load_threads,
        },
        "sequential" => DetachMode::Sequential,
        other => {
            eprintln!("strobe load: --detach {other}: expected background, parallel or sequential");
            return EXIT_USAGE;
        }
    };
    // Block SIGINT/SIGTERM before any thread starts, so every thread inherits the mask and
    // the main thread receives them with sigtimedwait.
    let sigs = block_signals();
    if args.timings || args.verbose {
        crate::timings::enable();
    }
    crate::timings::enable_from_env();
    match load_and_run(&args, detach_mode, start, &sigs) {
        Ok(()) => EXIT_OK,
        Err((code, msg)) => {
            eprintln!("strobe load: {msg}");
            code
        }
    }
}

type Failure = (i32, String);

fn load_and_run(
    args: &Args,
    detach_mode: DetachMode,
    start: Instant,
    sigs: &libc::sigset_t,
) -> Result<(), Failure> {
    let input = |m: String| (EXIT_INPUT, m);
    let bytes = std::fs::read(&args.object)
        .map_err(|e| input(format!("cannot read {}: {e}", args.object.display())))?;
    let obj =
        crate::timings::time("read_object", || read_object(&args.object, &bytes)).map_err(input)?;
    let section = pick_section(&obj, args.prog.as_deref()).map_err(input)?;
    let kernel = crate::kernel::info::HostKernel::new();
    let relocated = relocate_core(&bytes, section, &kernel).map_err(input)?;
    let section = relocated.as_ref().unwrap_or(section);
    let data = if bytes.starts_with(b"\x7fELF") {
        crate::elf::read_data_sections(&bytes)
            .map_err(|e| input(format!("{}: {e}", args.object.display())))?
    } else {
        Vec::new()
    };
    let linked;
    let section = if data.is_empty() {
        section
    } else {
        let mut s = section.clone();
        crate::loader::link_data(&mut s, &data)
            .map_err(|e| input(format!("section {}: {e}", s.name)))?;
        linked = s;
        &linked
    };
    let attach = match &args.attach {
        Some(a) => a.clone(),
        None => section.name.replacen('/', ":", 1),
    };
    let spec = AttachSpec::parse(&attach).map_err(|e| (EXIT_USAGE, e.to_string()))?;
    let expansion = crate::timings::time("expand", || expand(&spec, &kernel))
        .map_err(|e| input(e.to_string()))?;
    let expanded_at = start.elapsed();
    let ntargets = match &expansion {
        Expansion::Clones { targets, .. } => targets.len(),
        Expansion::Multi { targets } => targets.len(),
    };
    // A clone costs a program and a link; a shared-program target a perf event and a link.
    let fds_per_target = 2;
    for w in prepare_limits(ntargets, fds_per_target, args.warn_above).warnings {
        eprintln!("strobe load: warning: {w}");
    }

    let mut map_names: Vec<String> = obj.maps.iter().map(|m| m.name.clone()).collect();
    map_names.extend(data.iter().map(|d| d.name.clone()));
    let license = obj.license.clone().unwrap_or_else(|| "GPL".into());
    let template = Template::from_section(section, &map_names, spec.kind, &license)
        .map_err(|sym| {
            input(format!(
                "section {}: cannot relocate `{sym}` (only map and global data references are supported)",
                section.name
            ))
        })?
        .with_arming_guard();
    // Name the programs after the program's function, as libbpf does (the section name is
    // often just the attach point).
    let mut template = template;
    if let Some(sym) = section.symbols.iter().find(|y| y.global && y.insn == 0) {
        template.name = sym.name.chars().take(15).collect();
    }
    let maps = crate::timings::time("maps", || create_maps(&obj)).map_err(|m| (EXIT_KERNEL, m))?;
    let object_name = args
        .object
        .file_stem()
        .map_or_else(String::new, |s| s.to_string_lossy().into_owned());
    let data_maps = crate::timings::time("data_maps", || {
        crate::loader::create_data_maps(&object_name, &data)
    })
    .map_err(|m| (EXIT_KERNEL, m))?;
    let arming = Arming::create().map_err(|e| (EXIT_KERNEL, e.to_string()))?;
    let mut entries: Vec<(&str, i32)> = maps
        .iter()
        .map(|(n, m)| (n.as_str(), m.as_raw_fd()))
        .collect();
    entries.extend(
        data_maps
            .iter()
            .map(|d| (d.section.as_str(), d.map.as_raw_fd())),
    );
    entries.push(arming.map_entry());
    let map_fds = map_fds_for(&template, &entries).map_err(|e| input(e.to_string()))?;

    let (attached, skipped): (Attached, Vec<(String, String)>) = match expansion {
        Expansion::Clones { targets, skipped } => {
            let opts = LoadOptions {
                threads: args.load_threads,
                strict: args.strict,
                progress: progress_wanted(targets.len()),
                log_size: None,
            };
            let a = load_clones(&template, &map_fds, &targets, &opts)
                .map_err(|e| (EXIT_KERNEL, e.to_string()))?;
            (a, skipped)
        }
        Expansion::Multi { targets } => {
            let opts = MultiOptions {
                use_multi: if args.no_multi { Some(false) } else { None },
                strict: args.strict,
                threads: args.load_threads,
                log_size: None,
            };
            let (a, via) = crate::timings::time("attach_multi", || {
                attach_multi(&template, &map_fds, &targets, &opts)
            })
            .map_err(|e| (EXIT_KERNEL, e.to_string()))?;
            if args.verbose {
                eprintln!("strobe load: attached through {via:?}");
            }
            (a, vec![])
        }
    };
    crate::timings::time("arm", || arming.arm()).map_err(|e| (EXIT_KERNEL, e.to_string()))?;
    let armed_at = start.elapsed();
    if args.verbose {
        let phases = crate::timings::human(&crate::timings::phases());
        eprintln!(
            "strobe load: start → armed {:.3} s: {phases}",
            armed_at.as_secs_f64()
        );
    }
    println!("{}", attached.summary_line());
    // The test-case runner starts its AFTER workloads when it sees this line.
    if std::env::var_os(crate::runtime::driver::NOTIFY_ATTACHED).is_some() {
        println!("{}", crate::runtime::driver::NOTIFY_ATTACHED);
    }
    if args.verbose {
        for r in &attached.refused {
            println!("  refused {r}");
        }
        for (name, why) in &skipped {
            println!("  skipped {name}: {why}");
        }
    }
    if args.strict && !skipped.is_empty() {
        return Err((
            EXIT_KERNEL,
            format!("{} targets skipped (--strict)", skipped.len()),
        ));
    }
    if let Some(dir) = &args.pin {
        let mut pins: Vec<(&str, std::os::fd::BorrowedFd<'_>)> =
            maps.iter().map(|(n, m)| (n.as_str(), m.as_fd())).collect();
        pins.extend(data_maps.iter().map(|d| (d.name.as_str(), d.map.as_fd())));
        pins.push((crate::template::ARM_MAP_NAME, arming.map().as_fd()));
        let n = pin_objects(dir, &pins, &attached).map_err(|e| (EXIT_KERNEL, e.to_string()))?;
        println!(
            "Pinned {n} objects under {}; remove them to detach",
            dir.display()
        );
        // Closing our fds now leaves the pinned links attached and the maps alive.
        return Ok(());
    }

    wait_for_exit(sigs, args.duration.map(Duration::from_secs_f64));

    arming.disarm().map_err(|e| (EXIT_KERNEL, e.to_string()))?;
    let stop = Instant::now();
    print_maps(&maps);
    print_data_maps(&data_maps);
    use std::io::Write;
    let _ = std::io::stdout().flush();
    let printed = stop.elapsed();
    let (total, n_attached) = (attached.total, attached.attached());
    let load_attach = attached.elapsed;
    let (load_sum, attach_sum) = (attached.load_time, attached.attach_time);
    let waited = detach(attached.into_objects(), detach_mode);
    if args.timings {
        eprintln!(
            "{{\"targets\":{total},\"attached\":{n_attached},\"expand_s\":{:.4},\"load_attach_s\":{:.4},\"sum_load_s\":{:.4},\"sum_attach_s\":{:.4},\"start_to_armed_s\":{:.4},\"print_s\":{:.4},\"detach_wait_s\":{:.4},\"detach\":\"{}\",\"load_threads\":{},\"phases\":{}}}",
            expanded_at.as_secs_f64(),
            load_attach.as_secs_f64(),
            load_sum.as_secs_f64(),
            attach_sum.as_secs_f64(),
            armed_at.as_secs_f64(),
            printed.as_secs_f64(),
            waited.as_secs_f64(),
            args.detach,
            args.load_threads,
            crate::timings::json(&crate::timings::phases())
        );
    }
    Ok(())
}

/// `section` with its CO-RE relocations applied against the kernel's BTF, or `None` when the
/// object has none for it (assembler text, objects without `.BTF.ext` CO-RE records).
fn relocate_core(
    bytes: &[u8],
    section: &Section,
    kernel: &crate::kernel::info::HostKernel,
) -> Result<Option<Section>, String> {
    use crate::kernel::info::KernelInfo;
    if !bytes.starts_with(b"\x7fELF") {
        return Ok(None);
    }
    let Some((local, relos)) =
        crate::loader::co_re::section_relos(bytes, &section.name).map_err(|e| e.to_string())?
    else {
        return Ok(None);
    };
    let target = kernel.btf(None).map_err(|e| e.to_string())?;
    let mut s = section.clone();
    crate::timings::time("co_re", || {
        crate::loader::co_re::apply(&mut s.insns, &local, &relos, &target)
    })
    .map_err(|e| format!("section {}: {e}", section.name))?;
    Ok(Some(s))
}

fn read_object(path: &std::path::Path, bytes: &[u8]) -> Result<Object, String> {
    if bytes.starts_with(b"\x7fELF") {
        return crate::elf::read_object(bytes).map_err(|e| format!("{}: {e}", path.display()));
    }
    let text = String::from_utf8(bytes.to_vec()).map_err(|_| {
        format!(
            "{}: neither an ELF object nor assembler text",
            path.display()
        )
    })?;
    let file = SourceFile::new(path.display().to_string(), text);
    crate::asm::assemble_file(file).map_err(|e| e.to_string())
}

fn pick_section<'a>(obj: &'a Object, want: Option<&str>) -> Result<&'a Section, String> {
    let progs: Vec<&Section> = obj
        .sections
        .iter()
        .filter(|s| !s.insns.is_empty())
        .collect();
    match want {
        Some(w) => progs
            .iter()
            .find(|s| s.name == w || s.symbols.iter().any(|y| y.global && y.name == w))
            .copied()
            .ok_or_else(|| {
                let names: Vec<&str> = progs.iter().map(|s| s.name.as_str()).collect();
                format!("no program `{w}` (sections: {})", names.join(", "))
            }),
        None => match progs.as_slice() {
            [one] => Ok(one),
            [] => Err("the object has no program".into()),
            many => Err(format!(
                "the object has {} programs; choose one with --prog ({})",
                many.len(),
                many.iter()
                    .map(|s| s.name.as_str())
                    .collect::<Vec<_>>()
                    .join(", ")
            )),
        },
    }
}

fn create_maps(obj: &Object) -> Result<Vec<(String, Map)>, String> {
    obj.maps
        .iter()
        .map(|d| {
            let ty = MapType::from_raw(d.map_type)
                .ok_or_else(|| format!("map {}: unsupported map type {}", d.name, d.map_type))?;
            let m = Map::create(
                ty,
                &MapCreateOptions {
                    name: &d.name,
                    key_size: d.key_size,
                    value_size: d.value_size,
                    max_entries: d.max_entries,
                    flags: MapFlags::from_bits_retain(d.flags),
                    ..Default::default()
                },
            )
            .map_err(|e| format!("map {}: {e}", d.name))?;
            Ok((d.name.clone(), m))
        })
        .collect()
}

fn block_signals() -> libc::sigset_t {
    // SAFETY: plain sigset manipulation on a local, then masking this thread.
    unsafe {
        let mut set: libc::sigset_t = std::mem::zeroed();
        libc::sigemptyset(&mut set);
        libc::sigaddset(&mut set, libc::SIGINT);
        libc::sigaddset(&mut set, libc::SIGTERM);
        libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
        set
    }
}

fn wait_for_exit(sigs: &libc::sigset_t, duration: Option<Duration>) {
    let deadline = duration.map(|d| Instant::now() + d);
    loop {
        let left = deadline.map(|d| d.saturating_duration_since(Instant::now()));
        if left == Some(Duration::ZERO) {
            return;
        }
        let step = left
            .unwrap_or(Duration::from_secs(3600))
            .min(Duration::from_secs(3600));
        let ts = libc::timespec {
            tv_sec: step.as_secs() as libc::time_t,
            tv_nsec: step.subsec_nanos() as libc::c_long,
        };
        // SAFETY: valid set and timespec; no siginfo wanted.
        let r = unsafe { libc::sigtimedwait(sigs, std::ptr::null_mut(), &ts) };
        if r > 0 {
            return;
        }
    }
}

/// Each map's non-zero entries, one `key: value` line each.
fn print_maps(maps: &[(String, Map)]) {
    let ksyms = std::cell::OnceCell::new();
    for (name, m) in maps {
        if matches!(
            m.map_type(),
            Some(MapType::Ringbuf | MapType::PerfEventArray)
        ) {
            continue;
        }
        let mut lines = Vec::new();
        let keys = match m.keys() {
            Ok(k) => k,
            Err(e) => {
                println!("@{name}: cannot read: {e}");
                continue;
            }
        };
        for k in keys {
            let Ok(Some(v)) = m.lookup_vec(&k) else {
                continue;
            };
            let value = fmt_value(&v, m.value_size() as usize);
            if value == "0" {
                continue;
            }
            lines.push((fmt_key(&k, &ksyms), value));
        }
        println!("@{name}:");
        for (k, v) in lines {
            println!("  {k}: {v}");
        }
    }
}

/// The writable global data (`.data`, `.bss`), each as one hex line: the constants of
/// `.rodata` cannot have changed.
fn print_data_maps(data: &[crate::loader::DataMap]) {
    for d in data.iter().filter(|d| !d.readonly) {
        match d.map.lookup_vec(&0u32.to_ne_bytes()) {
            Ok(Some(v)) => println!("@{}:\n  0: {}", d.name, hex(&v)),
            Ok(None) => println!("@{}:", d.name),
            Err(e) => println!("@{}: cannot read: {e}", d.name),
        }
    }
}

fn fmt_key(
    k: &[u8],
    ksyms: &std::cell::OnceCell<Option<crate::kernel::kallsyms::Kallsyms>>,
) -> String {
    match k.len() {
        4 => u32::from_ne_bytes(k.try_into().unwrap_or_default()).to_string(),
        8 => {
            let v = u64::from_ne_bytes(k.try_into().unwrap_or_default());
            if v >= 0xffff_8000_0000_0000 {
                let ks = ksyms.get_or_init(|| crate::kernel::kallsyms::Kallsyms::load().ok());
                if let Some((s, off)) = ks.as_ref().and_then(|k| k.lookup(v)) {
                    return if off == 0 {
                        s.name.to_string()
                    } else {
                        format!("{}+{off}", s.name)
                    };
                }
            }
            v.to_string()
        }
        _ => hex(k),
    }
}

/// Integers as decimal, summed over CPUs for per-CPU maps (`v` holds one slot per CPU, each
/// rounded up to 8 bytes); anything else as hex.
fn fmt_value(v: &[u8], size: usize) -> String {
    match size {
        8 => v
            .chunks_exact(8)
            .map(|c| u64::from_ne_bytes(c.try_into().unwrap_or_default()))
            .fold(0u64, u64::wrapping_add)
            .to_string(),
        4 => {
            // One value, or per-CPU slots of 8 bytes each.
            let stride = if v.len() == 4 { 4 } else { 8 };
            v.chunks_exact(stride)
                .map(|c| u32::from_ne_bytes(c[..4].try_into().unwrap_or_default()) as u64)
                .sum::<u64>()
                .to_string()
        }
        _ => hex(v),
    }
}

fn hex(b: &[u8]) -> String {
    b.iter().map(|x| format!("{x:02x}")).collect()
}
