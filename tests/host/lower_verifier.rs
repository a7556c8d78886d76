//! Verifier rejections point at the script: a compiled script whose program the kernel
//! refuses is reported at the line and column of the statement that emitted the rejected
//! instruction (the template's source map), with the verifier's one-line reason.

use strobe::compile::{compile, verifier_diagnostic};
use strobe::diag::SourceFile;
use strobe::kernel::info::HostKernel;
use strobe::runtime::driver::{run, RunOptions};
use strobe::sema::CheckOptions;

#[test]
fn verifier_rejection_is_reported_at_the_script_line_with_a_caret() {
    let test = "verifier_rejection_is_reported_at_the_script_line_with_a_caret";
    let text = "BEGIN {\n  @x = 1;\n  printf(\"%d\\n\", 5);\n  exit();\n}\n";
    let src = SourceFile::new("t.bt", text);
    let out = compile(&src, &HostKernel::new(), &CheckOptions::default());
    let mut script = out.script.expect("compiles");
    let t = &mut script.probes[0].template;
    // Break the first instruction emitted for the printf (line 3): an out-of-frame stack
    // read the verifier always refuses.
    let line3 = text.find("printf").unwrap() as u32;
    let i = (0..t.insns.len())
        .find(|&i| {
            t.source_map
                .lookup(i)
                .is_some_and(|s| s.start >= line3 && s.start < line3 + 20)
        })
        .expect("the printf emitted instructions");
    t.insns[i].code = 0x79; // ldxdw
    t.insns[i].set_dst(1);
    t.insns[i].set_src(10);
    t.insns[i].off = 8;
    t.insns[i].imm = 0;
    let mut sink = Vec::new();
    let err = match run(&script, &RunOptions::default(), &mut sink) {
        Err(e) => e,
        Ok(_) => panic!("the kernel accepted a program reading above the frame"),
    };
    let is_load = matches!(
        &err,
        strobe::runtime::driver::RunError::Probe(p)
            if matches!(p.as_ref(), strobe::runtime::probes::ProbeError::Load { .. })
    );
    if !is_load {
        // No BPF here at all (maps or the arming flag could not be created).
        strobe_testkit::skip(test, &format!("cannot load programs here: {err}"));
        return;
    }
    let (probe, load) = err.refused_load().expect("a refused load");
    let d = verifier_diagnostic(&script, probe, load)
        .unwrap_or_else(|| panic!("a refused load gave no script position: {err}"));
    eprintln!("{}", d.render(&src));
    let shown = d.render(&src);
    assert!(
        shown.starts_with("t.bt:3:3-") && shown.contains(": ERROR: "),
        "{shown}"
    );
    assert!(shown.contains("verifier rejected probe BEGIN"), "{shown}");
    assert!(shown.contains("stack"), "reason missing: {shown}");
    assert!(shown.contains("  printf(\"%d\\n\", 5);"), "{shown}");
    assert!(shown.contains("\n  ~~~"), "{shown}");
}
