//! fentry/fexit wildcards through kprobe_multi links: one program and one link per group of
//! targets instead of one trampoline per target.
//!
//! The fentry template reads `args.NAME` with one context load at a per-target offset (the
//! `ArgSlot` relocation: 8 × the parameter's position in the trampoline's context) and fexit's
//! `retval` at the `RetSlot` offset. A kprobe program's context is the function's `pt_regs` at
//! entry, where the first arguments of the calling convention are registers
//! (isa/kprobe_regs.txt): patching those relocations with register offsets instead turns the
//! same template into a kprobe program that reads the same values. Struct members are read with
//! `bpf_probe_read_kernel` in both (codegen never dereferences a BTF pointer directly), `func`
//! is `bpf_get_func_ip` in both (kprobe_multi 5.18+: the function's entry address).
//!
//! Targets whose used arguments sit in the same registers share one instantiation: they form a
//! group, loaded once (BPF_PROG_TYPE_KPROBE, expected attach type kprobe_multi) and attached by
//! one BPF_LINK_CREATE. Module functions form groups of their own per module: the kernel finds
//! module symbols for kprobe_multi only since 6.5 (`ftrace_lookup_symbols` falls back to
//! `module_kallsyms_on_each_symbol`, kernel/trace/ftrace.c), so on older kernels their link is
//! refused and they go through trampolines without taking vmlinux functions with them.
//! A target cannot go this way when
//! - it takes a struct or union by value (its registers no longer follow the parameter
//!   positions), or a used argument is past the registers of the convention;
//! - the template needs something per target that a shared program cannot have: `probe`
//!   (the `TargetIndex` relocation), per-target constants or kfunc ids; or fexit reads
//!   arguments on a kernel without kprobe.session (6.10+) or with `--no-feature
//!   kprobe_session`: registers are clobbered by the time a kretprobe runs. With it, such a
//!   group's program is a kprobe.session program that saves the arguments at entry
//!   ([`super::session`]).
//!
//! Order: each group's program is loaded (refused before 5.18), one trial link tells whether
//! the kernel has kprobe_multi links at all (EOPNOTSUPP without CONFIG_FPROBE), and only then are
//! the lines of `available_filter_functions` matching the targets' common prefix read (through a
//! private tracefs instance's filter, [`crate::kernel::ftrace_filter`]: reading the whole file
//! is slow in a TCG guest) and the targets they do not list left out (BTF also lists `__init`, `inline`/notrace and compiler-renamed
//! functions; one of them would make the kernel refuse the whole link, after walking every
//! symbol); then each group is linked.
//!
//! The other targets that cannot go through kprobe_multi, and every target of a group whose
//! load or link the kernel refuses, go through trampoline clones
//! ([`super::load_clones`]), so the events are the same whichever path attaches them. Each
//! group's path and the reason for every fallback are in [`FentryAttached::groups`] (`-v`).

use std::collections::{BTreeMap, HashMap, HashSet};
use std::os::fd::{AsRawFd, RawFd};
use std::time::Instant;

use super::clones::{load_clones, CloneTarget, LoadOptions};
use super::report::{Attached, LoaderError};
use super::session::{create_saved_map, session_template, SessionSupport};
use crate::sys::{Errno, Link, LinkTarget, Prog, ProgLoadOptions, SysError};
use crate::template::{instantiate, AttachKind, RelocKind, TargetValues, Template};

/// Which mechanism attaches fentry/fexit targets (`--fentry-via`).
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub enum FentryVia {
    /// kprobe_multi when at least [`MULTI_ABOVE`] targets can go that way, trampolines
    /// otherwise.
    #[default]
    Auto,
    /// kprobe_multi for every target that can go that way, whatever the count.
    KprobeMulti,
    /// One trampoline clone per target.
    Trampoline,
}

impl std::str::FromStr for FentryVia {
    type Err = String;
    fn from_str(s: &str) -> Result<FentryVia, String> {
        match s {
            "auto" => Ok(FentryVia::Auto),
            "kprobe_multi" | "multi" => Ok(FentryVia::KprobeMulti),
            "trampoline" => Ok(FentryVia::Trampoline),
            _ => Err(format!(
                "--fentry-via must be auto, kprobe_multi or trampoline (found '{s}')"
            )),
        }
    }
}

/// In `auto` mode, targets go through kprobe_multi from this many targets on:
/// below it the trampolines' lower per-event cost wins over their attach time (each
/// trampoline costs the kernel milliseconds to attach and to detach, serialised; a
/// kprobe_multi link costs about one for all).
pub const MULTI_ABOVE: usize = 32;

#[derive(Clone, Debug, Default)]
pub struct FentryOptions {
    pub via: FentryVia,
    /// For the trampoline clones.
    pub load: LoadOptions,
    /// Whether fexit groups reading arguments can load as kprobe.session programs.
    pub session: SessionSupport,
    /// Calls in flight at once the kprobe.session argument map holds (0:
    /// [`super::session::SESSION_ENTRIES`]).
    pub session_entries: u32,
}

/// One group of targets and how it was attached, for `-v`.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct GroupReport {
    /// Number of targets in the group.
    pub targets: usize,
    /// `through kprobe_multi`, `through trampolines (why)` or `left out: why`.
    pub path: String,
}

impl std::fmt::Display for GroupReport {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{} targets {}", self.targets, self.path)
    }
}

/// Everything an fentry/fexit attach produced.
#[derive(Debug, Default)]
pub struct FentryAttached {
    /// The trampoline clones (refusals included), if any target went that way.
    pub clones: Option<Attached>,
    /// One shared program and its kprobe_multi link per group, with the group's size.
    pub multi: Vec<(Prog, Link, usize)>,
    /// Every group's path, in the order decided.
    pub groups: Vec<GroupReport>,
    /// Targets left out because ftrace cannot reach them (not in `available_filter_functions`).
    pub skipped: Vec<String>,
}

impl FentryAttached {
    pub fn attached(&self) -> usize {
        self.clones.as_ref().map_or(0, Attached::attached)
            + self.multi.iter().map(|m| m.2).sum::<usize>()
    }
}

/// Why no target of `template` can be reached through a shared kprobe program, if so.
/// `session`: whether an fexit that reads arguments can go through kprobe.session.
pub fn template_refusal(template: &Template, session: &SessionSupport) -> Option<String> {
    let fexit = matches!(
        template.attach,
        AttachKind::Fexit | AttachKind::Kprobe { retprobe: true }
    );
    template.relocs.iter().find_map(|r| match r.kind {
        RelocKind::TargetIndex => Some(
            "the program uses `probe`, which a shared program cannot tell apart per target"
                .to_string(),
        ),
        RelocKind::BtfId { .. } | RelocKind::Const { .. } => {
            Some("the program has per-target constants".to_string())
        }
        RelocKind::ArgSlot { .. } if fexit => match session {
            SessionSupport::Yes(_) => None,
            SessionSupport::No(why) => Some(format!(
                "fexit reads arguments, which a kretprobe cannot and kprobe.session is not \
                 available: {why}"
            )),
        },
        _ => None,
    })
}

/// The `pt_regs` offsets of `t`'s argument slots on `arch`, or why it cannot go through
/// kprobe_multi.
pub fn register_slots(arch: &str, t: &CloneTarget) -> Result<Vec<i64>, String> {
    // A struct passed by value shifts the registers of the parameters after it: it matters only
    // when the program reads arguments.
    if let Some(why) = t.multi_refusal.as_ref().filter(|_| !t.arg_slots.is_empty()) {
        return Err(why.clone());
    }
    t.arg_slots
        .iter()
        .map(|&slot| {
            let pos = slot / 8;
            crate::asm::isa::kprobe_reg(arch, &format!("arg{pos}"))
                .map(|r| i64::from(r.offset))
                .ok_or_else(|| format!("argument {pos} is not passed in a register"))
        })
        .collect()
}

/// Attaches `template` (fentry or fexit) to `targets`: kprobe_multi groups where possible and
/// wanted, trampoline clones for the rest. Target `i` of `targets` is target `i` of the probe's
/// target table, and the BPF cookie of its kprobe_multi attachment. `shared`: the program (and
/// its map fds) for kprobe_multi groups when it differs from `template` (it reads `probe` from
/// the cookie). `filter_functions`: the lines of `available_filter_functions` whose names match
/// the glob it is given (all of them, the whole file, when it is given `None`), or `None` when
/// unreadable (then a refused link sends its whole group to trampolines); called once, before
/// the first kprobe_multi link, and only when there is one to make, with the `PREFIX*` glob of
/// the targets' common prefix ([`crate::kernel::ftrace_filter::prefix_glob`]).
pub fn attach_fentry(
    template: &Template,
    map_fds: &[RawFd],
    shared: Option<(&Template, &[RawFd])>,
    targets: &[CloneTarget],
    opts: &FentryOptions,
    filter_functions: &dyn Fn(Option<&str>) -> Option<&'static str>,
) -> Result<FentryAttached, LoaderError> {
    let fexit = match template.attach {
        AttachKind::Fentry => false,
        AttachKind::Fexit => true,
        other => panic!("internal error: attach_fentry called for {}", other.name()),
    };
    let mut how = GroupHow {
        fexit,
        session: false,
        log_size: opts.load.log_size,
    };
    let arch = std::env::consts::ARCH;
    let mut out = FentryAttached::default();
    // Target indices by the reason they go through trampolines.
    let mut by_reason: BTreeMap<String, Vec<usize>> = BTreeMap::new();
    // (Module, register offsets) → target indices.
    let mut groups: BTreeMap<(Option<&str>, Vec<i64>), Vec<usize>> = BTreeMap::new();
    let mut unreachable: Vec<usize> = Vec::new();
    // The program for kprobe_multi groups: the clone template itself unless the compiler made
    // one that reads per-target values from the BPF cookie.
    let (multi_t, multi_fds) = shared.unwrap_or((template, map_fds));
    let mut whole = match opts.via {
        FentryVia::Trampoline => Some("--fentry-via=trampoline".to_string()),
        _ => template_refusal(multi_t, &opts.session),
    };
    // fexit reading arguments: one kprobe.session program per group, which saves them at
    // entry in a map all groups share (the same template: the same arguments).
    let session_t;
    let session_fds: Vec<RawFd>;
    let _saved_map;
    let wants_session = whole.is_none() && fexit && has_arg_slots(multi_t);
    let (multi_t, multi_fds) = match &opts.session {
        SessionSupport::Yes(kf) if wants_session => {
            match session_template(multi_t, *kf).and_then(|t| {
                let n = super::session::saved_params(multi_t).len();
                let m = create_saved_map(n, opts.session_entries)
                    .map_err(|e| format!("the kprobe.session argument map was refused: {e}"))?;
                Ok((t, m))
            }) {
                Ok((t, m)) => {
                    session_t = t;
                    session_fds = multi_fds.iter().copied().chain([m.as_raw_fd()]).collect();
                    _saved_map = m;
                    how.session = true;
                    (&session_t, &session_fds[..])
                }
                Err(why) => {
                    whole = Some(format!(
                        "fexit reads arguments and kprobe.session cannot: {why}"
                    ));
                    (multi_t, multi_fds)
                }
            }
        }
        _ => (multi_t, multi_fds),
    };
    for (i, t) in targets.iter().enumerate() {
        let slots = match &whole {
            Some(why) => Err(why.clone()),
            None => register_slots(arch, t),
        };
        match slots {
            Ok(s) => groups.entry((t.module.as_deref(), s)).or_default().push(i),
            Err(why) => by_reason.entry(why).or_default().push(i),
        }
    }
    let ret = crate::asm::isa::kprobe_reg(arch, "ret").map(|r| i64::from(r.offset));
    let reachable: usize = groups.values().map(Vec::len).sum();
    if opts.via == FentryVia::Auto && reachable < MULTI_ABOVE && reachable > 0 {
        let why = format!("fewer than {MULTI_ABOVE} targets; --fentry-via=kprobe_multi forces it");
        by_reason
            .entry(why)
            .or_default()
            .extend(groups.into_values().flatten());
        groups = BTreeMap::new();
    }
    // Each group's program first: a kernel without kprobe_multi programs refuses it.
    let mut loaded: Vec<(Option<&str>, Vec<usize>, Prog)> = Vec::new();
    for ((module, slots), members) in groups {
        match load_group(multi_t, multi_fds, &slots, ret, how) {
            Ok(prog) => loaded.push((module, members, prog)),
            Err(why) => by_reason
                .entry(why.to_string())
                .or_default()
                .extend(members),
        }
    }
    // A kernel without CONFIG_FPROBE loads them but refuses every link (EOPNOTSUPP): find that
    // out with a link the kernel refuses early either way, before reading
    // available_filter_functions for nothing.
    if let Some(why) = loaded
        .first()
        .and_then(|(_, _, prog)| links_unsupported(prog, how))
    {
        let why = GroupError::Link(why).to_string();
        by_reason
            .entry(why)
            .or_default()
            .extend(loaded.drain(..).flat_map(|(_, members, _)| members));
    }
    // BTF lists functions ftrace cannot reach (`__init` functions, freed after boot; `inline`
    // ones, which the kernel builds `notrace`; names the compiler changed, `.isra.0` and the
    // like), and the kernel refuses a whole kprobe_multi link for one of them, after walking
    // every kernel and module symbol (`ftrace_lookup_symbols`, kernel/trace/ftrace.c). So when
    // `available_filter_functions` is readable, those are left out before the first link.
    if !loaded.is_empty() {
        let glob = crate::kernel::ftrace_filter::prefix_glob(
            loaded
                .iter()
                .flat_map(|(_, m, _)| m.iter().map(|&i| targets[i].func.as_str())),
        );
        if let Some(text) =
            crate::timings::time("filter_functions", || filter_functions(glob.as_deref()))
        {
            let found = crate::timings::time("filter_match", || {
                listed_targets(
                    text,
                    targets,
                    loaded.iter().flat_map(|(_, m, _)| m.iter().copied()),
                )
            });
            for (_, members, _) in &mut loaded {
                members.retain(|i| {
                    let listed = found.contains(i);
                    if !listed {
                        unreachable.push(*i);
                    }
                    listed
                });
            }
            loaded.retain(|(_, members, _)| !members.is_empty());
        }
    }
    let via = if how.session {
        "kprobe.session"
    } else {
        "kprobe_multi"
    };
    for (module, members, prog) in loaded {
        match link_group(&prog, targets, &members, how) {
            Ok(link) => {
                out.groups.push(GroupReport {
                    targets: members.len(),
                    path: match module {
                        Some(m) => format!("through {via} (module {m})"),
                        None => format!("through {via}"),
                    },
                });
                out.multi.push((prog, link, members.len()));
            }
            Err(why) => by_reason
                .entry(why.to_string())
                .or_default()
                .extend(members),
        }
    }
    if !unreachable.is_empty() {
        unreachable.sort_unstable();
        out.groups.push(GroupReport {
            targets: unreachable.len(),
            path: "left out: not in available_filter_functions (ftrace cannot reach them)".into(),
        });
        out.skipped = unreachable
            .iter()
            .map(|&i| targets[i].name.clone())
            .collect();
    }
    let mut rest: Vec<usize> = Vec::new();
    for (why, members) in by_reason {
        out.groups.push(GroupReport {
            targets: members.len(),
            path: format!("through trampolines ({why})"),
        });
        rest.extend(members);
    }
    if rest.is_empty() {
        return Ok(out);
    }
    rest.sort_unstable();
    // `probe` (TargetIndex) of a clone is its index in the whole table.
    let subset: Vec<CloneTarget> = rest
        .iter()
        .map(|&i| CloneTarget {
            index: Some(i as u32),
            ..targets[i].clone()
        })
        .collect();
    let mut a = match load_clones(template, map_fds, &subset, &opts.load) {
        Ok(a) => a,
        // Nothing attached by trampolines, but the multi groups run: their refusals stay.
        Err(LoaderError::NothingAttached { refused }) if !out.multi.is_empty() => Attached {
            kind: Some(template.attach),
            total: subset.len(),
            refused,
            ..Default::default()
        },
        Err(e) => return Err(e),
    };
    for c in &mut a.clones {
        c.index = rest[c.index];
    }
    for r in &mut a.refused {
        r.index = rest[r.index];
    }
    out.clones = Some(a);
    Ok(out)
}

/// The indices among `members` of the targets `text` lists: `available_filter_functions`,
/// `name` or `name [module]` per line. One pass over the text with a cheap hash and nothing
/// allocated per line: the file has ~40k lines, and in a TCG guest a SipHash per line costs
/// tens of milliseconds.
fn listed_targets(
    text: &str,
    targets: &[CloneTarget],
    members: impl Iterator<Item = usize>,
) -> HashSet<usize> {
    // (Module, function) → the first member with that name; a name BTF lists twice (rare)
    // keeps its other members in `twice`. No allocation per member: `*` has ~50k.
    type Key<'a> = (Option<&'a str>, &'a str);
    let mut wanted: HashMap<Key<'_>, usize, crate::fnv::BuildFnv> = HashMap::default();
    let mut twice: Vec<(Key<'_>, usize)> = Vec::new();
    for i in members {
        let t = &targets[i];
        let key = (t.module.as_deref(), t.func.as_str());
        match wanted.entry(key) {
            std::collections::hash_map::Entry::Occupied(_) => twice.push((key, i)),
            std::collections::hash_map::Entry::Vacant(v) => {
                v.insert(i);
            }
        }
    }
    // A line whose first byte starts no wanted name is passed over without hashing.
    let mut first = [false; 256];
    for (_, name) in wanted.keys() {
        if let Some(&b) = name.as_bytes().first() {
            first[usize::from(b)] = true;
        }
    }
    let mut found = HashSet::with_capacity(wanted.len());
    for line in text.lines() {
        if !line
            .as_bytes()
            .first()
            .is_some_and(|&b| first[usize::from(b)])
        {
            continue;
        }
        let key = match line.split_once(' ') {
            Some((n, m)) => (
                Some(m.trim().trim_start_matches('[').trim_end_matches(']')),
                n,
            ),
            None => (None, line.trim_end()),
        };
        if let Some(i) = wanted.remove(&key) {
            found.insert(i);
            found.extend(twice.iter().filter(|(k, _)| *k == key).map(|&(_, j)| j));
            if wanted.is_empty() {
                break;
            }
        }
    }
    found
}

/// Why a group did not attach through kprobe_multi: the reason for its trampolines.
#[derive(Debug)]
enum GroupError {
    Load(String),
    Link(SysError),
}

impl std::fmt::Display for GroupError {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            GroupError::Load(why) => write!(f, "the kprobe_multi program was refused: {why}"),
            GroupError::Link(why) => write!(f, "the kprobe_multi link was refused: {why}"),
        }
    }
}

/// Whether `t` reads arguments (`ArgSlot` relocations).
fn has_arg_slots(t: &Template) -> bool {
    t.relocs
        .iter()
        .any(|r| matches!(r.kind, RelocKind::ArgSlot { .. }))
}

/// How a group's program loads: at function exit (a kretprobe_multi) or entry, and the
/// verifier log size (`log_size` with `-v`), as the trampoline clones load.
#[derive(Clone, Copy, Debug)]
struct GroupHow {
    fexit: bool,
    /// A kprobe.session program (fexit reading arguments, [`super::session`]).
    session: bool,
    log_size: Option<u32>,
}

/// One group's program: the template instantiated with register offsets, loaded as a
/// kprobe_multi program.
fn load_group(
    template: &Template,
    map_fds: &[RawFd],
    slots: &[i64],
    ret: Option<i64>,
    how: GroupHow,
) -> Result<Prog, GroupError> {
    let GroupHow {
        fexit,
        session,
        log_size,
    } = how;
    let t0 = Instant::now();
    let insns = instantiate(
        template,
        &TargetValues {
            index: 0,
            map_fds,
            arg_slots: slots,
            ret_slot: ret,
            ..Default::default()
        },
    )
    .map_err(|e| GroupError::Load(format!("internal error: {e}")))?;
    let attach = AttachKind::Kprobe { retprobe: fexit };
    let mut o = ProgLoadOptions::new(attach.prog_type(), &insns);
    o.name = &template.name;
    o.license = &template.license;
    o.expected_attach_type = if session {
        Some(crate::sys::AttachType::TraceKprobeSession)
    } else {
        attach.kind().info().multi_attach
    };
    o.log_size = log_size;
    let funcs = super::subprogs::FuncBtfObj::load(template);
    if let Some(f) = &funcs {
        f.apply(&mut o);
    }
    let prog = Prog::load(&o).map_err(|e| match session {
        true => GroupError::Load(format!("(a kprobe.session program) {e}")),
        false => GroupError::Load(e.to_string()),
    })?;
    crate::timings::record("kprobe_multi_load", t0.elapsed());
    Ok(prog)
}

/// The kernel's refusal when it has no kprobe_multi links: EOPNOTSUPP on 5.18+ without
/// CONFIG_FPROBE (Debian's 6.1); EINVAL before 5.18, which does not know the attach type (and
/// loads the program all the same). The trial link names address 0, which a kernel with the
/// links refuses (EINVAL too: not an ftrace location) without looking up any symbol, so the
/// kernel's version tells the two EINVALs apart (a kernel before 5.18 with the links backported
/// only loses the shortcut: its groups go through trampolines).
fn links_unsupported(prog: &Prog, how: GroupHow) -> Option<SysError> {
    match Link::create(
        prog,
        &LinkTarget::KprobeMulti {
            retprobe: how.fexit && !how.session,
            session: how.session,
            syms: &[],
            addrs: &[0],
            cookies: &[],
        },
    ) {
        Err(e) if e.errno == Errno::EOPNOTSUPP => Some(e),
        Err(e) if e.errno == Errno::EINVAL && crate::sys::env::kernel_version() < (5, 18, 0) => {
            Some(e)
        }
        _ => None,
    }
}

/// One group's link: `prog` attached to every member, each with its target index as cookie.
fn link_group(
    prog: &Prog,
    targets: &[CloneTarget],
    members: &[usize],
    how: GroupHow,
) -> Result<Link, GroupError> {
    let GroupHow { fexit, session, .. } = how;
    let t0 = Instant::now();
    let syms: Vec<&str> = members.iter().map(|&i| targets[i].func.as_str()).collect();
    let cookies: Vec<u64> = members.iter().map(|&i| i as u64).collect();
    let link = Link::create(
        prog,
        &LinkTarget::KprobeMulti {
            // A session program runs at return by its entry's verdict.
            retprobe: fexit && !session,
            session,
            syms: &syms,
            addrs: &[],
            cookies: &cookies,
        },
    )
    .map_err(|e| {
        // Its cost shows apart from the links that attached (`STROBE_TIMINGS`).
        crate::timings::record("kprobe_multi_refused", t0.elapsed());
        GroupError::Link(e)
    })?;
    crate::timings::record("kprobe_multi_link", t0.elapsed());
    Ok(link)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn target(name: &str, arg_slots: Vec<i64>) -> CloneTarget {
        CloneTarget {
            name: format!("fentry:vmlinux:{name}"),
            func: name.into(),
            arg_slots,
            ..Default::default()
        }
    }

    #[test]
    fn argument_slots_map_to_the_calling_conventions_registers() {
        // vfs_write(file, buf, count, pos): count is slot 16, the third argument: dx.
        let t = target("vfs_write", vec![16, 0]);
        assert_eq!(register_slots("x86_64", &t), Ok(vec![96, 112]));
        assert_eq!(register_slots("aarch64", &t), Ok(vec![16, 0]));
    }

    #[test]
    fn targets_past_the_registers_or_with_struct_args_are_refused() {
        let t = target("f", vec![8 * 6]);
        assert_eq!(
            register_slots("x86_64", &t),
            Err("argument 6 is not passed in a register".into())
        );
        // A module function goes like any other (its group is its module's).
        let mut m = target("g", vec![0]);
        m.module = Some("ext4".into());
        assert_eq!(register_slots("x86_64", &m), Ok(vec![112]));
        let mut s = target("h", vec![]);
        s.multi_refusal = Some("takes a struct by value".into());
        assert_eq!(register_slots("x86_64", &s), Ok(vec![]));
        s.arg_slots = vec![8];
        assert!(register_slots("x86_64", &s).is_err());
    }

    #[test]
    fn templates_needing_per_target_values_or_fexit_args_without_session_stay_on_trampolines() {
        use crate::template::{Field, Reloc};
        let no = SessionSupport::No("kernel 6.10+".into());
        let yes = SessionSupport::Yes(crate::loader::SessionKfuncs {
            is_return: 1,
            cookie: 2,
        });
        let mut t = Template::new("t", AttachKind::Fentry, vec![]);
        assert_eq!(template_refusal(&t, &no), None);
        t.relocs
            .push(Reloc::new(0, Field::Off, RelocKind::ArgSlot { param: 0 }));
        assert_eq!(template_refusal(&t, &no), None);
        t.attach = AttachKind::Fexit;
        let why = template_refusal(&t, &no).unwrap();
        assert!(
            why.contains("kprobe.session") && why.contains("6.10"),
            "{why}"
        );
        // With kprobe.session, fexit reading arguments goes through a session program.
        assert_eq!(template_refusal(&t, &yes), None);
        t.relocs[0].kind = RelocKind::RetSlot;
        assert_eq!(template_refusal(&t, &no), None);
        t.relocs
            .push(Reloc::new(1, Field::Imm, RelocKind::TargetIndex));
        assert!(template_refusal(&t, &yes).unwrap().contains("`probe`"));
    }

    #[test]
    fn only_targets_available_filter_functions_lists_are_kept() {
        let text = "tcp_init_sock\ntcp_add_reno_sack.part.0\ndummy_get_stats64 [dummy]\n\
                    tcp_v4_rcv\ndummy_setup [other]\n";
        let mut ts: Vec<CloneTarget> = [
            "tcp_init_sock",
            "tcp_init",
            "tcp_add_reno_sack",
            "tcp_v4_rcv",
        ]
        .iter()
        .map(|n| target(n, vec![]))
        .collect();
        let mut m = target("dummy_get_stats64", vec![]);
        m.module = Some("dummy".into());
        ts.push(m);
        // In the list, but as another module's function.
        let mut m = target("dummy_setup", vec![]);
        m.module = Some("dummy".into());
        ts.push(m);
        // vmlinux has no dummy_get_stats64.
        ts.push(target("dummy_get_stats64", vec![]));
        // A name BTF lists twice.
        ts.push(target("tcp_v4_rcv", vec![]));
        let found = listed_targets(text, &ts, 0..ts.len());
        let mut found: Vec<usize> = found.into_iter().collect();
        found.sort_unstable();
        assert_eq!(found, vec![0, 3, 4, 7]);
        // Only members are looked for.
        assert!(listed_targets(text, &ts, [1usize, 2].into_iter()).is_empty());
    }

    #[test]
    fn fentry_via_parses_its_three_modes() {
        assert_eq!("auto".parse(), Ok(FentryVia::Auto));
        assert_eq!("kprobe_multi".parse(), Ok(FentryVia::KprobeMulti));
        assert_eq!("trampoline".parse(), Ok(FentryVia::Trampoline));
        assert!("x".parse::<FentryVia>().is_err());
    }
}
