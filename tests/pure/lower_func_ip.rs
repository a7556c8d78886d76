//! `func` in kprobes: `bpf_get_func_ip` where the kernel has it for kprobe programs (5.15+),
//! else the saved instruction pointer minus the int3 length, read from `pt_regs`. Which one
//! is decided from the kernel's BTF (the helper's implementation `bpf_get_func_ip_kprobe` is
//! a BTF function exactly where the helper exists). The VM case `scripts.kprobe wildcard
//! counts events per function` checks the resulting names on 5.10, 6.1 and 6.12.

use std::sync::Arc;

use strobe::btf::encode::BtfBuilder;
use strobe::btf::{Btf, Linkage};
use strobe::codegen::lower::listing::template_listing;
use strobe::compile::compile;
use strobe::diag::SourceFile;
use strobe::kernel::info::MockKernel;
use strobe::sema::CheckOptions;

const SCRIPT: &str = "kprobe:vfs_read { @[func] = count(); }";

fn listing(kernel: &MockKernel) -> String {
    let src = SourceFile::new("t.bt", SCRIPT);
    let out = compile(&src, kernel, &CheckOptions::default());
    let script = out
        .script
        .unwrap_or_else(|| panic!("does not compile: {:?}", out.diagnostics));
    template_listing(&script.probes[0].template, &src)
}

/// The fixture kernel plus a BTF function `bpf_get_func_ip_kprobe`, as 5.15+ kernels have.
fn kernel_with_kprobe_func_ip() -> MockKernel {
    let mut k = MockKernel::fixture();
    let base = k.vmlinux.clone().expect("fixture has vmlinux BTF");
    let mut b = BtfBuilder::new_split(&base);
    let p = b.add_func_proto(0, &[]);
    b.add_func("bpf_get_func_ip_kprobe", p, Linkage::Static);
    let btf = Btf::parse_split(b.finish().expect("encodes"), &base).expect("parses");
    k.vmlinux = Some(Arc::new(btf));
    // The split object's own glob index does not see the base's functions; kprobe targets
    // come from this list then (as from available_filter_functions).
    k.kprobe_functions = Some(vec![(None, "vfs_read".to_string())]);
    k
}

#[test]
fn kprobe_func_reads_the_saved_ip_when_the_kernel_lacks_get_func_ip() {
    let l = listing(&MockKernel::fixture());
    assert!(!l.contains("bpf_get_func_ip"), "{l}");
    assert!(l.contains("(r1 + 128)"), "no pt_regs.ip load:\n{l}");
    assert!(l.contains("-= 1"), "ip not moved back over the int3:\n{l}");
}

#[test]
fn kprobe_func_calls_get_func_ip_when_the_kernel_has_it() {
    let l = listing(&kernel_with_kprobe_func_ip());
    assert!(l.contains("bpf_get_func_ip"), "{l}");
    assert!(!l.contains("(r1 + 128)"), "{l}");
}
