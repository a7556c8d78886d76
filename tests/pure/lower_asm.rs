//! `-d asm` listings reassemble: for each script, every probe's listing (script lines and
//! relocation table as comments, labels for jumps, `map_fd(N)` at map sites) assembles back
//! to exactly the template's instructions, with N the map's index in the template's table.

use strobe::asm::assemble_insns;
use strobe::codegen::lower::listing::template_listing;
use strobe::compile::compile;
use strobe::diag::SourceFile;
use strobe::kernel::info::MockKernel;
use strobe::sema::CheckOptions;
use strobe::template::RelocKind;

const SCRIPTS: &[&str] = &[
    "BEGIN { printf(\"hello %d\\n\", 42); exit(); }",
    "BEGIN { @x = count(); @[comm] = count(); }",
    "BEGIN { @h = hist(5); @l = lhist(5, 0, 100, 10); }",
    "BEGIN { @s = sum(1); @a = avg(2); @m = min(3); @M = max(4); @t = stats(5); }",
    "BEGIN { $x = 5; if ($x > 3) { printf(\"big\\n\"); } else { printf(\"small\\n\"); } }",
    "BEGIN { $i = 0; while ($i < 5) { $i++; } @i = $i; }",
    "BEGIN { $s = \"abc\"; if ($s == \"abd\") { exit(); } }",
    "BEGIN { @[1, \"a\"] = count(); delete(@[1, \"a\"]); clear(@); }",
    "BEGIN { $t = (1, \"x\"); printf(\"%d %s\\n\", $t.0, $t.1); }",
    "BEGIN { printf(\"%d %d %d\\n\", 7 / (pid + 1), 7 % (tid + 1), -(cpu)); }",
    "BEGIN { $a = pid > 1 && tid > 1 || cpu == 0; @a = $a ? 1 : 2; }",
    "BEGIN { print(kstack); time(); print(@x); @x = 1; }",
    "interval:ms:100 { @n = count(); if (@n == 3) { exit(); } }",
    "END { printf(\"%s\\n\", comm); }",
    "BEGIN { @m[1] = 2; $t = 0; for ($kv : @m) { for ($i : 0..$kv.1) { $t += $i; } } @t = $t + len(@m); }",
];

#[test]
fn asm_listing_reassembles_to_the_template() {
    for text in SCRIPTS {
        let src = SourceFile::new("t.bt", *text);
        let out = compile(&src, &MockKernel::fixture(), &CheckOptions::default());
        let script = out
            .script
            .unwrap_or_else(|| panic!("{text} does not compile: {:?}", out.diagnostics));
        for p in &script.probes {
            let t = &p.template;
            let listing = template_listing(t, &src);
            assert!(
                listing.contains("# t.bt:1: "),
                "no source line in:\n{listing}"
            );
            let got = assemble_insns(&listing)
                .unwrap_or_else(|e| panic!("{text}: listing does not assemble: {e:?}\n{listing}"));
            let mut want = t.insns.clone();
            for r in &t.relocs {
                if let RelocKind::MapFd { map } = r.kind {
                    want[r.insn].imm = map as i32;
                }
            }
            assert_eq!(got, want, "{text}:\n{listing}");
        }
    }
}

#[test]
fn asm_listing_names_each_relocation() {
    let src = SourceFile::new("t.bt", "BEGIN { @x = count(); printf(\"a\\n\"); }");
    let out = compile(&src, &MockKernel::fixture(), &CheckOptions::default());
    let script = out.script.expect("compiles");
    let listing = template_listing(&script.probes[0].template, &src);
    assert!(listing.contains("map fd @x"), "{listing}");
    assert!(listing.contains("map fd ringbuf"), "{listing}");
}
