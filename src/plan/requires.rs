//! Which kernel feature a refused program lacked, when the refusal comes from a construct
//! that needs a newer kernel: loops and `len()` call back into the program (`BPF_PSEUDO_FUNC`,
//! kernel 5.13+) through `bpf_for_each_map_elem` (5.13+) or `bpf_loop` (5.17+), and reading
//! an aggregation map (or looping over one) reads other CPUs' values with `bpf_map_lookup_percpu_elem`
//! (5.19+).
//!
//! Input: the template and the verifier's one-line reason. Output: the instruction to blame
//! (for the script position) and a help text naming the feature. Pure.

use crate::asm::isa::Helper;
use crate::template::Template;

/// Helpers the code generator calls that older kernels lack: (helper, first kernel, what
/// in a script needs it).
const NEWER_HELPERS: &[(Helper, &str, &str)] = &[
    (
        Helper::ForEachMapElem,
        "5.13",
        "`for ($kv : @map)` and `len(@map)`",
    ),
    (Helper::Loop, "5.17", "`for ($i : start..end)`"),
    (Helper::KtimeGetTaiNs, "6.1", "`nsecs(tai)`"),
    (
        Helper::MapLookupPercpuElem,
        "5.19",
        "reading a count(), sum(), min(), max() or avg() map, or a `for` over one (values of \
         every CPU)",
    ),
];

/// What the kernel lacked (see the module documentation), with the instruction to point at
/// when the verifier named none.
pub fn kernel_requirement(
    t: &Template,
    insn: Option<usize>,
    reason: &str,
) -> Option<(Option<usize>, String)> {
    // Kernels before 5.13 see no subprogram behind a BPF_PSEUDO_FUNC reference: either the
    // reference itself or the func_info records (one per subprogram) are refused first.
    if reason.contains("unrecognized bpf_ld_imm64")
        || reason.contains("number of funcs in func_info doesn't match")
    {
        let at = t.insns.iter().position(|i| {
            i.code == crate::asm::isa::CODE_LD_IMM64 && i.src() == crate::asm::isa::PSEUDO_FUNC
        })?;
        return Some((
            insn.or(Some(at)),
            "this kernel has no BPF callbacks (BPF_PSEUDO_FUNC, kernel 5.13+), which loops \
             over maps and ranges and len() need"
                .into(),
        ));
    }
    // Helpers with an `allowed` callback (bpf_d_path) are refused per attach target.
    if reason.contains("helper call is not allowed in probe") {
        let call = insn.and_then(|i| t.insns.get(i))?;
        if *call == crate::asm::Insn::call_helper(Helper::DPath) {
            return Some((
                insn,
                "path() (bpf_d_path) works only in fentry/fexit probes of the functions the \
                 kernel allows it in (btf_allowlist_d_path: filp_close, vfs_getattr, \
                 vfs_truncate, vfs_fallocate, dentry_open, security_file_open, \
                 security_file_permission, security_inode_getattr, …)"
                    .into(),
            ));
        }
        return None;
    }
    // `percpu_kaddr()`: the verifier finds a variable's address with kallsyms_lookup_name,
    // which sees data symbols only in kernels built with CONFIG_KALLSYMS_ALL
    // (kernel/bpf/verifier.c, check_pseudo_btf_id).
    if let Some(rest) = reason
        .split("failed to find the address for kernel symbol ")
        .nth(1)
    {
        let sym = rest.trim().trim_end_matches('.').trim_matches('\'');
        // The verifier checks these before walking the program, so it names no instruction.
        let at = insn.or_else(|| {
            t.insns.iter().position(|i| {
                i.code == crate::asm::isa::CODE_LD_IMM64
                    && i.src() == crate::asm::isa::Pseudo::BtfId.value()
            })
        });
        return Some((
            at,
            format!(
                "the kernel cannot resolve the address of variable `{sym}` (percpu_kaddr): its \
                 kallsyms has no data symbols (kernel built without CONFIG_KALLSYMS_ALL)"
            ),
        ));
    }
    if !(reason.contains("unknown func") || reason.contains("invalid func")) {
        return None;
    }
    let id: u32 = reason.rsplit('#').next()?.trim().parse().ok()?;
    let helper = Helper::from_id(id)?;
    let (_, since, what) = NEWER_HELPERS.iter().find(|(h, _, _)| *h == helper)?;
    Some((
        insn,
        format!(
            "this kernel lacks the helper bpf_{} (kernel {since}+), which {what} need",
            helper.name()
        ),
    ))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::template::AttachKind;

    #[test]
    fn d_path_outside_its_allowlist_names_the_allowed_functions() {
        let call = crate::asm::Insn::call_helper(Helper::DPath);
        let t = Template::new("t", AttachKind::RawTracepoint, vec![call]);
        let (at, help) =
            kernel_requirement(&t, Some(0), "helper call is not allowed in probe").unwrap();
        assert_eq!(at, Some(0));
        assert!(help.contains("filp_close"), "{help}");
        let other = crate::asm::Insn::call_helper(Helper::SendSignal);
        let t = Template::new("t", AttachKind::RawTracepoint, vec![other]);
        assert!(kernel_requirement(&t, Some(0), "helper call is not allowed in probe").is_none());
    }

    #[test]
    fn unresolvable_variable_names_kallsyms_all() {
        let t = Template::new("t", AttachKind::RawTracepoint, Vec::new());
        let reason = "ldimm64 failed to find the address for kernel symbol 'process_counts'.";
        let (at, help) = kernel_requirement(&t, Some(0), reason).unwrap();
        assert_eq!(at, Some(0));
        assert!(help.contains("`process_counts`"), "{help}");
        let mut insns = vec![crate::asm::Insn::mov64_imm(crate::asm::Reg::R0, 0)];
        insns.extend(crate::asm::Insn::ld_ksym(crate::asm::Reg::R1, 7));
        let t = Template::new("t", AttachKind::RawTracepoint, insns);
        let (at, _) = kernel_requirement(&t, None, reason).unwrap();
        assert_eq!(at, Some(1));
        assert!(help.contains("CONFIG_KALLSYMS_ALL"), "{help}");
    }

    #[test]
    fn unknown_helper_names_the_kernel_version() {
        let t = Template::new("t", AttachKind::RawTracepoint, Vec::new());
        let (_, help) = kernel_requirement(&t, Some(3), "invalid func unknown#181").unwrap();
        assert!(help.contains("bpf_loop (kernel 5.17+)"), "{help}");
        let (_, help) =
            kernel_requirement(&t, Some(3), "unknown func bpf_for_each_map_elem#164").unwrap();
        assert!(
            help.contains("bpf_for_each_map_elem (kernel 5.13+)"),
            "{help}"
        );
        assert!(kernel_requirement(&t, Some(3), "invalid func unknown#1").is_none());
        assert!(kernel_requirement(&t, Some(3), "R1 !read_ok").is_none());
    }

    #[test]
    fn pseudo_func_refusal_points_at_the_callback_reference() {
        let mut lo = crate::asm::Insn::ld_imm64(crate::asm::Reg::R2, 0);
        lo[0].set_src(crate::asm::isa::PSEUDO_FUNC);
        let insns = vec![
            crate::asm::Insn::mov64_imm(crate::asm::Reg::R0, 0),
            lo[0],
            lo[1],
        ];
        let t = Template::new("t", AttachKind::RawTracepoint, insns);
        let (at, help) = kernel_requirement(&t, None, "unrecognized bpf_ld_imm64 insn").unwrap();
        assert_eq!(at, Some(1));
        assert!(help.contains("5.13"), "{help}");
        // What 5.10 says when the program comes with func_info for its callbacks.
        let reason = "number of funcs in func_info doesn't match number of subprogs";
        let (at, help) = kernel_requirement(&t, None, reason).unwrap();
        assert_eq!(at, Some(1));
        assert!(help.contains("BPF_PSEUDO_FUNC"), "{help}");
    }
}
