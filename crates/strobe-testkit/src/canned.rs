//! Hand-built compiled scripts: BPF assembly turned into templates with map-fd relocations,
//! exactly the shape the code generator produces. They test the runtime apart from the
//! compiler, in-process and through the `strobe-plan` test binary (the product's CLI with these
//! plans behind its hidden `--x-plan NAME`); each names the bpftrace script it stands for.
//!
//! Every program is named `<tag>_<n>` so leak tests can find this run's programs among the
//! kernel's (other processes load programs too).

use std::path::PathBuf;

use strobe::asm::assemble_insns;
use strobe::plan::record::EventKind;
use strobe::plan::{
    CompiledScript, EventTable, MapRole, MapSpec, MapValueSpec, ProbeKind, ProbeSpec,
};
use strobe::runtime::format::agg::AggKind;
use strobe::runtime::format::hist::{log2_bucket, HistKind};
use strobe::runtime::format::{FieldType, PrintfCall};
use strobe::sys::MapType;
use strobe::template::{AttachKind, Field, Reloc, RelocKind, Template, ARM_MAP_NAME};

/// Indices into a canned template's map table: the arming flag first, then the script's maps
/// in [`CompiledScript::maps`] order (ring buffer, lost counter, script maps).
const ARM: usize = 0;
const RINGBUF: usize = 1;
const LOST: usize = 2;
const FIRST_SCRIPT_MAP: usize = 3;

use strobe::asm::isa::{CODE_LD_IMM64, PSEUDO_MAP_FD, PSEUDO_MAP_VALUE};

/// A template from assembly where `map_fd(N) ll` / `map_value(N, OFF) ll` name entry N of
/// `maps`: the placeholder becomes a map relocation and the immediate 0, as the code
/// generator leaves it.
pub fn template(name: &str, attach: AttachKind, asm: &str, maps: &[&str]) -> Template {
    let mut insns = assemble_insns(asm).unwrap_or_else(|e| {
        panic!("internal error: canned program {name} does not assemble: {e:?}\n{asm}")
    });
    let mut relocs = Vec::new();
    for i in 0..insns.len() {
        let insn = insns[i];
        if insn.code != CODE_LD_IMM64 || i + 1 >= insns.len() {
            continue;
        }
        let map = insn.imm as usize;
        let kind = match insn.src() {
            PSEUDO_MAP_FD => RelocKind::MapFd { map },
            PSEUDO_MAP_VALUE => RelocKind::MapValue {
                map,
                off: insns[i + 1].imm as u32,
            },
            _ => continue,
        };
        relocs.push(Reloc::new(i, Field::Imm, kind));
        insns[i].imm = 0;
    }
    let mut t = Template::new(name, attach, insns);
    for m in maps {
        t.map_index(m);
    }
    t.relocs = relocs;
    t
}

/// A unique tag for this process's next canned script (`sx<pid hex><n>`).
pub fn fresh_tag() -> String {
    use std::sync::atomic::{AtomicU32, Ordering};
    static N: AtomicU32 = AtomicU32::new(0);
    format!(
        "sx{:x}{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    )
}

fn base_maps(ring_size: u32) -> Vec<MapSpec> {
    vec![
        MapSpec {
            name: "ringbuf".into(),
            map_type: MapType::Ringbuf,
            key_size: 0,
            value_size: 0,
            max_entries: ring_size,
            role: MapRole::RingBuf,
        },
        MapSpec {
            name: "lost".into(),
            map_type: MapType::PercpuArray,
            key_size: 4,
            value_size: 8,
            max_entries: 1,
            role: MapRole::LostCounter,
        },
    ]
}

fn map_names(maps: &[MapSpec]) -> Vec<&str> {
    std::iter::once(ARM_MAP_NAME)
        .chain(maps.iter().map(|m| m.name.as_str()))
        .collect()
}

fn count_map(name: &str, key: Vec<FieldType>) -> MapSpec {
    MapSpec {
        name: name.into(),
        map_type: MapType::PercpuHash,
        key_size: 8,
        value_size: 8,
        max_entries: 4096,
        role: MapRole::Script {
            key,
            value: MapValueSpec::Agg(AggKind::Count),
        },
    }
}

/// Assembly that writes a record of `size` bytes (header `kind`/`id` at fp-64, the rest as it
/// is on the stack) with `bpf_ringbuf_output`, counting a failure in the lost counter.
fn emit_record(kind: EventKind, id: u32, size: u32, label: &str) -> String {
    format!(
        "*(u32 *)(r10 - 64) = {k}
*(u32 *)(r10 - 60) = {id}
*(u64 *)(r10 - 56) = 0
r1 = map_fd({RINGBUF}) ll
r2 = r10
r2 += -64
r3 = {size}
r4 = 0
call bpf_ringbuf_output
if r0 == 0 goto {label}
*(u32 *)(r10 - 68) = 0
r1 = map_fd({LOST}) ll
r2 = r10
r2 += -68
call bpf_map_lookup_elem
if r0 == 0 goto {label}
r1 = 1
lock *(u64 *)(r0 + 0) += r1
{label}:
",
        k = kind as u32
    )
}

/// `exit()`: the exit record, then the arming flag cleared so no probe runs after it (the
/// convention for generated code: exit() stops every probe in the kernel at once, before the
/// runtime has even read the record).
fn emit_exit(label: &str) -> String {
    format!(
        "{}r1 = map_value({ARM}, 0) ll\n*(u32 *)(r1 + 0) = 0\n",
        emit_record(EventKind::Exit, 0, 8, label)
    )
}

/// `count()` into map `map` under the u64 key at fp-8.
fn count_at_fp8(map: usize, label: &str) -> String {
    format!(
        "r1 = map_fd({map}) ll
r2 = r10
r2 += -8
call bpf_map_lookup_elem
if r0 != 0 goto {label}_have
*(u64 *)(r10 - 16) = 1
r1 = map_fd({map}) ll
r2 = r10
r2 += -8
r3 = r10
r3 += -16
r4 = 0
call bpf_map_update_elem
r6 = 1
goto {label}_done
{label}_have:
r6 = *(u64 *)(r0 + 0)
r6 += 1
*(u64 *)(r0 + 0) = r6
{label}_done:
"
    )
}

fn probe(name: &str, kind: ProbeKind, template: Template) -> ProbeSpec {
    ProbeSpec {
        name: name.into(),
        id: kind_id(&kind),
        kind,
        template,
        multi_template: None,
    }
}

/// The probe kind of the attach plans these scripts use, by its name in the kind table.
fn kind_id(kind: &ProbeKind) -> strobe::kinds::ProbeKind {
    let name = match kind {
        ProbeKind::Begin => "begin",
        ProbeKind::Interval { .. } => "interval",
        ProbeKind::Tracepoint { .. } => "tracepoint",
        ProbeKind::RawTracepoint { .. } => "rawtracepoint",
        ProbeKind::Uprobe {
            retprobe: false, ..
        } => "uprobe",
        other => unimplemented!("no canned script attaches {other:?}"),
    };
    strobe::kinds::ProbeKind::from_name(name).expect("a kind in the table")
}

/// `BEGIN { printf("hello\n"); exit(); }`
pub fn hello(tag: &str, text: &str) -> CompiledScript {
    let maps = base_maps(64 << 10);
    let asm = format!(
        "{}{}r0 = 0\nexit\n",
        emit_record(EventKind::Printf, 0, 8, "p"),
        emit_exit("e")
    );
    let t = template(
        &format!("{tag}_b"),
        AttachKind::RawTracepoint,
        &asm,
        &map_names(&maps),
    );
    CompiledScript {
        probes: vec![probe("BEGIN", ProbeKind::Begin, t)],
        events: EventTable {
            printf: vec![PrintfCall::new(text, vec![]).expect("valid format")],
            ..Default::default()
        },
        maps,
    }
}

/// `interval:ms:PERIOD { @ = count(); if (@ == N) { exit(); } }` — with `n == 0`, never exits.
pub fn interval_count(tag: &str, period_ms: u64, n: u64) -> CompiledScript {
    let mut maps = base_maps(64 << 10);
    maps.push(count_map("@", vec![]));
    let check = if n == 0 {
        String::new()
    } else {
        format!("if r6 != {n} goto out\n{}", emit_exit("e"))
    };
    let asm = format!(
        "*(u64 *)(r10 - 8) = 0\n{}{check}out:\nr0 = 0\nexit\n",
        count_at_fp8(FIRST_SCRIPT_MAP, "c")
    );
    let t = template(
        &format!("{tag}_i"),
        AttachKind::RawTracepoint,
        &asm,
        &map_names(&maps),
    )
    .with_arming_guard();
    CompiledScript {
        probes: vec![probe(
            &format!("interval:ms:{period_ms}"),
            ProbeKind::Interval {
                period_ns: period_ms * 1_000_000,
            },
            t,
        )],
        maps,
        events: EventTable::default(),
    }
}

/// `@[pid] = count()` for a probe of `kind` (tracepoint, uprobe, …).
pub fn pid_count(tag: &str, name: &str, kind: ProbeKind, attach: AttachKind) -> CompiledScript {
    let mut maps = base_maps(64 << 10);
    maps.push(count_map(
        "@",
        vec![FieldType::Int {
            bytes: 8,
            signed: false,
        }],
    ));
    let asm = format!(
        "call bpf_get_current_pid_tgid\nr0 >>= 32\n*(u64 *)(r10 - 8) = r0\n{}r0 = 0\nexit\n",
        count_at_fp8(FIRST_SCRIPT_MAP, "c")
    );
    let t = template(&format!("{tag}_p"), attach, &asm, &map_names(&maps)).with_arming_guard();
    CompiledScript {
        probes: vec![probe(name, kind, t)],
        maps,
        events: EventTable::default(),
    }
}

/// `tracepoint:CAT:NAME { @[pid] = count(); }`
pub fn tracepoint_count(tag: &str, cat: &str, name: &str) -> CompiledScript {
    pid_count(
        tag,
        &format!("tracepoint:{cat}:{name}"),
        ProbeKind::Tracepoint {
            targets: vec![(cat.into(), name.into())],
        },
        AttachKind::RawTracepoint,
    )
}

/// `uprobe:BINARY:FUNC { @[pid] = count(); }`
pub fn uprobe_count(tag: &str, binary: PathBuf, func: &str) -> CompiledScript {
    let name = format!("uprobe:{}:{func}", binary.display());
    pid_count(
        tag,
        &name,
        ProbeKind::Uprobe {
            binary,
            func: func.into(),
            retprobe: false,
            offset: 0,
            address: None,
            cpp: false,
        },
        AttachKind::Uprobe { retprobe: false },
    )
}

/// `BEGIN { @c[1] = count(); @c[2] = count(); @c[2] = count(); @h = hist(1); @h = hist(5);
/// @h = hist(5); @h = hist(100); exit(); }` — map values written directly by the BEGIN
/// program (per-CPU slots of the CPU it runs on).
pub fn count_and_hist(tag: &str) -> CompiledScript {
    let mut maps = base_maps(64 << 10);
    maps.push(count_map(
        "@c",
        vec![FieldType::Int {
            bytes: 8,
            signed: true,
        }],
    ));
    let kind = HistKind::Log2 { k: 0 };
    let mut h = count_map("@h", vec![]);
    h.role = MapRole::Script {
        key: vec![],
        value: MapValueSpec::Agg(AggKind::Hist(kind)),
    };
    maps.push(h);
    let set = |map: usize, key: u64, value: u64| {
        format!(
            "*(u64 *)(r10 - 8) = {key}\n*(u64 *)(r10 - 16) = {value}\nr1 = map_fd({map}) ll\n\
             r2 = r10\nr2 += -8\nr3 = r10\nr3 += -16\nr4 = 0\ncall bpf_map_update_elem\n"
        )
    };
    let mut asm = set(FIRST_SCRIPT_MAP, 1, 1) + &set(FIRST_SCRIPT_MAP, 2, 2);
    let mut buckets: Vec<(u64, u64)> = Vec::new();
    for v in [1i64, 5, 5, 100] {
        let b = log2_bucket(v, 0) as u64;
        match buckets.iter_mut().find(|(k, _)| *k == b) {
            Some(e) => e.1 += 1,
            None => buckets.push((b, 1)),
        }
    }
    for (b, n) in buckets {
        asm += &set(FIRST_SCRIPT_MAP + 1, b, n);
    }
    asm += &emit_exit("e");
    asm += "r0 = 0\nexit\n";
    let t = template(
        &format!("{tag}_b"),
        AttachKind::RawTracepoint,
        &asm,
        &map_names(&maps),
    );
    CompiledScript {
        probes: vec![probe("BEGIN", ProbeKind::Begin, t)],
        maps,
        events: EventTable::default(),
    }
}

/// `BEGIN { unroll(N) { printf("x\n") } }` into a one-page ring (most are lost), then
/// `interval:ms:50 { exit(); }` once the ring has been drained.
pub fn flood(tag: &str, n: u32) -> CompiledScript {
    let maps = base_maps(4096);
    // Unrolled: a loop around a helper call whose result branches makes the verifier walk
    // every iteration separately.
    let mut asm: String = (0..n)
        .map(|i| emit_record(EventKind::Printf, 0, 16, &format!("p{i}")))
        .collect();
    asm += "r0 = 0\nexit\n";
    let begin = template(
        &format!("{tag}_b"),
        AttachKind::RawTracepoint,
        &asm,
        &map_names(&maps),
    );
    let asm = format!("{}r0 = 0\nexit\n", emit_exit("e"));
    let exit = template(
        &format!("{tag}_i"),
        AttachKind::RawTracepoint,
        &asm,
        &map_names(&maps),
    )
    .with_arming_guard();
    CompiledScript {
        probes: vec![
            probe("BEGIN", ProbeKind::Begin, begin),
            probe(
                "interval:ms:50",
                ProbeKind::Interval {
                    period_ns: 50_000_000,
                },
                exit,
            ),
        ],
        maps,
        events: EventTable {
            printf: vec![PrintfCall::new("x\n", vec![]).expect("valid format")],
            ..Default::default()
        },
    }
}

/// The canned script named on the hidden `--x-plan` flag: `hello`, `interval:N`,
/// `forever`, `tracepoint:CAT:NAME`, `uprobe:BINARY:FUNC`, `maps`, `flood:N`.
pub fn by_name(spec: &str) -> Option<CompiledScript> {
    let tag = fresh_tag();
    let (name, arg) = spec.split_once(':').unwrap_or((spec, ""));
    Some(match name {
        "hello" => hello(&tag, "hi\n"),
        "interval" => interval_count(&tag, 10, arg.parse().ok()?),
        "forever" => interval_count(&tag, 100, 0),
        "tracepoint" => {
            let (c, n) = arg.split_once(':')?;
            tracepoint_count(&tag, c, n)
        }
        "uprobe" => {
            let (b, f) = arg.rsplit_once(':')?;
            uprobe_count(&tag, b.into(), f)
        }
        "maps" => count_and_hist(&tag),
        "flood" => flood(&tag, arg.parse().ok()?),
        "full" => full_map(&tag),
        // An interval probe that attaches, then a tracepoint that does not exist: the run
        // fails half-way through attaching (leak tests).
        "halfway" => {
            let mut s = interval_count(&tag, 100, 0);
            let mut p =
                tracepoint_count(&tag, "strobe_no_such_category", "missing").probes[0].clone();
            p.name = "tracepoint:strobe_no_such_category:missing".into();
            s.probes.push(p);
            s
        }
        _ => return None,
    })
}

/// `BEGIN { @m[1] = 10; @m[2] = 20; @m[3] = 30; exit(); }` with `@m` limited to 2 entries:
/// the third update is refused (E2BIG) and counted in the drop counter.
pub fn full_map(tag: &str) -> CompiledScript {
    let mut maps = base_maps(64 << 10);
    maps.push(MapSpec {
        name: "drops".into(),
        map_type: MapType::PercpuArray,
        key_size: 4,
        value_size: 8,
        max_entries: 1,
        role: MapRole::DropCounter,
    });
    maps.push(MapSpec {
        name: "@m".into(),
        map_type: MapType::Hash,
        key_size: 8,
        value_size: 8,
        max_entries: 2,
        role: MapRole::Script {
            key: vec![FieldType::Int {
                bytes: 8,
                signed: true,
            }],
            value: MapValueSpec::Plain(FieldType::Int {
                bytes: 8,
                signed: true,
            }),
        },
    });
    let (drops, m) = (FIRST_SCRIPT_MAP, FIRST_SCRIPT_MAP + 1);
    let mut asm = String::new();
    for (k, v) in [(1, 10), (2, 20), (3, 30)] {
        asm += &format!(
            "*(u64 *)(r10 - 8) = {k}\n*(u64 *)(r10 - 16) = {v}\nr1 = map_fd({m}) ll\n\
             r2 = r10\nr2 += -8\nr3 = r10\nr3 += -16\nr4 = 0\ncall bpf_map_update_elem\n\
             if r0 == 0 goto ok{k}\n*(u32 *)(r10 - 20) = 0\nr1 = map_fd({drops}) ll\n\
             r2 = r10\nr2 += -20\ncall bpf_map_lookup_elem\nif r0 == 0 goto ok{k}\n\
             r1 = 1\nlock *(u64 *)(r0 + 0) += r1\nok{k}:\n"
        );
    }
    asm += &emit_exit("e");
    asm += "r0 = 0\nexit\n";
    let t = template(
        &format!("{tag}_b"),
        AttachKind::RawTracepoint,
        &asm,
        &map_names(&maps),
    );
    CompiledScript {
        probes: vec![probe("BEGIN", ProbeKind::Begin, t)],
        maps,
        events: EventTable::default(),
    }
}
