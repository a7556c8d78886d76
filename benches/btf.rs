//! Kernel-interface read-side benchmarks: vmlinux BTF parse + index, prototype resolution,
//! function globs (with aya-obj's parser on the same blob for comparison), /proc/kallsyms and
//! tracefs. One JSON object per line: name, value, unit, target (upper bound or null).
//! Run: `cargo bench --bench btf`. Needs /sys/kernel/btf/vmlinux (skips what is absent).

use std::hint::black_box;
use std::time::{Duration, Instant};

use strobe::btf::{Btf, Glob};

fn emit(name: &str, value: f64, unit: &str, target: Option<f64>) {
    let target = target.map_or("null".to_string(), |t| format!("{t}"));
    println!(
        "{{\"name\":\"{name}\",\"value\":{value:.3},\"unit\":\"{unit}\",\"target\":{target}}}"
    );
}

/// Median wall time of `runs` runs of `f`.
fn median<T>(runs: usize, mut f: impl FnMut() -> T) -> Duration {
    let mut v: Vec<Duration> = (0..runs)
        .map(|_| {
            let t = Instant::now();
            black_box(f());
            t.elapsed()
        })
        .collect();
    v.sort();
    v[runs / 2]
}

fn ms(d: Duration) -> f64 {
    d.as_secs_f64() * 1e3
}

fn main() {
    if std::env::args().any(|a| a == "--list") {
        return;
    }
    if std::path::Path::new(strobe::btf::VMLINUX_PATH).exists() {
        bench_btf();
    } else {
        eprintln!("SKIPPED btf benchmarks: no {}", strobe::btf::VMLINUX_PATH);
    }
    bench_kallsyms();
    bench_tracefs();
}

fn bench_btf() {
    let bytes = std::fs::read(strobe::btf::VMLINUX_PATH).unwrap();
    emit("btf_vmlinux_bytes", bytes.len() as f64, "bytes", None);
    emit(
        "btf_read_vmlinux_ms",
        ms(median(5, || {
            std::fs::read(strobe::btf::VMLINUX_PATH).unwrap()
        })),
        "ms",
        None,
    );
    emit(
        "btf_parse_index_in_memory_ms",
        ms(median(5, || Btf::parse(bytes.clone()).unwrap())),
        "ms",
        None,
    );
    // The figure the target is about: from the sysfs file to a usable index.
    emit(
        "btf_from_vmlinux_parse_index_ms",
        ms(median(5, || Btf::from_vmlinux().unwrap())),
        "ms",
        Some(150.0),
    );
    emit(
        "btf_aya_obj_parse_ms",
        ms(median(3, || {
            aya_obj::btf::Btf::parse(&bytes, object::Endianness::Little).unwrap()
        })),
        "ms",
        None,
    );

    let btf = Btf::from_vmlinux().unwrap();
    emit("btf_func_count", btf.func_count() as f64, "funcs", None);
    emit(
        "btf_type_names_index_first_use_ms",
        ms(median(1, || btf.find_struct("task_struct"))),
        "ms",
        None,
    );

    // 10,000 prototype resolutions: find by name, decode the prototype, and resolve every
    // parameter's and the return type's size (what the checker does for `args`).
    let names: Vec<String> = btf
        .funcs()
        .step_by((btf.func_count() / 10_000).max(1))
        .take(10_000)
        .map(|(n, _)| n.to_string())
        .collect();
    let d = median(5, || {
        let mut total = 0u64;
        for n in &names {
            let id = btf.find_func(n).unwrap();
            let p = btf.func_proto(id).unwrap();
            for q in p.params() {
                total += u64::from(btf.size_of(q.type_id).unwrap_or(0));
                total += q.name.len() as u64;
            }
            total += u64::from(btf.size_of(p.ret).unwrap_or(0));
        }
        total
    });
    emit("btf_10k_prototype_resolutions_ms", ms(d), "ms", Some(50.0));

    for pat in ["*_read", "vfs_*", "tcp_{v4,v6}_connect", "*sock*"] {
        let g = Glob::new(pat).unwrap();
        let d = median(11, || btf.funcs_matching(&g).count());
        emit(
            &format!("btf_glob_all_funcs_ms[{pat}]"),
            ms(d),
            "ms",
            Some(5.0),
        );
    }
    emit(
        "btf_find_func_us",
        median(101, || btf.find_func("vfs_read")).as_secs_f64() * 1e6,
        "us",
        None,
    );
    let aya = aya_obj::btf::Btf::parse(&bytes, object::Endianness::Little).unwrap();
    emit(
        "btf_aya_obj_find_func_us",
        median(11, || {
            aya.id_by_type_name_kind("vfs_read", aya_obj::btf::BtfKind::Func)
        })
        .as_secs_f64()
            * 1e6,
        "us",
        None,
    );
}

fn bench_kallsyms() {
    use strobe::kernel::kallsyms::Kallsyms;
    let Ok(bytes) = std::fs::read(strobe::kernel::kallsyms::KALLSYMS_PATH) else {
        eprintln!("SKIPPED kallsyms benchmarks: cannot read /proc/kallsyms");
        return;
    };
    emit("kallsyms_bytes", bytes.len() as f64, "bytes", None);
    emit(
        "kallsyms_read_ms",
        ms(median(3, || {
            std::fs::read(strobe::kernel::kallsyms::KALLSYMS_PATH).unwrap()
        })),
        "ms",
        None,
    );
    emit(
        "kallsyms_parse_ms",
        ms(median(5, || Kallsyms::parse(&bytes).unwrap())),
        "ms",
        None,
    );
    let k = Kallsyms::parse(&bytes).unwrap();
    emit("kallsyms_symbols", k.len() as f64, "symbols", None);
    let addrs: Vec<u64> = k.iter().step_by(7).map(|s| s.addr + 1).collect();
    let d = median(5, || {
        addrs.iter().filter(|&&a| k.lookup(a).is_some()).count()
    });
    emit(
        "kallsyms_lookup_ns",
        d.as_secs_f64() * 1e9 / addrs.len() as f64,
        "ns",
        None,
    );
    emit(
        "kallsyms_name_index_first_use_ms",
        ms(median(1, || k.address_of("vfs_read"))),
        "ms",
        None,
    );
}

fn bench_tracefs() {
    use strobe::kernel::tracefs::Tracefs;
    let Some(t) = Tracefs::find() else {
        eprintln!("SKIPPED tracefs benchmarks: tracefs not mounted");
        return;
    };
    let d = median(3, || t.tracepoints().unwrap().len());
    emit("tracefs_list_all_tracepoints_ms", ms(d), "ms", None);
    let d = median(11, || t.format("sched", "sched_switch").unwrap());
    emit(
        "tracefs_read_parse_format_us",
        d.as_secs_f64() * 1e6,
        "us",
        None,
    );
}
