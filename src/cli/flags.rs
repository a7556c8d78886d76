//! bpftrace's command-line flags beyond the everyday ones: `-k`/`--warnings` with its
//! conflicts, `--no-feature`, and the flags about bpftrace's LLVM compiler and formatter that
//! strobe accepts as no-ops (`-b`, `--verify-llvm-ir`) or refuses with the reason (`--fmt`,
//! `--emit-elf`, `--emit-llvm`, `--dwarf-pid`).
//!
//! Input: the parsed [`TraceArgs`]. Output: the features `--no-feature` turns off, or the
//! message to print (bpftrace's words where it has them) before exiting with a usage error.

use super::trace::TraceArgs;
use crate::runtime::probes::DisabledFeatures;

/// Checks the flags above; returns what `--no-feature` disables.
pub fn check(a: &TraceArgs) -> Result<DisabledFeatures, String> {
    if a.helper_warnings > 1 {
        return Err(
            "ERROR: USAGE: -kk has been deprecated. Use a single -k for runtime \
                    warnings for errors in map lookups and probe reads."
                .into(),
        );
    }
    if a.helper_warnings > 0 && a.no_warnings {
        return Err("ERROR: USAGE: -k, --warnings conflicts with --no-warnings".into());
    }
    if a.fmt {
        return Err(
            "ERROR: --fmt is not supported: strobe has no formatter for bpftrace scripts".into(),
        );
    }
    if a.emit_llvm.is_some() {
        return Err(
            "ERROR: --emit-llvm is not supported: strobe generates BPF instructions directly, \
             without LLVM IR (-d asm prints them)"
                .into(),
        );
    }
    if a.emit_elf.is_some() {
        return Err(
            "ERROR: --emit-elf is not supported: strobe loads one program per attach target \
             from templates rather than one ELF object (-d asm prints the templates; --aot \
             writes a standalone executable)"
                .into(),
        );
    }
    if a.dwarf_pid.is_some() {
        return Err(
            "ERROR: --dwarf-pid is not supported: strobe has no DWARF stack unwinding \
             (bpftrace's dwunwind build option)"
                .into(),
        );
    }
    let mut disabled = DisabledFeatures::default();
    for list in &a.no_feature {
        disabled.parse(list).map_err(|_| {
            format!(
                "ERROR: USAGE: --no-feature can only have values '{}'.",
                DisabledFeatures::NAMES
            )
        })?;
    }
    Ok(disabled)
}

#[cfg(test)]
mod tests {
    use super::*;
    use clap::Parser;

    fn args(a: &[&str]) -> TraceArgs {
        TraceArgs::try_parse_from(std::iter::once("strobe").chain(a.iter().copied())).unwrap()
    }

    #[test]
    fn no_feature_takes_bpftrace_names_and_refuses_others() {
        let d = check(&args(&[
            "--no-feature",
            "uprobe_multi,kprobe_multi",
            "-e",
            "x",
        ]))
        .unwrap();
        assert!(d.uprobe_multi && d.kprobe_multi && !d.kprobe_session);
        assert_eq!(d.use_multi(true), Some(false));
        assert_eq!(DisabledFeatures::default().use_multi(false), None);
        let e = check(&args(&["--no-feature", "bogus", "-e", "x"])).unwrap_err();
        assert!(
            e.contains("'kprobe_multi,kprobe_session,uprobe_multi'"),
            "{e}"
        );
    }

    #[test]
    fn k_conflicts_with_no_warnings_and_kk_is_deprecated() {
        assert!(check(&args(&["-k", "-e", "x"])).is_ok());
        let e = check(&args(&["-k", "--no-warnings", "-e", "x"])).unwrap_err();
        assert!(e.contains("conflicts with --no-warnings"), "{e}");
        let e = check(&args(&["-kk", "-e", "x"])).unwrap_err();
        assert!(e.contains("-kk has been deprecated"), "{e}");
    }

    #[test]
    fn llvm_and_formatter_flags_are_refused_with_the_reason() {
        for f in [
            &["--fmt"][..],
            &["--emit-llvm", "f.ll"],
            &["--emit-elf", "f.o"],
            &["--dwarf-pid", "1"],
        ] {
            let mut a = f.to_vec();
            a.extend(["-e", "x"]);
            let e = check(&args(&a)).unwrap_err();
            assert!(e.contains("not supported: strobe"), "{e}");
        }
        assert!(check(&args(&["-b", "--verify-llvm-ir", "-e", "x"])).is_ok());
    }
}
