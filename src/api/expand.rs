//! Attach points of `strobe load` → loader targets, and the library path that loads and
//! attaches a BPF object the way `strobe load` does. It sits in `api`, above both the checker
//! and the loader, because it joins the two. What an attach point matches is defined once, for
//! scripts and objects alike: the text is parsed by the script language's
//! [`parse_attach_point`] and expanded by [`crate::sema::expand`]; this file only turns those
//! targets into what the loader loads.
//!
//! Input: an attach-point string (`fentry:vfs_*`, `fentry:MOD:func*`, `kprobe:tcp_*`,
//! `rawtracepoint:sched_*`, `uprobe:/bin/bash:read*`; bpftrace's aliases too) and a
//! [`KernelInfo`]. Output: an [`Expansion`]: [`CloneTarget`]s for fentry/fexit (with the
//! module's BTF object for module functions) and raw tracepoints, or [`MultiTargets`] for
//! kprobes and uprobes, plus targets left out with a reason.
//!
//! Loading an object (here one without maps, as `strobe asm` or clang writes it) on every
//! target of a wildcard, as `strobe load OBJ --attach SPEC` does; dropping the
//! [`Attached`](crate::loader::Attached) value detaches everything:
//!
//! ```no_run
//! use strobe::api::expand::{expand, AttachSpec, Expansion};
//! use strobe::kernel::info::HostKernel;
//! use strobe::loader::{attach_multi, load_clones, map_fds_for, Arming};
//! use strobe::template::Template;
//!
//! let obj = strobe::elf::read_object(&std::fs::read("prog.o")?)?;
//! let section = &obj.sections[0];
//! let spec = AttachSpec::parse("rawtracepoint:sched_*")?;
//! let expansion = expand(&spec, &HostKernel::new())?;
//! let license = obj.license.clone().unwrap_or_else(|| "GPL".into());
//! // The arming guard keeps every clone silent until all are attached.
//! let template = Template::from_section(section, &[], spec.kind, &license)?.with_arming_guard();
//! let arming = Arming::create()?;
//! let map_fds = map_fds_for(&template, &[arming.map_entry()])?;
//! let attached = match expansion {
//!     Expansion::Clones { targets, .. } => {
//!         load_clones(&template, &map_fds, &targets, &Default::default())?
//!     }
//!     Expansion::Multi { targets } => {
//!         attach_multi(&template, &map_fds, &targets, &Default::default())?.0
//!     }
//! };
//! arming.arm()?;
//! println!("{}", attached.summary_line());
//! drop(attached); // detaches
//! # Ok::<(), Box<dyn std::error::Error>>(())
//! ```

use crate::elf::symbols::elf_functions;
use crate::kernel::info::KernelInfo;
use crate::loader::{CloneTarget, MultiTargets};
use crate::sema::expand::{Target, TargetKind};
use crate::syntax::attach::{parse_attach_point, AttachPoint, AttachSpec as Spec};
use crate::template::AttachKind;

/// A parsed attach point and the attach kind its programs are loaded as.
#[derive(Clone, Debug, PartialEq, Eq)]
pub struct AttachSpec {
    pub kind: AttachKind,
    pub point: AttachPoint,
}

#[derive(Debug, thiserror::Error)]
pub enum ExpandError {
    #[error("`{spec}`: {message}")]
    Parse { spec: String, message: String },
    #[error("`{spec}`: strobe load attaches fentry, fexit, kprobe, kretprobe, rawtracepoint, uprobe and uretprobe, not {kind}")]
    UnsupportedKind { spec: String, kind: String },
    #[error("`{spec}`: {what} is not supported by strobe load")]
    UnsupportedForm { spec: String, what: &'static str },
    #[error(transparent)]
    Expand(#[from] crate::sema::expand::ExpandError),
    #[error("{what} unavailable: {reason}")]
    Source { what: String, reason: String },
}

/// What an attach point expanded to.
#[derive(Debug)]
pub enum Expansion {
    /// One program per target (fentry/fexit, raw tracepoints).
    Clones {
        targets: Vec<CloneTarget>,
        /// (name, reason) of matches that cannot be targets at all.
        skipped: Vec<(String, String)>,
    },
    /// One program for all targets.
    Multi { targets: MultiTargets },
}

impl AttachSpec {
    /// `kind:pattern`, `fentry:module:pattern`, `uprobe:/path:pattern`, with the script
    /// language's aliases (`f:`, `fr:`, `kfunc:`, `k:`, `kr:`, `rt:`, `u:`, `ur:`).
    pub fn parse(spec: &str) -> Result<AttachSpec, ExpandError> {
        let parse_err = |message: String| ExpandError::Parse {
            spec: spec.into(),
            message,
        };
        let mut points = parse_attach_point(spec, 0).map_err(|e| parse_err(e.message))?;
        if points.len() != 1 {
            return Err(parse_err("expected one probe type, not a wildcard".into()));
        }
        let point = points.remove(0);
        // The kinds whose templates the loader attaches: their attach shape is the table's.
        let info = point.kind.info();
        if info.runner != crate::kinds::Runner::Loader {
            return Err(ExpandError::UnsupportedKind {
                spec: spec.into(),
                kind: info.name.into(),
            });
        }
        let kind = info.template;
        let unsupported = |what| ExpandError::UnsupportedForm {
            spec: spec.into(),
            what,
        };
        match &point.spec {
            Spec::Kprobe {
                offset: Some(_), ..
            }
            | Spec::Uprobe {
                offset: Some(_), ..
            } => return Err(unsupported("an offset")),
            Spec::Kprobe {
                address: Some(_), ..
            }
            | Spec::Uprobe {
                address: Some(_), ..
            } => return Err(unsupported("an address")),
            Spec::Fentry {
                prog_id: Some(_), ..
            } => return Err(unsupported("a BPF program target")),
            Spec::Fentry {
                module: Some(m), ..
            } if m == "bpf" => return Err(unsupported("a BPF program target")),
            _ => {}
        }
        Ok(AttachSpec { kind, point })
    }
}

/// Expands `spec` against `kernel`.
pub fn expand(spec: &AttachSpec, kernel: &dyn KernelInfo) -> Result<Expansion, ExpandError> {
    let found = crate::sema::expand::expand(&spec.point, kernel)?;
    match &spec.point.spec {
        Spec::Fentry { .. } => Ok(fentry_targets(found)),
        Spec::RawTracepoint { .. } => Ok(Expansion::Clones {
            targets: found
                .iter()
                .filter_map(|t| match &t.kind {
                    TargetKind::RawTracepoint { name, .. } => Some(CloneTarget::named(name, 0)),
                    _ => None,
                })
                .collect(),
            skipped: vec![],
        }),
        Spec::Kprobe { .. } => {
            // kprobe_multi refuses the whole link for one name it cannot resolve, and names
            // with a compiler suffix (`.isra.0`, `.cold`) are not functions users mean.
            let mut funcs: Vec<String> = found
                .into_iter()
                .filter_map(|t| match t.kind {
                    TargetKind::KernelFunc { func, .. } if !func.contains('.') => Some(func),
                    _ => None,
                })
                .collect();
            funcs.sort();
            funcs.dedup();
            Ok(Expansion::Multi {
                targets: MultiTargets::Kernel { funcs },
            })
        }
        Spec::Uprobe { func, .. } => {
            let Some(path) = found.iter().find_map(|t| match &t.kind {
                TargetKind::User { path, .. } => Some(path.clone()),
                _ => None,
            }) else {
                return Err(ExpandError::UnsupportedForm {
                    spec: spec.point.raw.clone(),
                    what: "this uprobe form",
                });
            };
            // sema names the matches; their file offsets come from the same ELF reader the
            // script runtime attaches uprobes with.
            let funcs = elf_functions(&path, func).map_err(|reason| ExpandError::Source {
                what: format!("ELF symbols of {}", path.display()),
                reason,
            })?;
            let wanted: std::collections::HashSet<&str> = found
                .iter()
                .filter_map(|t| match &t.kind {
                    TargetKind::User { func, .. } => Some(func.as_str()),
                    _ => None,
                })
                .collect();
            Ok(Expansion::Multi {
                targets: MultiTargets::User {
                    funcs: funcs
                        .into_iter()
                        .filter(|f| wanted.contains(f.name.as_str()))
                        .map(|f| (f.name, f.offset))
                        .collect(),
                    path,
                    pid: None,
                },
            })
        }
        _ => Err(ExpandError::UnsupportedKind {
            spec: spec.point.raw.clone(),
            kind: spec.point.kind.name().into(),
        }),
    }
}

/// fentry/fexit targets: vmlinux functions by BTF id; module functions by BTF id in the
/// module's BTF, named `module:func` (the loader finds the module's BTF object).
fn fentry_targets(found: Vec<Target>) -> Expansion {
    let targets = found
        .into_iter()
        .filter_map(|t| match t.kind {
            TargetKind::KernelFunc {
                module,
                func,
                btf_id: Some(btf_id),
                ..
            } => Some(match module {
                None => CloneTarget::named(&func, btf_id),
                Some(m) => CloneTarget {
                    module: Some(m.clone()),
                    ..CloneTarget::named(&format!("{m}:{func}"), btf_id)
                },
            }),
            _ => None,
        })
        .collect();
    Expansion::Clones {
        targets,
        skipped: vec![],
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::kernel::info::HostKernel;

    #[test]
    fn attach_specs_parse_with_aliases_modules_and_paths() {
        let f = AttachSpec::parse("fentry:vfs_*").unwrap();
        assert_eq!(f.kind, AttachKind::Fentry);
        assert!(
            matches!(&f.point.spec, Spec::Fentry { module: None, func, .. } if func == "vfs_*")
        );
        let m = AttachSpec::parse("fr:ext4:ext4_file_*").unwrap();
        assert_eq!(m.kind, AttachKind::Fexit);
        assert!(
            matches!(&m.point.spec, Spec::Fentry { module: Some(m), func, .. } if m == "ext4" && func == "ext4_file_*")
        );
        let u = AttachSpec::parse("ur:/bin/bash:read*").unwrap();
        assert_eq!(u.kind, AttachKind::Uprobe { retprobe: true });
        assert!(
            matches!(&u.point.spec, Spec::Uprobe { target, func, .. } if target == "/bin/bash" && func == "read*")
        );
        assert_eq!(
            AttachSpec::parse("kr:tcp_*").unwrap().kind,
            AttachKind::Kprobe { retprobe: true }
        );
        assert_eq!(
            AttachSpec::parse("rt:sched_switch").unwrap().kind,
            AttachKind::RawTracepoint
        );
        assert!(matches!(
            AttachSpec::parse("tracepoint:sched:sched_switch"),
            Err(ExpandError::UnsupportedKind { .. })
        ));
        assert!(matches!(
            AttachSpec::parse("kprobe:vfs_read+8"),
            Err(ExpandError::UnsupportedForm { .. })
        ));
        assert!(matches!(
            AttachSpec::parse("vfs_read"),
            Err(ExpandError::Parse { .. } | ExpandError::UnsupportedKind { .. })
        ));
        assert!(matches!(
            AttachSpec::parse("fentry:"),
            Err(ExpandError::Parse { .. })
        ));
    }

    #[test]
    fn fentry_wildcard_expands_to_vmlinux_btf_ids() {
        if !std::path::Path::new(crate::btf::VMLINUX_PATH).exists() {
            crate::diag::skip::skip(
                "fentry_wildcard_expands_to_vmlinux_btf_ids",
                "no /sys/kernel/btf/vmlinux",
            );
            return;
        }
        let k = HostKernel::new();
        let spec = AttachSpec::parse("fentry:vfs_*").unwrap();
        let Expansion::Clones { targets, .. } = expand(&spec, &k).unwrap() else {
            panic!("fentry expands to clones");
        };
        let vfs_read = targets.iter().find(|t| t.name == "vfs_read").unwrap();
        let btf = k.btf(None).unwrap();
        assert_eq!(Some(vfs_read.btf_id), btf.find_func("vfs_read"));
        assert!(vfs_read.btf_obj.is_none());
        assert!(targets.iter().all(|t| t.name.starts_with("vfs_")));
        let none = AttachSpec::parse("fentry:strobe_no_such_fn_*").unwrap();
        assert!(matches!(
            expand(&none, &k),
            Err(ExpandError::Expand(
                crate::sema::expand::ExpandError::NoMatch { .. }
            ))
        ));
    }

    #[test]
    fn module_btf_lookup_finds_vmlinux_by_name_and_not_a_missing_module() {
        match crate::sys::info::module_btf_fd("vmlinux") {
            Ok(Some(fd)) => {
                let info = crate::sys::info::btf_info(std::os::fd::AsFd::as_fd(&fd)).unwrap();
                assert!(info.kernel_btf);
                assert_eq!(info.name, "vmlinux");
            }
            Ok(None) => panic!("the kernel's own BTF object is named vmlinux since 5.11"),
            Err(e) => {
                crate::diag::skip::skip(
                    "module_btf_lookup_finds_vmlinux_by_name_and_not_a_missing_module",
                    &format!("BPF_BTF_GET_NEXT_ID: {e}"),
                );
                return;
            }
        }
        assert!(crate::loader::module_btf_obj("strobe_no_such_module").is_err());
    }
}
