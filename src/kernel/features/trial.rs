//! Trial operations behind the feature probes: tiny programs loaded (and, where it matters,
//! attached) for real, each turned into a [`Support`] whose "no" says why. Programs are built
//! with the typed `Insn` builders; they are the smallest programs that exercise one feature.

use std::os::fd::AsFd;
use std::path::Path;

use super::Support;
use crate::asm::{Insn, Reg};
use crate::sys::{
    AttachType, Errno, Link, LinkTarget, LoadError, Map, MapCreateOptions, MapType, PerfEvent,
    Prog, ProgLoadOptions, ProgType, Sampling, SoftwareEvent, SysError, TestRunOptions,
};

/// `r0 = 0; exit`.
pub fn ret0() -> Vec<Insn> {
    vec![Insn::mov64_imm(Reg::R0, 0), Insn::exit()]
}

/// A "no" from a syscall error: errno, its meaning and the cause when known.
pub fn no_sys(e: &SysError) -> Support {
    Support::No(match &e.cause {
        Some(c) => format!("{}: {c}", e.errno.name()),
        None => format!("{}: {}", e.errno.name(), e.errno.meaning()),
    })
}

/// A "no" from a refused load: the cause, else the verifier's reason, else the errno meaning.
pub fn no_load(e: &LoadError) -> Support {
    if e.sys.cause.is_some() {
        return no_sys(&e.sys);
    }
    match e.reason() {
        Some(r) => Support::No(format!("{}: verifier: {r}", e.errno().name())),
        None if e.errno() == Errno::EINVAL => Support::No(format!(
            "EINVAL: {} (unknown program type, attach type or instruction)",
            e.errno().meaning()
        )),
        None => no_sys(&e.sys),
    }
}

pub fn load(prog_type: ProgType, insns: &[Insn]) -> Result<Prog, LoadError> {
    Prog::load(&ProgLoadOptions::new(prog_type, insns))
}

/// Loads `insns` as a raw_tp program: yes when the verifier accepts it.
pub fn accepts(insns: &[Insn]) -> Support {
    match load(ProgType::RawTracepoint, insns) {
        Ok(_) => Support::Yes,
        Err(e) => no_load(&e),
    }
}

pub fn map(map_type: MapType, key: u32, value: u32, max: u32) -> Result<Map, SysError> {
    Map::create(
        map_type,
        &MapCreateOptions {
            name: "strobe_probe",
            key_size: key,
            value_size: value,
            max_entries: max,
            ..Default::default()
        },
    )
}

pub fn map_support(map_type: MapType, key: u32, value: u32, max: u32) -> Support {
    match map(map_type, key, value, max) {
        Ok(_) => Support::Yes,
        Err(e) => no_sys(&e),
    }
}

/// BPF_MAP_LOOKUP_BATCH on a small hash map (5.6+).
pub fn map_batch() -> Support {
    let m = match map(MapType::Hash, 4, 4, 4) {
        Ok(m) => m,
        Err(e) => return no_sys(&e),
    };
    let (mut out, mut k, mut v) = ([0u8; 4], [0u8; 16], [0u8; 16]);
    match m.lookup_batch(None, &mut out, &mut k, &mut v) {
        Ok(_) => Support::Yes,
        Err(e) => no_sys(&e),
    }
}

/// fentry/fexit: a real trial load of `r0 = 0; exit` as a tracing program for `btf_id`.
pub fn tracing(attach: AttachType, btf_id: Option<u32>) -> Support {
    let Some(id) = btf_id else {
        return Support::No(
            "no BTF id for a probe target (vmlinux BTF missing or unreadable)".into(),
        );
    };
    let insns = ret0();
    let mut o = ProgLoadOptions::new(ProgType::Tracing, &insns);
    o.expected_attach_type = Some(attach);
    o.attach_btf_id = id;
    match Prog::load(&o) {
        Ok(_) => Support::Yes,
        Err(e) => no_load(&e),
    }
}

/// A raw_tp program run through BPF_PROG_TEST_RUN (5.10+).
pub fn raw_tp_test_run() -> Support {
    let p = match load(
        ProgType::RawTracepoint,
        &[Insn::mov64_imm(Reg::R0, 7), Insn::exit()],
    ) {
        Ok(p) => p,
        Err(e) => return no_load(&e),
    };
    match p.test_run(&mut TestRunOptions::raw_tp(&[0])) {
        Ok(r) if r.retval == 7 => Support::Yes,
        Ok(r) => Support::No(format!("test run returned {} instead of 7", r.retval)),
        Err(e) => no_sys(&e),
    }
}

/// A raw_tp program attached to `sys_enter` and detached at once.
pub fn raw_tracepoint_attach() -> Support {
    let p = match load(ProgType::RawTracepoint, &ret0()) {
        Ok(p) => p,
        Err(e) => return no_load(&e),
    };
    match Link::raw_tracepoint_open(&p, Some("sys_enter")) {
        Ok(_) => Support::Yes,
        Err(e) => no_sys(&e),
    }
}

/// A tracepoint program load (the perf event side needs tracefs ids; see `kernel::tracefs`).
pub fn tracepoint_prog() -> Support {
    match load(ProgType::Tracepoint, &ret0()) {
        Ok(_) => Support::Yes,
        Err(e) => no_load(&e),
    }
}

/// A perf_event program and a cpu-clock software event on CPU 0 to attach it to; `Err` is
/// the "no" when either is refused.
fn perf_event_prog_and_event() -> Result<(Prog, PerfEvent), Support> {
    let p = load(ProgType::PerfEvent, &ret0()).map_err(|e| no_load(&e))?;
    let ev = PerfEvent::software(SoftwareEvent::CpuClock, Sampling::Frequency(1), 0, -1)
        .map_err(|e| no_sys(&e))?;
    Ok((p, ev))
}

/// A cpu-clock software event with a perf_event program (profile/interval probes).
pub fn perf_event() -> Support {
    let (p, ev) = match perf_event_prog_and_event() {
        Ok(pe) => pe,
        Err(no) => return no,
    };
    match ev.set_bpf(&p) {
        Ok(()) => Support::Yes,
        Err(e) => no_sys(&e),
    }
}

/// A BPF perf_event link on a cpu-clock event (5.15+).
pub fn perf_event_link() -> Support {
    let (p, ev) = match perf_event_prog_and_event() {
        Ok(pe) => pe,
        Err(no) => return no,
    };
    let target = LinkTarget::PerfEvent {
        event: ev.as_fd(),
        cookie: 0,
    };
    match Link::create(&p, &target) {
        Ok(_) => Support::Yes,
        Err(e) => no_sys(&e),
    }
}

/// The kprobe PMU and a trial kprobe perf event on `func`.
pub fn kprobes(func: &str) -> Support {
    match PerfEvent::kprobe(func, 0, false, -1, 0) {
        Ok(_) => Support::Yes,
        Err(e) => no_sys(&e),
    }
}

/// A kprobe_multi link on `func` (5.18+, CONFIG_FPROBE).
pub fn kprobe_multi(func: &str) -> Support {
    multi_link(&ret0(), func, false)
}

/// A kprobe.session program (BPF_TRACE_KPROBE_SESSION, 6.10+) calling the
/// `bpf_session_is_return` kfunc (BTF id `is_return`, `None`: vmlinux BTF has no such kfunc),
/// linked to `func`.
pub fn kprobe_session(func: &str, is_return: Option<u32>) -> Support {
    let Some(id) = is_return else {
        return Support::No("no bpf_session_is_return kfunc in vmlinux BTF (kernel 6.10+)".into());
    };
    let insns = [
        Insn::call_kfunc(id as i32, 0),
        Insn::mov64_imm(Reg::R0, 0),
        Insn::exit(),
    ];
    multi_link(&insns, func, true)
}

/// `insns` loaded as a kprobe_multi (or, with `session`, kprobe.session) program and linked
/// to `func` through one multi link.
fn multi_link(insns: &[Insn], func: &str, session: bool) -> Support {
    let mut o = ProgLoadOptions::new(ProgType::Kprobe, insns);
    o.expected_attach_type = Some(match session {
        true => AttachType::TraceKprobeSession,
        false => AttachType::TraceKprobeMulti,
    });
    let p = match Prog::load(&o) {
        Ok(p) => p,
        Err(e) => return no_load(&e),
    };
    let syms = [func];
    let target = LinkTarget::KprobeMulti {
        retprobe: false,
        session,
        syms: &syms,
        addrs: &[],
        cookies: &[],
    };
    match Link::create(&p, &target) {
        Ok(_) => Support::Yes,
        Err(e) => no_sys(&e),
    }
}

/// File offset of the entry point of the ELF at `path`: a harmless uprobe site (it runs once,
/// at process start) for trial attaches.
pub fn entry_file_offset(path: &Path) -> Option<u64> {
    let data = std::fs::read(path).ok()?;
    let elf = goblin::elf::Elf::parse(&data).ok()?;
    let e = elf.entry;
    elf.program_headers
        .iter()
        .find(|ph| {
            ph.p_type == goblin::elf::program_header::PT_LOAD
                && e >= ph.p_vaddr
                && e < ph.p_vaddr + ph.p_filesz
        })
        .map(|ph| e - ph.p_vaddr + ph.p_offset)
}

/// A uprobe perf event on this executable's entry point, for this process only.
pub fn uprobes(exe: &Path, off: Option<u64>) -> Support {
    let Some(off) = off else {
        return Support::No(format!("cannot find an entry point in {}", exe.display()));
    };
    match PerfEvent::uprobe(exe, off, false, std::process::id() as i32, -1) {
        Ok(_) => Support::Yes,
        Err(e) => no_sys(&e),
    }
}

/// A uprobe_multi link on this executable's entry point, for this process only (6.6+).
pub fn uprobe_multi(exe: &Path, off: Option<u64>) -> Support {
    let Some(off) = off else {
        return Support::No(format!("cannot find an entry point in {}", exe.display()));
    };
    let insns = ret0();
    let mut o = ProgLoadOptions::new(ProgType::Kprobe, &insns);
    o.expected_attach_type = Some(AttachType::TraceUprobeMulti);
    let p = match Prog::load(&o) {
        Ok(p) => p,
        Err(e) => return no_load(&e),
    };
    let offsets = [off];
    let target = LinkTarget::UprobeMulti {
        retprobe: false,
        path: exe,
        offsets: &offsets,
        ref_ctr_offsets: &[],
        cookies: &[],
        pid: Some(std::process::id()),
    };
    match Link::create(&p, &target) {
        Ok(_) => Support::Yes,
        Err(e) => no_sys(&e),
    }
}

/// Whether helper `id` is known to the kernel for `prog_type`: a program calling it with
/// zeroed arguments is loaded. Acceptance, or a rejection about the arguments, means the
/// helper exists; "invalid func"/"unknown func" means it does not; "program of this type
/// cannot use helper" means it exists but not for this program type (kernel/bpf/verifier.c
/// `check_helper_call`).
pub fn helper(id: i32, prog_type: ProgType, attach: Option<(AttachType, Option<u32>)>) -> Support {
    let mut insns: Vec<Insn> = [Reg::R1, Reg::R2, Reg::R3, Reg::R4, Reg::R5]
        .map(|r| Insn::mov64_imm(r, 0))
        .to_vec();
    insns.extend([
        Insn::call_helper_id(id),
        Insn::mov64_imm(Reg::R0, 0),
        Insn::exit(),
    ]);
    let mut o = ProgLoadOptions::new(prog_type, &insns);
    if let Some((at, btf_id)) = attach {
        let Some(btf_id) = btf_id else {
            return Support::No("needs a BTF attach target, none found".into());
        };
        o.expected_attach_type = Some(at);
        o.attach_btf_id = btf_id;
    }
    let e = match Prog::load(&o) {
        Ok(_) => return Support::Yes,
        Err(e) => e,
    };
    let log = e.log.as_str();
    if log.contains("invalid func") || log.contains("unknown func") {
        return Support::No(format!(
            "{}: unknown to this kernel (verifier: {})",
            e.errno().name(),
            e.reason().unwrap_or("invalid func")
        ));
    }
    if log.contains("cannot use helper") {
        // bpf_override_return only exists with CONFIG_BPF_KPROBE_OVERRIDE
        // (kernel/trace/bpf_trace.c), which is why kprobe programs may not have it.
        let hint = if id == 58 {
            "; kernel built without CONFIG_BPF_KPROBE_OVERRIDE"
        } else {
            ""
        };
        return Support::No(format!(
            "{}: not available to {prog_type:?} programs{hint} (verifier: {})",
            e.errno().name(),
            e.reason().unwrap_or("")
        ));
    }
    if log.trim().is_empty() {
        return no_load(&e);
    }
    // The verifier reached the call and complained about our zero arguments: it knows it.
    Support::Yes
}

/// Whether a `prog_type` program may call kfunc `name` (BTF id `btf_id` in vmlinux): a trial
/// load of `call name; r0 = 0; exit`. The verifier checks the kfunc's registration for the
/// program type before its arguments, so a refusal that does not name it as not allowed (our
/// zero arguments) still means allowed, as bpftrace reads it. A program type the kernel
/// refuses to load at all (tracing programs under lockdown) cannot call it.
pub fn kfunc_allowed(name: &str, btf_id: u32, prog_type: ProgType) -> bool {
    let insns = [
        Insn::call_kfunc(btf_id as i32, 0),
        Insn::mov64_imm(Reg::R0, 0),
        Insn::exit(),
    ];
    match load(prog_type, &insns) {
        Ok(_) => true,
        Err(e) => {
            let log = e.log.as_str();
            !log.trim().is_empty()
                && !log.contains(&format!("calling kernel function {name} is not allowed"))
                && !log.contains("cannot call kernel function")
        }
    }
}
